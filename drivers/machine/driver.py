"""The dealing-machine driver (asyncio): the open protocol over any transport.

It opens a session (HELLO, version negotiation, device info), keeps a heartbeat, starts random deals and
board copies (whose cards :mod:`.operations` checks and reports), and reconnects after the link is lost,
telling the caller that the deal in progress is void (:class:`Disconnected`), never resuming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, overload

from dealer.core import Deal
from dealer.core.errors import Phrase
from dealer.core.events import (
    DealEnded,
    DeviceEvent,
    DeviceFault,
    Disconnected,
    FaultKind,
    Reconnected,
)
from firmware_protocol.codec import FIRST_UNANSWERED_TYPE, TRUSTED_HEADER, FrameError
from firmware_protocol.connection import (
    Answered,
    ConnectionLost,
    Event,
    FrameDropped,
    HostConnection,
    HostState,
    MessageReceived,
    PeerMisbehaved,
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
    GetInfo,
    GetStatus,
    MakeBoard,
    Message,
    MsgType,
    NakReason,
    Reset,
    StartDeal,
    Status,
)
from firmware_protocol.table import load_table

from ..device import BoardMachine, BoardResult, CommandRefused, DeviceError, LinkLost, MachineInfo
from ..transport import Transport, TransportClosed
from .cards import Operation, Void
from .io import Pump
from .operations import DriverStats, Operations
from .requests import Pending

T = TypeVar("T")
R = TypeVar("R", bound=Message)
HOST_MIN_VERSION = 1
HOST_MAX_VERSION = 1
_TABLE = load_table()
BUSY_RETRY = _TABLE.busy_retry_ms / 1000
BUSY_RETRY_LIMIT = _TABLE.busy_retry_limit
REPLY_TIMEOUT = _TABLE.reply_timeout_ms / 1000
REPORT_TIMEOUT = _TABLE.report_timeout_ms / 1000


class MachineDriver:
    """A machine speaking the open protocol (:class:`drivers.device.BoardMachine`); stations reach it through
    the ``machine`` device kind (:mod:`drivers.kinds.machine`)."""

    def __init__(
        self,
        transport_factory: Callable[[], Transport],
        *,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        retry_limit: int = DEFAULT_RETRY_LIMIT,
        heartbeat: float = 1.0,
        reconnect_delay: float = 0.2,
        handshake_timeout: float = 5.0,
        reply_timeout: float = REPLY_TIMEOUT,
        report_timeout: float = REPORT_TIMEOUT,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._factory = transport_factory
        self.ack_timeout = ack_timeout
        self.retry_limit = retry_limit
        self.heartbeat = heartbeat
        self.reconnect_delay = reconnect_delay
        self.handshake_timeout = handshake_timeout
        self.reply_timeout = reply_timeout  # an answer's data after its ACK (DEVICE_INFO, STATUS, DEAL_START)
        # ... plus the data's own retransmissions, which a noisy line may need (PROTOCOL.md §5.7)
        self.reply_patience = reply_timeout + ack_timeout * retry_limit
        self.report_timeout = report_timeout  # between two reports of an operation (cards, its end)
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
        self._pump: Pump | None = None  # the I/O of the open transport
        self._events: asyncio.Queue[DeviceEvent | None] = asyncio.Queue()
        self._ops = Operations(self._emit, self._now, self._stop_machine, self.stats)
        self._pending = Pending()
        self._supervisor: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._lost: asyncio.Event = asyncio.Event()
        self._lost_reason = ""
        self._lost_deal: int | None = None
        self._handshaking = False
        self._closed = False
        self._ready = asyncio.Event()  # set while a session is open (self._session_ok)
        self._last_message = 0.0  # monotonic time of the device's last reliable message (the reply timer)

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

    @property
    def _session_ok(self) -> bool:
        return self._ready.is_set()

    @_session_ok.setter
    def _session_ok(self, value: bool) -> None:
        if value:
            self._ready.set()
        else:
            self._ready.clear()

    async def wait_connected(self, timeout: float) -> bool:
        """Wait until a session is open (after a reconnection or a new session the driver opened itself);
        False if none is within ``timeout`` seconds."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._ready.wait()
        return self._ready.is_set()

    async def connect(self) -> MachineInfo:
        """Open the transport and the session. Raises DeviceError if the device cannot be reached."""
        try:
            await self._open_session()
        except (TransportClosed, LinkLost, TimeoutError) as exc:
            await self._teardown()
            raise DeviceError("cannot connect: {exc}", exc=exc) from exc
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
            self._ops.forget(op)
            raise LinkLost("{reason}", reason=str(exc), deal_id=op.deal_id) from exc
        except DeviceError:
            self._ops.forget(op)
            raise
        op.last_report = max(op.last_report, self._mono())  # DEAL_START is due from the ACK on
        self._spawn(self._watch(op))
        return op.deal_id

    async def make_board(self, board_number: int, deal: Deal, copy: int) -> BoardResult:
        if not 1 <= board_number <= 0xFFFF:
            raise DeviceError("board number {board} not in 1..65535", board=board_number)
        if not 1 <= copy <= 0xFF:
            raise DeviceError("copy {copy} not in 1..255", copy=copy)
        op = self._begin(board_number, copy, deal)
        try:
            await self._command(MakeBoard(op.deal_id, board_number, copy, deal.to_bytes()))
        except DeviceError:
            self._ops.forget(op)
            raise
        op.last_report = max(op.last_report, self._mono())  # DEAL_START is due from the ACK on
        self._spawn(self._watch(op))
        assert op.outcome is not None
        outcome = await op.outcome
        if isinstance(outcome, DealEnded):
            return BoardResult(op.deal_id, board_number, copy, True, None, outcome.record)
        return BoardResult(op.deal_id, board_number, copy, False, outcome, None)

    async def wait_deal(self, deal_id: int) -> DealEnded | DeviceFault:
        """Wait for the end of the operation ``deal_id`` (the events still go to :meth:`events`)."""
        op = self._ops.current
        if op is None or op.deal_id != deal_id or op.outcome is None:
            raise DeviceError("deal {deal_id} is not in progress", deal_id=deal_id)
        return await op.outcome

    async def abort(self) -> None:
        self._ops.void_current(FaultKind.ABORTED, "aborted by the host")
        await self._command(Abort())

    async def reset(self) -> None:
        """Clear a device fault (after the operator has fixed the machine)."""
        self._ops.void_current(FaultKind.ABORTED, "reset by the host")
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
        self._pump = Pump(self.conn, self._factory(), self._handle, self._mark_lost, self._mono)
        await self._pump.open()
        async with asyncio.timeout(self.handshake_timeout):
            await self._handshake()

    async def _handshake(self) -> None:
        self._handshaking = True
        self._session_ok = False
        try:
            self._pending.fail(LinkLost("new session"))
            session = self._pending.session()
            ack = self._pending.ack(self.conn.open(self._mono()))
            await self._flush()
            await self._wait_or_lost(ack)
            opened: SessionOpened = await self._wait_or_lost(session)
            assert opened.reply is not None
            reply = opened.reply
            info: DeviceInfo = await self._command(GetInfo(), DeviceInfo, during_handshake=True)
        finally:
            self._handshaking = False
        desc = self._pump.transport.description if self._pump is not None else "?"
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
        pump, self._pump = self._pump, None
        if pump is not None:
            await pump.stop()
        self._pending.fail(LinkLost("{reason}", reason=self._lost_reason or "closed"))
        self.conn.close()

    def _mark_lost(self, reason: str) -> None:
        """The link is gone: from now on nothing is sent; the deal in progress is void (reported by the
        supervisor as :class:`Disconnected`, also when the deal's START_DEAL itself failed with LinkLost)."""
        if self._lost.is_set():
            return
        self._lost_reason = reason
        self._session_ok = False
        self._lost_deal = self._ops.void_current(FaultKind.DISCONNECTED, f"link lost: {reason}", emit=False)
        self._lost.set()
        self._pending.fail(LinkLost("{reason}", reason=reason))

    async def _flush(self) -> None:
        if self._pump is not None:
            await self._pump.flush()

    # -- requests --------------------------------------------------------------------------------------
    async def _wait_or_lost(self, fut: asyncio.Future[T]) -> T:
        lost = asyncio.ensure_future(self._lost.wait())
        try:
            either: set[asyncio.Future[Any]] = {fut, lost}  # Any: a reply and the lost flag's wait
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
        if fut.done():
            return fut.result()
        fut.cancel()
        raise LinkLost("{reason}", reason=self._lost_reason)

    async def _wait_reply(self, fut: asyncio.Future[R]) -> R:
        """The data of a request: the device may not fall silent for ``reply_timeout`` before it (PROTOCOL.md
        §5.7: the timer restarts at every message of the device, so data queued behind a deal's cards is not late;
        ACKs do not count, the heartbeat's would keep a device that never answers alive)."""
        waiting = asyncio.ensure_future(self._wait_or_lost(fut))
        since = self._mono()  # the ACK has just come
        try:
            while True:
                since = max(since, self._last_message)
                done, _ = await asyncio.wait({waiting}, timeout=max(0.0, since + self.reply_patience - self._mono()))
                if done:
                    return waiting.result()
                if self._last_message <= since:
                    raise TimeoutError
        finally:
            waiting.cancel()
            if not fut.done():
                fut.cancel()  # a late answer is not handed to a request that gave up

    @overload
    async def _command(self, msg: Message, reply: None = None, during_handshake: bool = False) -> None: ...

    @overload
    async def _command(self, msg: Message, reply: type[R], during_handshake: bool = False) -> R: ...

    async def _command(self, msg: Message, reply: type[R] | None = None, during_handshake: bool = False) -> R | None:
        for attempt in range(BUSY_RETRY_LIMIT + 1):
            if (
                self._pump is None
                or self.conn.state is not HostState.OPEN
                or (not self._session_ok and not during_handshake)
            ):
                raise LinkLost("not connected ({reason})", reason=self._lost_reason or Phrase("no session"))
            reply_future = self._pending.expect(reply) if reply is not None else None
            ack = self._pending.ack(self.conn.send(msg, self._mono()))
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
            if reply is None or reply_future is None:
                return None
            try:
                return await self._wait_reply(reply_future)
            except TimeoutError:
                raise DeviceError(
                    "the device ACKed {command} but sent no {reply} within {seconds} s (PROTOCOL.md §5.7)",
                    command=msg.TYPE.name,
                    reply=reply.TYPE.name,
                    seconds=round(self.reply_patience, 2),
                ) from None
        raise AssertionError("unreachable")

    # -- handling the device's messages ------------------------------------------------------------------
    def _handle(self, events: list[Event]) -> None:
        for ev in events:
            if isinstance(ev, MessageReceived):
                self._on_message(ev.message)
            elif isinstance(ev, Answered):
                self._pending.answered(ev.seq)
            elif isinstance(ev, Refused):
                self._on_refused(ev)
            elif isinstance(ev, ConnectionLost):
                self._mark_lost(ev.detail)
            elif isinstance(ev, SessionOpened):
                self._pending.session_done(ev)
            elif isinstance(ev, SessionRefused):
                self._pending.session_done(None, DeviceError("{reason}", reason=ev.detail))
            elif isinstance(ev, PeerRestarted) and self._session_ok and not self._handshaking:
                self._device_restarted(ev.detail)
            elif isinstance(ev, PeerMisbehaved):
                self._device_misbehaved(ev.detail)
            elif isinstance(ev, FrameDropped):
                self._on_dropped(ev.error)

    def _on_refused(self, ev: Refused) -> None:
        try:
            reason = NakReason(ev.reason).name
        except ValueError:
            reason = f"reason {ev.reason}"
        self._pending.refused(ev.seq, CommandRefused(ev.message.TYPE.name, reason, ev.detail))

    def _on_message(self, msg: Message) -> None:
        self._last_message = self._mono()
        op = self._ops.current
        reports = DealStart | CardRead | DealEnd | BoardDone | Fault
        if op is not None and isinstance(msg, reports) and msg.deal_id == op.deal_id:
            op.last_report = self._mono()
            op.last_what = msg.TYPE.name if not isinstance(msg, CardRead) else f"CARD_READ {msg.position}"
            op.started = True
        if self._pending.deliver(msg):
            return
        if isinstance(msg, CardRead):
            self._ops.card(msg)
        elif isinstance(msg, DealStart):
            self._ops.started(msg)
        elif isinstance(msg, DealEnd | BoardDone):
            self._ops.end(msg)
        elif isinstance(msg, Fault):
            self._ops.fault(msg)

    def _on_dropped(self, error: FrameError) -> None:
        """A device message with a good CRC that broke the layout or a field's range (§5.1 steps 5d-5h): the
        link NAKed it, so the device will not send it again. A card report lost that way voids the deal."""
        if error.reason not in TRUSTED_HEADER or error.msg_type is None or error.msg_type >= FIRST_UNANSWERED_TYPE:
            return  # noise: the device retransmits
        try:
            name = MsgType(error.msg_type).name
        except ValueError:
            name = f"type 0x{error.msg_type:02x}"
        exc = DeviceError(
            "the device sent a malformed {message} ({reason}: {detail}) (PROTOCOL.md §5.1)",
            message=name,
            reason=error.reason.value,
            detail=error.detail,
        )
        if self._pending.malformed(error.msg_type, exc):
            return  # the request waiting for it fails with the reason
        op = self._ops.current
        if op is None:
            return
        detail = (
            f"the device sent a malformed {name} (seq {error.seq}, {error.reason.value}: {error.detail}) during "
            f"deal {op.deal_id} (PROTOCOL.md §5.1)"
        )
        self._ops.void(op, Void(FaultKind.PROTOCOL, detail))

    def _device_misbehaved(self, detail: str) -> None:
        """The device broke its sequence numbering: nothing it sends can be trusted to be new or repeated. The
        operation in progress is void (a PROTOCOL fault on the stream); a new session restarts the numbering."""
        self.stats.faults += 1
        op = self._ops.current
        self._emit(DeviceFault(FaultKind.PROTOCOL, detail, self._now(), op.deal_id if op is not None else None))
        self._ops.void_current(FaultKind.PROTOCOL, detail, emit=False)
        self._session_ok = False
        self._pending.fail(DeviceError("{reason}", reason=detail))
        if not self._handshaking:  # a handshake in progress fails with the reason itself
            self._spawn(self._rehandshake())

    def _device_restarted(self, detail: str) -> None:
        self._ops.restarted(detail)
        self._session_ok = False
        self._spawn(self._rehandshake())

    async def _rehandshake(self) -> None:
        try:
            async with asyncio.timeout(self.handshake_timeout):
                await self._handshake()
        except (DeviceError, TimeoutError) as exc:
            self._mark_lost(f"new session after a device restart failed: {exc}")

    # -- helpers ---------------------------------------------------------------------------------------
    def _begin(self, board: int | None = None, copy: int | None = None, target: Deal | None = None) -> Operation:
        if not self._session_ok:
            raise LinkLost("not connected ({reason})", reason=self._lost_reason or Phrase("no session"))
        op = self._ops.begin(board, copy, target)
        op.last_report = self._mono()
        return op

    async def _watch(self, op: Operation) -> None:
        """A device that goes quiet in the middle of an operation voids it (PROTOCOL.md §5.7, the timers):
        DEAL_START is due ``reply_patience`` after the command's ACK, every further report ``report_timeout``
        after the one before. Ends with the operation."""
        assert op.outcome is not None
        while not op.outcome.done():
            limit = self.report_timeout if op.started else self.reply_patience
            left = op.last_report + limit - self._mono()
            if left <= 0:
                if self._ops.current is op:
                    if op.started:
                        what = f"no report of deal {op.deal_id} for {limit:g} s after {op.last_what}"
                    else:
                        what = f"no DEAL_START for deal {op.deal_id} within {limit:g} s of the command's ACK"
                    self._ops.void(op, Void(FaultKind.PROTOCOL, f"the device fell silent: {what} (PROTOCOL.md §5.7)"))
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await asyncio.shield(op.outcome)

    def _stop_machine(self) -> None:
        """ABORT to the machine after the driver voided an operation (if the session is open)."""
        if self._session_ok and self.conn.state is HostState.OPEN:
            self.conn.send(Abort(), self._mono())
            self._spawn(self._flush())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _emit(self, ev: DeviceEvent) -> None:
        self._events.put_nowait(ev)


if TYPE_CHECKING:  # mypy proves the driver satisfies the interface the service uses

    def _is_board_machine(driver: MachineDriver) -> BoardMachine:
        return driver
