"""Fan-out of public messages to audience clients over Server-Sent Events.

Each message is encoded once (``id: N`` + ``data: json``) into a shared, bounded history; every client keeps only
a cursor into it. Publishing is O(1) whatever the number of clients; waking the clients is coalesced (at most one
wake-up per ``coalesce`` seconds, immediate when idle), so at full dealing speed a client gets several messages per
wake-up while at a real machine's pace each card goes out at once. A client that falls more than ``client_buffer``
messages behind (a slow viewer) is not waited for: it gets a fresh snapshot when it next writes, so it never stalls
the others. The history serves ``Last-Event-ID`` resumption; a client that asks for something older gets a
snapshot. An optional broadcast delay holds every message back (and the snapshot with it) by a fixed time, counted
from when the hall's own hub showed it (``hall_shown``), never from less: no message leaves a delayed hub early.

Two kinds of client. A real connection is *attached* (``attach``): the hub writes to its transport itself, in one
fan-out loop per wake-up, the same pre-framed bytes to every viewer at the same cursor (one ``write`` per viewer
per wake-up, no coroutine of its own woken per message). A viewer whose socket buffer holds more than
``write_limit`` bytes (it does not read) is skipped; once drained, it gets what it missed, or a snapshot when that
is more than ``client_buffer`` messages. ``stream`` is the
same stream as an async generator, for tests, benchmarks and servers that expose no transport.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable
from statistics import median
from typing import Protocol

from .public import Message, PublicState

KEEPALIVE = b": keepalive\n\n"
# After a fan-out, the next waits at least FANOUT_GAP x what a fan-out costs (CPU seconds): writing to the viewers
# takes about a quarter of the loop whatever their number and the message rate (at full dealing speed a fan-out
# carries many messages; at a real machine's pace each message still goes out at once). The cost is the median of
# the last FANOUT_SAMPLES fan-outs: one slowed by the machine (the host taking the core, a collection) is not
# tripled into the next message's delay, a lasting change counts after a few. On a noisy 2-core VM, fan-outs to
# 1,000 viewers took 7 ms, and now and then 13-33 ms; the last one's cost alone held the next message up to
# 57 ms (p99 25-82 ms against 6-7 ms on a quiet machine).
FANOUT_GAP = 3.0
FANOUT_SAMPLES = 9
HEAD = b"retry: 1000\n\n"


def chunk(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk (the framing of a response without a length)."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class Transport(Protocol):
    """What the hub needs of a connection's transport (``asyncio.WriteTransport`` has it)."""

    def write(self, data: bytes) -> None: ...
    def get_write_buffer_size(self) -> int: ...
    def is_closing(self) -> bool: ...


class Viewer:
    """One attached connection: its transport, how its bytes are framed, the last id written to it."""

    __slots__ = ("cursor", "framed", "transport")

    def __init__(self, transport: Transport, chunked: bool = True) -> None:
        self.transport = transport
        self.framed = chunked
        self.cursor = 0


