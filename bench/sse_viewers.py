"""Many SSE viewers in one process (asyncio protocols: one callback per read): ``python -m bench.sse_viewers``.

Used by the relay tests and the audience benchmarks so that viewers are real clients in separate processes.
Each viewer reads ``/api/public/events`` from one of ``--url`` (viewer i starts on url i mod n); when its
connection ends it reconnects to the next url with ``Last-Event-ID`` (the last id it saw), as a browser's
EventSource does. Every received id is recorded with the wall-clock time of its receipt.

Protocol on standard input / output (bounded: every wait has a deadline):
  prints ``ready`` once every viewer has its first bytes;
  reads ``until N`` then waits until every viewer has seen id >= N (or ``--timeout``), then reads one JSON line
  of commit times {"id": unix_time, ...} (may be ``{}``) and prints one JSON line of results: per-viewer gaps,
  reconnects, snapshots, and a latency histogram (0.1 ms buckets) of commit-to-receipt over the given ids.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import resource
import sys
import time
from typing import Any
from urllib.parse import urlsplit

BUCKET = 1e-4  # histogram bucket, s


class _Conn(asyncio.Protocol):
    """One connection's bytes, parsed as they arrive (a callback per read: no task woken per message)."""

    def __init__(self, viewer: Viewer, request: bytes) -> None:
        self.viewer = viewer
        self.request = request
        self.buf = b""  # bytes not parsed yet (head, chunk framing)
        self.body = b""  # de-chunked SSE text not yet split into blocks
        self.head = True
        self.chunked = False
        self.need = -1  # bytes left of the current chunk (-1: a size line comes next)
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def _fail(self, why: str) -> None:
        if not self.done.done():
            self.done.set_exception(ValueError(why))
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        now = time.time()
        self.viewer.got_bytes.set()
        buf = self.buf + data
        if self.head:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self.buf = buf
                return
            head, buf = buf[:end], buf[end + 4 :]
            if not head.startswith(b"HTTP/1.1 200"):
                self._fail(f"status {head[:40]!r}")
                return
            self.head = False
            self.chunked = b"transfer-encoding: chunked" in head.lower()
        if not self.chunked:
            self.body += buf
            buf = b""
        else:
            pos = 0
            while True:
                if self.need < 0:
                    eol = buf.find(b"\r\n", pos)
                    if eol < 0:
                        break
                    size = int(buf[pos:eol].split(b";")[0], 16)
                    pos = eol + 2
                    if size == 0:  # the server ended the response
                        if self.transport is not None:
                            self.transport.close()
                        break
                    self.need = size + 2
                take = min(self.need, len(buf) - pos)
                if take <= 0:
                    break
                self.body += buf[pos : pos + take]
                pos += take
                self.need -= take
                if self.need == 0:
                    self.body = self.body[:-2]  # the chunk's closing CRLF
                    self.need = -1
            buf = buf[pos:]
        self.buf = buf
        if b"\n\n" in self.body:
            *blocks, self.body = self.body.split(b"\n\n")
            for block in blocks:
                self.viewer.block(block, now)


