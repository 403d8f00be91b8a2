"""Protocol benchmarks: codec throughput, driver card events/s over a real pty, write→event latency."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

from dealer.core.events import CardSeen, DealEnded, DeviceFault, Disconnected
from drivers.machine import MachineDriver
from drivers.simulator import SimulatorThread, VirtualMachine
from drivers.transport import open_transport
from firmware_protocol.codec import Decoder, Received, encode
from firmware_protocol.messages import CardRead


def _codec(n: int) -> list[dict[str, Any]]:
    messages = [CardRead(7, i % 52, (i * 7) % 52, i % 4, 240) for i in range(n)]
    t0 = time.perf_counter()
    frames = [encode(m, i & 0xFF) for i, m in enumerate(messages)]
    t_enc = time.perf_counter() - t0
    stream = b"".join(frames)
    chunk = 4096
    decoder = Decoder()
    t0 = time.perf_counter()
    got = 0
    for i in range(0, len(stream), chunk):
        got += sum(1 for ev in decoder.feed(stream[i : i + chunk]) if isinstance(ev, Received))
    t_dec = time.perf_counter() - t0
    assert got == n
    return [
        {"name": "codec encode CARD_READ", "value": round(n / t_enc), "unit": "frames/s", "target": ">= 100000"},
        {
            "name": "codec decode CARD_READ (4 KiB chunks)",
            "value": round(n / t_dec),
            "unit": "frames/s",
            "target": ">= 100000",
        },
    ]


class _StampedMachine(VirtualMachine):
    """Records when each CARD_READ frame is written to the pty (first transmission)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.written: dict[tuple[int, int], float] = {}
        self._tap = Decoder()

    def attach(self, write: Callable[[bytes], None]) -> None:
        def stamped(data: bytes) -> None:
            t = time.perf_counter()
            write(data)
            for ev in self._tap.feed(data):
                if isinstance(ev, Received) and isinstance(ev.message, CardRead):
                    key = (ev.message.deal_id or 0, ev.message.position or 0)
                    self.written.setdefault(key, t)

        super().attach(stamped)


async def _drive(url: str, deals: int) -> tuple[int, float, list[float]]:
    drv = MachineDriver(lambda: open_transport(url), ack_timeout=0.2, heartbeat=1.0)
    await drv.connect()
    seen: list[tuple[int, int, float]] = []
    cards = 0
    t0 = time.perf_counter()
    try:
        for _ in range(deals):
            await drv.start_deal()
            while True:
                ev = await drv.next_event(10)
                if isinstance(ev, CardSeen):
                    seen.append((ev.deal_id, ev.position, time.perf_counter()))
                    cards += 1
                elif isinstance(ev, DealEnded | DeviceFault | Disconnected):
                    break
    finally:
        elapsed = time.perf_counter() - t0
        await drv.close()
    return cards, elapsed, [t for *_, t in seen]


def _pty(deals: int) -> list[dict[str, Any]]:
    machine = _StampedMachine(pace=0)
    with SimulatorThread(machine, "pty") as sim:
        cards, elapsed, _ = asyncio.run(_drive(sim.url, deals))
    # latency: match driver events to simulator writes by (deal id, position)
    machine2 = _StampedMachine(pace=0)
    latencies: list[float] = []
    with SimulatorThread(machine2, "pty") as sim:

        async def lat() -> None:
            drv = MachineDriver(lambda: open_transport(sim.url), ack_timeout=0.2)
            await drv.connect()
            try:
                for _ in range(max(5, deals // 4)):
                    await drv.start_deal()
                    while True:
                        ev = await drv.next_event(10)
                        if isinstance(ev, CardSeen):
                            t = time.perf_counter()
                            w = machine2.written.get((ev.deal_id, ev.position))
                            if w is not None:
                                latencies.append((t - w) * 1000)
                        elif isinstance(ev, DealEnded | DeviceFault | Disconnected):
                            break
            finally:
                await drv.close()

        asyncio.run(lat())
    q = statistics.quantiles(latencies, n=100)
    return [
        {
            "name": "driver card events over pty, full speed",
            "value": round(cards / elapsed),
            "unit": "cards/s",
            "target": ">= 1000",
        },
        {"name": "simulator write → driver event p50 (pty)", "value": round(q[49], 3), "unit": "ms", "target": "<= 2"},
        {"name": "simulator write → driver event p99 (pty)", "value": round(q[98], 3), "unit": "ms", "target": "<= 5"},
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    rows = _codec(20_000 if quick else 200_000)
    rows += _pty(10 if quick else 100)
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
