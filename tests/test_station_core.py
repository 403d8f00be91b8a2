"""The station core (``dealer.app.station_core``) as a table: events in, commands out, with a fake clock.

No asyncio, no sockets, no sleeps, no bank: each row applies one event at a given ``now`` and compares the commands
with the ones written here by hand from the rules in the module's docstrings (``station_core``, ``station_steps``,
``ledger_writes``: which status an event leads to, what is announced and told, when a waiting write is retried —
``RETRY_PAUSES`` 0.1, 0.25, 0.5 … seconds after its 1st, 2nd, 3rd failure). A command is compared by a short
summary (its kind and the fields that decide the step), not by running the code under test for the answer.

The writer-vs-void race is three rows of one table: a deal's commit waits for the bank, its retry goes to the
bank's thread, the judge voids the waiting deals while it is in flight (answered ``AwaitLanding``), and the retry
then is banked, refused, or fails again (and is retried at the right time).
"""

from __future__ import annotations

import ast
import logging
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from _web_server import regulation
from bank_support import random_deal

import dealer.app.station_core as core_module
from dealer.app.config import StationConfig
from dealer.app.ledger_writes import LedgerWrite, SlotStatus
from dealer.app.station_core import (
    AfterVoid,
    Command,
    CommitCounted,
    CommitDeal,
    Connect,
    Continue,
    DealRefused,
    DealRequested,
    DeviceStep,
    Event,
    LinkUp,
    Log,
    MarkDealing,
    Move,
    NextDeal,
    OpenDevice,
    Pause,
    ProgressRead,
    Publish,
    ReadProgress,
    RecordVoid,
    Refuse,
    RequestDeal,
    RetryAt,
    RetryPending,
    SendState,
    Start,
    StationCore,
    Tell,
    Tick,
    VoidPending,
    Write,
    WriteRefused,
    WriteSucceeded,
    WriteTurn,
    WriteUnavailable,
)
from dealer.app.station_core import Answer as Answered
from dealer.app.station_state import StationEvent
from dealer.bank.api import CommittedDeal, DealSource
from dealer.core.events import DealStarted, DeviceFault, FaultKind

Row = tuple[str, ...]


def summary(cmd: Command) -> Row:
    """A command as the table writes it: its kind and what decides the step."""
    match cmd:
        case Publish():
            m = cmd.message
            return ("publish", str(m["type"]), str(m.get("status") or m.get("reason") or ""))
        case Tell():
            msg = cmd.message
            key = getattr(msg, "key", "")
            return ("tell", str(getattr(msg, "type", "")), str(key))
        case SendState():
            return ("state",)
        case Log():
            return ("log", logging.getLevelName(cmd.level))
        case CommitDeal():
            return ("commit", str(cmd.item.attempt))
        case RecordVoid():
            return ("void", str(cmd.item.attempt), cmd.item.reason)
        case RetryAt():
            return ("retry_at", repr(cmd.at))
        case Refuse():
            return ("refuse", cmd.text)
        case Answered():
            return ("answer", str(cmd.value))
        case Write():
            return ("write", cmd.item.kind, cmd.item.reason)
        case ReadProgress():
            return ("progress", repr(cmd.then))
        case RequestDeal():
            return ("request_deal", str(cmd.raise_refusal))
        case MarkDealing():
            return ("mark", str(cmd.attempt))
        case Continue():
            return ("continue", type(cmd.event).__name__)
        case OpenDevice():
            return ("open", str(cmd.generation))
        case _:
            return (type(cmd).__name__.lower(),)


@dataclass
class Bench:
    """One core, its waiting deal and the bank's answer to it."""

    core: StationCore
    item: LedgerWrite
    banked: CommittedDeal

    def apply(self, event: Event) -> list[Row]:
        return [summary(c) for c in self.core.handle(event)]


def a_core(target: int = 6) -> StationCore:
    return StationCore(StationConfig(name="A"), regulation(2, 32, target=target))


