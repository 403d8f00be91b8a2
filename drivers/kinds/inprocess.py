"""Device kind ``inprocess``: a virtual dealing machine inside the process, no wire, no protocol.

For benchmarks of the service alone (``bench/bench_service.py``); the ``simulator`` kind is the one a station
uses, since it exercises the real driver over a real pty.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from dealer.core.cards import Card, Seat
from dealer.core.events import (
    CardSeen,
    DealEnded,
    DealStarted,
    DeviceEvent,
    DeviceFault,
    Disconnected,
    FaultKind,
)

from ..device import BoardMachine, DeviceError
from ..registry import DeviceOptions

SIMULATED_FAULTS = (FaultKind.JAM, FaultKind.DUPLICATE_CARD, FaultKind.UNREADABLE_CARD, FaultKind.MISFEED)


class InProcessSimulator:
    """A virtual dealing machine inside the process: shuffles with the OS's randomness and deals at a pace.

    ``fault_rate`` is the chance per deal of one injected fault (a jam, a doubled card, an unreadable card, a
    misfeed) at a random card, so the consoles' fault handling can be tried without hardware.
    """

    can_deal = True
    can_inject = True

    def __init__(self, kind: str = "inprocess", url: str = "", options: DeviceOptions | None = None) -> None:
        options = options or DeviceOptions(name="sim", cards_per_second=2.0)
        self.kind = kind
        self.url = url
        self.name = options.name
        self.cards_per_second = options.cards_per_second
        self.fault_rate = options.fault_rate
        seed = options.seed
        self._rng = random.Random(seed) if seed is not None else random.SystemRandom()
        self._queue: asyncio.Queue[DeviceEvent | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._deal_id = 0
        self._pending: FaultKind | None = None
        self._closed = False
        self._heartbeat = time.time()
        self._state = "idle"
        self.cards_dealt = 0

    async def open(self) -> None:
        self._heartbeat = time.time()
        self._state = "ready"

    def info(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": "in-process simulator",
            "serial": self.name,
            "firmware": "sim-1",
            "capabilities": ["reader", "shuffler", "pockets"],
            "cards_per_second": self.cards_per_second,
        }

    def status(self) -> dict[str, Any]:
        if self._task is None or self._task.done():
            self._heartbeat = time.time()  # an idle simulator is always alive
        return {
            "state": self._state,
            "heartbeat": self._heartbeat,
            "connected": not self._closed,
            "cards_dealt": self.cards_dealt,
        }

    async def request_deal(self) -> None:
        if self._closed:
            raise DeviceError("the in-process simulator is closed")
        if self._task is not None and not self._task.done():
            return
        self._deal_id += 1
        self._task = asyncio.create_task(self._deal(self._deal_id))

    async def inject_fault(self, kind: FaultKind) -> bool:
        self._pending = kind
        return True

    async def next_event(self) -> DeviceEvent | None:
        return await self._queue.get()

    def board_machine(self) -> BoardMachine:
        raise DeviceError("the in-process simulator cannot make boards")

    async def abort(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._state = "ready"

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
        self._state = "closed"
        self._queue.put_nowait(Disconnected("closed", time.time(), None))
        self._queue.put_nowait(None)

    async def _deal(self, deal_id: int) -> None:
        self._state = "dealing"
        order = list(Card)
        self._rng.shuffle(order)
        pockets = [Seat(i % 4) for i in range(52)]
        self._rng.shuffle(pockets)
        fault_at = self._rng.randrange(52) if self._rng.random() < self.fault_rate else None
        fault_kind = self._rng.choice(SIMULATED_FAULTS) if fault_at is not None else None
        gap = 1.0 / self.cards_per_second
        put = self._queue.put_nowait
        put(DealStarted(deal_id, time.time()))
        for i, (card, pocket) in enumerate(zip(order, pockets, strict=True)):
            if gap >= 0.001 or i % 64 == 0:
                await asyncio.sleep(gap if gap >= 0.001 else 0)
            self._heartbeat = time.time()
            if self._pending is not None:
                fault_at, fault_kind, self._pending = i, self._pending, None
            if fault_at == i and fault_kind is not None:
                if fault_kind is FaultKind.DUPLICATE_CARD and i > 0:
                    put(CardSeen(deal_id, i, order[self._rng.randrange(i)], pocket, 0.99, time.time()))
                elif fault_kind is FaultKind.UNREADABLE_CARD:
                    put(CardSeen(deal_id, i, None, pocket, 0.1, time.time()))
                else:
                    put(DeviceFault(fault_kind, "simulated", time.time(), deal_id, i))
                self._state = "ready"
                return
            put(CardSeen(deal_id, i, card, pocket, 0.99, time.time()))
            self.cards_dealt += 1
        put(DealEnded(deal_id, time.time()))
        self._state = "ready"
