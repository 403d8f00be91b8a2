"""The command-line form of the action a refusal names.

A refusal is one message for every console: it names the action ("verify the bank"), not the command or option
that does it on the command line, since the web pages have their own controls for it. The command line adds
its own form after the message: this table maps the refusal's English template (its catalogue key) to the
command that does the action. Command names and options are not translated.
"""

from __future__ import annotations

COMMAND_HINTS: dict[str, str] = {
    "the schedule has {sessions} sessions and {done} session draws are made: only a replacement board (one deal) "
    "can be drawn now": "dealer draw prepare LABEL --replacement",
    "draw {label!r}: the stored result differs from K and V (verify the bank)": "dealer bank verify",
    "draw {label!r}: its commitment in the bank is not the one the chief judge's key signed: the bank was altered; "
    "verify the bank": "dealer bank verify",
    "deal {id} in the bank is not the deal its sealed ledger entry committed: the bank was altered after the seal; "
    "nothing is shown or written; verify the bank": "dealer bank verify",
    "draw {label!r}: the public value in the bank ({stored}) is not the one the hall was shown ({shown}): the bank "
    "was altered; nothing was drawn; verify the bank": "dealer bank verify",
    "the bank's seals are signed by a key that is not here: set the custody up with the bank's key directory": (
        "dealer custody init"
    ),
    "this step needs the chief judge's key: give the custody passphrase (chosen when the custody was set up)": (
        "dealer custody init"
    ),
    "{path}: no custody record: the chief judge sets the custody up first": "dealer custody init",
}


def command_hint(error: object) -> str | None:
    """The command line's form of the action ``error`` names, when it names one."""
    template = getattr(error, "template", None)
    return COMMAND_HINTS.get(template) if isinstance(template, str) else None
