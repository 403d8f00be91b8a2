"""The chief judge's custody on the director's console: set up, unlock with the passphrase, lock (docs/custody.md).

The director's link lets a browser reach the console; the custody passphrase is what opens the bank's key (and so
K, the drawn deals and signing). The key is held in the service's memory only while unlocked: it locks itself after
``IDLE_LOCK_S`` without a step that needs it, and a wrong passphrase makes the next try wait (1 s, doubling, at most
5 min). The passphrase is taken only over loopback or HTTPS: never in clear over the hall's Wi-Fi.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from ipaddress import ip_address

from fastapi import Request

log = logging.getLogger("dealer.web")

IDLE_LOCK_S = 30 * 60
FIRST_WAIT_S = 1.0
LONGEST_WAIT_S = 300.0


class CustodyState(StrEnum):
    NONE = "none"  # no custody record yet: the chief judge sets one up
    LOCKED = "locked"
    UNLOCKED = "unlocked"


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
    """When the key was last used; the throttle of passphrase tries. Time is passed in (monotonic seconds)."""

    idle_lock_s: float = IDLE_LOCK_S
    last_use: float = 0.0
    throttle: SignInThrottle = field(default_factory=SignInThrottle)

    def touch(self, now: float) -> None:
        self.last_use = now

    def idle(self, now: float) -> bool:
        return now - self.last_use >= self.idle_lock_s


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
