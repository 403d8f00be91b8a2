"""A dealing station at work: the thin async runner of ``dealer.app.station_core.StationCore``.

The core holds the station's state and rules (the dealing session, the status, the queue of ledger writes, the
counters) and answers each event with commands; this runner reads the clock, stamps each event with it, and does
the I/O the commands ask: the device (open, read, request a deal, abort, close), the bank's thread (commit a deal,
record a void, read its progress), the audience hub, the judge's consoles, the crash marker, the timer of the
waiting writes. Every answer goes back to the core as an event.

The station reads events from its device, feeds them to its ``DealingSession``, publishes the session's public
projection to the audience hub, commits every accepted deal to the bank (on disk before anyone is told), records
every void in the ledger, and keeps the technical judge informed: status, progress, faults with guidance, voided
deals, device health. Formation runs toward the bank's target and can be started, paused, resumed and stopped.

No dealt deal is lost to the bank being unavailable (another writer holds the file, a full disk): every ledger
write (a deal's commit, a void) goes through one ordered queue. A write that cannot be made now stays queued,
the deal's cards stay in memory, the judge sees the fault (status ``bank_waiting``), the station deals no more
and retries with a growing pause (``dealer.app.ledger_writes.RETRY_PAUSES``) until the write succeeds — or, for a
deal, until the judge says ``void_pending``, which voids it with a ledger entry (itself queued until the bank takes
it). The judge's void is ordered against the write in flight by the core (``AwaitLanding``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from pathlib import Path

from dealer.app.closed import ClosedBoards
from dealer.app.config import StationConfig
from dealer.app.hub import PublicHub
from dealer.app.ledger_writes import LedgerWrite, WriteQueue, WriteSlot
from dealer.app.station_core import (
    AbortDevice,
    Answer,
    AwaitLanding,
    BoardNotRecorded,
    BoardRecorded,
    Boards,
    CloseDevice,
    Command,
    CommitCounted,
    CommitDeal,
    Connect,
    Continue,
    CountCommit,
    DealRefused,
    DealRequested,
    DeviceEnded,
    DeviceStep,
    DeviceView,
    Disconnect,
    Event,
    InjectDeviceFault,
    InjectFault,
    Interrupted,
    LinkClosed,
    LinkDown,
    LinkFailed,
    LinkUp,
    Log,
    MarkDealing,
    OpenDevice,
    Pause,
    ProgressRead,
    Publish,
    ReadProgress,
    RecordBoard,
    RecordCardsShown,
    RecordVoid,
    Redeal,
    Refuse,
    RequestDeal,
    Reset,
    RetryAt,
    RetryPending,
    SendState,
    ShowCards,
    Start,
    StationCore,
    Stop,
    Tell,
    Tick,
    Unmark,
    VoidPending,
    Wake,
    Write,
    WriteRefused,
    WriteSucceeded,
    WriteTurn,
    WriteUnavailable,
    restamp,
)
from dealer.app.station_state import StationMachine, StationStatus
from dealer.app.streams import PublicStreams
from dealer.bank.api import CommittedDeal
from dealer.bank.errors import BankError, BankUnavailableError
from dealer.core.events import FaultKind
from dealer.core.json_types import JsonObject
from dealer.documents.acts import CLOSED_BOARD_ENTRY
from dealer.regulation import Regulation
from dealer.session import DealingSession
from drivers.device import DealingDevice

from .bankworker import BankWorker
from .operator import OperatorBus
from .operator_messages import StationView

log = logging.getLogger("dealer.station")


_WALL_AT_START = time.time()
_MONOTONIC_AT_START = time.monotonic()


def _clock() -> float:
    """The time every event is stamped with: the wall clock as it read when the service started, moved on by the
    monotonic clock since. A ledger entry's time reads as wall time, and a retry due in 2 s stays 2 s away when
    the laptop's clock is set back or forward meanwhile (a wall-clock jump would stall the waiting writes)."""
    return _WALL_AT_START + (time.monotonic() - _MONOTONIC_AT_START)


_AT_ONCE = (Publish, Tell, SendState, Log, Unmark)  # the commands done without waiting (most of a deal's)


