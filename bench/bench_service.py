"""The dealing service: card read -> audience clients (latency, CPU per delivered event) and the whole pipeline.

1. Fan-out, in-process: 1,000 audience clients are the service's own SSE generators (``PublicHub.stream``, the
   exact code a real connection runs, minus the socket write), each consumed by a task that timestamps what it
   gets. Cards are published at the simulator's full speed; latency is publish -> client has the bytes. Server
   CPU per delivered event is the process CPU time (``time.process_time``, all threads) of the run divided by
   cards x clients.
2. Fan-out over real sockets: the same with uvicorn on loopback and N raw-socket SSE clients in the same process
   (server in its own thread and event loop); latency is card published -> bytes read by the client socket. A
   figure without a target: the clients' reads share the server's process and interpreter lock, so the tail is
   mostly theirs (issue #17 ruled this setup out). The target of <= 20 ms at 1,000 viewers is checked by
   ``bench_audience``, viewers in processes of their own.
3. Pipeline: the pty simulator at full speed -> MachineDriver -> DealingSession -> SQLite bank (fsync per deal)
   -> public hub with 1,000 in-process clients; cards/s sustained over whole deals.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import socket
import subprocess
import tempfile
import threading
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from bench.simproc import start_simulator
from dealer.app.hub import PublicHub
from dealer.app.public import from_projection
from dealer.core import Card, Seat
from dealer.session import PublicCardHidden, PublicCardOpen


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


async def _fanout_inprocess(clients: int, cards: int, rate: float) -> dict[str, float]:
    hub = PublicHub(client_buffer=4096)
    sent: dict[int, float] = {}
    hub.on_emit = lambda eid, _data: sent.__setitem__(eid, time.perf_counter())
    # each client keeps (time, first id, last id) per chunk in a flat array: no per-message objects for the
    # garbage collector to walk, as a real server writing to sockets keeps none either
    received: list[array[float]] = []
    done = asyncio.Event()
    remaining = [clients]

    async def client() -> None:
        got: array[float] = array("d")
        received.append(got)
        async for chunk in hub.stream(None):
            now = time.perf_counter()
            first = chunk.find(b"id: ")
            if first < 0:
                continue
            last = chunk.rfind(b"id: ")
            lo = int(chunk[first + 4 : chunk.index(b"\n", first)])
            hi = int(chunk[last + 4 : chunk.index(b"\n", last)])
            got.extend((now, lo, hi))
            if hi >= cards:
                break
        remaining[0] -= 1
        if remaining[0] == 0:
            done.set()

    tasks = [asyncio.create_task(client()) for _ in range(clients)]
    await asyncio.sleep(0.2)
    gc.collect()
    gc.freeze()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    gap = 1.0 / rate
    start = time.perf_counter()
    for i in range(cards):
        pos = i % 52
        ev = (
            PublicCardOpen(1, pos, Seat(pos % 4), Card(pos)) if pos < 32 else PublicCardHidden(1, pos, Seat(pos % 4), 1)
        )
        hub.publish(from_projection("A", ev))
        delay = start + (i + 1) * gap - time.perf_counter()
        await asyncio.sleep(max(delay, 0))
    await asyncio.wait_for(done.wait(), 300)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    gc.unfreeze()
    for t in tasks:
        t.cancel()
    latencies = []
    for got in received:
        for k in range(0, len(got), 3):
            now, lo, hi = got[k], int(got[k + 1]), int(got[k + 2])
            latencies += [now - sent[eid] for eid in range(lo, hi + 1) if eid in sent]
    return {
        "p50_ms": _pct(latencies, 50) * 1000,
        "p99_ms": _pct(latencies, 99) * 1000,
        "cpu_us_per_delivery": cpu / (cards * clients) * 1e6,
        "deliveries": len(latencies),
        "wall": wall,
    }


def _fanout_sockets(clients: int, cards: int, rate: float) -> dict[str, float]:
    """uvicorn + the hub on their own loop in a thread; raw-socket SSE clients on the main thread's loop."""
    import uvicorn
    from fastapi import FastAPI
    from fastapi.responses import StreamingResponse

    hub = PublicHub(client_buffer=4096)
    app = FastAPI()

    @app.get("/events")
    async def events() -> StreamingResponse:
        return StreamingResponse(hub.stream(None), media_type="text/event-stream")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", backlog=4096, timeout_graceful_shutdown=1)
    )
    server_loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: server_loop.run_until_complete(server.serve()), daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    sent: dict[int, float] = {}
    hub.on_emit = lambda eid, _data: sent.__setitem__(eid, time.perf_counter())
    received: list[list[tuple[float, bytes]]] = []

    async def publisher() -> None:
        gap = 1.0 / rate
        start = time.perf_counter()
        for i in range(cards):
            pos = i % 52
            hub.publish(from_projection("A", PublicCardOpen(1, pos, Seat(pos % 4), Card(pos))))
            await asyncio.sleep(max(start + (i + 1) * gap - time.perf_counter(), 0))

    async def main() -> float:
        async def client() -> None:
            got: list[tuple[float, bytes]] = []
            received.append(got)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            count = 0
            while count <= cards:
                data = await reader.read(65536)
                if not data:
                    break
                got.append((time.perf_counter(), data))
                count += data.count(b"id: ")
            writer.close()

        tasks = [asyncio.create_task(client()) for _ in range(clients)]
        while hub.clients < clients:
            await asyncio.sleep(0.05)
        cpu0 = time.process_time()
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(publisher(), server_loop))
        await asyncio.wait_for(asyncio.gather(*tasks), 300)
        return time.process_time() - cpu0

    cpu = asyncio.run(main())
    server_loop.call_soon_threadsafe(hub.close)
    server.should_exit = True
    thread.join(10)
    latencies = []
    for got in received:
        buf = b""
        for now, data in got:
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line.startswith(b"id: ") and int(line[4:]) in sent:
                    latencies.append(now - sent[int(line[4:])])
    return {
        "p50_ms": _pct(latencies, 50) * 1000,
        "p99_ms": _pct(latencies, 99) * 1000,
        "cpu_us_per_delivery": cpu / (cards * clients) * 1e6,
        "deliveries": len(latencies),
    }


