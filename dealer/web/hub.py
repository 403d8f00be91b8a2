"""Fan-out of public messages to audience clients over Server-Sent Events.

Each message is encoded once (``id: N`` + ``data: json``) into a shared, bounded history; every client keeps only
a cursor into it. Publishing is O(1) whatever the number of clients; waking the clients is coalesced (at most one
wake-up per ``coalesce`` seconds, immediate when idle), so at full dealing speed a client gets several messages per
wake-up while at a real machine's pace each card goes out at once. A client that falls more than ``client_buffer``
messages behind (a slow viewer) is not waited for: it gets a fresh snapshot when it next writes, so it never stalls
the others. The history serves ``Last-Event-ID`` resumption; a client that asks for something older gets a
snapshot. An optional broadcast delay holds every message back (and the snapshot with it) by a fixed time.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from .public import Message, PublicState

KEEPALIVE = b": keepalive\n\n"


def _encode(event_id: int, msg: Message) -> bytes:
    data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False)
    return f"id: {event_id}\ndata: {data}\n\n".encode()


class PublicHub:
    def __init__(
        self,
        delay: float = 0.0,
        history: int = 4096,
        client_buffer: int = 512,
        coalesce: float = 0.008,
        keepalive: float = 15.0,
    ) -> None:
        self.delay = delay
        self.state = PublicState()
        self.last_id = 0
        self.history_size = history
        self.client_buffer = min(client_buffer, history)
        self.coalesce = coalesce
        self.keepalive = keepalive
        self._history: list[bytes] = []  # messages first_id .. last_id
        self._first_id = 1
        self._waiters: list[asyncio.Future[bool]] = []
        self._flush_at: float | None = None
        self._last_flush = -1e9
        self._keepalive_task: asyncio.Task[None] | None = None
        self.clients = 0
        self.resyncs = 0
        self.closed = False
        self.on_emit: Callable[[int, bytes], None] | None = None  # test and benchmark hook
        # Real-time copies of every public message, before any broadcast delay (the relays' publisher).
        self.sinks: list[Callable[[Message], None]] = []
        # A relay: a client whose Last-Event-ID is ahead of this hub waits for it instead of taking a snapshot.
        self.wait_ahead = False

    # -- publishing ----------------------------------------------------------------------------------------
    def publish(self, msg: Message) -> None:
        for sink in self.sinks:
            sink(msg)
        if self.delay > 0:
            asyncio.get_running_loop().call_later(self.delay, self._emit, msg)
        else:
            self._emit(msg)

    def emit_at(self, event_id: int, msg: Message) -> None:
        """Emit ``msg`` under a given id (a relay: the stream's sequence); a jump in ids drops the history."""
        if event_id <= self.last_id:
            return  # already held (a redelivery)
        if event_id != self.last_id + 1:
            self.forget_history()
            self._first_id = event_id
        self.last_id = event_id - 1
        self._emit(msg)

    def _emit(self, msg: Message) -> None:
        self.last_id += 1
        self.state.apply(msg)
        data = _encode(self.last_id, msg)
        self._history.append(data)
        if len(self._history) > 2 * self.history_size:
            drop = len(self._history) - self.history_size
            del self._history[:drop]
            self._first_id += drop
        if self.on_emit is not None:
            self.on_emit(self.last_id, data)
        if self._waiters and self._flush_at is None:
            loop = asyncio.get_running_loop()
            at = max(loop.time(), self._last_flush + self.coalesce)
            self._flush_at = at
            loop.call_at(at, self._flush)

    def _flush(self, keepalive: bool = False) -> None:
        self._flush_at = None
        self._last_flush = asyncio.get_running_loop().time()
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(keepalive)

    async def _keepalives(self) -> None:
        while not self.closed:
            await asyncio.sleep(self.keepalive)
            self._flush(keepalive=True)

    def close(self) -> None:
        """End every stream (the service is stopping): clients reconnect to the next server."""
        self.closed = True
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(False)
        if self._keepalive_task is not None:
            self._keepalive_task.cancel()

    # -- reading -------------------------------------------------------------------------------------------
    def snapshot_bytes(self) -> bytes:
        return _encode(self.last_id, self.state.snapshot())

    def forget_history(self) -> None:
        """Drop the resumption history (tests: a client asking for an old id then needs a snapshot)."""
        self._first_id += len(self._history)
        self._history = []

    def _since(self, cursor: int) -> bytes | None:
        """Messages after ``cursor``, or None when they are no longer all held (the client needs a snapshot)."""
        if cursor + 1 < self._first_id:
            return None
        start = cursor + 1 - self._first_id
        return b"".join(self._history[start:])

    async def stream(self, last_event_id: int | None) -> AsyncIterator[bytes]:
        """The bytes of one SSE client: retry hint, snapshot or replay, then live messages."""
        if self._keepalive_task is None and self.keepalive > 0:
            self._keepalive_task = asyncio.get_running_loop().create_task(self._keepalives())
        loop = asyncio.get_running_loop()
        self.clients += 1
        try:
            head = b"retry: 1000\n\n"
            replay = None
            cursor = self.last_id
            if last_event_id is not None and last_event_id > self.last_id and self.wait_ahead:
                replay, cursor = b"", last_event_id  # this relay is behind the one the client came from
            elif last_event_id is not None and last_event_id <= self.last_id:
                replay = self._since(last_event_id)
            if replay is None:
                replay = self.snapshot_bytes()
            yield head + replay
            while not self.closed:
                if cursor >= self.last_id:
                    fut: asyncio.Future[bool] = loop.create_future()
                    self._waiters.append(fut)
                    keepalive = await fut
                    if self.closed:
                        return
                    if cursor >= self.last_id:
                        if keepalive:
                            yield KEEPALIVE
                        continue
                chunk = None if self.last_id - cursor > self.client_buffer else self._since(cursor)
                if chunk is None:  # fell behind: a fresh snapshot instead of everything missed
                    self.resyncs += 1
                    chunk = self.snapshot_bytes()
                cursor = self.last_id
                yield chunk
        finally:
            self.clients -= 1


def parse_last_event_id(value: Any) -> int | None:
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        return None
    return n if n >= 0 else None
