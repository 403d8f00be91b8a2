"""Board making through the project's dealing-machine driver (``drivers.device.BoardMachine``).

The driver already refuses a card that goes into the wrong pocket (it voids the copy and stops the machine);
the orchestrator checks every card again from the driver's events, so the two checks are independent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING

from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.core.events import CardSeen, DealEnded, DealStarted, DeviceEvent, DeviceFault, Disconnected, FaultKind

if TYPE_CHECKING:
    from drivers.device import BoardMachine


class DriverCopyMaker:
    """``CopyMaker`` over a ``BoardMachine``: make_board, then collect that copy's events from the driver."""

    def __init__(
        self, device: BoardMachine, *, drain_timeout: float = 2.0, settle: float = 0.2, reconnect_timeout: float = 30.0
    ) -> None:
        self.device = device
        self.drain_timeout = drain_timeout
        self.settle = settle
        self.reconnect_timeout = reconnect_timeout
        self._events: AsyncIterator[DeviceEvent] = device.events().__aiter__()

    async def make_copy(self, board_number: int, deal: Deal, copy: int) -> Iterable[DeviceEvent]:
        result = await self.device.make_board(board_number, deal, copy)
        out: list[DeviceEvent] = []
        while True:
            try:
                ev = await asyncio.wait_for(self._events.__anext__(), self.drain_timeout)
            except (TimeoutError, StopAsyncIteration):
                break
            if isinstance(ev, Disconnected):
                out.append(ev)
                break
            deal_id = getattr(ev, "deal_id", None)
            if isinstance(ev, DeviceFault) and deal_id in (None, result.deal_id):
                out.append(ev)
                break
            if deal_id != result.deal_id:
                continue  # a late event of an earlier copy
            if isinstance(ev, CardSeen | DealStarted):
                out.append(ev)
            elif isinstance(ev, DealEnded):
                out.append(ev)
                break
        if not result.ok and not any(isinstance(e, DeviceFault | Disconnected) for e in out):
            out.append(result.fault or DeviceFault(FaultKind.OTHER, "the driver reports the copy failed", 0.0))
        return out

    async def recover(self) -> None:
        """Stop the machine and clear its fault state (the operator has fixed a jam by the time we re-make).

        After a power cut or a pulled cable the driver reconnects by itself; wait for it (up to
        ``reconnect_timeout``) so that the re-make does not fail at once.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_timeout
        while not self.device.connected and loop.time() < deadline:
            await asyncio.sleep(0.05)
        with contextlib.suppress(DealerError):  # the link is down: the driver reconnects; the next make_copy
            await self.device.reset()  # reports it if it persists
        await asyncio.sleep(self.settle)