def waiting_commit() -> Bench:
    """A deal's commit (attempt 1) tried at t=0, the bank busy: queued, retried 0.1 s after the failure."""
    core = a_core()
    source = DealSource("station", station="A", variant=2, shown_cards=32, dealing_order=bytes(range(52)))
    item = LedgerWrite("commit", 1, 0.0, deal=random_deal(random.Random(5)), source=source)
    core.committing = 1  # an accepted deal on its way to disk (as the core counts a DealComplete)
    bench = Bench(core, item, CommittedDeal(deal_id=1, commitment="cd" * 32, ledger_index=4, ledger_head="ab" * 32))
    assert bench.apply(WriteTurn(item, 0.0)) == [("commit", "1")]  # nothing waits: tried at once
    assert core.slot.status is SlotStatus.COMMIT_IN_FLIGHT
    assert bench.apply(WriteUnavailable(item, "busy", 10.0)) == [
        ("log", "WARNING"),
        ("tell", "fault", "guide.bank_waiting"),  # told on the first failure
        ("publish", "station", "bank_waiting"),  # idle -> bank_waiting (WRITE_HELD), announced
        ("state",),
        ("state",),  # the judge sees the queue ...
        ("retry_at", "10.1"),  # ... and the retry is due 0.1 s after the 1st failure
    ]
    assert [w.kind for w in core.pending] == ["commit"] and core.status == "bank_waiting"
    assert bench.apply(Tick(10.05)) == []  # not due yet
    assert bench.apply(Tick(10.1)) == [("commit", "1")]  # the retry goes to the bank's thread
    assert core.slot.status is SlotStatus.COMMIT_IN_FLIGHT
    # the judge voids the waiting deals while the retry is in flight: the void waits for it
    assert bench.apply(VoidPending("judge", 10.2)) == [("awaitlanding",)]
    assert [w.kind for w in core.pending] == ["commit"] and core.committing == 1  # nothing decided yet
    return bench


BANK_BACK_EMPTY = [  # the queue emptied, no deal in progress, not dealing: the waiting deals are gone
    ("tell", "fault", "guide.bank_back"),
    ("publish", "station", "needs_redeal"),  # bank_waiting -> needs_redeal (BANK_BACK_EMPTY)
    ("state",),
]


def test_a_void_asked_while_the_commit_is_in_flight_finds_it_banked() -> None:
    bench = waiting_commit()
    core, item = bench.core, bench.item
    assert bench.apply(WriteSucceeded(item, bench.banked, 10.3)) == [("unmark",), ("countcommit",)]
    assert core.committed == 1 and core.committing == 0 and core.slot.status is SlotStatus.FREE
    # asked again once the attempt landed: the deal is banked, there is nothing to void
    assert bench.apply(VoidPending("judge", 10.3)) == [("refuse", "station A: no dealt deal is waiting for the bank")]
    assert core.pending.views() == []  # a banked commit is no longer shown as waiting
    assert bench.apply(CommitCounted(item, bench.banked, None, 1, 10.4)) == [
        ("publish", "deal_committed", ""),
        ("publish", "bank", ""),
        ("tell", "committed", ""),
        ("state",),  # after_commit: a write was still queued (this one): the status stays
        *BANK_BACK_EMPTY,
    ]
    assert not core.pending and core.retry_due is None


def test_a_void_asked_while_the_commit_is_in_flight_follows_the_banks_refusal() -> None:
    bench = waiting_commit()
    core, item = bench.core, bench.item
    assert bench.apply(WriteRefused(item, "a duplicate", 10.3)) == [
        ("log", "WARNING"),
        ("tell", "fault", "guide.bank_refused"),
        ("void", "1", "bank_refused"),  # the refused commit becomes its deal's void, tried at once
    ]
    assert core.committing == 0 and core.slot.status is SlotStatus.VOID_IN_FLIGHT
    # the judge's void, asked again: the deal is already a void (of the bank's refusal), nothing is given up
    assert bench.apply(VoidPending("judge", 10.3)) == [("refuse", "station A: no dealt deal is waiting for the bank")]
    assert bench.apply(WriteSucceeded(item, None, 10.4)) == [
        ("unmark",),
        ("publish", "deal_voided", "bank_refused"),  # told once the ledger has it
        *BANK_BACK_EMPTY,
    ]
    assert not core.pending and core.committed == 0


