"""The station's ledger writes, the part that is a rule and not I/O: when a queued write is retried, and how the
judge's void of the waiting deals is ordered against the write the bank's thread is making.

The writer-vs-void race (#32 item 6, ``tests/test_station_void_in_flight.py``) as a transition: the write slot is
``free``, or holds a commit or a void in flight. The judge's ``void_asked`` answers with a command: a commit in
flight cannot be stopped, so the void waits for it to land (``await_landing``) and is asked again — what it then
voids, and what the judge is told, is what the ledger holds; otherwise the waiting deals are voided now
(``void_waiting``). The queue of writes the bank has not taken yet (``WriteQueue``): its order, when a failed
write is tried again and told, a refused commit turned into its deal's void, the judge giving up the waiting deals.
Pure: no I/O, no clock — ``retry_at`` and ``WriteQueue.failed`` take the time the runner read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from dealer.bank.api import DealSource
from dealer.core import Deal
from dealer.core.json_types import JsonObject

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


BANK_REFUSED = "bank_refused"  # a void's reason: the bank refused the deal for good (a duplicate of a banked one)
BANK_UNAVAILABLE = "bank_unavailable"  # voided by the judge while the bank could not take the deal


@dataclass(slots=True)
class LedgerWrite:
    """A ledger write the station owes the bank: a dealt deal to commit (its cards kept in memory until the bank
    has them), or a void to record (``reason`` and ``detail``)."""

    kind: str  # "commit" or "void"
    attempt: int
    since: float  # when the write was asked (the runner's clock)
    deal: Deal | None = None
    source: DealSource | None = None
    reason: str = ""
    detail: JsonObject = field(default_factory=dict)
    tries: int = 0  # failed attempts so far
    error: str = ""  # the last failure's text
    banked: bool = False  # the bank took this commit (it leaves the queue once its news is out)

    def view(self) -> JsonObject:
        return {"kind": self.kind, "attempt": self.attempt, "reason": self.reason or None, "tries": self.tries,
                "error": self.error, "since": self.since}  # fmt: skip


class WriteQueue:
    """The station's ledger writes the bank has not taken yet, in order, and the rules over them: a write waits
    behind earlier ones, a failed attempt is retried at ``retry_at`` and told to the judge once per new trouble, a
    commit the bank refuses for good becomes the void of that deal, and the judge may give up the waiting deals
    (each becomes a void entry in its place). Pure: the runner makes the attempts and keeps the clock."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: deque[LedgerWrite] = deque()

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[LedgerWrite]:
        return iter(self._items)

    def head(self) -> LedgerWrite:
        """The write to attempt next (the oldest)."""
        return self._items[0]

    def done(self) -> LedgerWrite:
        """The oldest write is made: it leaves the queue."""
        return self._items.popleft()

    def attempt_now(self) -> bool:
        """May a new write be attempted at once? Only when none waits (the order of the ledger is kept)."""
        return not self._items

    def hold(self, item: LedgerWrite) -> None:
        """Queue ``item`` behind the waiting writes."""
        self._items.append(item)

    def failed(self, item: LedgerWrite, error: str, now: float) -> tuple[bool, float]:
        """An attempt of ``item`` failed with ``error``: (tell the judge?, when to try again). Told on the first
        failure and when the trouble changes, not on every retry."""
        item.tries += 1
        tell = item.tries == 1 or error != item.error
        item.error = error
        return tell, retry_at(item.tries, now)

    @staticmethod
    def refused(item: LedgerWrite, error: str) -> None:
        """The bank refused ``item``'s deal for good: the write becomes that deal's void (tried afresh)."""
        item.kind, item.deal, item.source = "void", None, None
        item.reason, item.detail, item.tries, item.error = BANK_REFUSED, {"detail": error}, 0, ""

    def give_up(self, who: str) -> int:
        """The judge gives up the deals waiting for the bank: each waiting commit becomes a void entry in its place
        (reason ``bank_unavailable``, with the trouble that kept it and the tries); how many."""
        # a deal queued behind a waiting write was never tried itself: what keeps the queue waiting is its reason
        holding = next((w.error for w in self._items if w.error), "")
        n = 0
        for item in self._items:
            if item.kind == "commit" and not item.banked:
                n += 1
                item.kind, item.deal, item.source = "void", None, None
                item.reason = BANK_UNAVAILABLE
                item.detail = {"detail": item.error or holding, "tries": item.tries, "by": who}
        return n

    def views(self) -> list[JsonObject]:
        """What the judge's console shows of the waiting writes (a banked commit is no longer waiting)."""
        return [w.view() for w in self._items if not w.banked]
