"""One writer discipline (#19 item 1): concurrent writers wait their turn or are refused with a clear message,
and a station whose commit cannot be made keeps the deal, shows the fault, retries, and voids only when told.

The original finding: a 300,000-deal `dealer bank import` while `dealer serve` dealt made the station's commit
and its void fail with `database is locked`; the station went `disconnected` and the dealt deal vanished.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from _web_server import Running, regulation, running_service, service_config
from bank_support import random_deal, station_source
from custody_support import unlocked
from test_web_judge import Console, run_console, station_msg

from dealer.bank.store import BankBusyError, SqliteBank
from dealer.draw.verify import verify_bank
from dealer.formats.base import BoardRecord
from dealer.formats.lin import LIN

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

# Another process holding the bank's write lock until told to let go (as a long import transaction does).
HOLDER = textwrap.dedent(
    """
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.readline()
    db.execute("ROLLBACK")
    print("released", flush=True)
    sys.stdin.readline()
    """
)


class LockHolder:
    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "released"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def test_a_locked_bank_refuses_a_write_clearly_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bank.sqlite"
    unlocked(SqliteBank(path)).close()
    holder = LockHolder(path)
    try:
        with unlocked(SqliteBank(path, busy_timeout=0.05)) as bank:
            size = bank.ledger_size()
            with pytest.raises(BankBusyError) as err:
                bank.commit_deal(random_deal(random.Random(1)), station_source())
            assert str(path) in str(err.value) and "busy" in str(err.value) and "0.05 s" in str(err.value)
            assert bank.ledger_size() == size and bank.deal_count() == 0  # reads still work, nothing half-written
            holder.release()
            assert bank.commit_deal(random_deal(random.Random(1)), station_source()).deal_id == 1
            assert verify_bank(bank).ok
    finally:
        holder.close()


WRITER = textwrap.dedent(
    """
    import random, sys
    sys.path.insert(0, {tests!r})
    from bank_support import random_deal, station_source
    from custody_support import unlocked
    from dealer.bank.store import SqliteBank
    bank = unlocked(SqliteBank(sys.argv[1]))
    rng = random.Random(int(sys.argv[2]))
    for _ in range(int(sys.argv[3])):
        bank.commit_deal(random_deal(rng), station_source())
    bank.seal()
    """
)


def test_two_writer_processes_take_turns_and_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bank.sqlite"
    unlocked(SqliteBank(path)).close()
    script = WRITER.format(tests=str(ROOT / "tests"))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), str(seed), "200"], env=ENV) for seed in (1, 2)]
    assert [p.wait(120) for p in procs] == [0, 0]
    with unlocked(SqliteBank(path)) as bank:
        report = verify_bank(bank)
        assert report.ok, report.problem
        assert bank.deal_count() == 400 and report.seals == 2
        want = {random_deal(rng).to_bytes() for rng in (random.Random(1), random.Random(2)) for _ in range(200)}
        assert {d.deal.to_bytes() for d in bank.iter_deals()} == want


def _statuses(console: Console) -> list[str]:
    return [m["status"] for m in console.seen if m["type"] == "station"]


def _station_entries(path: Path) -> tuple[int, list[dict[str, Any]]]:
    with unlocked(SqliteBank(path)) as bank:
        deals = sum(1 for e in bank.entries_of_kind("deal") if e.data["src"].get("station") == "A")
        return deals, [e.data for e in bank.entries_of_kind("void")]


@pytest.fixture
def busy_server(tmp_path: Path) -> Any:
    cfg = service_config(
        tmp_path,
        stations=[{"name": "A", "cards_per_second": 2000.0}],
        bank={"path": str(tmp_path / "var" / "bank.sqlite"), "busy_timeout": 0.05},
    )
    with running_service(cfg, regulation(2, 32, target=6), autostart=False) as running:
        yield running


def test_a_station_keeps_its_deal_while_the_bank_is_locked_and_commits_it_after(busy_server: Running) -> None:
    path = busy_server.service.config.bank_path
    holder = LockHolder(path)

    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("start")
        waiting = await c.until(lambda m: m["type"] == "station" and m["pending"] and m["pending"][0]["tries"] >= 2)
        assert waiting["status"] == "bank_waiting" and waiting["pending"][0]["kind"] == "commit"
        assert "busy" in waiting["pending"][0]["error"]
        assert any(f["key"] == "guide.bank_waiting" for f in waiting["faults"])  # the judge sees the fault
        holder.release()
        done = await c.until(station_msg("target_reached"))
        assert done["committed"] == 6 and done["pending"] == []

    try:
        console = run_console(busy_server, script)
    finally:
        holder.close()
    assert "disconnected" not in _statuses(console) and "error" not in _statuses(console)
    deals, voids = _station_entries(path)
    assert deals == 6 and voids == []  # no deal lost, none voided
    with unlocked(SqliteBank(path)) as bank:
        assert verify_bank(bank).ok


def test_the_judge_voids_a_waiting_deal_with_a_ledger_entry(busy_server: Running) -> None:
    path = busy_server.service.config.bank_path
    holder = LockHolder(path)
    told: list[int] = []

    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("start")
        await c.until(lambda m: m["type"] == "station" and m["status"] == "bank_waiting" and m["pending"])
        assert (await c.cmd("pause"))["type"] == "ok"
        answer = await c.cmd("void_pending")
        assert answer["type"] == "ok"
        state = await c.until(lambda m: m["type"] == "station" and m["pending"])
        told.append(sum(1 for p in state["pending"] if p["reason"] == "bank_unavailable"))
        assert told[0] >= 1 and state["pending"][0]["kind"] == "void"  # still queued: the lock is held
        holder.release()
        await c.until(lambda m: m["type"] == "station" and not m["pending"] and m["status"] == "paused")
        again = await c.cmd("void_pending")
        assert again["type"] == "error" and "no dealt deal" in again["message"]

    try:
        run_console(busy_server, script)
    finally:
        holder.close()
    accepted = busy_server.service.stations["A"].session.accepted
    deals, voids = _station_entries(path)
    assert len(voids) == told[0] and all(v["reason"] == "bank_unavailable" for v in voids)
    assert all(v["detail"]["by"] == "judge" and "busy" in v["detail"]["detail"] for v in voids)
    assert deals + len(voids) == accepted  # every dealt deal is either in the bank or voided in the ledger


@pytest.mark.parametrize("void", [False, True], ids=["banked", "voided"])
def test_a_deal_finished_after_the_pause_waits_its_turn_and_the_station_stays_paused(
    tmp_path: Path, void: bool
) -> None:
    """The judge pauses while deal 1 waits for the bank and deal 2 is still being dealt: deal 2 finishes and waits
    behind deal 1 (never tried itself). Either both reach the bank when it is back, or the judge voids both and
    each void says why (the bank was busy) and by whom; the station is paused again, not "needs a re-deal". Full
    runs met this order by chance: the station ended at needs_redeal, and deal 2's void had an empty detail."""
    path = tmp_path / "var" / "bank.sqlite"
    cfg = service_config(
        tmp_path,
        stations=[{"name": "A", "cards_per_second": 20.0}],  # 2.6 s a deal: deal 2 is on the table at the pause
        bank={"path": str(path), "busy_timeout": 0.05},
    )

    def station(m: dict[str, Any]) -> bool:
        return bool(m["type"] == "station")

    with running_service(cfg, regulation(2, 32, target=6), autostart=False) as server:
        holder = LockHolder(path)

        async def script(c: Console) -> None:
            await c.cmd("connect", device="simulator")
            await c.until(station_msg("ready"))
            await c.cmd("start")
            await c.until(lambda m: station(m) and m["status"] == "bank_waiting" and m["pending"])
            assert (await c.cmd("pause"))["type"] == "ok"
            queued = await c.until(lambda m: station(m) and len(m["pending"]) == 2)
            assert [p["kind"] for p in queued["pending"]] == ["commit", "commit"]
            if void:
                assert (await c.cmd("void_pending"))["type"] == "ok"
            holder.release()
            await c.until(lambda m: station(m) and not m["pending"] and m["status"] == "paused")

        try:
            console = run_console(server, script)
        finally:
            holder.close()
    assert "needs_redeal" not in _statuses(console)
    deals, voids = _station_entries(path)
    if void:
        assert deals == 0 and len(voids) == 2 and all(v["reason"] == "bank_unavailable" for v in voids)
        assert all(v["detail"]["by"] == "judge" and "busy" in v["detail"]["detail"] for v in voids)
    else:
        assert (deals, voids) == (2, [])  # both deals banked, nothing voided
    with unlocked(SqliteBank(path)) as bank:
        assert verify_bank(bank).ok


