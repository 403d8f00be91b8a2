"""The station's status machine (``dealer.app.station_state``) as a table: every (status, event) pair.

No asyncio, no sockets, no sleeps: the machine is pure, its time is passed in. The expected table is written out
here by hand from what ``dealer/app/station_core.py`` does (which status each call sets, under which condition, and in
which statuses a call can come, given the station's lock and its awaits), in plain strings — not computed from the
module's own table.
"""

from __future__ import annotations

import itertools

import pytest

from dealer.app.station_state import (
    TRANSITIONS,
    InvalidTransition,
    StationEvent,
    StationMachine,
    StationStatus,
    next_status,
)

ALL = ("idle", "connecting", "ready", "dealing", "paused", "stopped", "needs_redeal", "bank_waiting",
       "target_reached", "disconnected", "error")  # fmt: skip

NOT_IDLE = tuple(s for s in ALL if s != "idle")  # a device was connected once: a deal can exist
LINKED = tuple(s for s in ALL if s not in ("idle", "connecting"))  # a device is open and its reader runs
# the open of a device (under the station's lock, after "connect"): nothing else sets ready or error meanwhile
DURING_OPEN = tuple(s for s in ALL if s not in ("idle", "ready", "error"))

# event -> {from status -> to status}; a pair not listed is invalid.
EXPECTED: dict[str, dict[str, str]] = {
    "connect": dict.fromkeys(ALL, "connecting"),
    "link_opened": dict.fromkeys(DURING_OPEN, "ready"),
    "link_closed": dict.fromkeys(ALL, "disconnected"),
    "reset": dict.fromkeys(LINKED, "ready"),
    "pause": dict.fromkeys(ALL, "paused"),
    "stop": dict.fromkeys(ALL, "stopped"),
    "reader_failed": dict.fromkeys(LINKED, "error"),
    "deal_requested": dict.fromkeys(NOT_IDLE, "dealing"),
    "device_refused": dict.fromkeys(NOT_IDLE, "needs_redeal"),
    "write_held": dict.fromkeys(ALL, "bank_waiting"),  # the start-up void of an interrupted deal, at idle too
    "target_reached": dict.fromkeys(NOT_IDLE, "target_reached"),
    "lost_deal_voided": dict.fromkeys(NOT_IDLE, "needs_redeal"),
    "board_refused": dict.fromkeys(NOT_IDLE, "needs_redeal"),
    # a void leaves a station at rest where it is; any other needs the judge's re-deal
    "deal_voided": {
        s: (s if s in ("idle", "stopped", "disconnected", "bank_waiting") else "needs_redeal") for s in ALL
    },
    # a deal recorded while no next one is dealt: dealing becomes paused, any other status stays
    "deal_recorded_idle": {s: ("paused" if s == "dealing" else s) for s in ALL},
    # the bank took every waiting write: only a station waiting for it
    "bank_back_dealing": {"bank_waiting": "dealing"},
    "bank_back_paused": {"bank_waiting": "paused"},
    "bank_back_empty": {"bank_waiting": "needs_redeal"},
}

PAIRS = list(itertools.product(ALL, EXPECTED))
ALLOWED = [(s, e, EXPECTED[e][s]) for s, e in PAIRS if s in EXPECTED[e]]
REFUSED = [(s, e) for s, e in PAIRS if s not in EXPECTED[e]]


def test_the_statuses_are_todays_strings_and_the_events_are_the_listed_ones() -> None:
    assert sorted(StationStatus) == sorted(ALL)  # the API, the pages and the relay keep seeing these
    assert {e.value for e in StationEvent} == set(EXPECTED)
    assert len(ALLOWED) == 156 and len(REFUSED) == 42  # 18 events x 11 statuses


def test_the_table_holds_exactly_the_expected_transitions() -> None:
    table = {(s.value, e.value): t.value for s, row in TRANSITIONS.items() for e, t in row.items()}
    assert table == {(s, e): t for s, e, t in ALLOWED}


@pytest.mark.parametrize(("before", "event", "after"), ALLOWED)
def test_an_allowed_event_moves_the_machine_to_the_listed_status(before: str, event: str, after: str) -> None:
    machine = StationMachine(StationStatus(before), since=5.0)
    step = machine.handle(StationEvent(event), now=7.5)
    assert (step.before, step.event, step.after, step.at) == (before, event, after, 7.5)
    assert machine.status == after
    assert machine.since == (7.5 if after != before else 5.0)  # the time of the last change, the caller's
    assert step.changed is (after != before)


@pytest.mark.parametrize(("before", "event"), REFUSED)
def test_every_other_pair_raises_naming_both_and_leaves_the_status(before: str, event: str) -> None:
    machine = StationMachine(StationStatus(before), since=5.0)
    with pytest.raises(InvalidTransition) as caught:
        machine.handle(StationEvent(event), now=7.5)
    assert (caught.value.status, caught.value.event) == (before, event)
    assert repr(before) in str(caught.value) and repr(event) in str(caught.value)
    assert (machine.status, machine.since) == (before, 5.0)
    with pytest.raises(InvalidTransition):
        next_status(StationStatus(before), StationEvent(event))


def test_a_station_starts_idle() -> None:
    assert StationMachine().status == "idle"


def test_the_web_station_cannot_assign_its_status() -> None:
    """The runner reads the machine's status; only an event moves it (no bare string is assigned)."""
    from dealer.app.station import Station

    prop = Station.__dict__["status"]
    assert isinstance(prop, property) and prop.fset is None
