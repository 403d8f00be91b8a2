"""The chief judge's custody as the service holds it: who holds the unlocked key, when it was last used (it locks
itself after ``IDLE_LOCK_S`` without a step that needs it), and the throttle of passphrase tries (1 s, doubling, at
most 5 min). Time is passed in; the HTTP side (cookies, the loopback-or-HTTPS check, the routes' refusals) is
``dealer.web.custody``'s (docs/custody.md).
"""

from __future__ import annotations

import ctypes
import hmac
import logging
import secrets
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from hashlib import sha256

log = logging.getLogger("dealer.web")

IDLE_LOCK_S = 30 * 60
FIRST_WAIT_S = 1.0
LONGEST_WAIT_S = 300.0


class CustodyState(StrEnum):
    NONE = "none"  # no custody record yet: the chief judge sets one up
    LOCKED = "locked"
    UNLOCKED = "unlocked"
    ELSEWHERE = "elsewhere"  # unlocked for another browser: this one signs in with the passphrase to take it over


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
