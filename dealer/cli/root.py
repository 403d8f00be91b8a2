"""The root of the command line: the ``dealer`` group every command module registers on, and its error line.

Its options are the root's own (``--version``, ``--lang``); the command modules add their commands and groups when
imported (``dealer.cli.app`` imports only the typed command's). Nothing but the standard library is imported.
"""

from __future__ import annotations

import sys

from dealer import __version__

from . import kit
from .console import terminal
from .i18n import printable, word

app = kit.Group(
    name="dealer",
    help="Dealing side of sports-bridge tournaments: machines, scanners, the deal bank, the draw, export.",
)


def _version(value: bool) -> None:
    if value:
        kit.echo(f"dealer {__version__}")
        raise kit.Exit()


@app.callback()
def _root(
    version: bool = kit.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
    lang: str | None = kit.Option(
        None,
        "--lang",
        help="Language of help and errors: ru or en (default: the config's language, then LANG, then ru).",
    ),
) -> None:
    """Dealing side of sports-bridge tournaments."""


def print_error(message: str) -> None:
    """``error: message`` on stderr (the word in bold red on a terminal); the message's control characters shown."""
    prefix = word("error:")
    if terminal(sys.stderr):
        prefix = f"\x1b[1;31m{prefix}\x1b[0m"
    sys.stderr.write(f"{prefix} {printable(message)}\n")
    sys.stderr.flush()


def fail(message: str) -> kit.Exit:
    """Print an error on stderr and return the exit to raise (code 1)."""
    print_error(message)
    return kit.Exit(1)