class _Held:
    """A message a delayed hub holds: when it may leave (loop time), its number among those published."""

    __slots__ = ("due", "msg", "number")

    def __init__(self, due: float, number: int, msg: Message) -> None:
        self.due = due
        self.number = number
        self.msg = msg


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
        write_limit: int = 256 * 1024,
    ) -> None:
        self.delay = delay
        self.state = PublicState()
        self.last_id = 0
        self.history_size = history
        self.client_buffer = min(client_buffer, history)
        self.coalesce = coalesce
        self.keepalive = keepalive
        self.write_limit = write_limit
        self._viewers: dict[Viewer, None] = {}  # attached connections, in arrival order
        self._ended: asyncio.Future[None] | None = None
        self._snapshot: tuple[int, bytes] | None = None  # (last_id, its snapshot's bytes)
        self._history: list[bytes] = []  # messages first_id .. last_id
        self._first_id = 1
        self._waiters: list[asyncio.Future[bool]] = []
        self._flush_at: float | None = None
        self._last_flush = -1e9
        self._quiet_until = -1e9  # no fan-out before this: FANOUT_GAP x the fan-out cost after the last one's end
        self._fanout_costs: deque[float] = deque(maxlen=FANOUT_SAMPLES)  # CPU seconds of the last fan-outs
        self._keepalive_task: asyncio.Task[None] | None = None
        self.clients = 0
        self.resyncs = 0
        self.closed = False
        self.on_emit: Callable[[int, bytes], None] | None = None  # test and benchmark hook
        # Real-time copies of every public message, before any broadcast delay (the relays' publisher).
        self.sinks: list[Callable[[Message], None]] = []
        # A relay: a client whose Last-Event-ID is ahead of this hub waits for it instead of taking a snapshot.
        self.wait_ahead = False
        # With a delay: messages held, each [due loop time, its number among those published, the message]
        self._held: deque[_Held] = deque()
        self._published = 0
        self._bumped = 0  # numbers up to this were shown by the hall (their due time counts from then)
        self._release: asyncio.TimerHandle | None = None
        # Called after each fan-out with (last id written, loop time): the hall tells its delayed twin (streams.py)
        self.on_shown: Callable[[int, float], None] | None = None
        # Called when a message is published while nobody watches this hub (up to its id, loop time): the relays'
        # publisher sends it at once (the remote twin keeps counting its delay from the publish, as before)
        self.on_unwatched: Callable[[int, float], None] | None = None
        self._cleared_at = 0  # id of the latest "cleared": a client resuming from before it gets the snapshot

    # -- publishing ----------------------------------------------------------------------------------------
    def publish(self, msg: Message) -> None:
        for sink in self.sinks:
            sink(msg)
        if self.delay > 0:
            loop = asyncio.get_running_loop()
            self._published += 1
            self._held.append(_Held(loop.time() + self.delay, self._published, msg))
            if len(self._held) == 1:
                self._schedule_release()
        else:
            self._emit(msg)

    # -- the broadcast delay: held messages, released in order, none before its time ------------------------
    def hall_shown(self, up_to: int, at: float) -> None:
        """The hall's hub wrote its messages up to number ``up_to`` to its viewers at loop time ``at``: none of
        them may leave this (delayed) hub before ``at + delay``, even when the hall's own fan-out came late (a
        loaded machine). The first showing counts; each message is bumped once (``_bumped``)."""
        if self.delay <= 0 or not self._held or up_to <= self._bumped:
            self._bumped = max(self._bumped, up_to)
            return
        first = self._held[0].number
        due = at + self.delay
        start = max(self._bumped + 1, first)
        for number in range(start, min(up_to, self._published) + 1):
            entry = self._held[number - first]
            entry.due = max(entry.due, due)
        self._bumped = max(self._bumped, up_to)
        if start == first:
            self._schedule_release()  # the head's time moved

    def _schedule_release(self) -> None:
        if self._release is not None:
            self._release.cancel()
            self._release = None
        if self._held:
            self._release = asyncio.get_running_loop().call_at(self._held[0].due, self._release_due)

    def _release_due(self) -> None:
        """Emit the held messages whose time has come, in order (a timer firing a hair early releases nothing)."""
        self._release = None
        now = asyncio.get_running_loop().time()
        while self._held and self._held[0].due <= now:
            self._emit(self._held.popleft().msg)
        self._schedule_release()

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
        if msg["type"] == "cleared":  # a client resuming from before it gets the (cleared) snapshot, no old cards
            self._cleared_at = self.last_id
        self._history.append(data)
        if len(self._history) > 2 * self.history_size:
            drop = len(self._history) - self.history_size
            del self._history[:drop]
            self._first_id += drop
        if self.on_emit is not None:
            self.on_emit(self.last_id, data)
        if self._flush_at is None:
            loop = asyncio.get_running_loop()
            if self._waiters or self._viewers:
                at = max(loop.time(), self._last_flush + self.coalesce, self._quiet_until)
                self._flush_at = at
                loop.call_at(at, self._flush)
            elif self.on_unwatched is not None:  # nobody watches the hall: shown as it is published
                self.on_unwatched(self.last_id, loop.time())

    def _flush(self, keepalive: bool = False) -> None:
        self._flush_at = None
        self._last_flush = asyncio.get_running_loop().time()
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(keepalive)
        if self._viewers:
            started = time.thread_time()  # CPU time: being preempted on a busy machine is not our loop's work
            self._fan_out(keepalive)
            spent = time.thread_time() - started
            self._fanout_costs.append(spent)
            self._quiet_until = asyncio.get_running_loop().time() + median(self._fanout_costs) * FANOUT_GAP
        if self.on_shown is not None and (waiters or self._viewers):
            self.on_shown(self.last_id, asyncio.get_running_loop().time())

    def _fan_out(self, keepalive: bool) -> None:
        """Write what each attached viewer has not had yet: one write per viewer, the bytes built once per
        cursor (nearly every viewer shares one)."""
        last = self.last_id
        built: dict[int, tuple[bytes, bytes]] = {}  # cursor -> (bytes, the same as one chunk)
        limit = self.write_limit
        for viewer in self._viewers:
            transport = viewer.transport
            cursor = viewer.cursor
            if cursor >= last:
                if keepalive and not transport.is_closing():
                    transport.write(chunk(KEEPALIVE) if viewer.framed else KEEPALIVE)
                continue
            if transport.get_write_buffer_size() > limit or transport.is_closing():
                continue  # not reading: skipped; once drained, it gets what it missed (or a snapshot)
            pair = built.get(cursor)
            if pair is None:
                data = None if last - cursor > self.client_buffer else self._since(cursor)
                if data is None:  # fell behind: a fresh snapshot instead of everything missed
                    data = self.snapshot_bytes()
                    self.resyncs += 1
                pair = built[cursor] = (data, chunk(data))
            transport.write(pair[1] if viewer.framed else pair[0])
            viewer.cursor = last

    async def _keepalives(self) -> None:
        while not self.closed:
            await asyncio.sleep(self.keepalive)
            self._flush(keepalive=True)

    def close(self) -> None:
        """End every stream (the service is stopping): clients reconnect to the next server."""
        self.closed = True
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(False)
        if self._keepalive_task is not None:
            self._keepalive_task.cancel()
        if self._release is not None:
            self._release.cancel()
            self._release = None

    # -- reading -------------------------------------------------------------------------------------------
    def snapshot_bytes(self) -> bytes:
        """The snapshot as an SSE message, built once per id whatever the number of clients asking for it."""
        if self._snapshot is None or self._snapshot[0] != self.last_id:
            self._snapshot = (self.last_id, _encode(self.last_id, self.state.snapshot()))
        return self._snapshot[1]

    def _start_keepalives(self) -> None:
        if self._keepalive_task is None and self.keepalive > 0 and not self.closed:
            self._keepalive_task = asyncio.get_running_loop().create_task(self._keepalives())

    def _opening(self, last_event_id: int | None) -> tuple[bytes, int]:
        """The first bytes of a stream (retry hint, then a snapshot or the replay after ``last_event_id``) and
        the cursor the stream goes on from."""
        replay = None
        cursor = self.last_id
        if last_event_id is not None and last_event_id > self.last_id and self.wait_ahead:
            replay, cursor = b"", last_event_id  # this relay is behind the one the client came from
        elif last_event_id is not None and self._cleared_at <= last_event_id <= self.last_id:
            replay = self._since(last_event_id)
        if replay is None:
            replay = self.snapshot_bytes()
        return HEAD + replay, cursor

    def attach(self, transport: Transport, last_event_id: int | None, chunked: bool = True) -> Viewer:
        """Serve one connection from the hub's own fan-out: its opening bytes now, every message after."""
        self._start_keepalives()
        viewer = Viewer(transport, chunked)
        opening, viewer.cursor = self._opening(last_event_id)
        transport.write(chunk(opening) if chunked else opening)
        self._viewers[viewer] = None
        self.clients += 1
        return viewer

    def detach(self, viewer: Viewer) -> None:
        if self._viewers.pop(viewer, 0) is None:
            self.clients -= 1

    def ended(self) -> asyncio.Future[None]:
        """Done when the hub closes (the service stops): attached connections then end their responses."""
        if self._ended is None:
            self._ended = asyncio.get_running_loop().create_future()
            if self.closed:
                self._ended.set_result(None)
        return self._ended

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

    async def stream(self, last_event_id: int | None) -> AsyncGenerator[bytes, None]:
        """The bytes of one SSE client: retry hint, snapshot or replay, then live messages."""
        self._start_keepalives()
        loop = asyncio.get_running_loop()
        self.clients += 1
        try:
            opening, cursor = self._opening(last_event_id)
            yield opening
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


def parse_last_event_id(value: object) -> int | None:
    if value is None:
        return None
    try:
        n = int(str(value).strip())
    except ValueError:
        return None
    return n if n >= 0 else None