def test_a_void_asked_while_the_commit_is_in_flight_stands_when_the_bank_is_still_unavailable() -> None:
    bench = waiting_commit()
    core, item = bench.core, bench.item
    # the retry fails as the first did: the same trouble is not told again; the 2nd failure waits 0.25 s
    assert bench.apply(WriteUnavailable(item, "busy", 20.0)) == [("state",), ("retry_at", "20.25")]
    assert core.slot.status is SlotStatus.FREE
    assert bench.apply(VoidPending("judge", 20.1)) == [("wake",), ("state",), ("answer", "1")]
    assert [(w.kind, w.reason) for w in core.pending] == [("void", "bank_unavailable")] and core.committing == 0
    assert item.detail == {"detail": "busy", "tries": 2, "by": "judge"}
    assert core.retry_due == 20.1  # the void entry is due at once (the judge's Wake)
    assert bench.apply(Tick(20.1)) == [("void", "1", "bank_unavailable")]
    # the void entry waits too: its 3rd failure (tries go on) waits 0.5 s
    assert bench.apply(WriteUnavailable(item, "busy", 30.0)) == [("state",), ("retry_at", "30.5")]
    assert bench.apply(Tick(30.25)) == []
    assert bench.apply(Tick(30.5)) == [("void", "1", "bank_unavailable")]
    assert bench.apply(WriteSucceeded(item, None, 30.6)) == [
        ("unmark",),
        ("publish", "deal_voided", "bank_unavailable"),
        *BANK_BACK_EMPTY,
    ]
    assert not core.pending and core.committed == 0


def test_a_new_trouble_is_told_again_and_the_pause_grows_to_two_seconds() -> None:
    bench = waiting_commit()
    item = bench.item
    answers = [(11.0, "busy", "11.25"), (12.0, "disk full", "12.5"), (13.0, "disk full", "14.0"),
               (14.0, "disk full", "16.0"), (16.0, "disk full", "18.0")]  # fmt: skip
    for now, error, due in answers:
        told = bench.apply(WriteUnavailable(item, error, now))
        assert told[-1] == ("retry_at", due)
        assert (("tell", "fault", "guide.bank_waiting") in told) == (now == 12.0)  # only the new trouble
        assert bench.apply(Tick(float(due))) == [("commit", "1")]


def test_the_judges_retry_makes_the_waiting_write_due_now_and_is_refused_without_one() -> None:
    bench = waiting_commit()
    core, item = bench.core, bench.item
    bench.apply(WriteUnavailable(item, "busy", 20.0))  # next due at 20.25
    assert bench.apply(RetryPending(20.1)) == [("wake",)]
    assert bench.apply(Tick(20.1)) == [("commit", "1")]
    assert a_core().handle(RetryPending(1.0)) == [Refuse("station A: no ledger write is waiting for the bank")]
    assert core.slot.status is SlotStatus.COMMIT_IN_FLIGHT


def test_a_write_asked_while_others_wait_queues_behind_them() -> None:
    bench = waiting_commit()
    core = bench.core
    later = LedgerWrite("void", 2, 10.3, reason="fault")
    assert bench.apply(WriteTurn(later, 10.3)) == [("state",)]  # held; bank_waiting already: nothing announced
    assert [w.attempt for w in core.pending] == [1, 2]
    bench.apply(WriteSucceeded(bench.item, bench.banked, 10.4))
    told = bench.apply(CommitCounted(bench.item, bench.banked, True, 1, 10.5))
    assert told[-1] == ("void", "2", "fault")  # the next of the queue, never tried: at once


NEEDS_REDEAL: list[Row] = [("publish", "station", "needs_redeal"), ("state",)]
TARGET_REACHED: list[Row] = [("publish", "station", "target_reached"), ("publish", "cleared", ""), ("state",)]


def test_the_judges_commands_and_the_device_link() -> None:
    core = a_core(target=6)
    rows: list[tuple[Event, list[Row]]] = [
        (Start(1.0), [("refuse", "station A: connect a device first")]),
        (Connect(2.0), [("continue", "Move"), ("open", "1")]),
        (Move(StationEvent.CONNECT, 2.1), [("publish", "station", "connecting"), ("state",)]),
        (LinkUp(2.2), [("publish", "station", "ready"), ("state",)]),
        (Start(3.0), [("progress", "NextDeal(raise_refusal=True)")]),
        (ProgressRead(NextDeal(True), 0, 6, 3.1), [("request_deal", "True")]),
        (DealRequested(3.2), [("publish", "station", "dealing"), ("state",)]),
        (Start(3.3), []),  # pressed again while dealing: nothing
        (Pause(4.0), [("publish", "station", "paused"), ("state",)]),
        (Start(5.0), [("progress", "NextDeal(raise_refusal=True)")]),
        (ProgressRead(NextDeal(True), 0, 6, 5.1), [("request_deal", "True")]),
        (
            DealRefused("busy", True, 5.2),
            [("publish", "station", "needs_redeal"), ("state",), ("refuse", "station A: busy")],
        ),
        (Start(6.0), [("progress", "NextDeal(raise_refusal=True)")]),
        # the target is met once nothing is on its way to disk: the station stops, the audience's pages clear
        (
            ProgressRead(NextDeal(True), 6, 6, 6.1),
            [("publish", "station", "target_reached"), ("publish", "cleared", ""), ("state",)],
        ),
    ]
    for event, expected in rows:
        assert [summary(c) for c in core.handle(event)] == expected, event
    assert not core.running and core.status == "target_reached"
    assert core.machine.since == 6.1  # the time of the last change: the one passed in


