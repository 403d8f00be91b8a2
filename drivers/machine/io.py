"""The I/O of one open transport under a protocol connection: a read loop feeding the connection, a timer
loop driving its deadlines (retransmission, heartbeat), and one writer that sends what the connection made."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from firmware_protocol.connection import Event, HostConnection

from ..transport import Transport, TransportClosed


class Pump:
    """Moves bytes between ``transport`` and ``conn``; hands the connection's events to ``handle`` and a dead
    transport's reason to ``lost``. Started by :meth:`open`, stopped (transport closed) by :meth:`stop`."""

    def __init__(
        self,
        conn: HostConnection,
        transport: Transport,
        handle: Callable[[list[Event]], None],
        lost: Callable[[str], None],
        clock: Callable[[], float],
    ) -> None:
        self.conn = conn
        self.transport = transport
        self._handle = handle
        self._lost = lost
        self._mono = clock
        self._tasks: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._open = False

    async def open(self) -> None:
        await self.transport.open()
        self._open = True
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read_loop()), loop.create_task(self._timer_loop())]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        self._open = False
        with contextlib.suppress(Exception):
            await self.transport.close()

    async def flush(self) -> None:
        """Send what the connection has to send. One writer at a time, taking the bytes inside the lock: frames
        leave in the order the link made them even when a transport writes from a helper thread."""
        async with self._write_lock:
            data = self.conn.data_to_send()
            if not data or not self._open:
                return
            try:
                await self.transport.write(data)
            except TransportClosed as exc:
                self._lost(str(exc))
        self._wake.set()

    async def _read_loop(self) -> None:
        while True:
            try:
                data = await self.transport.read()
            except TransportClosed as exc:
                self._lost(str(exc))
                return
            self._handle(self.conn.receive(data, self._mono()))
            await self.flush()

    async def _timer_loop(self) -> None:
        while True:
            now = self._mono()
            due = self.conn.next_deadline()
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if due is None else max(0.0, due - now)):
                    await self._wake.wait()
            self._handle(self.conn.poll(self._mono()))
            await self.flush()
