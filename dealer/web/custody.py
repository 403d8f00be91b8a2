"""The chief judge's custody on the director's console: set up, unlock with the passphrase, lock (docs/custody.md).

The director's link lets a browser reach the console; the custody passphrase is what opens the bank's key (and so
K, the drawn deals and signing). The state (who holds the key, the idle lock, the throttle of tries) is
``dealer.app.custody``'s; here are its HTTP checks: the token a request presents, the routes' dependency and the
refusal answered. The passphrase is taken only over loopback or HTTPS (``auth.private_channel``) — never in clear
over the hall's Wi-Fi, whatever ``[secrets] allow_plain_http`` says.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import HTTPException, Request, WebSocket

from dealer.app.custody import CustodySession
from dealer.core.errors import DealerError
from dealer.custody import CustodyLockedError
from dealer.custody.withheld import withhold_key
from dealer.serving.i18n import error_detail

from .auth import bearer

CUSTODY_COOKIE = "dealer_custody"


def presented_custody(conn: Request | WebSocket) -> str | None:
    """The custody token a client presents: after the ``.`` of a Bearer credential, else the custody cookie."""
    credential = bearer(conn)
    if credential is not None:
        return credential[1]
    return conn.cookies.get(CUSTODY_COOKIE)


def key_access(session: CustodySession, role: str) -> Callable[[Request], Awaitable[None]]:
    """A route dependency: the request may use the unlocked key only if it is the director's and presents the
    signed-in browser's token; otherwise every step it runs finds the key withheld (as locked). Async, so the
    mark is made in the request's own context, which the bank's steps run in."""

    async def dependency(request: Request) -> None:
        if role != "director" or not session.holds(presented_custody(request)):
            withhold_key()

    return dependency


def refusal(exc: DealerError) -> HTTPException:
    """A refused step as the console gets it: 423 Locked when it needs the key (the console asks for the
    passphrase), else 400."""
    return HTTPException(423 if isinstance(exc, CustodyLockedError) else 400, error_detail(exc))
