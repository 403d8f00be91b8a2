"""The dealing-machine driver (asyncio): the open protocol over any transport.

One module per job: ``driver`` (the public API, the session and its reconnect supervision), ``io`` (the read,
timer and write loops over a transport), ``requests`` (commands in flight and the answers they wait for),
``operations`` (the deal or board copy in progress: the machine's reports become events and its outcome),
``cards`` (each reported card and deal end checked by :class:`dealer.core.dealcheck.DealCheck`, a broken rule
worded as a typed :class:`dealer.core.events.DeviceFault`).
"""

from .cards import fault_kind
from .driver import BUSY_RETRY, BUSY_RETRY_LIMIT, HOST_MAX_VERSION, HOST_MIN_VERSION, MachineDriver
from .operations import DriverStats

__all__ = [
    "BUSY_RETRY",
    "BUSY_RETRY_LIMIT",
    "HOST_MAX_VERSION",
    "HOST_MIN_VERSION",
    "DriverStats",
    "MachineDriver",
    "fault_kind",
]
