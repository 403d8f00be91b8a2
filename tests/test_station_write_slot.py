"""The station's write slot (``dealer.app.ledger_writes``): the writer-vs-void ordering as transitions.

A table test of every (slot status, event) pair, and the race of ``tests/test_station_void_in_flight.py`` replayed
as events on a fake clock — no asyncio, no bank, no sleeps. Expected values are written out by hand.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from dealer.app.ledger_writes import (
    SLOT_TRANSITIONS,
    SlotCommand,
    SlotEvent,
    SlotStatus,
    WriteSlot,
    retry_at,
    retry_pause,
)

STATUSES = ("free", "commit_in_flight", "void_in_flight")
EVENTS = ("commit_sent", "void_sent", "landed", "void_asked")

# (status, event) -> (status, command), by hand: a new attempt takes the slot and a landing frees it from anywhere;
# the judge's void waits only for a commit in flight.
EXPECTED: dict[tuple[str, str], tuple[str, str]] = {
    **{(s, "commit_sent"): ("commit_in_flight", "none") for s in STATUSES},
    **{(s, "void_sent"): ("void_in_flight", "none") for s in STATUSES},
    **{(s, "landed"): ("free", "none") for s in STATUSES},
    ("free", "void_asked"): ("free", "void_waiting"),
    ("void_in_flight", "void_asked"): ("void_in_flight", "void_waiting"),
    ("commit_in_flight", "void_asked"): ("commit_in_flight", "await_landing"),
}


@dataclass
class FakeClock:
    now: float = 1000.0

    def tick(self, seconds: float) -> float:
        self.now += seconds
        return self.now


def slot_at(status: str) -> WriteSlot:
    slot = WriteSlot()
    slot.status = SlotStatus(status)
    return slot


def test_the_slot_names_are_the_listed_ones() -> None:
    assert {s.value for s in SlotStatus} == set(STATUSES)
    assert {e.value for e in SlotEvent} == set(EVENTS)
    assert {c.value for c in SlotCommand} == {"none", "await_landing", "void_waiting"}


def test_the_table_is_total_and_holds_exactly_the_expected_transitions() -> None:
    assert len(SLOT_TRANSITIONS) == len(STATUSES) * len(EVENTS) == 12
    table = {(s.value, e.value): (t.value, c.value) for (s, e), (t, c) in SLOT_TRANSITIONS.items()}
    assert table == EXPECTED


@pytest.mark.parametrize(("before", "event"), list(itertools.product(STATUSES, EVENTS)))
def test_every_pair_moves_the_slot_and_answers_the_listed_command(before: str, event: str) -> None:
    after, command = EXPECTED[(before, event)]
    slot = slot_at(before)
    step = slot.handle(SlotEvent(event), now=3.0)
    assert (step.before, step.event, step.after, step.command, step.at) == (before, event, after, command, 3.0)
    assert slot.status == after
    assert slot.since == (3.0 if after != before else 0.0)


def test_the_retries_are_spaced_by_the_growing_pauses_then_every_two_seconds() -> None:
    clock = FakeClock(100.0)
    due = [retry_at(tries, clock.now) for tries in range(1, 8)]
    assert due == pytest.approx([100.1, 100.25, 100.5, 101.0, 102.0, 102.0, 102.0])
    with pytest.raises(ValueError, match="at least 1"):
        retry_pause(0)


@pytest.mark.parametrize("retry_banks", [True, False], ids=["retry-banked", "retry-failed"])
def test_a_void_asked_while_the_retry_is_in_flight_waits_for_its_landing(retry_banks: bool) -> None:
    """The race of test_station_void_in_flight, as events: the first commit fails (the bank is busy), its retry is
    in the bank's thread when the judge voids; the void waits for the landing and is then asked again."""
    clock, slot = FakeClock(), WriteSlot()
    assert slot.handle(SlotEvent.COMMIT_SENT, clock.now).command is SlotCommand.NONE
    slot.handle(SlotEvent.LANDED, clock.tick(0.02))  # busy: the write is queued, tried once
    due = retry_at(1, clock.now)
    assert due == pytest.approx(1000.12)
    clock.now = due  # the drainer's pause is over
    slot.handle(SlotEvent.COMMIT_SENT, clock.now)  # the retry is in the bank's thread
    asked = slot.handle(SlotEvent.VOID_ASKED, clock.tick(0.01))  # the judge's void, while it is held
    assert (asked.command, slot.status) == ("await_landing", "commit_in_flight")
    assert slot.handle(SlotEvent.VOID_ASKED, clock.tick(0.5)).command == "await_landing"  # asked again: still
    landed = slot.handle(SlotEvent.LANDED, clock.tick(0.2))  # banked or failed: either way the slot is free
    assert landed.after == "free" and slot.since == pytest.approx(1000.83)
    again = slot.handle(SlotEvent.VOID_ASKED, clock.now)
    assert again.command == "void_waiting"  # now the queue says what is waiting: nothing if banked, the deal if not
    if not retry_banks:  # the void of the failed deal goes to the bank; a second void asked meanwhile need not wait
        slot.handle(SlotEvent.VOID_SENT, clock.tick(0.01))
        assert slot.handle(SlotEvent.VOID_ASKED, clock.now).command == "void_waiting"


def test_a_refused_commit_resent_as_a_void_lands_twice_and_frees_the_slot() -> None:
    """The bank refuses a commit for good: the station re-sends it as a void inside the same attempt, whose inner
    landing comes before the outer one — both free the slot, neither raises."""
    clock, slot = FakeClock(), WriteSlot()
    slot.handle(SlotEvent.COMMIT_SENT, clock.now)
    assert slot.handle(SlotEvent.VOID_SENT, clock.tick(0.01)).after == "void_in_flight"
    assert slot.handle(SlotEvent.VOID_ASKED, clock.now).command == "void_waiting"  # a void need not be waited for
    assert slot.handle(SlotEvent.LANDED, clock.tick(0.01)).after == "free"
    assert slot.handle(SlotEvent.LANDED, clock.now).after == "free"
