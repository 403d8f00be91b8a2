"""Messages to the technical judge's consoles (WebSocket), typed (``models.OperatorMessage``). Never sent to
the audience."""

from __future__ import annotations

import asyncio

from dealer.app.operator_messages import (
    OperatorMessage,
)


class OperatorBus:
    def __init__(self, queue_size: int = 1024) -> None:
        self._queues: set[asyncio.Queue[str | None]] = set()
        self._size = queue_size

    def subscribe(self) -> asyncio.Queue[str | None]:
        q: asyncio.Queue[str | None] = asyncio.Queue(self._size)
        self._queues.add(q)
        return q

    def unsubscribe(self, q: asyncio.Queue[str | None]) -> None:
        self._queues.discard(q)

    def send(self, msg: OperatorMessage) -> None:
        text = msg.model_dump_json()
        for q in list(self._queues):
            try:
                q.put_nowait(text)
            except asyncio.QueueFull:  # a stuck console is dropped; it reconnects and gets the full state
                self._queues.discard(q)
                q.get_nowait()
                q.put_nowait(None)
