"""The soak: a bank formed at the simulators' full speed by a real ``dealer serve`` process with many audience
clients connected, the server's memory sampled as it goes, every client's event sequence checked.

Used by ``tests/test_soak.py`` (slow) and ``bench/bench_soak.py``. The clients are real SSE clients (httpx), but
count events from the raw bytes (ids and types by regular expression) so that 200 of them in one test process
keep up with the server.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from pathlib import Path
from typing import Any

import httpx
from _day_support import (
    DayConfig,
    ServerProcess,
    bank_verify,
    director,
    director_headers,
    director_status,
    draw_round,
    formation_done,
    wait_until,
)

_ID = re.compile(rb"^id: (\d+)$", re.M)
_SNAPSHOT = re.compile(rb'^id: (\d+)\ndata: \{"type":"snapshot"', re.M)


class CountingAudience(asyncio.Protocol):
    """An audience client over a plain TCP connection (HTTP/1.1 GET of the SSE stream, chunked body): it checks
    its sequence as the bytes arrive, contiguous ids or a snapshot that resyncs it. A protocol object rather than
    an httpx stream, so that 200 of them in one process cost the test little CPU beside the server."""

    def __init__(self) -> None:
        self.last_id: int | None = None
        self.events = 0
        self.snapshots = 0
        self.gaps: list[tuple[int, int]] = []
        self.bytes = 0
        self.max_silence = 0.0
        self.measuring = True
        self.status: bytes | None = None
        self.closed = asyncio.get_running_loop().create_future()
        self._last_rx = time.monotonic()
        self._tail = b""
        self._transport: asyncio.Transport | None = None

    @classmethod
    async def connect(cls, host: str, port: int) -> CountingAudience:
        loop = asyncio.get_running_loop()
        _, proto = await loop.create_connection(cls, host, port)
        assert proto._transport is not None
        proto._transport.write(
            f"GET /api/public/events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        return proto

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # a TCP connection
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(exc)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def data_received(self, chunk: bytes) -> None:
        now = time.monotonic()
        if self.measuring:
            self.max_silence = max(self.max_silence, now - self._last_rx)
        self._last_rx = now
        self.bytes += len(chunk)
        buf = self._tail + chunk
        if self.status is None:
            head, sep, rest = buf.partition(b"\r\n\r\n")
            if not sep:
                self._tail = buf
                return
            self.status = head.split(b"\r\n", 1)[0]
            buf = rest
        cut = buf.rfind(b"\n\n")
        if cut < 0:
            self._tail = buf
            return
        self._tail = buf[cut + 2 :]
        self._accept(buf[: cut + 2])

    def _accept(self, buf: bytes) -> None:
        ids = [int(x) for x in _ID.findall(buf)]
        if not ids:
            return
        snaps = {int(x) for x in _SNAPSHOT.findall(buf)}
        self.events += len(ids)
        if not snaps and self.last_id is not None and ids[0] == self.last_id + 1 and ids[-1] - ids[0] == len(ids) - 1:
            self.last_id = ids[-1]  # the common case: a contiguous run
            return
        for i in ids:
            if i in snaps:
                self.snapshots += 1
            elif self.last_id is not None and i != self.last_id + 1:
                self.gaps.append((self.last_id + 1, i))
            self.last_id = i


def _rss_rows(samples: list[dict[str, Any]]) -> list[str]:
    return [f"{s['t']:7.1f} s  {s['deals']:6d} deals  {s['rss_mib']:7.1f} MiB" for s in samples]


async def _soak(server: ServerProcess, cfg: DayConfig, clients: int, sample_every: float) -> dict[str, Any]:
    t0 = time.monotonic()
    samples: list[dict[str, Any]] = []
    # no keep-alive for the control client: a pooled connection the server closed while busy is not an error
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_keepalive_connections=0)) as http:
        audience = [await CountingAudience.connect("127.0.0.1", server.port) for _ in range(clients)]

        async def sampler() -> None:
            while True:
                st = await director_status(http, server)
                samples.append(
                    {"t": round(time.monotonic() - t0, 1), "deals": st["deals"], "rss_mib": server.rss_kib() / 1024}
                )
                await asyncio.sleep(sample_every)

        sampling = asyncio.create_task(sampler())
        await wait_until(lambda: formation_done(http, server, cfg.target), 24 * 3600, "the bank", interval=1.0)
        formed_s = time.monotonic() - t0
        sampling.cancel()
        await asyncio.gather(sampling, return_exceptions=True)
        st = await director_status(http, server)
        samples.append({"t": round(formed_s, 1), "deals": st["deals"], "rss_mib": server.rss_kib() / 1024})

        # every client catches up with the last event: none stalled
        r = await http.get(server.base + "/api/public/snapshot")
        final = int(r.headers["X-Event-Id"])

        async def caught_up() -> bool:
            return all(a.last_id is not None and a.last_id >= final for a in audience)

        for a in audience:
            a.measuring = False
        await wait_until(caught_up, 300, "every audience client to reach the last event", interval=0.5)
        assert all(a.status is not None and b" 200 " in a.status for a in audience)
        for a in audience:
            a.close()

        # the rest of the pipeline on the big bank: seal, a 1% draw, reveal, bundle
        await director(http, server, "/api/director/seal")
        drawn = await draw_round(http, server, "Soak", ["1234", "5678", "9012"])
        await director(http, server, "/api/director/draws/Soak/reveal")
        bundle = await http.get(server.base + "/api/director/draws/Soak/bundle", headers=director_headers())
        assert bundle.status_code == 200
    rss = [s["rss_mib"] for s in samples]
    quarter = max(1, len(rss) // 4)
    return {
        "deals": st["deals"],
        "clients": clients,
        "formation_s": round(formed_s, 1),
        "deals_per_s": round(st["deals"] / formed_s, 1),
        "cards_per_s": round(52 * st["deals"] / formed_s, 1),
        "final_event_id": final,
        "events_per_client": statistics.median(a.events for a in audience),
        "delivered_events": sum(a.events for a in audience),
        "delivered_mib": round(sum(a.bytes for a in audience) / 2**20, 1),
        "resyncs": sum(max(0, a.snapshots - 1) for a in audience),
        "clients_resynced": sum(1 for a in audience if a.snapshots > 1),
        "gaps": sum(len(a.gaps) for a in audience),
        "max_silence_s": round(max(a.max_silence for a in audience), 2),
        "rss_first_quarter_mib": round(statistics.median(rss[:quarter]), 1),
        "rss_last_quarter_mib": round(statistics.median(rss[-quarter:]), 1),
        "rss_max_mib": round(max(rss), 1),
        "rss_samples": samples,
        "drawn": len(drawn["drawn"]),
        "audience": audience,
    }


def run_soak(
    root: Path, deals: int, clients: int, sample_every: float = 5.0, fault_rate: float = 0.02
) -> dict[str, Any]:
    cfg = DayConfig(root, target=deals, fault_rate=fault_rate)
    server = ServerProcess(cfg)
    server.start()
    try:
        figures = asyncio.run(_soak(server, cfg, clients, sample_every))
    finally:
        server.stop()
    figures["ledger"] = bank_verify(cfg).strip()
    figures["rss_table"] = _rss_rows(figures["rss_samples"])
    return figures