def _write_import_file(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    path.write_bytes(LIN.write([BoardRecord(random_deal(rng), i + 1) for i in range(n)]))


def _import_while_dealing(tmp_path: Path, n: int, target: int) -> None:
    deals_file = tmp_path / "public.lin"
    _write_import_file(deals_file, n, 7)
    bank_path = tmp_path / "var" / "bank.sqlite"
    cfg = service_config(
        tmp_path,
        stations=[{"name": "A", "cards_per_second": 2000.0}],
        bank={"path": str(bank_path), "busy_timeout": 0.05},
    )
    with running_service(cfg, regulation(2, 32, target=target + n), autostart=False) as server:

        async def script(c: Console) -> None:
            await c.cmd("connect", device="simulator")
            await c.until(station_msg("ready"))
            await c.cmd("start")
            await c.until(lambda m: m["type"] == "committed")  # dealing is under way
            cmd = [sys.executable, "-m", "dealer", "bank", "import", str(deals_file), "--bank", str(bank_path)]
            importer = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            while importer.poll() is None:  # the station deals on while the import runs
                await c.until(lambda m: True)  # heartbeats come every second
            out, err = importer.communicate()
            assert importer.returncode == 0, err
            assert f"imported {n} of {n} deals" in out
            if not any(m["type"] == "station" and m["status"] == "target_reached" for m in c.seen):
                await c.until(station_msg("target_reached"), timeout=120)  # and deals on after it

        console = run_console(server, script)
        accepted = server.service.stations["A"].session.accepted
    assert "disconnected" not in _statuses(console) and "error" not in _statuses(console)
    deals, voids = _station_entries(bank_path)
    assert deals == accepted and deals >= target  # every deal the station dealt is in the bank
    assert not [v for v in voids if v["reason"] in ("bank_refused", "bank_unavailable")]
    with unlocked(SqliteBank(bank_path)) as bank:
        assert bank.deal_count() == n + deals
        report = verify_bank(bank)
        assert report.ok, report.problem


def test_an_import_while_a_station_deals_loses_no_deal(tmp_path: Path) -> None:
    _import_while_dealing(tmp_path, 30_000, 10)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_300000_deal_import_while_a_station_deals_loses_no_deal(tmp_path: Path) -> None:
    _import_while_dealing(tmp_path, 300_000, 50)


def test_the_service_config_sets_the_bank_wait_and_the_seal_interval() -> None:
    from dealer.app.config import ConfigError, config_from_dict

    cfg = config_from_dict({"bank": {"busy_timeout": 0.5, "seal_every_deals": 10, "seal_every_minutes": 2}}, "t")
    assert (cfg.bank_busy_timeout, cfg.seal_every_deals, cfg.seal_every_minutes) == (0.5, 10, 2.0)
    with pytest.raises(ConfigError, match="bank.busy_timeout"):
        config_from_dict({"bank": {"busy_timeout": -1}}, "t")
    with pytest.raises(ConfigError, match="bank.seal_every_deals"):
        config_from_dict({"bank": {"seal_every_deals": 1.5}}, "t")


def test_a_deal_waiting_for_the_bank_gets_a_last_chance_at_shutdown(tmp_path: Path) -> None:
    cfg = service_config(
        tmp_path,
        stations=[{"name": "A", "cards_per_second": 2000.0}],
        bank={"path": str(tmp_path / "var" / "bank.sqlite"), "busy_timeout": 0.05},
    )
    holder: LockHolder | None = None
    with running_service(cfg, regulation(2, 32, target=6), autostart=False) as server:
        holder = LockHolder(server.service.config.bank_path)
        station = server.service.stations["A"]

        async def script(c: Console) -> None:
            await c.cmd("connect", device="simulator")
            await c.until(station_msg("ready"))
            await c.cmd("start")
            await c.until(lambda m: m["type"] == "station" and m["status"] == "bank_waiting" and m["pending"])
            await c.cmd("pause")

        run_console(server, script)

        def release_once_stopping() -> None:  # the service is shutting down: its stations are disconnected
            while station.link is not None:
                threading.Event().wait(0.01)
            assert holder is not None
            holder.release()

        releaser = threading.Thread(target=release_once_stopping, daemon=True)
        releaser.start()
    releaser.join(30)
    holder.close()
    deals, voids = _station_entries(cfg.bank_path)
    assert deals == station.session.accepted >= 1 and not station.pending  # written during the shutdown
    assert not [v for v in voids if v["reason"] in ("bank_refused", "bank_unavailable")]  # (a deal cut off by
    # the disconnect itself is voided as such, also written in that last chance)
