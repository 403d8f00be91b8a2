"""Fan-out of public messages to audience clients over Server-Sent Events.

Each message is encoded once (``id: N`` + ``data: json``) and the same bytes are appended to every client's
bounded buffer. A client whose buffer is full is not waited for: its buffer is dropped and it gets a fresh
snapshot when it next writes, so a slow client never stalls the others. A ring of recent messages serves
``Last-Event-ID`` resumption; a client that asks for something older gets a snapshot. An optional broadcast
delay holds every message back (and the snapshot with it) by a fixed time.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from .public import Message, PublicState


def _encode(event_id: int, msg: Message) -> bytes:
    data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False)
    return f"id: {event_id}\ndata: {data}\n\n".encode()


class Subscriber:
    __slots__ = ("buffer", "limit", "overflowed", "wake")

    def __init__(self, limit: int) -> None:
        self.buffer: list[bytes] = []
        self.limit = limit
        self.overflowed = False
        self.wake = asyncio.Event()


class PublicHub:
    def __init__(self, delay: float = 0.0, history: int = 4096, client_buffer: int = 512) -> None:
        self.delay = delay
        self.state = PublicState()
        self.last_id = 0
        self._history: deque[tuple[int, bytes]] = deque(maxlen=history)
        self._subscribers: set[Subscriber] = set()
        self._client_buffer = client_buffer
        self.on_emit: Callable[[int, bytes], None] | None = None  # test and benchmark hook
        self.resyncs = 0
        self.closed = False

    def close(self) -> None:
        """End every stream (the service is stopping): clients reconnect to the next server."""
        self.closed = True
        for sub in self._subscribers:
            sub.wake.set()

    @property
    def clients(self) -> int:
        return len(self._subscribers)

    def publish(self, msg: Message) -> None:
        if self.delay > 0:
            asyncio.get_running_loop().call_later(self.delay, self._emit, msg)
        else:
            self._emit(msg)

    def _emit(self, msg: Message) -> None:
        self.last_id += 1
        self.state.apply(msg)
        data = _encode(self.last_id, msg)
        self._history.append((self.last_id, data))
        for sub in self._subscribers:
            if len(sub.buffer) >= sub.limit:
                if not sub.overflowed:
                    sub.overflowed = True
                    sub.buffer.clear()
                    self.resyncs += 1
            elif not sub.overflowed:
                sub.buffer.append(data)
            sub.wake.set()
        if self.on_emit is not None:
            self.on_emit(self.last_id, data)

    def snapshot_bytes(self) -> bytes:
        return _encode(self.last_id, self.state.snapshot())

    def _replay(self, last_event_id: int | None) -> list[bytes]:
        if last_event_id is None or last_event_id > self.last_id:
            return [self.snapshot_bytes()]
        if last_event_id == self.last_id:
            return []
        oldest = self._history[0][0] if self._history else self.last_id + 1
        if last_event_id + 1 < oldest:
            return [self.snapshot_bytes()]
        return [data for eid, data in self._history if eid > last_event_id]

    def subscribe(self) -> Subscriber:
        sub = Subscriber(self._client_buffer)
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self._subscribers.discard(sub)

    async def stream(self, last_event_id: int | None, keepalive: float = 15.0) -> AsyncIterator[bytes]:
        """The bytes of one SSE client: retry hint, snapshot or replay, then live messages."""
        sub = self.subscribe()
        try:
            yield b"retry: 1000\n\n" + b"".join(self._replay(last_event_id))
            while not self.closed:
                try:
                    await asyncio.wait_for(sub.wake.wait(), keepalive)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                sub.wake.clear()
                if self.closed:
                    return
                if sub.overflowed:
                    sub.overflowed = False
                    sub.buffer.clear()
                    yield self.snapshot_bytes()
                elif sub.buffer:
                    chunk = b"".join(sub.buffer)
                    sub.buffer.clear()
                    yield chunk
        finally:
            self.unsubscribe(sub)


def parse_last_event_id(value: Any) -> int | None:
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        return None
    return n if n >= 0 else None
