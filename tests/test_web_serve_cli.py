"""``dealer serve`` as a user runs it: a real process prints ready-to-open links, serves, and Ctrl-C stops it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _web_server import free_port, startup_message

ROOT = Path(__file__).resolve().parents[1]


def test_serve_prints_links_deals_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "service.toml"
    config.write_text(
        f'var_dir = "{tmp_path / "var"}"\nport = {port}\nlanguage = "ru"\n'
        f'[bank]\npath = "{tmp_path / "var" / "bank.sqlite"}"\n'
        '[[stations]]\nname = "A"\ncards_per_second = 200.0\n',
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dealer", "serve", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(8)]
        text = "".join(lines)
        judge = re.search(r"(http://127\.0\.0\.1:\d+/judge\?token=\S+)", text)
        director = re.search(r"(http://127\.0\.0\.1:\d+/director\?token=\S+)", text)
        assert f"http://127.0.0.1:{port}/" in text and judge and director, text
        secret = (tmp_path / "var" / "judge.secret").read_text().strip()
        director_secret = (tmp_path / "var" / "director.secret").read_text().strip()
        # standard output is a pipe here, as a log file would be: the links say where the secrets are, not what
        assert secret not in text and director_secret not in text, text
        assert judge.group(1).endswith("token=…") and str(tmp_path / "var" / "judge.secret") in text, text
        assert oct((tmp_path / "var" / "judge.secret").stat().st_mode & 0o777) == "0o600"
        base = f"http://127.0.0.1:{port}"
        hall = re.search(r"hall display:\s+(\S+)", text)
        remote = re.search(r"remote viewers:\s+(\S+)", text)
        assert hall and hall.group(1) == f"{base}/" and remote and remote.group(1) == f"{base}/remote", text
        assert str(tmp_path / "var") in text, text  # the real var_dir, not "var/"
        deadline = time.monotonic() + 30
        while True:  # up, and the simulated machine connected (status "ready")
            try:
                snap = httpx.get(f"{base}/api/public/snapshot", timeout=2).json()
                if snap["stations"] and snap["stations"][0]["status"] == "ready":
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the station did not connect"
            time.sleep(0.2)
        headers = {"Authorization": f"Bearer {secret}"}
        state = httpx.get(f"{base}/api/judge/state", headers=headers, timeout=5).json()
        assert state["stations"][0]["device"] is not None  # connected ...
        assert snap["stations"][0]["attempt"] == 0 and snap["bank"]["formed"] == 0  # ... and nothing dealt
        assert state["stations"][0]["attempt"] == 0 and state["stations"][0]["status"] == "ready"
        # «Старт» waits for the station's "before" equipment check (the shipped default)
        refused = httpx.post(f"{base}/api/judge/stations/A/start", headers=headers, timeout=5)
        assert refused.status_code == 400 and "«до начала»" in refused.json()["detail"], refused.text
        check = {"station": "A", "session": "Сессия 1", "phase": "before", "outcome": "ok"}
        assert httpx.post(f"{base}/api/judge/checks", headers=headers, json=check, timeout=5).status_code == 200
        started = httpx.post(f"{base}/api/judge/stations/A/start", headers=headers, timeout=5)
        assert started.status_code == 200, started.text
        while True:  # Start pressed: the simulated machine deals into the bank
            snap = httpx.get(f"{base}/api/public/snapshot", timeout=2).json()
            if snap["stations"][0]["attempt"] >= 1 and snap["bank"]["formed"] >= 1:
                break
            assert time.monotonic() < deadline, "the service did not start dealing"
            time.sleep(0.2)
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200 and 'lang="ru"' in page.text and "Открытая сдача" in page.text
        with httpx.Client(timeout=5, follow_redirects=True) as client:
            assert client.get(f"{base}/judge?token={secret}").status_code == 200  # the link logs the judge in
        # a viewer stays connected while Ctrl-C is pressed
        with httpx.stream("GET", f"http://127.0.0.1:{port}/api/public/events", timeout=10) as stream:
            chunks = stream.iter_raw()
            assert next(chunks).startswith(b"retry: 1000")
            proc.send_signal(signal.SIGINT)
            rest = b"".join(chunks)  # the server ends the stream itself
        code = proc.wait(15)
        out = proc.stdout.read()
        assert code == 0, out
        assert "stopped" in out and "Traceback" not in out
        assert secret not in out and director_secret not in out
        assert rest is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_busy_port_is_a_clear_error_exit_1_and_nothing_is_written(tmp_path: Path) -> None:
    import sqlite3

    from dealer.bank.store import SqliteBank

    var = tmp_path / "var"
    bank_path = var / "bank.sqlite"
    bank = SqliteBank(bank_path)
    bank.close()
    before = {p.name: p.read_bytes() for p in var.iterdir()}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        config = tmp_path / "service.toml"
        config.write_text(
            f'var_dir = "{var}"\nport = {port}\n[bank]\npath = "{bank_path}"\n'
            '[[stations]]\nname = "A"\ncards_per_second = 5000.0\n',
            encoding="utf-8",
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-m", "dealer", "serve", "--config", str(config)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"127.0.0.1:{port}" in done.stderr and "--port" in done.stderr, done.stderr
    assert "http://" not in done.stdout  # no links to somebody else's service
    assert "Traceback" not in done.stderr
    after = {p.name: p.read_bytes() for p in var.iterdir()}
    assert after == before  # no secret made, no ledger entry, no marker
    with sqlite3.connect(bank_path) as db:
        kinds = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert kinds  # the bank is the one made above, untouched


def test_rehearsal_uses_its_own_folder_a_small_target_and_names_it(tmp_path: Path) -> None:
    port = free_port()
    var = tmp_path / "var"
    config = tmp_path / "service.toml"
    config.write_text(
        f'var_dir = "{var}"\nport = {port}\n[bank]\npath = "{var / "bank.sqlite"}"\n[[stations]]\nname = "A"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "dealer", "serve", "--config", str(config), "--rehearsal", "--variant", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    try:
        text = startup_message(proc)
        assert text.startswith("REHEARSAL") and "variant 1" in text and "12 boards" in text, text
        assert str(var / "rehearsal") in text  # the folder really used, named
        assert (var / "rehearsal" / "judge.secret").is_file() and not (var / "judge.secret").exists()
        deadline = time.monotonic() + 30
        while True:  # serving (and variant 1: the hall's snapshot names no card)
            try:
                snap = httpx.get(f"http://127.0.0.1:{port}/api/public/snapshot", timeout=2).json()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert snap["bank"]["target"] == 12
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_shipped_service_config_has_one_camera_example() -> None:
    text = (ROOT / "dealer" / "config" / "service.toml").read_text(encoding="utf-8")
    assert text.count("# A camera card scanner") == 1 and text.count('# name = "B"') == 1


def test_on_a_terminal_serve_shows_the_whole_links_with_their_secrets(tmp_path: Path) -> None:
    """The links with the secrets go to a terminal only (a pty here): people open them from there."""
    import pty

    port = free_port()
    config = tmp_path / "service.toml"
    config.write_text(
        f'var_dir = "{tmp_path / "var"}"\nport = {port}\nlanguage = "en"\n'
        f'[bank]\npath = "{tmp_path / "var" / "bank.sqlite"}"\n[[stations]]\nname = "A"\n',
        encoding="utf-8",
    )
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dealer", "serve", "--config", str(config)],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    os.close(follower)
    try:
        seen = b""
        while b"Ctrl-C" not in seen:
            chunk = os.read(leader, 4096)
            assert chunk, seen
            seen += chunk
        text = seen.decode("utf-8", "replace")
        judge = (tmp_path / "var" / "judge.secret").read_text().strip()
        director = (tmp_path / "var" / "director.secret").read_text().strip()
        assert f"/judge?token={judge}" in text and f"/director?token={director}" in text, text
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(leader)
