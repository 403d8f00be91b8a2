"""``dealer serve`` as a user runs it: a real process prints ready-to-open links, serves, and Ctrl-C stops it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _web_server import free_port

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
        lines = [proc.stdout.readline() for _ in range(6)]
        text = "".join(lines)
        judge = re.search(r"(http://127\.0\.0\.1:\d+/judge\?token=\S+)", text)
        director = re.search(r"(http://127\.0\.0\.1:\d+/director\?token=\S+)", text)
        assert f"http://127.0.0.1:{port}/" in text and judge and director, text
        secret = (tmp_path / "var" / "judge.secret").read_text().strip()
        assert judge.group(1).endswith(secret)
        assert oct((tmp_path / "var" / "judge.secret").stat().st_mode & 0o777) == "0o600"
        deadline = time.monotonic() + 30
        while True:  # up, and the simulated machine is dealing into the bank
            try:
                snap = httpx.get(f"http://127.0.0.1:{port}/api/public/snapshot", timeout=2).json()
                if snap["stations"] and snap["stations"][0]["attempt"] >= 1 and snap["bank"]["formed"] >= 1:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the service did not start dealing"
            time.sleep(0.2)
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert page.status_code == 200 and 'lang="ru"' in page.text and "Открытая сдача" in page.text
        with httpx.Client(timeout=5, follow_redirects=True) as client:
            assert client.get(judge.group(1)).status_code == 200  # the link logs the judge in
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
        assert rest is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