async def _pipeline(deals: int, clients: int, wire: bool = True) -> dict[str, float]:
    from dealer.app.banks import open_bank
    from dealer.app.bankworker import BankWorker
    from dealer.app.config import StationConfig
    from dealer.app.devices import open_station_device
    from dealer.app.operator import OperatorBus
    from dealer.app.station import Station
    from dealer.regulation import DealingVariant, Regulation
    from drivers import open_device

    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / "ttySIM"
        sim: subprocess.Popen[bytes] | None = None
        if wire:  # the simulated machine in a process of its own, as real hardware is
            sim = start_simulator(Path(link))
        reg = Regulation(DealingVariant.PARTIALLY_OPEN, 32, 5.0, 24, 24, 2, deals)
        bank = BankWorker(lambda: open_bank(Path(tmp) / "bank.sqlite"))
        hub = PublicHub(client_buffer=4096)
        cfg = StationConfig("A", "serial", url=str(link))
        station = Station(cfg, reg, bank, hub, OperatorBus())
        received = [0]

        async def client() -> None:
            async for chunk in hub.stream(None):
                received[0] += chunk.count(b"\nid: ") + chunk.startswith(b"id: ")

        tasks = [asyncio.create_task(client()) for _ in range(clients)]
        await station.connect(
            open_station_device(cfg) if wire else open_device("inprocess", name="A", cards_per_second=1e9)
        )
        cpu0, t0 = time.process_time(), time.perf_counter()
        await station.start()
        while station.status != "target_reached":
            await asyncio.sleep(0.01)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        cards = station.cards_read
        await station.disconnect()
        for t in tasks:
            t.cancel()
        bank.close()
        if sim is not None:
            sim.send_signal(signal.SIGINT)
            sim.wait(10)
        return {"cards_per_s": cards / wall, "deals": station.committed, "cpu_s": cpu, "wall_s": wall}


def run(quick: bool = False) -> list[dict[str, Any]]:
    clients = 200 if quick else 1000
    rows: list[dict[str, Any]] = []
    for rate, cards in ((1000.0, 208 if quick else 1040), (50.0, 104 if quick else 260)):
        fan = asyncio.run(_fanout_inprocess(clients, cards, rate=rate))
        label = f"card -> {clients} SSE client generators in-process, {rate:g} cards/s"
        rows += [
            {"name": f"{label}, p50", "value": round(fan["p50_ms"], 2), "unit": "ms"},
            {"name": f"{label}, p99", "value": round(fan["p99_ms"], 2), "unit": "ms", "target": "<= 20"},
            {
                "name": f"server CPU per delivered event, in-process, {rate:g} cards/s",
                "value": round(fan["cpu_us_per_delivery"], 2),
                "unit": "µs",
                "target": "<= 10",
                "note": f"{fan['deliveries']} deliveries; process CPU / (cards x clients)",
            },
        ]
    sock_clients = 100 if quick else 1000
    sk = _fanout_sockets(sock_clients, 52 if quick else 104, rate=20.0)
    label = f"card -> {sock_clients} real SSE sockets (uvicorn h11, loopback), 20 cards/s"
    rows += [
        {"name": f"{label}, p50", "value": round(sk["p50_ms"], 2), "unit": "ms"},
        {
            "name": f"{label}, p99",
            "value": round(sk["p99_ms"], 2),
            "unit": "ms",
            "note": "clients in the server's process; the target is bench_audience's (viewers in their own processes)",
        },
        {
            "name": "process CPU per delivered event, real sockets (server and clients in one process)",
            "value": round(sk["cpu_us_per_delivery"], 2),
            "unit": "µs",
            "note": f"{sk['deliveries']} deliveries; the clients' own reads are included",
        },
    ]
    deals = 20 if quick else 100
    for wire in (False, True):
        pipe = asyncio.run(_pipeline(deals, clients, wire=wire))
        how = "pty simulator process -> MachineDriver" if wire else "in-process simulator"
        rows.append(
            {
                "name": f"pipeline: {how} -> session -> SQLite bank -> {clients} clients",
                "value": round(pipe["cards_per_s"]),
                "unit": "cards/s",
                "target": ">= 1000",
                "note": f"{pipe['deals']} deals, fsync per deal",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run(quick=False):
        print(row)
