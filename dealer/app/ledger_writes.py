"""The station's ledger writes, the part that is a rule and not I/O: when a queued write is retried, and how the
judge's void of the waiting deals is ordered against the write the bank's thread is making.

The writer-vs-void race (#32 item 6, ``tests/test_station_void_in_flight.py``) as a transition: the write slot is
``free``, or holds a commit or a void in flight. The judge's ``void_asked`` answers with a command: a commit in
flight cannot be stopped, so the void waits for it to land (``await_landing``) and is asked again — what it then
voids, and what the judge is told, is what the ledger holds; otherwise the waiting deals are voided now
(``void_waiting``). Pure: no I/O, no clock — ``retry_at`` takes the time the runner read.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

RETRY_PAUSES = (0.1, 0.25, 0.5, 1.0, 2.0)  # seconds between retries of a queued write (then every 2 s)


def retry_pause(tries: int) -> float:
    """The pause before the next attempt of a write that has failed ``tries`` times (``tries`` >= 1)."""
    if tries < 1:
        raise ValueError(f"a retry follows a failed attempt: tries must be at least 1, not {tries}")
    return RETRY_PAUSES[min(tries, len(RETRY_PAUSES)) - 1]


def retry_at(tries: int, now: float) -> float:
    """When the next attempt is due, on the runner's clock."""
    return now + retry_pause(tries)


class SlotStatus(StrEnum):
    """What the bank's thread is writing for the station."""

    FREE = "free"
    COMMIT_IN_FLIGHT = "commit_in_flight"
    VOID_IN_FLIGHT = "void_in_flight"


class SlotEvent(StrEnum):
    COMMIT_SENT = "commit_sent"  # an attempt to commit a deal went to the bank's thread
    VOID_SENT = "void_sent"  # an attempt to record a void went (a refused commit becomes one while in flight)
    LANDED = "landed"  # the attempt ended: banked, refused or failed
    VOID_ASKED = "void_asked"  # the judge voids the deals waiting for the bank


class SlotCommand(StrEnum):
    NONE = "none"
    AWAIT_LANDING = "await_landing"  # the commit in flight decides first: wait for it, then ask again
    VOID_WAITING = "void_waiting"  # turn the waiting commits into voids now


# (status, event) -> (status, command). A new attempt replaces the slot's (a refused commit is re-sent as a void
# before its own attempt has ended), and a landing frees it from any status (the outer attempt of that re-send
# lands after the inner one): these are what the station did, so they are allowed from every status.
SLOT_TRANSITIONS: dict[tuple[SlotStatus, SlotEvent], tuple[SlotStatus, SlotCommand]] = {
    **{(s, SlotEvent.COMMIT_SENT): (SlotStatus.COMMIT_IN_FLIGHT, SlotCommand.NONE) for s in SlotStatus},
    **{(s, SlotEvent.VOID_SENT): (SlotStatus.VOID_IN_FLIGHT, SlotCommand.NONE) for s in SlotStatus},
    **{(s, SlotEvent.LANDED): (SlotStatus.FREE, SlotCommand.NONE) for s in SlotStatus},
    (SlotStatus.FREE, SlotEvent.VOID_ASKED): (SlotStatus.FREE, SlotCommand.VOID_WAITING),
    (SlotStatus.VOID_IN_FLIGHT, SlotEvent.VOID_ASKED): (SlotStatus.VOID_IN_FLIGHT, SlotCommand.VOID_WAITING),
    (SlotStatus.COMMIT_IN_FLIGHT, SlotEvent.VOID_ASKED): (SlotStatus.COMMIT_IN_FLIGHT, SlotCommand.AWAIT_LANDING),
}


@dataclass(frozen=True, slots=True)
class SlotStep:
    before: SlotStatus
    event: SlotEvent
    after: SlotStatus
    command: SlotCommand
    at: float


class WriteSlot:
    """The write slot of one station; ``handle`` returns the step with its command (the runner carries it out)."""

    __slots__ = ("since", "status")

    def __init__(self) -> None:
        self.status = SlotStatus.FREE
        self.since = 0.0

    def handle(self, event: SlotEvent, now: float) -> SlotStep:
        before = self.status
        after, command = SLOT_TRANSITIONS[(before, event)]  # total: every pair is listed (the table test says so)
        if after is not before:
            self.status, self.since = after, now
        return SlotStep(before, event, after, command, now)