def test_a_jam_voids_the_deal_with_a_ledger_entry_and_asks_for_the_progress() -> None:
    core = a_core()
    core.linked = core.running = True
    assert [summary(c) for c in core.handle(DeviceStep(DealStarted(7, 0.0), 1.0))] == [
        ("mark", "1"),  # the crash marker, before anyone is told
        ("publish", "deal_started", ""),
    ]
    fault = DeviceFault(FaultKind.JAM, "paper jam", 0.5, deal_id=7, position=3)
    assert [summary(c) for c in core.handle(DeviceStep(fault, 2.0))] == [
        ("write", "void", "fault"),  # voided in the ledger (published once it is there)
        ("tell", "fault", "guide.jam"),  # one fault told, with the jam's own guidance
        ("progress", repr(AfterVoid(by_device=True, by_operator=False))),
    ]
    assert core.errors == 1 and core.fault_counts == {"jam": 1} and core.voided[0]["time"] == 2.0


def test_the_core_reads_no_clock_and_does_no_io() -> None:
    """The runner reads the clock and does the I/O: the core module imports none of it and calls no clock."""
    source = Path(core_module.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    forbidden = {"time", "asyncio", "socket", "threading", "datetime", "os", "subprocess", "drivers", "fastapi"}
    assert imported & forbidden == set()
    for name in ("monotonic", "perf_counter", "time.time", "datetime.now", "sleep(", "open("):
        assert name not in source, name
    assert "dealer.bank.repository" not in source and "BankWorker" not in source and "PublicHub" not in source


@pytest.mark.parametrize("now", [0.0, 1e9])
def test_a_transition_is_stamped_with_the_time_passed_in(now: float) -> None:
    core = a_core()
    core.handle(Connect(now))
    core.handle(Move(StationEvent.CONNECT, now))
    assert core.machine.since == now and core.status == "connecting"


def test_a_deal_finished_after_the_pause_waits_for_the_bank_and_the_station_stays_paused() -> None:
    core = a_core()
    assert [summary(c) for c in core.handle(Pause(1.0))] == [("publish", "station", "paused"), ("state",)]
    source = DealSource("station", station="A", variant=2, shown_cards=32, dealing_order=bytes(range(52)))
    item = LedgerWrite("commit", 3, 2.0, deal=random_deal(random.Random(9)), source=source)
    core.committing = 1
    banked = CommittedDeal(deal_id=4, commitment="cd" * 32, ledger_index=9, ledger_head="ef" * 32)
    bench = Bench(core, item, banked)
    assert bench.apply(WriteTurn(item, 2.0)) == [("commit", "3")]
    told = bench.apply(WriteUnavailable(item, "busy", 40.0))
    assert told[2:] == [("publish", "station", "bank_waiting"), ("state",), ("state",), ("retry_at", "40.1")]
    assert core.paused_under_wait  # the judge's pause, covered by bank_waiting
    assert bench.apply(Tick(40.1)) == [("commit", "3")]
    assert bench.apply(WriteSucceeded(item, banked, 40.2)) == [("unmark",), ("countcommit",)]
    assert bench.apply(CommitCounted(item, banked, None, 4, 40.3)) == [
        ("publish", "deal_committed", ""),
        ("publish", "bank", ""),
        ("tell", "committed", ""),
        ("state",),
        ("tell", "fault", "guide.bank_back"),
        ("publish", "station", "paused"),  # bank_waiting -> paused (BANK_BACK_PAUSED): still the judge's pause
        ("state",),
    ]
    assert not core.paused_under_wait and core.status == "paused" and core.last_bank_deal == 4
