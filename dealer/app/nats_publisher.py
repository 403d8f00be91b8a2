"""The hall service's side: every public message, in real time, onto the event's JetStream stream.

``sink`` is called by the hub for each message before any broadcast delay (the relays apply the delay for remote
viewers). It only queues: the hall never waits for NATS. One task publishes in order, in batches, each message
with a ``Nats-Msg-Id`` (this process's run id and its number) so that a batch resent after a lost connection is
stored once. NATS being down does not stop the hall: messages wait in the queue (bounded) and go out when the
server is back; past the bound the oldest are dropped, counted and logged (relays then show a gap-free stream of
what was kept, and the next ``bank``/``station`` messages correct the totals).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from typing import TYPE_CHECKING

from dealer.core.json_types import JsonObject

from .public_wire import WireError, encode, stream_name, subject
from .relay_signing import ID_HEADER, SHOWN_HEADER, SIGNATURE_HEADER, public_hex, sign

if TYPE_CHECKING:  # nats loads only when a relay is configured
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from nats.aio.client import Client
    from nats.js import JetStreamContext

log = logging.getLogger("dealer.relay.publisher")


def redact_url(url: str) -> str:
    """A NATS URL fit for a log: its user and password (or token) replaced by ``***``."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]).geturl()


BATCH = 256


async def ensure_stream(js: JetStreamContext, event: str) -> None:
    """Create the event's stream if absent (file storage, one subject, keep everything of the event)."""
    from nats.js.api import StorageType, StreamConfig
    from nats.js.errors import NotFoundError

    config = StreamConfig(name=stream_name(event), subjects=[subject(event)], storage=StorageType.FILE)
    try:
        await js.stream_info(stream_name(event))
    except NotFoundError:
        await js.add_stream(config)


class RelayPublisher:
    def __init__(self, url: str, event: str, limit: int = 100_000, key: Ed25519PrivateKey | None = None) -> None:
        self.url = url
        self.key = key  # signs every message (relay_signing.py); None: unsigned (relays with --hall-key drop them)
        self.public_key = public_hex(key.public_key()) if key is not None else None
        self.event = event
        self.subject = subject(event)
        self.limit = limit
        self.run_id = uuid.uuid4().hex[:12]
        self.published = 0
        self.dropped = 0
        self.refused = 0
        self._queue: deque[tuple[dict[str, str], bytes]] = deque()
        # messages the hall has published but not yet shown on its screen: (the hall's number, payload); each is
        # sent once shown, stamped with that time (the relays' delay counts from it)
        self._unshown: deque[tuple[int, bytes]] = deque()
        self._seq = 0  # the hall's number of the last message given (its hub's event id)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._nc: Client | None = None
        self._closing = False
        self.connected = False  # NATS takes our messages now (False while it is down: they wait in the queue)

    # -- called by the hub (event loop thread) ------------------------------------------------------------
    def sink(self, msg: JsonObject) -> None:
        """A message the hall publishes (called before the hall's hub numbers it: the numbers go one for one)."""
        self._seq += 1
        try:
            data = encode(msg)
        except WireError as exc:  # never publish what is not public; the hall goes on
            self.refused += 1
            log.error("not sent to the relays: %s", exc)
            return
        self._unshown.append((self._seq, data))

    def hall_shown(self, up_to: int, at: float) -> None:
        """The hall's hub showed its messages up to number ``up_to`` (``at``: its loop time, unused: the relays
        need the wall clock): they go to NATS now, each stamped with this moment in its signed headers."""
        if not self._unshown or self._unshown[0][0] > up_to:
            return
        shown = f"{time.time():.6f}"
        while self._unshown and self._unshown[0][0] <= up_to:
            number, data = self._unshown.popleft()
            self._send(number, data, shown)

    def _send(self, number: int, data: bytes, shown: str) -> None:
        mid = f"{self.run_id}-{number}"
        headers = {ID_HEADER: mid, SHOWN_HEADER: shown}
        if self.key is not None:
            headers[SIGNATURE_HEADER] = sign(self.key, self.event, mid, data, shown)
        self._queue.append((headers, data))
        if len(self._queue) > self.limit:
            self._queue.popleft()
            self.dropped += 1
            if self.dropped in (1, 10, 100) or self.dropped % 1000 == 0:
                log.error("NATS unreachable: %d public message(s) for the relays dropped", self.dropped)
        self._wake.set()

    # -- life cycle -----------------------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    @property
    def pending(self) -> int:
        """Messages not yet stored in the stream (also those waiting for the hall's screen to show them)."""
        return len(self._queue) + len(self._unshown)

    async def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued is stored in the stream (True) or ``timeout`` passes (False)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while self.pending and loop.time() < end:
            await asyncio.sleep(0.01)
        return not self.pending

    async def close(self, timeout: float = 2.0) -> None:
        self.hall_shown(self._seq, 0.0)  # the hall is closing: what it published and never showed goes out now
        with contextlib.suppress(Exception):
            await self.flush(timeout)
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
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
                    name=f"dealer-hall-{self.run_id}",
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.5,
                    connect_timeout=2,
                    allow_reconnect=True,
                    disconnected_cb=disconnected,
                    reconnected_cb=reconnected,
                )
                js = nc.jetstream()
                await ensure_stream(js, self.event)
                self._nc = nc
                self.connected = True
                return js
            except Exception as exc:
                log.warning("relays: cannot reach NATS at %s (%s); retrying", redact_url(self.url), exc)
                await asyncio.sleep(1.0)

    async def _run(self) -> None:
        js = await self._connect()
        while not self._closing:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            batch = [self._queue[i] for i in range(min(BATCH, len(self._queue)))]
            try:
                await asyncio.gather(
                    *(js.publish(self.subject, data, headers=headers, timeout=5) for headers, data in batch)
                )
            except Exception as exc:  # resend the batch in order; the stream drops the duplicates by message id
                self.connected = False
                log.warning("relays: publish failed (%s); retrying", exc)
                await asyncio.sleep(0.2)
                continue
            self.connected = True
            for _ in batch:  # the queue may have dropped from its head meanwhile: drop only what was sent
                if self._queue and self._queue[0] in batch:
                    self._queue.popleft()
            self.published += len(batch)
