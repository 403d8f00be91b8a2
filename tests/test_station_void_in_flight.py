"""The judge voids a waiting deal while the station's retry of it is on its way to the bank.

The retry is already in the bank's thread; the void cannot stop it. The station must report what the ledger
then holds: the deal banked (no void told to the hall), or, when the retry fails, a void entry by the judge.
Before a2193ce the void turned the write in flight into a "void" under it: a retry that succeeded put the deal
in the bank while the hall was told "voided" and no void entry was written. After it the void answered at once
and decided the deal in flight later: the judge got "1 voided" while the state sent with the answer still showed
a commit on its way (or the deal was banked after all) — the loaded-run failure of
test_bank_writers.py::test_the_judge_voids_a_waiting_deal_with_a_ledger_entry (#32 item 6). The void now waits
for the attempt to end; these tests hold the attempt in the bank's thread until the void has been asked.
"""

from __future__ import annotations

import asyncio
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _web_server import regulation
from bank_support import random_deal

from dealer.app.bankworker import BankWorker
from dealer.app.config import StationConfig
from dealer.app.hub import PublicHub
from dealer.app.ledger_writes import LedgerWrite
from dealer.app.operator import OperatorBus
from dealer.app.station import Station, StationError
from dealer.bank.api import CommittedDeal, DealSource
from dealer.bank.errors import BankUnavailableError
from dealer.bank.store import SqliteBank
from dealer.core import Deal


@dataclass
class Answer:
    """What the judge's void answered (the count, or the refusal) and the queue the console showed with it."""

    voided: int | str
    pending: list[tuple[str, object]]
    committed: int


class HeldBank:
    """A real SQLite bank whose commits the test holds: the first fails as a busy file does, the second waits
    (in the bank's thread) until the test lets it go, then succeeds or fails as the test says."""

    def __init__(self, path: Path, second_succeeds: bool) -> None:
        self.bank = SqliteBank(path)
        self.second_succeeds = second_succeeds
        self.commits = 0
        self.entered = threading.Event()
        self.release = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bank, name)

    def commit_deal(self, deal: Deal, source: DealSource) -> CommittedDeal:
        self.commits += 1
        if self.commits == 1:
            raise BankUnavailableError("{path}: the bank is busy", path="test")
        if self.commits == 2:
            self.entered.set()
            self.release.wait(60)
            if not self.second_succeeds:
                raise BankUnavailableError("{path}: the bank is busy", path="test")
        return self.bank.commit_deal(deal, source)


async def _scenario(path: Path, second_succeeds: bool) -> tuple[Station, list[dict[str, Any]], HeldBank, Answer]:
    held = HeldBank(path, second_succeeds)
    worker = BankWorker(lambda: held)
    hub = PublicHub()
    published: list[dict[str, Any]] = []
    hub.sinks.append(published.append)
    station = Station(StationConfig(name="A"), regulation(2, 32, target=6), worker, hub, OperatorBus())
    source = DealSource("station", station="A", variant=2, shown_cards=32, dealing_order=bytes(range(52)))
    station.core.committing += 1  # as the core does for an accepted deal (a commit on its way)
    await station._write(LedgerWrite("commit", 1, 0.0, deal=random_deal(random.Random(5)), source=source))
    assert [w.kind for w in station.pending] == ["commit"]  # the first try failed: queued, retried by the drainer
    await asyncio.to_thread(held.entered.wait, 60)  # the retry is in the bank's thread now
    voiding = asyncio.ensure_future(station.void_pending("judge"))  # the judge's void, asked while it is held
    # the retry may end only once the void has begun: the loop runs its ready callbacks in order, so the void's
    # first step (up to its first wait) runs before this one, and the bank's answer comes after both
    asyncio.get_running_loop().call_soon(held.release.set)
    try:
        voided: int | str = await asyncio.wait_for(voiding, 60)
    except StationError as exc:
        voided = str(exc)
    view = station.view()  # what the judge's console shows with the answer
    answer = Answer(voided, [(str(p["kind"]), p["reason"]) for p in view.pending], view.committed)
    drainer = station._drainer
    assert drainer is not None
    await asyncio.wait_for(drainer, 60)
    worker.close()
    return station, published, held, answer


@pytest.mark.parametrize("second_succeeds", [True, False], ids=["retry-banked", "retry-failed"])
def test_a_void_asked_while_the_retry_is_in_flight_follows_what_the_bank_did(
    tmp_path: Path, second_succeeds: bool
) -> None:
    path = tmp_path / "bank.sqlite"
    station, published, held, answer = asyncio.run(_scenario(path, second_succeeds))
    told = [(m["type"], m.get("attempt")) for m in published if m.get("station") == "A"]
    with SqliteBank(path) as bank:
        deals = list(bank.entries_of_kind("deal"))
        voids = [e.data for e in bank.entries_of_kind("void")]
    assert not station.pending
    if second_succeeds:  # the bank took the deal before the void could: it is banked, and only that is told
        assert answer.voided == "station A: no dealt deal is waiting for the bank"  # not "1 voided"
        assert answer.pending == [] and answer.committed == 1  # banked, nothing shown as waiting
        assert (len(deals), voids) == (1, [])
        assert station.committed == 1
        assert not any(kind.endswith("voided") for kind, _ in told), told
    else:  # the retry failed: the judge's void stands, as a ledger entry saying who and why
        assert answer.voided == 1 and answer.pending == [("void", "bank_unavailable")]  # made, not promised
        assert (len(deals), len(voids)) == (0, 1)
        assert voids[0]["reason"] == "bank_unavailable" and voids[0]["detail"]["by"] == "judge"
        assert "busy" in voids[0]["detail"]["detail"]
        assert station.committed == 0
        assert any(kind.endswith("voided") and attempt == 1 for kind, attempt in told), told
    assert held.commits == 2
