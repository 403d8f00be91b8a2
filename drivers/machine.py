"""The dealing-machine driver (asyncio): the open protocol over any transport.

It opens a session (HELLO, version negotiation, device info), keeps a heartbeat, starts random deals and
board copies, checks every card the machine reports (no duplicates, no 14th card in a pocket, the pocket
the board's deal wants, the machine's own record at the end), turns faults into typed
:class:`dealer.core.events.DeviceFault` events, and reconnects after the link is lost, telling the caller
that the deal in progress is void (:class:`Disconnected`), never resuming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dealer.core import Card, Deal, Seat
from dealer.core.events import (
    CardSeen,
    DealEnded,
    DealStarted,
    DeviceEvent,
    DeviceFault,
    Disconnected,
    FaultKind,
    Reconnected,
)
from firmware_protocol.cards import unpack_seats
from firmware_protocol.connection import (
    Answered,
    ConnectionLost,
    Event,
    HostConnection,
    HostState,
    MessageReceived,
    PeerRestarted,
    Refused,
    SessionOpened,
    SessionRefused,
)
from firmware_protocol.link import DEFAULT_ACK_TIMEOUT, DEFAULT_RETRY_LIMIT, Link
from firmware_protocol.messages import (
    Abort,
    BoardDone,
    Capability,
    CardRead,
    DealEnd,
    DealStart,
    DeviceInfo,
    Fault,
    FaultCode,
    GetInfo,
    GetStatus,
    MakeBoard,
    Message,
    NakReason,
    Reset,
    StartDeal,
    Status,
)
from firmware_protocol.table import load_table

from .device import BoardResult, CommandRefused, DealingDevice, DeviceBusy, DeviceError, LinkLost, MachineInfo
from .transport import Transport, TransportClosed

HOST_MIN_VERSION = 1
HOST_MAX_VERSION = 1
_TABLE = load_table()
BUSY_RETRY = _TABLE.busy_retry_ms / 1000
BUSY_RETRY_LIMIT = _TABLE.busy_retry_limit


def _card_name(card: int | None) -> str:
    return "unreadable" if card is None else Card(card).name


def _seat_name(pocket: int | None) -> str:
    return "-" if pocket is None else Seat(pocket).name


def fault_kind(code: int) -> FaultKind:
    try:
        return FaultKind[FaultCode(code).name]
    except (ValueError, KeyError):
        return FaultKind.OTHER


@dataclass(slots=True)
class _Operation:
    deal_id: int
    board: int | None = None
    copy: int | None = None
    target: bytes | None = None  # pocket of each card, for a board
    next_position: int = 0
    seen: dict[int, int] = field(default_factory=dict)  # card -> pocket
    counts: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    unreadable: list[int] = field(default_factory=list)
    outcome: asyncio.Future[DeviceFault | DealEnded] | None = None


@dataclass(slots=True)
class DriverStats:
    cards: int = 0
    stale: int = 0
    reconnects: int = 0
    faults: int = 0


class MachineDriver:
    """Implements :class:`drivers.device.DealingDevice` for machines speaking the open protocol."""

    def __init__(
        self,
        transport_factory: Callable[[], Transport],
        *,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        retry_limit: int = DEFAULT_RETRY_LIMIT,
        heartbeat: float = 1.0,
        reconnect_delay: float = 0.2,
        handshake_timeout: float = 5.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._factory = transport_factory
        self.ack_timeout = ack_timeout
        self.retry_limit = retry_limit
        self.heartbeat = heartbeat
        self.reconnect_delay = reconnect_delay
        self.handshake_timeout = handshake_timeout
        self._now = wall_clock
        self._mono = time.monotonic
        self.conn = HostConnection(
            min_version=HOST_MIN_VERSION,
            max_version=HOST_MAX_VERSION,
            ack_timeout=ack_timeout,
            retry_limit=retry_limit,
            heartbeat=heartbeat,
        )
        self.stats = DriverStats()
        self._info: MachineInfo | None = None
        self._transport: Transport | None = None
        self._events: asyncio.Queue[DeviceEvent | None] = asyncio.Queue()
        self._op: _Operation | None = None
        self._next_deal_id = 1
        self._acks: dict[int, asyncio.Future[None]] = {}  # seq of our message -> its answer
        self._session_future: asyncio.Future[SessionOpened] | None = None
        self._waiters: list[tuple[type[Any], asyncio.Future[Any]]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._supervisor: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._lost: asyncio.Event = asyncio.Event()
        self._lost_reason = ""
        self._lost_deal: int | None = None
        self._wake: asyncio.Event = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._handshaking = False
        self._closed = False
        self._session_ok = False

    # -- public API ------------------------------------------------------------------------------------
    @property
    def info(self) -> MachineInfo | None:
        return self._info

    @property
    def link(self) -> Link:
        """The connection's link layer (decoder statistics, duplicate and retransmission counters)."""
        return self.conn.link

    @property
    def connected(self) -> bool:
        return self._session_ok

    async def connect(self) -> MachineInfo:
        """Open the transport and the session. Raises DeviceError if the device cannot be reached."""
        try:
            await self._open_session()
        except (TransportClosed, LinkLost, TimeoutError) as exc:
            await self._teardown()
            raise DeviceError(f"cannot connect: {exc}") from exc
        self._supervisor = asyncio.get_running_loop().create_task(self._supervise())
        assert self._info is not None
        return self._info

    async def events(self) -> AsyncIterator[DeviceEvent]:
        while True:
            ev = await self._events.get()
            if ev is None:
                return
            yield ev

    async def next_event(self, timeout: float | None = None) -> DeviceEvent:
        async with asyncio.timeout(timeout):
            ev = await self._events.get()
        if ev is None:
            raise LinkLost("driver closed")
        return ev

    async def start_deal(self) -> int:
        """Start a random deal; returns its id. Its events arrive on :meth:`events`.

        Raises CommandRefused when the device says no, LinkLost when the link drops (a Disconnected event
        naming this deal follows, since the machine may have begun it), DeviceBusy while another deal runs.
        """
        op = self._begin()
        try:
            await self._command(StartDeal(op.deal_id))
        except LinkLost as exc:
            if self._op is op:
                self._op = None
            raise LinkLost(str(exc), op.deal_id) from exc
        except DeviceError:
            if self._op is op:
                self._op = None
            raise
        return op.deal_id

    async def make_board(self, board_number: int, deal: Deal, copy: int) -> BoardResult:
        if not 1 <= board_number <= 0xFFFF:
            raise DeviceError(f"board number {board_number} not in 1..65535")
        if not 1 <= copy <= 0xFF:
            raise DeviceError(f"copy {copy} not in 1..255")
        op = self._begin()
        op.board, op.copy, op.target = board_number, copy, deal.seats
        try:
            await self._command(MakeBoard(op.deal_id, board_number, copy, deal.to_bytes()))
        except DeviceError:
            if self._op is op:
                self._op = None
            raise
        assert op.outcome is not None
        outcome = await op.outcome
        if isinstance(outcome, DealEnded):
            return BoardResult(op.deal_id, board_number, copy, True, None, outcome.record)
        return BoardResult(op.deal_id, board_number, copy, False, outcome, None)

    async def wait_deal(self, deal_id: int) -> DealEnded | DeviceFault:
        """Wait for the end of the operation ``deal_id`` (the events still go to :meth:`events`)."""
        op = self._op
        if op is None or op.deal_id != deal_id or op.outcome is None:
            raise DeviceError(f"deal {deal_id} is not in progress")
        return await op.outcome

    async def abort(self) -> None:
        op = self._op
        if op is not None:
            self._void(op, FaultKind.ABORTED, "aborted by the host", send_abort=False)
        await self._command(Abort())

    async def reset(self) -> None:
        """Clear a device fault (after the operator has fixed the machine)."""
        op = self._op
        if op is not None:
            self._void(op, FaultKind.ABORTED, "reset by the host", send_abort=False)
        await self._command(Reset())

    async def status(self) -> Status:
        reply: Status = await self._command(GetStatus(), Status)
        return reply

    async def close(self) -> None:
        self._closed = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        await self._teardown()
        self._events.put_nowait(None)

    async def __aenter__(self) -> MachineDriver:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- session ---------------------------------------------------------------------------------------
    async def _open_session(self) -> None:
        self._lost = asyncio.Event()
        self._transport = self._factory()
        await self._transport.open()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read_loop(self._transport)), loop.create_task(self._timer_loop())]
        async with asyncio.timeout(self.handshake_timeout):
            await self._handshake()

    async def _handshake(self) -> None:
        self._handshaking = True
        self._session_ok = False
        try:
            self._fail_pending(LinkLost("new session"))
            session: asyncio.Future[SessionOpened] = asyncio.get_running_loop().create_future()
            self._session_future = session
            ack = self._ack_future(self.conn.open(self._mono()))
            await self._flush()
            await self._wait_or_lost(ack)
            opened: SessionOpened = await self._wait_or_lost(session)
            assert opened.reply is not None
            reply = opened.reply
            info: DeviceInfo = await self._command(GetInfo(), DeviceInfo, during_handshake=True)
        finally:
            self._handshaking = False
        desc = self._transport.description if self._transport is not None else "?"
        self._info = MachineInfo(
            serial=info.serial,
            model=info.model,
            firmware=info.firmware,
            protocol_version=reply.version,
            pockets=info.pockets,
            reader=info.has(Capability.READER),
            shuffler=info.has(Capability.SHUFFLER),
            duplicator=info.has(Capability.DUPLICATOR),
            transport=desc,
        )
        self._session_ok = True

    async def _supervise(self) -> None:
        """After a lost link: report, reconnect, report again. Runs until close()."""
        while not self._closed:
            await self._lost.wait()
            self._emit(Disconnected(self._lost_reason, self._now(), self._lost_deal))
            await self._teardown()
            while not self._closed:
                await asyncio.sleep(self.reconnect_delay)
                try:
                    await self._open_session()
                except (TransportClosed, LinkLost, DeviceError, TimeoutError, OSError):
                    await self._teardown()
                    continue
                self.stats.reconnects += 1
                self._emit(Reconnected(self._now()))
                break

    async def _teardown(self) -> None:
        if self._closed:
            for task in list(self._background):
                task.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        self._fail_pending(LinkLost(self._lost_reason or "closed"))
        if self._transport is not None:
            with contextlib.suppress(Exception):
                await self._transport.close()
            self._transport = None
        self.conn.close()

    def _mark_lost(self, reason: str) -> None:
        """The link is gone: from now on nothing is sent; the deal in progress is void (reported by the
        supervisor as :class:`Disconnected`, also when the deal's START_DEAL itself failed with LinkLost)."""
        if self._lost.is_set():
            return
        self._lost_reason = reason
        self._session_ok = False
        op = self._op
        self._lost_deal = op.deal_id if op is not None else None
        if op is not None:
            self._void(op, FaultKind.DISCONNECTED, f"link lost: {reason}", send_abort=False, emit=False)
        self._lost.set()
        self._fail_pending(LinkLost(reason))

    # -- I/O loops -------------------------------------------------------------------------------------
    async def _read_loop(self, transport: Transport) -> None:
        while True:
            try:
                data = await transport.read()
            except TransportClosed as exc:
                self._mark_lost(str(exc))
                return
            self._handle(self.conn.receive(data, self._mono()))
            await self._flush()

    async def _timer_loop(self) -> None:
        while True:
            now = self._mono()
            due = self.conn.next_deadline()
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(None if due is None else max(0.0, due - now)):
                    await self._wake.wait()
            self._handle(self.conn.poll(self._mono()))
            await self._flush()

    async def _flush(self) -> None:
        # One writer at a time, taking the bytes inside the lock: frames leave in the order the link made
        # them even when a transport writes from a helper thread.
        async with self._write_lock:
            data = self.conn.data_to_send()
            transport = self._transport
            if not data or transport is None:
                return
            try:
                await transport.write(data)
            except TransportClosed as exc:
                self._mark_lost(str(exc))
        self._wake.set()

    # -- requests --------------------------------------------------------------------------------------
    def _ack_future(self, seq: int) -> asyncio.Future[None]:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._acks[seq] = fut
        return fut

    def _expect(self, kind: type[Any]) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters.append((kind, fut))
        return fut

    async def _wait_or_lost(self, fut: asyncio.Future[Any]) -> Any:
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            await asyncio.wait({fut, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
        if fut.done():
            return fut.result()
        fut.cancel()
        raise LinkLost(self._lost_reason)

    async def _command(self, msg: Message, reply: type[Any] | None = None, during_handshake: bool = False) -> Any:
        for attempt in range(BUSY_RETRY_LIMIT + 1):
            if (
                self._transport is None
                or self.conn.state is not HostState.OPEN
                or (not self._session_ok and not during_handshake)
            ):
                raise LinkLost(f"not connected ({self._lost_reason or 'no session'})")
            reply_future = self._expect(reply) if reply is not None else None
            ack = self._ack_future(self.conn.send(msg, self._mono()))
            await self._flush()
            try:
                await self._wait_or_lost(ack)
            except CommandRefused as exc:
                if reply_future is not None:
                    reply_future.cancel()
                if exc.reason != NakReason.BUSY.name or attempt == BUSY_RETRY_LIMIT:
                    raise
                await asyncio.sleep(BUSY_RETRY)  # PROTOCOL.md §5.5: the same command again, as a new message
                continue
            except DeviceError:
                if reply_future is not None:
                    reply_future.cancel()
                raise
            if reply_future is None:
                return None
            return await self._wait_or_lost(reply_future)
        raise AssertionError("unreachable")

    def _fail_pending(self, exc: DeviceError) -> None:
        for fut in self._acks.values():
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()  # mark retrieved
        self._acks.clear()
        if self._session_future is not None and not self._session_future.done():
            self._session_future.set_exception(exc)
            self._session_future.exception()
        self._session_future = None
        for _, fut in self._waiters:
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()
        self._waiters.clear()

    # -- handling the device's messages ------------------------------------------------------------------
    def _handle(self, events: list[Event]) -> None:
        for ev in events:
            if isinstance(ev, MessageReceived):
                self._on_message(ev.message)
            elif isinstance(ev, Answered):
                fut = self._acks.pop(ev.seq, None)
                if fut is not None and not fut.done():
                    fut.set_result(None)
            elif isinstance(ev, Refused):
                self._on_refused(ev)
            elif isinstance(ev, ConnectionLost):
                self._mark_lost(ev.detail)
            elif isinstance(ev, SessionOpened | SessionRefused):
                session = self._session_future
                self._session_future = None
                if session is not None and not session.done():
                    if isinstance(ev, SessionOpened):
                        session.set_result(ev)
                    else:
                        session.set_exception(DeviceError(ev.detail))
                        session.exception()
            elif isinstance(ev, PeerRestarted) and self._session_ok and not self._handshaking:
                self._device_restarted(ev.detail)
            # FrameDropped: counted by the link's decoder; the sender retransmits

    def _on_refused(self, ev: Refused) -> None:
        try:
            reason = NakReason(ev.reason).name
        except ValueError:
            reason = f"reason {ev.reason}"
        fut = self._acks.pop(ev.seq, None)
        if fut is not None and not fut.done():
            fut.set_exception(CommandRefused(ev.message.TYPE.name, reason, ev.detail))
            fut.exception()

    def _on_message(self, msg: Message) -> None:
        for i, (kind, fut) in enumerate(self._waiters):
            if isinstance(msg, kind) and not fut.done():
                del self._waiters[i]
                fut.set_result(msg)
                return
        if isinstance(msg, CardRead):
            self._on_card(msg)
        elif isinstance(msg, DealStart):
            if self._op is not None and msg.deal_id == self._op.deal_id:
                self._emit(DealStarted(msg.deal_id, self._now()))
            else:
                self.stats.stale += 1
        elif isinstance(msg, DealEnd | BoardDone):
            self._on_end(msg)
        elif isinstance(msg, Fault):
            self._on_fault(msg)

    def _device_restarted(self, detail: str) -> None:
        op = self._op
        self.stats.faults += 1
        self._emit(DeviceFault(FaultKind.POWER, detail, self._now(), op.deal_id if op is not None else None))
        if op is not None:
            self._void(op, FaultKind.POWER, detail, send_abort=False, emit=False)
        self._session_ok = False
        self._spawn(self._rehandshake())

    async def _rehandshake(self) -> None:
        try:
            async with asyncio.timeout(self.handshake_timeout):
                await self._handshake()
        except (DeviceError, TimeoutError) as exc:
            self._mark_lost(f"new session after a device restart failed: {exc}")

    def _on_card(self, msg: CardRead) -> None:
        op = self._op
        if op is None or msg.deal_id != op.deal_id or msg.position is None or msg.position < op.next_position:
            self.stats.stale += 1
            return
        ts = self._now()
        position, card, pocket = msg.position, msg.card, msg.pocket
        if position > op.next_position:
            self._void(
                op, FaultKind.MISSING_CARD, f"card positions jump from {op.next_position} to {position}", position
            )
            return
        if pocket is None:
            self._void(op, FaultKind.PROTOCOL, f"card at position {position} reported without a pocket", position, card)
            return
        op.next_position += 1
        if card is None:
            op.unreadable.append(position)
            self._emit(CardSeen(op.deal_id, position, None, Seat(pocket), msg.confidence / 255, ts))
            return
        if card in op.seen:
            first = op.seen[card]
            self._void(
                op,
                FaultKind.DUPLICATE_CARD,
                f"{_card_name(card)} read twice: first into {_seat_name(first)}, again into {_seat_name(pocket)} "
                f"at position {position}",
                position,
                card,
                pocket,
            )
            return
        if op.target is not None and op.target[card] != pocket:
            self._void(
                op,
                FaultKind.WRONG_POCKET,
                f"board {op.board} copy {op.copy}: {_card_name(card)} went into {_seat_name(pocket)}, "
                f"the deal puts it in {_seat_name(op.target[card])}",
                position,
                card,
                pocket,
            )
            return
        if op.counts[pocket] >= 13:
            self._void(
                op,
                FaultKind.WRONG_POCKET,
                f"{_card_name(card)} would be the 14th card in pocket {_seat_name(pocket)}",
                position,
                card,
                pocket,
            )
            return
        op.seen[card] = pocket
        op.counts[pocket] += 1
        self.stats.cards += 1
        self._emit(CardSeen(op.deal_id, position, Card(card), Seat(pocket), msg.confidence / 255, ts))

    def _on_end(self, msg: DealEnd | BoardDone) -> None:
        op = self._op
        if op is None or msg.deal_id != op.deal_id:
            self.stats.stale += 1
            return
        if op.unreadable:
            self._void(
                op, FaultKind.UNREADABLE_CARD, f"unreadable card at position {op.unreadable[0]}", op.unreadable[0]
            )
            return
        record = unpack_seats(msg.record)
        if len(op.seen) < 52:
            missing = sorted(set(range(52)) - set(op.seen))
            names = " ".join(_card_name(c) for c in missing)
            first = missing[0]
            self._void(
                op,
                FaultKind.MISSING_CARD,
                f"{52 - len(op.seen)} card(s) never read: {names} (the machine's record puts {_card_name(first)} "
                f"in {_seat_name(record[first])})",
                None,
                first,
                record[first],
            )
            return
        if msg.cards != 52:
            kind = FaultKind.EXTRA_CARD if msg.cards > 52 else FaultKind.MISSING_CARD
            self._void(op, kind, f"the machine counted {msg.cards} cards, 52 were read")
            return
        for card, pocket in op.seen.items():
            if record[card] != pocket:
                self._void(
                    op,
                    FaultKind.WRONG_POCKET,
                    f"the machine's record puts {_card_name(card)} in {_seat_name(record[card])}, "
                    f"it was read into {_seat_name(pocket)}",
                    None,
                    card,
                    record[card],
                )
                return
        ended = DealEnded(op.deal_id, self._now(), bytes(msg.record))
        self._op = None
        self._emit(ended)
        if op.outcome is not None and not op.outcome.done():
            op.outcome.set_result(ended)

    def _on_fault(self, msg: Fault) -> None:
        op = self._op
        kind = fault_kind(msg.code)
        self.stats.faults += 1
        fault = DeviceFault(
            kind,
            msg.detail or kind.value,
            self._now(),
            msg.deal_id,
            msg.position,
            None if msg.card is None else Card(msg.card),
            None if msg.pocket is None else Seat(msg.pocket),
        )
        self._emit(fault)
        if op is not None and (msg.deal_id is None or msg.deal_id == op.deal_id):
            self._op = None
            if op.outcome is not None and not op.outcome.done():
                op.outcome.set_result(fault)

    # -- helpers ---------------------------------------------------------------------------------------
    def _begin(self) -> _Operation:
        if not self._session_ok:
            raise LinkLost(f"not connected ({self._lost_reason or 'no session'})")
        if self._op is not None:
            raise DeviceBusy(f"deal {self._op.deal_id} is still in progress")
        op = _Operation(self._next_deal_id)
        self._next_deal_id = (self._next_deal_id + 1) % 0xFFFFFFFF or 1
        op.outcome = asyncio.get_running_loop().create_future()
        self._op = op
        return op

    def _void(
        self,
        op: _Operation,
        kind: FaultKind,
        detail: str,
        position: int | None = None,
        card: int | None = None,
        pocket: int | None = None,
        *,
        send_abort: bool = True,
        emit: bool = True,
    ) -> None:
        """The driver voids the deal: report, forget the operation, stop the machine."""
        fault = DeviceFault(
            kind,
            detail,
            self._now(),
            op.deal_id,
            position,
            None if card is None else Card(card),
            None if pocket is None else Seat(pocket),
        )
        if emit:
            self.stats.faults += 1
            self._emit(fault)
        if self._op is op:
            self._op = None
        if op.outcome is not None and not op.outcome.done():
            op.outcome.set_result(fault)
        if send_abort and self._session_ok and self.conn.state is HostState.OPEN:
            self.conn.send(Abort(), self._mono())
            self._spawn(self._flush())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _emit(self, ev: DeviceEvent) -> None:
        self._events.put_nowait(ev)


if TYPE_CHECKING:  # mypy proves the driver satisfies the interface the service uses

    def _is_dealing_device(driver: MachineDriver) -> DealingDevice:
        return driver
