"""A second copy of the bank (#32 item 7): the service keeps ``[bank] copy`` on another disk, checks after each
move of the ledger that it holds the same ledger, and shows the judge its state; when the laptop's disk is gone,
``dealer bank restore`` makes the copy the bank of another laptop, checked whole, and the event deals on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from _waiting import wait_progress
from _web_server import press_start, regulation, running_service, service_config
from test_web_judge import Console, run_console, station_msg

from dealer.bank.store import SqliteBank

ROOT = Path(__file__).resolve().parents[1]
DEALS = 4


def dealer(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dealer", "--lang", "en", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_copy_follows_the_bank_and_a_lost_disk_loses_no_acknowledged_deal(tmp_path: Path) -> None:
    usb = tmp_path / "usb" / "bank-copy.sqlite"
    usb.parent.mkdir()  # the stick is mounted
    station = {"name": "A", "cards_per_second": 400.0, "fault_rate": 0.0}
    cfg = service_config(tmp_path / "laptop1", bank={"path": str(tmp_path / "laptop1" / "var" / "bank.sqlite"),
                                                     "copy": str(usb), "seal_every_deals": 0,
                                                     "seal_every_minutes": 0},
                         stations=[station])  # fmt: skip
    with running_service(cfg, regulation(2, 32, target=DEALS), autostart=True) as server:
        service = server.service
        press_start(server)
        wait_progress(lambda: service.hub.state.bank["formed"] >= DEALS, lambda: service.hub.last_id, "dealing")
        bank = service.bank.bank

        def copied() -> bool:
            state = service.bank_copy
            return state is not None and state.same and (state.size, state.head) == service.bank.call_sync(bank.anchor)

        wait_progress(copied, lambda: service.bank_copy, "the copy to hold the bank's ledger")
        judge = httpx.get(
            f"{server.base}/api/judge/state", headers={"Authorization": f"Bearer {server.judge}"}, timeout=10
        ).json()
        assert judge["bank_copy"]["same"] is True and judge["bank_copy"]["path"] == str(usb)
        acknowledged = service.hub.state.bank["formed"]  # what the hall announced as in the bank
    # the laptop's disk is gone
    shutil.rmtree(tmp_path / "laptop1")
    restored = tmp_path / "laptop2" / "var" / "bank.sqlite"
    r = dealer(tmp_path, "bank", "restore", str(usb), "--bank", str(restored))
    assert r.returncode == 0 and "restored" in r.stdout, r.stderr
    again = dealer(tmp_path, "bank", "restore", str(usb), "--bank", str(restored))
    assert again.returncode == 1 and "already there" in again.stderr  # never over a bank
    assert dealer(tmp_path, "bank", "verify", "--bank", str(restored)).returncode == 0
    with SqliteBank(restored, restored.parent, read_only=True) as b:
        assert b.deal_count() >= acknowledged >= DEALS  # nothing acknowledged is missing
    # the event goes on on the second laptop
    cfg2 = service_config(tmp_path / "laptop2", bank={"path": str(restored), "seal_every_deals": 0,
                                                      "seal_every_minutes": 0}, stations=[station])  # fmt: skip
    with running_service(cfg2, regulation(2, 32, target=DEALS + 2), autostart=True) as server:
        press_start(server)
        hub = server.service.hub
        wait_progress(lambda: hub.state.bank["formed"] >= DEALS + 2, lambda: hub.last_id, "dealing on laptop 2")
    verify = dealer(tmp_path, "bank", "verify", "--bank", str(restored))
    assert verify.returncode == 0, verify.stderr


def test_restore_refuses_a_copy_that_is_not_a_whole_bank(tmp_path: Path) -> None:
    (tmp_path / "copy.sqlite").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    r = dealer(tmp_path, "bank", "restore", "copy.sqlite", "--bank", "new/bank.sqlite")
    assert r.returncode == 1 and "Traceback" not in r.stderr and not (tmp_path / "new" / "bank.sqlite").exists()
    r = dealer(tmp_path, "bank", "restore", "missing.sqlite", "--bank", "new/bank.sqlite")
    assert r.returncode == 1 and "no bank copy there" in r.stderr


def test_a_copy_that_cannot_be_written_is_told_with_each_commit_and_shown_to_the_judge(tmp_path: Path) -> None:
    """The stick is pulled out: each commit's acknowledgement to the judge says the copy does not hold it, the
    console gets the copy's failure, and the missing mount point is not made again on the laptop's own disk."""
    pulled = tmp_path / "usb"  # not there
    cfg = service_config(tmp_path, bank={"path": str(tmp_path / "var" / "bank.sqlite"),
                                         "copy": str(pulled / "bank-copy.sqlite"), "seal_every_deals": 0},
                         stations=[{"name": "A", "cards_per_second": 2000.0}])  # fmt: skip

    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("start")
        await c.until(station_msg("target_reached"))

    with running_service(cfg, regulation(2, 32, target=3), autostart=False) as server:
        console = run_console(server, script)
    committed = [m for m in console.seen if m["type"] == "committed"]
    assert len(committed) == 3 and all(m["copied"] is False for m in committed)
    states = [m for m in console.seen if m["type"] == "bank_copy"]
    assert states and all(not s["same"] and "no such folder" in s["error"] for s in states)
    assert not pulled.exists()


def test_a_postgresql_bank_takes_no_copy_file() -> None:
    from dealer.app.config import ConfigError, config_from_dict

    with pytest.raises(ConfigError, match="synchronous standby"):
        config_from_dict({"bank": {"url": "postgresql://dealer@host/bank", "copy": "/media/usb/copy.sqlite"}}, "t")
