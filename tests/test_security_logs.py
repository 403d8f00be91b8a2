"""Secrets never reach the logs: a real ``dealer serve`` process, a whole session, every line it writes searched.

The start-up banner prints the judge's and the director's links with their secrets on a terminal only (as Jupyter
does); written to a file, as here, it names the files that hold them instead. Everything the process writes (its
log on standard error, standard output) is searched for both secrets, for the wrong secrets we tried, and for the
draw's secret K.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import websockets
from _web_server import free_port
from custody_support import TEST_PASSPHRASE

ROOT = Path(__file__).resolve().parents[1]


def wait_until(predicate: Callable[[], object], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.1)


def test_secrets_never_appear_in_logs(tmp_path: Path) -> None:
    port = free_port()
    var = tmp_path / "var"
    (tmp_path / "service.toml").write_text(
        f'var_dir = "{var}"\nport = {port}\nrequire_equipment_check = false\n[bank]\npath = "{var / "bank.sqlite"}"\n'
        '[[stations]]\nname = "A"\nkind = "simulator"\ncards_per_second = 5000.0\nfault_rate = 0.3\n'
        "auto_redeal = true\n",
        encoding="utf-8",
    )
    (tmp_path / "regulation.toml").write_text(
        "[dealing]\nvariant = 2\nopen_cards = 32\n[bank]\ntarget = 30\n[draw]\nshare_percent = 10\n"
        "[session]\nboards = 3\n",
        encoding="utf-8",
    )
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "dealer", "serve", "--config", "service.toml", "--regulation", "regulation.toml"]
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=o, stderr=e, env=env)
    try:
        wait_until(lambda: b"Ctrl-C" in out.read_bytes() or proc.poll() is not None)
        assert proc.poll() is None, err.read_text()
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _up(base))
        judge = (var / "judge.secret").read_text().strip()
        director = (var / "director.secret").read_text().strip()
        wrong = ["wrong-" + judge[:20], director + "x", "j" * 43]
        with httpx.Client(
            base_url=base, follow_redirects=True
        ) as browser:  # the judge opens the printed link, as a person would
            assert browser.get(f"/judge?token={judge}").status_code == 200
            assert browser.get("/api/judge/state").status_code == 200
        for w in wrong:
            assert httpx.get(f"{base}/judge?token={w}").status_code == 403
            assert httpx.get(f"{base}/api/director/status", headers={"Authorization": f"Bearer {w}"}).status_code == 403
        asyncio.run(_judge_ws(port, judge))
        j = {"Authorization": f"Bearer {judge}"}  # nothing deals before the judge presses Start
        wait_until(lambda: httpx.get(f"{base}/api/judge/state", headers=j).json()["stations"][0]["status"] == "ready")
        assert httpx.post(f"{base}/api/judge/stations/A/start", headers=j).status_code == 200
        d = {"Authorization": f"Bearer {director}"}
        wait_until(lambda: httpx.get(f"{base}/api/director/status", headers=d).json()["deals"] >= 30, 120)
        for path, body in [
            ("/api/director/custody/setup", {"passphrase": TEST_PASSPHRASE}),  # the chief judge, on the console
            ("/api/director/seal", {}),
            ("/api/director/draws", {"label": "R1", "named": "Lotto 1600, 10 numbers", "numbers": 10, "max": 90}),
            ("/api/director/draws/R1/publish", {}),
            ("/api/director/draws/R1/value", {"named": "31 41 59 26 53 58 79 32 38 46"}),
            ("/api/director/draws/R1/run", {}),
            ("/api/director/draws/R1/reveal", {}),
        ]:
            r = httpx.post(base + path, json=body, headers=d, timeout=30)
            assert r.status_code == 200, (path, r.text)
            if "dealer_custody" in r.cookies:  # the sign-in: the console's browser presents it from now on
                custody = r.cookies["dealer_custody"]
                d = {"Authorization": f"Bearer {director}.{custody}"}
        assert httpx.get(f"{base}/api/director/draws/R1/bundle", headers=d).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    with sqlite3.connect(var / "bank.sqlite") as db:
        (k,) = db.execute("SELECT secret FROM draws WHERE label='R1'").fetchone()
    stdout, stderr = out.read_text(encoding="utf-8"), err.read_text(encoding="utf-8")
    assert "voided" in stderr.lower() or "fault" in stderr.lower() or stderr.strip(), "the log is empty: nothing tested"
    # standard output and error are files here (a log kept of the run): the banner says where the secrets are
    assert "judge.secret" in stdout and "director.secret" in stdout, stdout
    for secret in (judge, director, *wrong, bytes(k).hex(), TEST_PASSPHRASE):
        assert secret not in stdout + stderr, f"a secret leaked into the log: {secret[:6]}…"


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/api/public/snapshot").status_code == 200
    except httpx.HTTPError:
        return False


async def _judge_ws(port: int, judge: str) -> None:
    url = f"ws://127.0.0.1:{port}/judge/ws"
    async with websockets.connect(url, additional_headers={"Cookie": f"dealer_judge={judge}"}) as ws:
        await asyncio.wait_for(ws.recv(), 5)
        await ws.send('{"cmd": "state"}')
        await asyncio.wait_for(ws.recv(), 5)
    for bad in (judge + "0", "nope"):
        try:
            async with websockets.connect(url, additional_headers={"Cookie": f"dealer_judge={bad}"}):
                raise AssertionError("a wrong secret opened the judge's WebSocket")
        except websockets.InvalidStatus as exc:
            assert exc.response.status_code == 403
