"""Slow clients and connection floods against a real ``dealer serve`` on loopback: the judge's console answers.

A spectator's laptop opens 1,100 connections from one address, and a crowd of 40 addresses opens 1,120 more, each
sending a header line now and then and never finishing its request (slowloris). The judge, who signed in before
from another address, keeps working: every console request answers, the slow connections are closed by the
server once their request deadline passes, and the log holds one line counting the refusals, no traceback and no
``Too many open files``. Loopback has the whole 127.0.0.0/8: each "machine" is its own source address.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from _waiting import wait_progress
from _web_server import free_port

ROOT = Path(__file__).resolve().parents[1]
PER_ADDRESS = 32
TOTAL = 200
TIMEOUT_S = 3


@dataclass
class Served:
    base: str
    port: int
    secret: str
    log: Path
    proc: subprocess.Popen[bytes]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    var = tmp_path / "var"
    config = tmp_path / "service.toml"
    config.write_text(
        f'var_dir = "{var}"\nport = {port}\nlanguage = "en"\n'
        f'[bank]\npath = "{var / "bank.sqlite"}"\n'
        f"[limits]\nmax_connections = {TOTAL}\nmax_connections_per_address = {PER_ADDRESS}\n"
        f"console_reserve = 64\nrequest_timeout_s = {TIMEOUT_S}\n"
        '[[stations]]\nname = "A"\n',
        encoding="utf-8",
    )
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dealer", "serve", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=sink,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=tmp_path,
        )
    try:
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                return httpx.get(f"{base}/api/public/snapshot", timeout=2).status_code == 200
            except httpx.HTTPError:
                return proc.poll() is not None

        wait_progress(up, lambda: log.stat().st_size, "the service to start")
        assert proc.poll() is None, log.read_text()
        yield Served(base, port, (var / "judge.secret").read_text().strip(), log, proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Flood:
    """Slow connections from given source addresses: a request line, then a header line every half second."""

    def __init__(self, port: int, sources: list[tuple[str, int]]) -> None:
        self.socks: list[socket.socket] = []
        for address, count in sources:
            for _ in range(count):
                s = socket.socket()
                s.bind((address, 0))
                s.connect(("127.0.0.1", port))  # the kernel completes it whether or not the server takes it
                with contextlib.suppress(OSError):  # refused and closed by the server already
                    s.sendall(b"GET /api/public/snapshot HTTP/1.1\r\nHost: hall\r\n")
                self.socks.append(s)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self) -> None:
        while not self.stop.wait(0.5):
            for s in self.socks:
                with contextlib.suppress(OSError):
                    s.send(b"X-Slow: 1\r\n", socket.MSG_DONTWAIT)

    def closed_by_server(self) -> int:
        """How many of the connections the server has closed (EOF or reset)."""
        poller = select.poll()
        by_fd = {}
        for s in self.socks:
            poller.register(s, select.POLLIN)
            by_fd[s.fileno()] = s
        closed = 0
        for fd, events in poller.poll(0):
            if events & (select.POLLHUP | select.POLLERR):
                closed += 1
                continue
            try:
                if by_fd[fd].recv(4096, socket.MSG_PEEK) == b"":
                    closed += 1
            except OSError:
                closed += 1
        return closed

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def console_requests(served: Served, n: int) -> list[float]:
    """``n`` judge's console requests, each on a new connection from the judge's address; seconds each."""
    headers = {"Authorization": f"Bearer {served.secret}"}
    took = []
    for _ in range(n):
        t0 = time.perf_counter()
        with httpx.Client(timeout=10) as client:
            r = client.get(f"{served.base}/api/judge/state", headers=headers)
        took.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.text
        assert r.json()["stations"][0]["station"] == "A"
    return took


def test_the_judges_console_answers_through_2220_slow_connections_and_the_log_counts_them_in_one_line(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 3000:
        pytest.skip(f"this test needs 3,000 open files (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 3000), hard))
    before = console_requests(served, 3)  # the judge signs in from 127.0.0.1 (before any flood)
    spectator = Flood(served.port, [("127.0.0.2", 1100)])
    crowd = Flood(served.port, [(f"127.0.1.{i}", 28) for i in range(1, 41)])
    try:
        during = console_requests(served, 15)
        # the server closes every slow connection it took once its request deadline passed (nothing stays open)
        floods = spectator.socks + crowd.socks
        wait_progress(
            lambda: spectator.closed_by_server() + crowd.closed_by_server() == len(floods),
            lambda: spectator.closed_by_server() + crowd.closed_by_server(),
            "the server to close the slow connections",
            stall=TIMEOUT_S * 10,
            interval=0.5,
        )
        after = console_requests(served, 5)
    finally:
        spectator.close()
        crowd.close()
    served.proc.send_signal(signal.SIGINT)
    assert served.proc.wait(30) == 0
    log = served.log.read_text(encoding="utf-8")
    assert "Traceback" not in log and "Too many open files" not in log, log[-3000:]
    reports = re.findall(r"refused (\d+) connections since the last report \((\d+) over the cap of 32 per address, "
                         r"(\d+) over the total of 200", log)  # fmt: skip
    assert len(reports) == 1, log[-3000:]  # one line, however many were refused
    refused, by_address, by_total = (int(x) for x in reports[0])
    # one address can hold 32 at a time: of its 1,100 at most 32 plus those taken after a deadline freed a place
    assert by_address >= 1100 - 32 * 4
    assert by_total > 0 and refused == by_address + by_total
    with capsys.disabled():
        print(
            f"\nslow connections tried: 2,220; refused at accept: {refused} ({by_address} per address, "
            f"{by_total} total cap); console requests: {len(before) + len(during) + len(after)} answered, "
            f"slowest during the flood {max(during) * 1000:.0f} ms, median {sorted(during)[7] * 1000:.0f} ms"
        )


def test_a_request_whose_body_never_arrives_whole_is_closed_after_the_deadline(served: Served) -> None:
    s = socket.create_connection(("127.0.0.1", served.port))
    try:
        s.sendall(b"POST /api/judge/checks HTTP/1.1\r\nHost: hall\r\nContent-Length: 1000\r\n\r\n{")
        s.settimeout(TIMEOUT_S * 20)
        t0 = time.monotonic()
        while s.recv(4096):  # until the server hangs up (EOF)
            pass
        assert time.monotonic() - t0 >= TIMEOUT_S - 0.5  # at the deadline, not before
    finally:
        s.close()


def test_the_deadline_closes_slow_requests_only_not_a_console_websocket_or_a_viewers_stream(served: Served) -> None:
    """A judge's WebSocket and an audience stream outlive the request deadline: the clock here is a slow request
    opened at the same moment, which the server closes at its deadline."""
    import asyncio

    import websockets

    async def scenario() -> tuple[str, bytes]:
        headers = {"Authorization": f"Bearer {served.secret}"}
        async with websockets.connect(f"ws://127.0.0.1:{served.port}/judge/ws", additional_headers=headers) as ws:
            await asyncio.wait_for(ws.recv(), 10)
            reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
            writer.write(b"GET /api/public/events HTTP/1.1\r\nHost: hall\r\n\r\n")
            await writer.drain()
            slow = socket.create_connection(("127.0.0.1", served.port))
            slow.sendall(b"GET / HTTP/1.1\r\nHost: hall\r\n")  # never finished
            slow.setblocking(False)
            loop = asyncio.get_running_loop()
            closed = await asyncio.wait_for(loop.sock_recv(slow, 1), TIMEOUT_S * 20)  # the deadline passed
            slow.close()
            assert closed == b""
            await ws.send('{"cmd": "state", "id": 1}')
            while True:
                answer = str(await asyncio.wait_for(ws.recv(), 10))
                if '"type":"state"' in answer.replace(" ", ""):
                    break
            head = await asyncio.wait_for(reader.readuntil(b'"type":"snapshot"'), 10)  # sent before the deadline
            assert head
            await ws.send('{"cmd": "disconnect", "station": "A", "confirm": true, "id": 2}')  # news for the hall
            stream = await asyncio.wait_for(reader.readuntil(b"disconnected"), 20)  # the stream still open
            writer.close()
            return answer, stream

    answer, stream = asyncio.run(scenario())
    assert '"stations"' in answer and b'"type":"station"' in stream  # the console works, the stream flows
