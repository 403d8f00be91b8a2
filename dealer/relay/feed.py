"""A relay's side: the event's stream, from its first message, into a ``PublicHub`` keyed by stream sequence.

Ids given to viewers are the stream's sequence numbers, the same on every relay, so a viewer who reconnects to
another relay resumes with ``Last-Event-ID`` where it left off. The broadcast delay for remote viewers is applied
here: a message is released ``delay`` seconds after the hall showed it on its own screen (the hall's signed
``Dealer-Shown`` time; the hall sends a message to NATS only once it has shown it) and after the stream stored it
(its JetStream timestamp), whichever is later — so no viewer of a relay sees an event less than ``delay`` after
the hall did, relays started at different times release each message at the same moment, and a relay started
late serves the old part of the stream at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from typing import TYPE_CHECKING

from dealer.app.hub import PublicHub
from dealer.app.nats_publisher import ensure_stream, redact_url
from dealer.app.public_wire import WireError, decode, subject
from dealer.app.relay_signing import Verifier, shown_at
from dealer.core.json_types import JsonObject

if TYPE_CHECKING:  # nats loads only when a relay is configured
    from nats.aio.client import Client
    from nats.aio.msg import Msg
    from nats.js import JetStreamContext

log = logging.getLogger("dealer.relay.feed")


class RelayFeed:
    def __init__(
        self, hub: PublicHub, url: str, event: str, delay: float = 0.0, verifier: Verifier | None = None
    ) -> None:
        self.hub = hub
        self.verifier = verifier  # the hall's signature on every message (None: not checked)
        self.forged = 0  # messages dropped: unsigned, wrongly signed or replayed
        self.url = url
        self.event = event
        self.delay = delay
        self.received = 0
        self.refused = 0
        self.lag = 0.0  # s from the stream storing the last message to this relay reading it
        self.max_lag = 0.0
        self.connected = False
        self._pending: deque[tuple[float, int, JsonObject]] = deque()
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._nc: Client | None = None

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._consume()), loop.create_task(self._release())]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.close()

    async def _connect(self) -> JetStreamContext:
        import nats

        async def disconnected() -> None:
            self.connected = False

        async def reconnected() -> None:
            self.connected = True

        while True:
            try:
                nc = await nats.connect(
                    self.url,
                    name="dealer-relay",
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    connect_timeout=2,
                    disconnected_cb=disconnected,
                    reconnected_cb=reconnected,
                )
                js = nc.jetstream()
                await ensure_stream(js, self.event)
                self._nc = nc
                self.connected = True
                return js
            except Exception as exc:
                log.warning("relay: cannot reach NATS at %s (%s); retrying", redact_url(self.url), exc)
                await asyncio.sleep(1.0)

    async def _consume(self) -> None:
        from nats.js.api import DeliverPolicy

        js = await self._connect()
        # An ordered consumer: in order, from the first message, recreated by the client after any gap. Read by a
        # callback, not the message iterator: the client hands the callback every message of one read before the
        # loop runs again, so messages the hall sent together (a deal's start and its first card, a commit and the
        # bank's progress) reach the hub before its next fan-out and go out in one. The iterator yields to the loop
        # after each message: the first went out alone and the rest waited out the hub's pause after a fan-out.
        await js.subscribe(
            subject(self.event), cb=self._on_message, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
        )

    async def _on_message(self, msg: Msg) -> None:
        meta = msg.metadata
        forged = self.verifier.check(msg.headers, msg.data) if self.verifier is not None else None
        data: JsonObject | None = None
        if forged is not None:  # not the hall's: dropped and counted (logged for the first few, then sparingly)
            self.forged += 1
            if self.forged <= 10 or self.forged % 1000 == 0:
                seq_no = meta.sequence.stream
                log.error("relay: message %d dropped (%s); %d dropped so far", seq_no, forged, self.forged)
        else:
            try:
                data = decode(msg.data)
            except WireError as exc:  # serve nothing that is not a valid public message
                self.refused += 1
                log.error("relay: message %d refused: %s", meta.sequence.stream, exc)
        self.received += 1
        self.lag = time.time() - meta.timestamp.timestamp()
        self.max_lag = max(self.max_lag, self.lag)
        seq = int(meta.sequence.stream)
        if self.delay <= 0 and not self._pending:
            self._deliver(seq, data)
            return
        shown = shown_at(msg.headers) if forged is None and self.verifier is not None else None  # signed only
        release = max(meta.timestamp.timestamp(), shown or 0.0) + self.delay
        self._pending.append((release, seq, data if data is not None else {}))
        self._wake.set()

    def _deliver(self, seq: int, data: JsonObject | None) -> None:
        if data:  # a refused message leaves a jump in ids: viewers resuming across it get a snapshot
            self.hub.emit_at(seq, data)

    async def _release(self) -> None:
        while True:
            if not self._pending:
                self._wake.clear()
                await self._wake.wait()
                continue
            wait = self._pending[0][0] - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            while self._pending and self._pending[0][0] <= time.time():
                _, seq, data = self._pending.popleft()
                self._deliver(seq, data)