class StationError(Exception):
    pass


class Station:
    """The runner: one station's device, bank, audience and judge around its ``StationCore``."""

    def __init__(
        self,
        config: StationConfig,
        regulation: Regulation,
        bank: BankWorker,
        hub: PublicHub | PublicStreams,
        operator: OperatorBus,
        closed: ClosedBoards | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.regulation = regulation
        self.bank = bank
        self.hub = hub
        self.operator = operator
        self.closed = closed  # variant 1: deals become boards, never bank deals
        self.core = StationCore(config, regulation, closed=closed is not None, since=_clock())
        self.link: DealingDevice | None = None
        self._opening: DealingDevice | None = None  # the device the judge's connect opens (``OpenDevice``)
        self._reader: asyncio.Task[None] | None = None
        self._drainer: asyncio.Task[None] | None = None  # ticks the waiting writes until the bank takes them
        self._wake = asyncio.Event()
        self._landed = asyncio.Event()  # set when the attempt in flight has ended (banked, refused or failed)
        self._lock = asyncio.Lock()
        # Marks a deal in progress on disk, so a service killed mid-deal voids it on restart (``recover``).
        self.marker: Path | None = None
        # The second copy of the bank brought to the ledger's first N entries before a commit is told to anyone
        # (the service's ``copy_ledger``; None: no second copy). Its answer goes with the judge's "committed".
        self.copy_ledger: Callable[[int], Awaitable[bool | None]] | None = None

    # -- the core's state, read ---------------------------------------------------------------------------------
    @property
    def status(self) -> StationStatus:
        return self.core.status

    @property
    def machine(self) -> StationMachine:
        return self.core.machine

    @property
    def session(self) -> DealingSession:
        return self.core.session

    @property
    def running(self) -> bool:
        return self.core.running

    @property
    def show_cards(self) -> bool:
        return self.core.show_cards

    @property
    def pending(self) -> WriteQueue:
        return self.core.pending

    @property
    def slot(self) -> WriteSlot:
        return self.core.slot

    @property
    def committed(self) -> int:
        return self.core.committed

    @property
    def last_bank_deal(self) -> int | None:
        return self.core.last_bank_deal

    @property
    def cards_read(self) -> int:
        return self.core.cards_read

    @property
    def errors(self) -> int:
        return self.core.errors

    @property
    def fault_counts(self) -> Counter[str]:
        return self.core.fault_counts

    @property
    def faults(self) -> deque[JsonObject]:
        return self.core.faults

    @property
    def voided(self) -> deque[JsonObject]:
        return self.core.voided

    # -- carrying out the core's commands -------------------------------------------------------------------------
    async def _feed(self, event: Event) -> Answer | bool | None:
        return await self._run(self.core.handle(event))

    async def _run(self, commands: list[Command]) -> Answer | bool | None:
        """Carry out ``commands`` in order; a command whose answer the core needs feeds it back (and its commands
        are carried out before the next of these). Returns a judge's answer, or the device's to an injection."""
        answer: Answer | bool | None = None
        for cmd in commands:
            if isinstance(cmd, _AT_ONCE):
                self._now_command(cmd)
            elif isinstance(cmd, Refuse):
                raise StationError(cmd.text)
            elif isinstance(cmd, Answer):
                answer = cmd
            elif isinstance(cmd, Continue):
                await self._feed(restamp(cmd.event, _clock()))
            elif isinstance(cmd, Write):
                await self._feed(WriteTurn(cmd.item, _clock()))
            elif isinstance(cmd, CommitDeal | RecordVoid):
                await self._attempt(cmd.item)
            elif isinstance(cmd, CountCommit):
                await self._count(cmd.item, cmd.committed)
            elif isinstance(cmd, ReadProgress):
                made, target = await self._progress()
                await self._feed(ProgressRead(cmd.then, made, target, _clock()))
            elif isinstance(cmd, RequestDeal):
                await self._request_deal(cmd.raise_refusal)
            elif isinstance(cmd, MarkDealing):
                await self._mark(cmd.attempt, cmd.at)
            elif isinstance(cmd, RecordBoard):
                await self._record_board(cmd)
            elif isinstance(cmd, RecordCardsShown):
                await self.bank.call(self.bank.bank.record_event, "cards_shown", cmd.data)
            elif isinstance(cmd, AbortDevice):
                await self._abort(cmd.tolerant)
            elif isinstance(cmd, OpenDevice):
                await self._open(cmd.generation)
            elif isinstance(cmd, CloseDevice):
                await self._close_link()
            elif isinstance(cmd, InjectDeviceFault):
                assert self.link is not None  # the core refuses an injection without a device
                answer = await self.link.inject_fault(cmd.kind)
            elif isinstance(cmd, RetryAt | Wake):
                self._tick_soon()
            elif isinstance(cmd, AwaitLanding):  # pragma: no cover - only VoidPending answers it (void_pending)
                await self._landed.wait()
        return answer

    def _now_command(self, cmd: Publish | Tell | SendState | Log | Unmark) -> None:
        if isinstance(cmd, Publish):
            self.hub.publish(cmd.message)
        elif isinstance(cmd, Tell):
            self.operator.send(cmd.message)
        elif isinstance(cmd, SendState):
            self.send_state()
        elif isinstance(cmd, Log):
            log.log(cmd.level, "%s", cmd.text)
        elif self.marker is not None:
            self.marker.unlink(missing_ok=True)

    # -- crash recovery --------------------------------------------------------------------------------------
    async def _mark(self, attempt: int, at: float) -> None:
        if self.marker is None:
            return
        size = await self.bank.call(self.bank.bank.ledger_size)
        tmp = self.marker.with_suffix(".tmp")
        tmp.write_text(json.dumps({"station": self.name, "attempt": attempt, "ledger_size": size, "time": at}))
        os.replace(tmp, self.marker)  # survives the process being killed (no fsync: not a power-cut guarantee)

    async def recover(self) -> JsonObject | None:
        """At start-up: a deal the previous run was dealing when it died is voided in the ledger (re-dealt next)."""
        if self.marker is None or not self.marker.exists():
            return None
        try:
            loaded = json.loads(self.marker.read_text())
        except (OSError, ValueError):
            loaded = {}
        mark: JsonObject = loaded if isinstance(loaded, dict) else {}
        since = int(mark.get("ledger_size", 0))
        if await self.bank.call(self._committed_since, since):  # died between the commit and clearing the mark
            self.marker.unlink(missing_ok=True)
            return None
        detail: JsonObject = {"detail": "the service stopped during this deal", "previous_attempt": mark.get("attempt")}
        await self._feed(Interrupted(detail, _clock()))
        return detail

    def _committed_since(self, since: int) -> bool:
        """Did the bank take a deal of this station at ledger index ``since`` or later?"""
        if since <= 0:
            return False
        return any(e.station == self.name for e in self.bank.bank.deal_entries(since))

    # -- public view ---------------------------------------------------------------------------------------
    def announce(self) -> None:
        for cmd in self.core.announce():
            if isinstance(cmd, Publish):
                self.hub.publish(cmd.message)

    def link_failed(self) -> None:
        """The service could not open the station's device (autostart, or the judge's Connect): disconnected,
        announced to the hall and to the judges' consoles (which showed «connecting» with every button off)."""
        for cmd in self.core.handle(LinkFailed(_clock())):
            if isinstance(cmd, Publish):
                self.hub.publish(cmd.message)
        self.send_state()

    # -- device --------------------------------------------------------------------------------------------
    async def connect(self, link: DealingDevice) -> None:
        async with self._lock:
            self._opening = link
            await self._feed(Connect(_clock()))

    async def _open(self, generation: int) -> None:
        link = self._opening
        assert link is not None  # set by connect, under the lock
        await link.open()
        self.link = link
        self._reader = asyncio.create_task(self._read(link, generation), name=f"station-{self.name}")
        await self._feed(LinkUp(_clock()))

    async def disconnect(self) -> None:
        async with self._lock:
            await self._feed(Disconnect(_clock()))

    async def reset(self) -> None:
        """The judge's Reset: the deal in progress (if any) is voided as the operator's, the station is ready."""
        async with self._lock:
            await self._feed(Reset(_clock()))

    async def _abort(self, tolerant: bool) -> None:
        if self.link is None:
            return
        if not tolerant:
            await self.link.abort()
            return
        try:
            await self.link.abort()
        except Exception as exc:  # the device is gone: the void is recorded all the same
            log.warning("station %s: abort: %s", self.name, exc)

    async def _close_link(self) -> None:
        link, reader = self.link, self._reader
        self.link, self._reader = None, None
        await self._feed(LinkDown(_clock()))
        if link is not None:
            await link.close()
        if reader is not None:
            try:
                await asyncio.wait_for(reader, 2.0)
            except (TimeoutError, asyncio.CancelledError):
                reader.cancel()
        await self._feed(LinkClosed(_clock()))

    async def _read(self, link: DealingDevice, generation: int) -> None:
        failed = False
        try:
            while True:
                event = await link.next_event()
                if event is None:
                    break
                await self._feed(DeviceStep(event, _clock()))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("station %s: device reader failed", self.name)
            failed = True
        await self._feed(DeviceEnded(generation, failed, _clock()))

    async def _request_deal(self, raise_refusal: bool) -> None:
        link = self.link
        if link is None:  # the core asks only while it holds a device
            return
        try:  # a machine deals; a manual station (can_deal False) arms its reader for the operator's next deal
            await link.request_deal()
        except Exception as exc:  # the device is reconnecting, refuses, does not answer: the judge decides
            refused = self.core.handle(DealRefused(str(exc), raise_refusal, _clock()))
            try:
                await self._run(refused)
            except StationError as error:
                raise error from exc
            return
        await self._feed(DealRequested(_clock()))

    # -- formation control -----------------------------------------------------------------------------------
    async def start(self) -> None:
        await self._feed(Start(_clock()))

    async def pause(self) -> None:
        await self._feed(Pause(_clock()))

    async def resume(self) -> None:
        await self.start()

    async def stop(self) -> None:
        await self._feed(Stop(_clock()))

    async def redeal(self) -> None:
        await self._feed(Redeal(_clock()))

    async def inject_fault(self, kind: FaultKind) -> bool:
        return bool(await self._feed(InjectFault(kind, _clock())))

    async def set_show_cards(self, show: bool, who: str) -> None:
        await self._feed(ShowCards(show, who, _clock()))

    async def _progress(self) -> tuple[int, int]:
        """(made, target): boards of the session for a closed station, deals in the bank otherwise."""
        if self.closed is not None:
            return self.closed.made, self.closed.total
        return await self.bank.call(self.bank.bank.deal_count), self.regulation.bank_target

    # -- ledger writes -----------------------------------------------------------------------------------------
    async def _write(self, item: LedgerWrite) -> None:
        """Write now, or queue behind earlier writes the bank has not taken yet (order kept)."""
        await self._feed(WriteTurn(item, _clock()))

    async def _attempt(self, item: LedgerWrite) -> None:
        """One attempt in the bank's thread; its outcome goes to the core (the judge's void waits for it)."""
        bank = self.bank.bank
        landed = self._landed = asyncio.Event()
        event: Event
        try:
            if item.kind == "commit":
                assert item.deal is not None and item.source is not None
                committed = await self.bank.call(bank.commit_deal, item.deal, item.source)
                event = WriteSucceeded(item, committed, _clock())
            else:
                await self.bank.call(bank.void_deal, item.reason, self.name, item.detail)
                event = WriteSucceeded(item, None, _clock())
        except BankUnavailableError as exc:
            event = WriteUnavailable(item, str(exc), _clock())
        except BankError as exc:  # refused for good (a duplicate of a banked deal): void it, say why
            event = WriteRefused(item, str(exc), _clock())
        except Exception as exc:  # an unexpected failure of the file (I/O): keep the deal, retry
            log.exception("station %s: ledger write failed", self.name)
            event = WriteUnavailable(item, f"{type(exc).__name__}: {exc}", _clock())
        commands = self.core.handle(event)
        landed.set()
        await self._run(commands)

    async def _count(self, item: LedgerWrite, committed: CommittedDeal) -> None:
        size = committed.ledger_index + 1
        copied = await self.copy_ledger(size) if self.copy_ledger is not None else None  # before anyone is told
        formed = await self.bank.call(self.bank.bank.deal_count)
        await self._feed(CommitCounted(item, committed, copied, formed, _clock()))

    def _tick_soon(self) -> None:
        """A waiting write is due (now or later): the drainer re-reads when, or starts."""
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain(), name=f"station-{self.name}-bank")
        self._wake.set()

    async def _drain(self) -> None:
        """Tick the waiting writes until the bank has taken them all (the core says when each is due)."""
        while self.core.pending:
            self._wake.clear()
            due, now = self.core.retry_due, _clock()
            if due is not None and due > now:
                with contextlib.suppress(TimeoutError):  # a judge's "retry" or "void_pending" wakes it early
                    await asyncio.wait_for(self._wake.wait(), due - now)
            await self._feed(Tick(_clock()))

    async def flush(self, timeout: float) -> bool:
        """At shutdown: give the waiting writes up to ``timeout`` seconds; False if some are still waiting."""
        drainer = self._drainer
        if not self.pending or drainer is None:
            return True
        await self._feed(RetryPending(_clock()))  # the head is due now
        drainer = self._drainer or drainer
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(drainer), timeout)
        if self.pending:
            log.error("station %s: %d ledger writes never reached the bank: %s", self.name, len(self.pending),
                      [w.view() for w in self.pending])  # fmt: skip
            drainer.cancel()
        return not self.pending

    async def retry_pending(self) -> None:
        """The judge: try the waiting ledger writes now."""
        await self._feed(RetryPending(_clock()))

    async def void_pending(self, who: str) -> int:
        """The judge: give up the deals waiting for the bank; each is voided with a ledger entry (queued too).

        A retry already in the bank's thread cannot be stopped: the void waits for that attempt to end, so what
        it answers (and the state it sends) is what the ledger will hold — the deal banked (not counted), or
        voided (``StationCore``'s ``VoidPending``)."""
        while True:
            commands = self.core.handle(VoidPending(who, _clock()))
            if not any(isinstance(c, AwaitLanding) for c in commands):
                break
            await self._landed.wait()  # bounded by the bank's own wait (busy_timeout)
        answer = await self._run(commands)
        assert isinstance(answer, Answer)  # else the core refused (StationError)
        return answer.value

    # -- variant 1 -------------------------------------------------------------------------------------------
    async def _record_board(self, cmd: RecordBoard) -> None:
        """Variant 1: the deal went face down into the next board; recorded for the hand records, never banked."""
        assert self.closed is not None
        try:
            board = await asyncio.to_thread(self.closed.add, cmd.deal, self.name)
            await self.bank.call(self.bank.bank.record_event, CLOSED_BOARD_ENTRY, board.ledger_payload())
        except Exception as exc:  # the session's boards are all made, or the disk refused: say so, deal no more
            await self._feed(BoardNotRecorded(cmd.attempt, str(exc), self.closed.complete, _clock()))
            return
        recorded = BoardRecorded(cmd.attempt, board.number, self.closed.total, self.closed.complete, _clock())
        await self._feed(recorded)

    # -- the judge's view ----------------------------------------------------------------------------------
    def _device_view(self) -> DeviceView:
        link = self.link
        if link is None:
            return DeviceView()
        return DeviceView(link.info(), link.status(), link.can_inject)

    def _boards(self) -> Boards | None:
        return Boards(self.closed.made, self.closed.total) if self.closed is not None else None

    def health(self) -> JsonObject:
        return self.core.health()

    def pace(self) -> float | None:
        return self.core.pace()

    def state(self) -> JsonObject:
        return self.core.state(self._device_view(), self._boards())

    def view(self) -> StationView:
        return self.core.view(self._device_view(), self._boards())

    def send_state(self) -> None:
        self.operator.send(self.view())