class Viewer:
    def __init__(self, urls: list[tuple[str, int]], start: int) -> None:
        self.urls = urls
        self.index = start
        self.last: int | None = None
        self.first: int | None = None
        self.ids: list[int] = []
        self.times: list[float] = []
        self.snapshots = 0
        self.reconnects = 0
        self.got_bytes = asyncio.Event()
        self.errors: list[str] = []

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            host, port = self.urls[self.index % len(self.urls)]
            try:
                await self._one(host, port, stop)
            except (OSError, ValueError) as exc:
                if len(self.errors) < 5:
                    self.errors.append(f"{host}:{port}: {exc!r}")
            if stop.is_set():
                return
            self.reconnects += 1
            self.index += 1
            await asyncio.sleep(0.05 * min(self.reconnects, 20))

    async def _one(self, host: str, port: int, stop: asyncio.Event) -> None:
        resume = f"Last-Event-ID: {self.last}\r\n" if self.last is not None else ""
        request = (
            f"GET /api/public/events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n{resume}\r\n"
        ).encode()
        loop = asyncio.get_running_loop()
        conn = _Conn(self, request)
        transport, _ = await loop.create_connection(lambda: conn, host, port)
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait((conn.done, stopping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            transport.close()
        failure = conn.done.exception() if conn.done.done() else None
        if failure is not None:
            raise failure

    def block(self, block: bytes, now: float) -> None:
        if block.startswith(b"id: "):  # the hub's messages: "id: N\ndata: {...}"
            nl = block.find(b"\n")
            event_id = int(block[4:nl] if nl > 0 else block[4:])
            snapshot = block.startswith(b'data: {"type":"snapshot"', nl + 1)
        else:
            event_id = None
            snapshot = False
            for line in block.split(b"\n"):
                if line.startswith(b"id: "):
                    event_id = int(line[4:])
                elif line.startswith(b'data: {"type":"snapshot"'):
                    snapshot = True
        if event_id is None:
            return
        if snapshot:
            self.snapshots += 1
            if self.first is None:
                self.first = event_id
            self.ids.append(-event_id)  # a snapshot stands for everything up to its id
        else:
            if self.first is None:
                self.first = event_id - 1
            self.ids.append(event_id)
            self.times.append(now)
        self.last = event_id

    def gaps(self) -> int:
        """Ids after the first that were never received as a message (a mid-stream snapshot counts its gap)."""
        if self.first is None or self.last is None:
            return 0
        seen = {i for i in self.ids if i > 0}
        return sum(1 for i in range(self.first + 1, self.last + 1) if i not in seen)

    def duplicates(self) -> int:
        plain = [i for i in self.ids if i > 0]
        return len(plain) - len(set(plain))


async def main_async(args: argparse.Namespace) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    urls = []
    for u in args.url:
        parts = urlsplit(u)
        urls.append((parts.hostname or "127.0.0.1", parts.port or 80))
    stop = asyncio.Event()
    viewers = [Viewer(urls, args.offset + i) for i in range(args.clients)]
    tasks = []
    for i, v in enumerate(viewers):
        tasks.append(asyncio.create_task(v.run(stop)))
        if i % 100 == 99:
            await asyncio.sleep(0)  # let the server accept in steps
    loop = asyncio.get_running_loop()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(v.got_bytes.wait() for v in viewers)), args.timeout)
    print("ready", sum(v.got_bytes.is_set() for v in viewers), flush=True)
    line = await loop.run_in_executor(None, sys.stdin.readline)
    until = int(line.split()[1]) if line.startswith("until") else 0
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline and any((v.last or 0) < until for v in viewers):
        await asyncio.sleep(0.05)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    commits_line = await loop.run_in_executor(None, sys.stdin.readline)
    commits = {int(k): float(v) for k, v in json.loads(commits_line or "{}").items()}
    hist: dict[int, int] = {}
    for v in viewers:
        for i, received in zip((i for i in v.ids if i > 0), v.times, strict=True):
            c = commits.get(i)
            if c is not None:
                b = max(0, int((received - c) / BUCKET))
                hist[b] = hist.get(b, 0) + 1
    result: dict[str, Any] = {
        "clients": len(viewers),
        "complete": sum(1 for v in viewers if (v.last or 0) >= until),
        "gaps": [v.gaps() for v in viewers],
        "duplicates": sum(v.duplicates() for v in viewers),
        "reconnects": sum(v.reconnects for v in viewers),
        "snapshots": sum(v.snapshots for v in viewers),
        "received": sum(len(v.times) for v in viewers),
        "first_ids": sorted({v.first for v in viewers if v.first is not None})[:10],
        "errors": [e for v in viewers for e in v.errors][:10],
        "hist": hist,
    }
    print(json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sse_viewers")
    parser.add_argument("--url", action="append", required=True, help="a server's base URL (repeatable)")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0, help="viewer i starts on url (offset + i) mod n")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    with contextlib.suppress(Exception):
        import uvloop  # type: ignore[import-not-found,unused-ignore]

        uvloop.install()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
