"""NATS and relay processes for tests: skip where NATS is absent, one stream per test, relays as real processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _web_server import free_port

ROOT = Path(__file__).resolve().parents[1]
NATS_URL = os.environ.get("DEALER_TEST_NATS", "nats://127.0.0.1:4222")


def nats_or_skip() -> str:
    host, _, port = NATS_URL.removeprefix("nats://").partition(":")
    try:
        with socket.create_connection((host, int(port or 4222)), timeout=2) as s:
            if not s.recv(4096).startswith(b"INFO"):
                raise OSError("not a NATS server")
    except OSError as exc:
        pytest.skip(f"NATS with JetStream is not running at {NATS_URL} ({exc})")
    return NATS_URL


def unique_event() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


def delete_stream(event: str) -> None:
    async def go() -> None:
        import nats

        from dealer.app.public_wire import stream_name

        nc = await nats.connect(NATS_URL)
        with contextlib.suppress(Exception):
            await nc.jetstream().delete_stream(stream_name(event))
        await nc.close()

    asyncio.run(go())


def stream_messages(event: str, url: str = NATS_URL) -> list[tuple[int, bytes]]:
    """Everything stored in the event's stream: (sequence, payload)."""

    async def go() -> list[tuple[int, bytes]]:
        import nats

        from dealer.app.public_wire import stream_name

        nc = await nats.connect(url)
        js = nc.jetstream()
        info = await js.stream_info(stream_name(event))
        out = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await js.get_msg(stream_name(event), seq)
            out.append((seq, bytes(msg.data or b"")))
        await nc.close()
        return out

    return asyncio.run(go())


class Relay:
    def __init__(
        self,
        event: str,
        delay: float = 0.0,
        cwd: Path | None = None,
        url: str = NATS_URL,
        wait_nats: bool = True,
        hall_key: str | None = None,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        args = [sys.executable, "-m", "dealer", "relay", "--nats", url, "--port", str(self.port)]
        args += ["--event", event, "--delay", str(delay), "--hall-key", hall_key or any_key()]
        env = {k: v for k, v in os.environ.items() if not k.startswith("DEALER_")}
        env["PYTHONPATH"] = str(ROOT)
        self.proc = subprocess.Popen(args, cwd=cwd or ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"relay exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base}/api/public/health", timeout=2).status_code == 200:
                    return
                if not wait_nats and httpx.get(f"{self.base}/api/public/snapshot", timeout=2).status_code == 200:
                    return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the relay did not become ready")
            time.sleep(0.05)

    def last_id(self) -> int:
        return int(self.health()["last_id"])

    def health(self) -> dict[str, Any]:
        """The relay's health (200 while it reads the stream, 503 while NATS is away: the body is the same)."""
        body: dict[str, Any] = httpx.get(f"{self.base}/api/public/health", timeout=30).json()
        return body

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def any_key() -> str:
    """A public key no hall signs with (a relay that is not meant to serve anything signed)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().public_key().public_bytes_raw().hex()


def hall_key(server: Any) -> str:
    """The public key the hall of a running service signs its relay messages with."""
    pub = server.service.relay_publisher
    assert pub is not None and pub.public_key is not None
    return str(pub.public_key)


@contextlib.contextmanager
def relays(event: str, n: int, delay: float = 0.0, key: str | None = None) -> Iterator[list[Relay]]:
    started: list[Relay] = []
    try:
        for _ in range(n):
            started.append(Relay(event, delay, hall_key=key))
        yield started
    finally:
        for r in started:
            r.stop()


class Viewers:
    """``bench.sse_viewers`` in a separate process."""

    def __init__(self, urls: list[str], clients: int, offset: int = 0, timeout: float = 120.0) -> None:
        args = [sys.executable, "-m", "bench.sse_viewers", "--clients", str(clients), "--offset", str(offset)]
        args += ["--timeout", str(timeout)]
        for u in urls:
            args += ["--url", u]
        self.proc = subprocess.Popen(
            args, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        assert ready.startswith("ready"), ready + (self.proc.stderr.read() if self.proc.stderr else "")
        self.ready = int(ready.split()[1])

    def finish(self, until: int, commits: dict[int, float] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"until {until}\n")
        self.proc.stdin.write(json.dumps({str(k): v for k, v in (commits or {}).items()}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        self.proc.wait(60)
        assert line, self.proc.stderr.read() if self.proc.stderr else "no output"
        result: dict[str, Any] = json.loads(line)
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
