"""The chief judge's custody on the director's console: set up, unlock with the passphrase, lock (docs/custody.md).

The director's link lets a browser reach the console; the custody passphrase is what opens the bank's key (and so
K, the drawn deals and signing). The key is held in the service's memory only while unlocked: it locks itself after
``IDLE_LOCK_S`` without a step that needs it, and a wrong passphrase makes the next try wait (1 s, doubling, at most
5 min). The passphrase is taken only over loopback or HTTPS: never in clear over the hall's Wi-Fi.
"""

from __future__ import annotations

import ctypes
import hmac
import logging
import secrets
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from hashlib import sha256
from ipaddress import ip_address

from fastapi import HTTPException, Request, WebSocket

from dealer.core.errors import DealerError
from dealer.custody import CustodyLockedError
from dealer.custody.withheld import withhold_key
from dealer.serving.i18n import error_detail

from .auth import bearer

log = logging.getLogger("dealer.web")

IDLE_LOCK_S = 30 * 60
FIRST_WAIT_S = 1.0
LONGEST_WAIT_S = 300.0


class CustodyState(StrEnum):
    NONE = "none"  # no custody record yet: the chief judge sets one up
    LOCKED = "locked"
    UNLOCKED = "unlocked"
    ELSEWHERE = "elsewhere"  # unlocked for another browser: this one signs in with the passphrase to take it over


CUSTODY_COOKIE = "dealer_custody"


@dataclass
class SignInThrottle:
    """Failed passphrases: each makes the next try wait twice as long (1 s, 2 s, … 5 min); a success resets it."""

    failures: int = 0
    not_before: float = 0.0

    def wait(self, now: float) -> float:
        """Seconds before another try is taken (0: now)."""
        return max(self.not_before - now, 0.0)

    def failed(self, now: float) -> None:
        self.failures += 1
        self.not_before = now + min(FIRST_WAIT_S * 2 ** (self.failures - 1), LONGEST_WAIT_S)

    def succeeded(self) -> None:
        self.failures, self.not_before = 0, 0.0


@dataclass
class CustodySession:
    """Who holds the unlocked key (the browser that signed in), when it was last used, and the throttle of
    passphrase tries. Time is passed in (monotonic seconds).

    A sign-in hands its browser a fresh token (an HttpOnly cookie, or after a ``.`` in the director's Bearer
    credential for scripts); only requests that present it may use the key. The director's link alone, which the
    account that runs the service can read in ``var/``, never reaches the key."""

    idle_lock_s: float = IDLE_LOCK_S
    last_use: float = 0.0
    throttle: SignInThrottle = field(default_factory=SignInThrottle)
    holder: bytes | None = None  # SHA-256 of the signed-in browser's token; None: nobody holds the key

    def sign_in(self) -> str:
        """A new holder (any earlier one loses the key): the token to give to its browser."""
        token = secrets.token_urlsafe(32)
        self.holder = sha256(token.encode()).digest()
        return token

    def sign_out(self) -> None:
        self.holder = None

    def holds(self, token: str | None) -> bool:
        if self.holder is None or not token:
            return False
        return hmac.compare_digest(self.holder, sha256(token.encode("utf-8", "replace")).digest())

    def touch(self, now: float) -> None:
        self.last_use = now

    def idle(self, now: float) -> bool:
        return now - self.last_use >= self.idle_lock_s


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


def private_channel(request: Request) -> bool:
    """The request came over loopback or HTTPS (a passphrase may travel on it)."""
    if request.url.scheme == "https":
        return True
    host = request.client.host if request.client else ""
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return host == "testclient"  # Starlette's in-process test client


def keep_memory_private() -> None:
    """Linux: no core dumps and no ptrace by other processes of the same account (PR_SET_DUMPABLE 0), so the
    account that runs the service cannot read the unlocked key out of its memory without root."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE = 4
            log.warning("could not make the process undumpable (errno %d)", ctypes.get_errno())
    except (OSError, AttributeError) as exc:
        log.warning("could not make the process undumpable: %s", exc)
