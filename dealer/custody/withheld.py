"""The key withheld from a step run for someone who is not the chief judge, though it is unlocked.

The service holds the unlocked key for the browser that signed in with the passphrase; a request from any other
client (the account that runs the service reads the director's link from ``var/``) runs with the key withheld,
as if it were locked. A context variable carries this from the request to the bank's thread (the web layer runs
each bank step in a copy of the request's context), so the bank needs no notion of requests or browsers.
"""

from __future__ import annotations

from contextvars import ContextVar

_WITHHELD: ContextVar[bool] = ContextVar("dealer_custody_key_withheld", default=False)


def withhold_key() -> None:
    """From now on in this context (a web request, and the bank steps it runs), the key is not there."""
    _WITHHELD.set(True)


def key_withheld() -> bool:
    return _WITHHELD.get()
