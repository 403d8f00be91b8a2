"""A dealing station at work: a device, its dealing session, the bank, the audience and the judge's console.

The station reads events from its device, feeds them to its ``DealingSession``, publishes the session's public
projection to the audience hub, commits every accepted deal to the bank (on disk before anyone is told), records
every void in the ledger, and keeps the technical judge informed: status, progress, faults with guidance, voided
deals, device health. Formation runs toward the bank's target and can be started, paused, resumed and stopped.

No dealt deal is lost to the bank being unavailable (another writer holds the file, a full disk): every ledger
write (a deal's commit, a void) goes through one ordered queue. A write that cannot be made now stays queued,
the deal's cards stay in memory, the judge sees the fault (status ``bank_waiting``), the station deals no more
and retries with a growing pause (``dealer.app.ledger_writes.RETRY_PAUSES``) until the write succeeds — or, for a
deal, until the judge says ``void_pending``, which voids it with a ledger entry (itself queued until the bank takes
it). The station's status moves only by the events of ``dealer.app.station_state``; the judge's void is ordered
against the write in flight by ``dealer.app.ledger_writes.WriteSlot``.
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
from dealer.app.ledger_writes import (
    BANK_REFUSED,
    BANK_UNAVAILABLE,
    LedgerWrite,
    SlotCommand,
    SlotEvent,
    WriteQueue,
    WriteSlot,
    retry_pause,
)
from dealer.app.operator_messages import (
    OperatorBoard,
    OperatorCard,
    OperatorCardShown,
    OperatorCommitted,
    OperatorFault,
    StationView,
    StationViewShown,
)
from dealer.app.public import bank_message, board_message, from_projection, station_message
from dealer.app.station_state import StationEvent, StationMachine, StationStatus, Transition
from dealer.app.station_steps import Do, Next, after_board, after_commit, after_drain, after_void, before_next_deal
from dealer.app.streams import PublicStreams
from dealer.bank.api import CommittedDeal, DealSource
from dealer.bank.errors import BankError, BankUnavailableError
from dealer.core.cards import Card, Seat
from dealer.core.events import FaultKind
from dealer.core.json_types import JsonObject
from dealer.documents.acts import CLOSED_BOARD_ENTRY
from dealer.regulation import Regulation
from dealer.session import (
    CardAccepted,
    CardIgnored,
    DealComplete,
    DealingSession,
    DealVoided,
    FaultReported,
    PublicCardHidden,
    PublicCardOpen,
    PublicDealCommitted,
    PublicDealStarted,
    PublicDealVoided,
    Step,
    VoidReason,
)
from drivers.device import DealingDevice

from .bankworker import BankWorker
from .operator import OperatorBus

log = logging.getLogger("dealer.station")

ERROR_NORM_PER_100 = 1.0  # commercial readers: at most one error per 100 boards
BANK_WAITING = StationStatus.BANK_WAITING.value  # the fault kind while a ledger write waits for the bank
INTERRUPTED = "interrupted"  # the service stopped (crash, power) while a deal was being dealt
SEATS = "NESW"
NOT_THE_DEVICE = (VoidReason.ABORTED, VoidReason.OPERATOR)  # the judge's own actions: never a device error
PACE_WINDOW = 20  # deals the measured pace (and the ETA) is averaged over
# device faults with their own guidance (others get the generic "machine fault" text)
FAULT_GUIDES = {
    "duplicate_card",
    "unreadable_card",
    "extra_card",
    "jam",
    "misfeed",
    "missing_card",
    "wrong_pocket",
    "hopper_empty",
    "cover_open",
    "power",
    "pocket_full",
    "board_missing",
}


class Station:
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
        self.session = DealingSession(config.name, regulation.variant, regulation.open_cards, config.first_seat)
        self.link: DealingDevice | None = None
        self.machine = StationMachine(StationStatus.IDLE, time.time())  # the status: set only by its events
        self.running = False
        self.show_cards = False
        self.cards_read = 0
        self.fault_counts: Counter[str] = Counter()
        self.errors = 0
        self.faults: deque[JsonObject] = deque(maxlen=100)
        self.voided: deque[JsonObject] = deque(maxlen=500)
        self.committed = 0
        self.last_bank_deal: int | None = None
        self._current: list[tuple[int, Seat, Card]] = []  # the deal in progress (operator memory only)
        self._reader: asyncio.Task[None] | None = None
        self._committing = 0  # accepted deals on their way to disk
        self.pending = WriteQueue()  # ledger writes the bank could not take yet, in order
        self._drainer: asyncio.Task[None] | None = None
        self._paused_under_wait = False  # the judge's pause that a queued write covered with bank_waiting
        self.slot = WriteSlot()  # what the bank's thread is writing now (the judge's void waits for a commit)
        self._landed = asyncio.Event()  # set when the attempt in flight has ended (banked, refused or failed)
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._voided_deal: int | None = None  # the device deal id of the last void (its late fault is the same fault)
        self._done_times: deque[float] = deque(maxlen=PACE_WINDOW)  # when each recent deal was accepted
        # Marks a deal in progress on disk, so a service killed mid-deal voids it on restart (``recover``).
        self.marker: Path | None = None
        # The second copy of the bank brought to the ledger's first N entries before a commit is told to anyone
        # (the service's ``copy_ledger``; None: no second copy). Its answer goes with the judge's "committed".
        self.copy_ledger: Callable[[int], Awaitable[bool | None]] | None = None

    # -- crash recovery --------------------------------------------------------------------------------------
    async def _mark(self, attempt: int) -> None:
        if self.marker is None:
            return
        size = await self.bank.call(self.bank.bank.ledger_size)
        tmp = self.marker.with_suffix(".tmp")
        tmp.write_text(json.dumps({"station": self.name, "attempt": attempt, "ledger_size": size, "time": time.time()}))
        os.replace(tmp, self.marker)  # survives the process being killed (no fsync: not a power-cut guarantee)

    def _unmark(self) -> None:
        if self.marker is not None:
            self.marker.unlink(missing_ok=True)

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
            self._unmark()
            return None
        detail = {"detail": "the service stopped during this deal", "previous_attempt": mark.get("attempt")}
        await self._write(LedgerWrite("void", 0, time.time(), reason=INTERRUPTED, detail=detail))
        entry = {"time": time.time(), "attempt": 0, "reason": INTERRUPTED, "cards_dealt": 0,
                 "key": f"guide.{INTERRUPTED}", "params": {}}  # fmt: skip
        self.voided.appendleft(entry)
        return detail

    # -- public view ---------------------------------------------------------------------------------------
    def announce(self) -> None:
        variant, status = int(self.session.variant), self.status.value
        self.hub.publish(station_message(self.name, variant, self.session.open_count, status))

    @property
    def status(self) -> StationStatus:
        return self.machine.status

    def _quiet(self, event: StationEvent) -> Transition:
        """The status moves by ``event`` and nothing is told (the caller announces, or a telling step follows)."""
        return self.machine.handle(event, time.time())

    def _on(self, event: StationEvent) -> None:
        """The status moves by ``event``: a change is announced to the audience, the judge gets the state."""
        step = self._quiet(event)
        if step.changed:
            self.announce()
            if step.after is StationStatus.TARGET_REACHED and self.closed is None:  # the bank is formed: none
                self.hub.publish({"type": "cleared", "station": self.name})  # of its deals stays on the pages
        self.send_state()

    def _carry(self, nxt: Next) -> bool:
        """Carry out what ``dealer.app.station_steps`` decided, all but asking the device: True when the next deal
        is to be asked (each caller does, with its own handling of the device's refusal)."""
        if nxt.stop_running:
            self.running = False
        if nxt.do is Do.SEND_STATE:
            self.send_state()
        elif nxt.do is Do.EVENT and nxt.event is not None:
            self._on(nxt.event)
        return nxt.do is Do.NEXT_DEAL

    def link_failed(self) -> None:
        """The service could not open the station's device (autostart): disconnected, announced."""
        self._quiet(StationEvent.LINK_CLOSED)
        self.announce()

    # -- device --------------------------------------------------------------------------------------------
    async def connect(self, link: DealingDevice) -> None:
        async with self._lock:
            if self.link is not None:
                await self._operator_void("the technical judge connected another device during the deal")
                self.running = False
                await self._close_link()
            self._on(StationEvent.CONNECT)
            await link.open()
            self.link = link
            self._reader = asyncio.create_task(self._read(link), name=f"station-{self.name}")
            self._on(StationEvent.LINK_OPENED)

    async def disconnect(self) -> None:
        async with self._lock:
            self.running = False
            await self._operator_void("the technical judge disconnected the device during the deal")
            await self._close_link()
            self._on(StationEvent.LINK_CLOSED)

    async def reset(self) -> None:
        """The judge's Reset: the deal in progress (if any) is voided as the operator's, the station is ready."""
        async with self._lock:
            self.running = False
            await self._operator_void("the technical judge reset the station during the deal")
            self._on(StationEvent.LINK_CLOSED if self.link is None else StationEvent.RESET)

    async def _operator_void(self, detail: str) -> None:
        if not self.session.dealing:
            return
        await self._handle(self.session.abort(detail, VoidReason.OPERATOR))  # first: the device's echo is late
        if self.link is not None:
            try:
                await self.link.abort()
            except Exception as exc:  # the device is gone: the void is recorded all the same
                log.warning("station %s: abort: %s", self.name, exc)

    async def _close_link(self) -> None:
        link, reader = self.link, self._reader
        self.link, self._reader = None, None
        if link is not None:
            await link.close()
        if reader is not None:
            try:
                await asyncio.wait_for(reader, 2.0)
            except (TimeoutError, asyncio.CancelledError):
                reader.cancel()
        if self.session.dealing:
            await self._handle(self.session.end_of_stream())

    async def _read(self, link: DealingDevice) -> None:
        try:
            while True:
                event = await link.next_event()
                if event is None:
                    break
                await self._handle(self.session.feed(event))
            await self._handle(self.session.end_of_stream())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("station %s: device reader failed", self.name)
            await self._handle(self.session.end_of_stream())
            self._quiet(StationEvent.READER_FAILED)  # told with the link's loss below (a stale reader: untold)
        if self.link is link:
            self.running = False
            self._on(StationEvent.LINK_CLOSED)

    def _committed_since(self, since: int) -> bool:
        """Did the bank take a deal of this station at ledger index ``since`` or later?"""
        if since <= 0:
            return False
        return any(e.station == self.name for e in self.bank.bank.deal_entries(since))

    # -- formation control -----------------------------------------------------------------------------------
    async def start(self) -> None:
        if self.link is None:
            raise StationError(f"station {self.name}: connect a device first")
        if self.running:  # pressed again while dealing: the station's own loop asks for each next deal (a second
            return  # request could cross it between two deals, the machine answer busy, and the station stop)
        self.running = True
        if not self.session.dealing:
            await self._next()

    async def pause(self) -> None:
        self.running = False
        self._on(StationEvent.PAUSE)

    async def resume(self) -> None:
        await self.start()

    async def stop(self) -> None:
        self.running = False
        if self.link is not None:
            await self.link.abort()
        await self._handle(self.session.abort("stopped by the technical judge"))
        self._on(StationEvent.STOP)

    async def redeal(self) -> None:
        if self.link is None:
            raise StationError(f"station {self.name}: connect a device first")
        if self.session.dealing:
            raise StationError(f"station {self.name}: a deal is in progress")
        self.running = True
        await self._next()

    async def inject_fault(self, kind: FaultKind) -> bool:
        if self.link is None:
            raise StationError(f"station {self.name}: connect a device first")
        return await self.link.inject_fault(kind)

    async def set_show_cards(self, show: bool, who: str) -> None:
        if show and self.closed is not None:
            raise StationError(f"station {self.name}: variant 1 is closed dealing: its cards are never shown")
        if show and not self.show_cards:
            # recorded before anything is shown
            await self.bank.call(
                self.bank.bank.record_event,
                "cards_shown",
                {"station": self.name, "by": who, "attempt": self.session.attempts, "time": time.time()},
            )
        self.show_cards = show
        self.send_state()

    async def _progress(self) -> tuple[int, int]:
        """(made, target): boards of the session for a closed station, deals in the bank otherwise."""
        if self.closed is not None:
            return self.closed.made, self.closed.total
        return await self.bank.call(self.bank.bank.deal_count), self.regulation.bank_target

    async def _next(self) -> None:
        if self.pending:  # the bank is not taking writes: deal no more until it does (retried by _drain)
            self._on(StationEvent.WRITE_HELD)
            return
        formed, target = await self._progress()
        link = self.link
        nxt = before_next_deal(made=formed, committing=self._committing, target=target, linked=link is not None)
        if nxt.do is not Do.REQUEST_DEAL or link is None:
            self._carry(nxt)
            return
        try:  # a machine deals; a manual station (can_deal False) arms its reader for the operator's next deal
            await link.request_deal()
        except Exception as exc:  # the device is reconnecting, refuses, does not answer: the judge decides
            self.running = False
            self._on(StationEvent.DEVICE_REFUSED)
            raise StationError(f"station {self.name}: {exc}") from exc
        self._on(StationEvent.DEAL_REQUESTED)

    # -- events --------------------------------------------------------------------------------------------
    async def _handle(self, step: Step) -> None:
        voids = any(isinstance(op, DealVoided) for op in step.operator)
        for pub in step.public:
            if isinstance(pub, PublicDealVoided):
                continue  # published after the ledger has the void, below
            if self.closed is not None and isinstance(pub, PublicCardOpen | PublicCardHidden):
                continue  # variant 1: nothing of any card is public, not even where a hidden one went
            if isinstance(pub, PublicDealStarted):
                self._voided_deal = None
                await self._mark(pub.attempt)
            self.hub.publish(from_projection(self.name, pub))
        for op in step.operator:
            if isinstance(op, CardAccepted):
                self.cards_read += 1
                self._current.append((op.position, op.seat, op.card))
                seat = SEATS[op.seat]
                if self.show_cards:
                    self.operator.send(
                        OperatorCardShown(
                            station=self.name,
                            attempt=op.attempt,
                            position=op.position,
                            seat=seat,
                            open=op.open,
                            card=int(op.card),
                        )
                    )
                else:
                    self.operator.send(
                        OperatorCard(
                            station=self.name, attempt=op.attempt, position=op.position, seat=seat, open=op.open
                        )
                    )
            elif isinstance(op, CardIgnored):
                pass
            elif isinstance(op, FaultReported):
                late = not self.session.dealing and op.deal_id is not None and op.deal_id == self._voided_deal
                if late and not voids:
                    continue  # the device's own report of the fault that has just voided this deal: one fault
                self.fault_counts[op.kind.value] += 1
                if not voids:  # a fault that voids a deal is reported once, with the void's guidance
                    key = f"guide.{op.kind.value}" if op.kind.value in FAULT_GUIDES else "guide.fault"
                    params = {"kind": op.kind.value, "pos": (op.position or 0) + 1, "n": 0, "detail": op.detail}
                    self._fault(key, params, kind=op.kind.value)
            elif isinstance(op, DealVoided):
                await self._voided(op)
            elif isinstance(op, DealComplete):
                self._done_times.append(time.monotonic())
                if self.closed is not None:
                    await self._board(op)
                else:
                    await self._complete(op)

    def _fault(self, key: str, params: JsonObject, kind: str) -> None:
        entry = {"time": time.time(), "station": self.name, "key": key, "params": params, "kind": kind}
        self.faults.appendleft(entry)
        self.operator.send(OperatorFault.model_validate(entry))

    async def _voided(self, op: DealVoided) -> None:
        self._current = []
        self._voided_deal = op.deal_id
        device = op.reason not in NOT_THE_DEVICE
        if device:
            self.errors += 1
        if device and op.reason not in (VoidReason.FAULT, VoidReason.DISCONNECTED):
            self.fault_counts[op.reason.value] += 1
        detail = {"attempt": op.attempt, "device_deal": op.deal_id, "cards_dealt": op.cards_dealt, "detail": op.detail}
        if op.position is not None:
            detail["position"] = op.position + 1
        await self._write(LedgerWrite("void", op.attempt, time.time(), reason=op.reason.value, detail=detail))
        params: JsonObject = {
            "pos": (op.position + 1) if op.position is not None else op.cards_dealt + 1,
            "n": op.cards_dealt,
            "card": int(op.card) if op.card is not None else None,
            "seat": SEATS[op.seat] if op.seat is not None else None,
            "kind": op.fault.value if op.fault is not None else op.reason.value,
        }
        key = f"guide.{op.reason.value}"
        if op.fault is not None and op.fault.value in FAULT_GUIDES:
            key = f"guide.{op.fault.value}"
        entry = {
            "time": time.time(),
            "attempt": op.attempt,
            "reason": op.reason.value,
            "cards_dealt": op.cards_dealt,
            "key": key,
            "params": params,
        }
        self.voided.appendleft(entry)
        if device:
            self._fault(key, params, kind=params["kind"])
        made, target = await self._progress()
        by_operator = op.reason is VoidReason.OPERATOR  # the judge's action sets the status
        nxt = after_void(running=self.running, auto_redeal=self.config.auto_redeal, by_device=device,
                         by_operator=by_operator, made=made, committing=self._committing, target=target)  # fmt: skip
        if self._carry(nxt):
            try:
                await self._next()
            except StationError as exc:
                self._fault("guide.fault", {"kind": "other", "pos": 0, "n": 0, "detail": str(exc)}, kind="other")

    async def _complete(self, op: DealComplete) -> None:
        self._current = []
        self._committing += 1
        if self.running:  # the machine deals the next deal while this one goes to disk
            try:
                await self._next()
            except StationError as exc:
                self._fault("guide.fault", {"kind": "other", "pos": 0, "n": 0, "detail": str(exc)}, kind="other")
        source = DealSource(
            kind="station",
            station=self.name,
            variant=op.variant,
            shown_cards=op.shown_cards,
            dealing_order=op.dealing_order,
        )
        await self._write(LedgerWrite("commit", op.attempt, time.time(), deal=op.deal, source=source))

    # -- ledger writes: one ordered queue, retried until the bank takes them -----------------------------
    async def _write(self, item: LedgerWrite) -> None:
        """Write now, or queue behind earlier writes the bank has not taken yet (order kept)."""
        if self.pending.attempt_now() and await self._try(item):
            return
        self.pending.hold(item)
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain(), name=f"station-{self.name}-bank")
        if self.status is StationStatus.PAUSED and not self.running:  # a deal the judge's pause let finish:
            self._paused_under_wait = True  # still paused after
        self._on(StationEvent.WRITE_HELD)

    async def _try(self, item: LedgerWrite) -> bool:
        """One attempt; True when the write is done (or turned into a void that is done)."""
        bank = self.bank.bank
        landed = self._landed = asyncio.Event()
        self.slot.handle(SlotEvent.COMMIT_SENT if item.kind == "commit" else SlotEvent.VOID_SENT, time.monotonic())
        try:
            if item.kind == "commit":
                assert item.deal is not None and item.source is not None
                committed = await self.bank.call(bank.commit_deal, item.deal, item.source)
                item.banked = True
            else:
                await self.bank.call(bank.void_deal, item.reason, self.name, item.detail)
        except BankUnavailableError as exc:
            self._unavailable(item, str(exc))
            return False
        except BankError as exc:  # refused for good (a duplicate of a banked deal): void it, say why
            if item.kind != "commit":
                log.error("station %s: the bank refused a void entry: %s", self.name, exc)
                self._fault("guide.bank_refused", {"detail": str(exc)}, kind=BANK_REFUSED)
                return True
            log.warning("station %s: bank refused the deal: %s", self.name, exc)
            self._committing -= 1  # not a device error: health counts only what the device got wrong
            self._fault("guide.bank_refused", {"detail": str(exc)}, kind=BANK_REFUSED)
            self.pending.refused(item, str(exc))
            return await self._try(item)
        except Exception as exc:  # an unexpected failure of the file (I/O): keep the deal, retry
            log.exception("station %s: ledger write failed", self.name)
            self._unavailable(item, f"{type(exc).__name__}: {exc}")
            return False
        finally:
            self.slot.handle(SlotEvent.LANDED, time.monotonic())
            landed.set()
        if item.kind == "commit":
            self._committing -= 1
            await self._committed(item, committed)
        else:
            self._unmark()
            self.hub.publish(from_projection(self.name, PublicDealVoided(item.attempt, item.reason)))
            if item.reason in (BANK_REFUSED, BANK_UNAVAILABLE) and not self.session.dealing and not self.pending:
                self._on(StationEvent.LOST_DEAL_VOIDED)
        return True

    def _unavailable(self, item: LedgerWrite, error: str) -> None:
        tell, _ = self.pending.failed(item, error, time.monotonic())  # the drainer waits retry_pause(item.tries)
        if tell:  # shown once per new trouble, not on every retry
            log.warning("station %s: the bank cannot take the %s now: %s", self.name, item.kind, error)
            self._fault("guide.bank_waiting", {"detail": error, "n": len(self.pending) + 1}, kind=BANK_WAITING)

    async def _drain(self) -> None:
        """Retry the queued writes in order until the bank has taken them all."""
        while self.pending:
            item = self.pending.head()
            if item.tries:
                self.send_state()
                self._wake.clear()
                pause = retry_pause(item.tries)
                with contextlib.suppress(TimeoutError):  # a judge's "retry" or "void_pending" wakes it early
                    await asyncio.wait_for(self._wake.wait(), pause)
            if await self._try(item):
                self.pending.done()
        self._fault("guide.bank_back", {}, kind="bank_back")
        paused, self._paused_under_wait = self._paused_under_wait, False
        nxt = after_drain(status=self.status, dealing=self.session.dealing, running=self.running,
                          paused_under_wait=paused)  # fmt: skip
        if self._carry(nxt):
            try:
                await self._next()
            except StationError as exc:
                self._fault("guide.fault", {"kind": "other", "pos": 0, "n": 0, "detail": str(exc)}, kind="other")

    async def flush(self, timeout: float) -> bool:
        """At shutdown: give the waiting writes up to ``timeout`` seconds; False if some are still waiting."""
        drainer = self._drainer
        if not self.pending or drainer is None:
            return True
        self._wake.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(drainer), timeout)
        if self.pending:
            log.error("station %s: %d ledger writes never reached the bank: %s", self.name, len(self.pending),
                      [w.view() for w in self.pending])  # fmt: skip
            drainer.cancel()
        return not self.pending

    async def retry_pending(self) -> None:
        """The judge: try the waiting ledger writes now."""
        if not self.pending:
            raise StationError(f"station {self.name}: no ledger write is waiting for the bank")
        self._wake.set()

    async def void_pending(self, who: str) -> int:
        """The judge: give up the deals waiting for the bank; each is voided with a ledger entry (queued too).

        A retry already in the bank's thread cannot be stopped: the void waits for that attempt to end, so what
        it answers (and the state it sends) is what the ledger will hold — the deal banked (not counted), or
        voided. It used to answer at once and decide the in-flight deal later: the judge was told "voided" while
        the console still showed the deal as a commit on its way (a loaded run of test_bank_writers met it)."""
        while self.slot.handle(SlotEvent.VOID_ASKED, time.monotonic()).command is SlotCommand.AWAIT_LANDING:
            await self._landed.wait()  # bounded by the bank's own wait (busy_timeout)
        n = self.pending.give_up(who)  # each waiting commit becomes a void entry in its place
        self._committing -= n
        if not n:
            raise StationError(f"station {self.name}: no dealt deal is waiting for the bank")
        self._wake.set()
        self.send_state()
        return n

    async def _committed(self, item: LedgerWrite, committed: CommittedDeal) -> None:
        self._unmark()
        self.committed += 1
        self.last_bank_deal = committed.deal_id
        size = committed.ledger_index + 1
        copied = await self.copy_ledger(size) if self.copy_ledger is not None else None  # before anyone is told
        formed = await self.bank.call(self.bank.bank.deal_count)
        self.hub.publish(
            from_projection(
                self.name, PublicDealCommitted(item.attempt, committed.deal_id, committed.ledger_head, formed)
            )
        )
        self.hub.publish(bank_message(formed, self.regulation.bank_target, committed.ledger_head, size))
        self.operator.send(
            OperatorCommitted(
                station=self.name,
                bank_deal=committed.deal_id,
                formed=formed,
                ledger_head=committed.ledger_head,
                copied=copied,
            )
        )
        target = self.regulation.bank_target
        self._carry(after_commit(waiting=bool(self.pending), running=self.running, formed=formed, target=target))

    async def _board(self, op: DealComplete) -> None:
        """Variant 1: the deal went face down into the next board; recorded for the hand records, never banked."""
        assert self.closed is not None
        self._current = []
        try:
            board = await asyncio.to_thread(self.closed.add, op.deal, self.name)
            await self.bank.call(self.bank.bank.record_event, CLOSED_BOARD_ENTRY, board.ledger_payload())
        except Exception as exc:  # the session's boards are all made, or the disk refused: say so, deal no more
            log.warning("station %s: board not recorded: %s", self.name, exc)
            self.running = False
            self._unmark()
            self.hub.publish(from_projection(self.name, PublicDealVoided(op.attempt, BANK_REFUSED)))
            self._fault("guide.bank_refused", {"detail": str(exc)}, kind=BANK_REFUSED)
            self._on(StationEvent.TARGET_REACHED if self.closed.complete else StationEvent.BOARD_REFUSED)
            return
        self._unmark()
        self.committed += 1
        self.hub.publish(board_message(self.name, board.number, self.closed.total))
        self.operator.send(OperatorBoard(station=self.name, board=board.number, boards=self.closed.total))
        if self._carry(after_board(complete=self.closed.complete, running=self.running)):
            await self._next()

    # -- the judge's view ----------------------------------------------------------------------------------
    def health(self) -> JsonObject:
        boards = self.session.attempts
        rate = 100.0 * self.errors / boards if boards else 0.0
        return {
            "cards_read": self.cards_read,
            "deals": boards,
            "accepted": self.session.accepted,
            "errors": self.errors,
            "faults": dict(self.fault_counts),
            "error_rate": round(rate, 2),
            "norm": ERROR_NORM_PER_100,
            "warning": rate > ERROR_NORM_PER_100,
        }

    def pace(self) -> float | None:
        """Seconds per accepted deal, measured over the last ``PACE_WINDOW`` deals (None before two)."""
        t = self._done_times
        return (t[-1] - t[0]) / (len(t) - 1) if len(t) >= 2 else None

    def state(self) -> JsonObject:
        link = self.link
        st: JsonObject = {
            "type": "station",
            "station": self.name,
            "status": self.status.value,
            "running": self.running,
            "in_deal": self.session.dealing,
            "variant": int(self.session.variant),
            "open_count": self.session.open_count,
            "device": link.info() if link is not None else None,
            "device_status": link.status() if link is not None else None,
            "can_inject": link is not None and link.can_inject,
            "attempt": self.session.attempts,
            "cards_dealt": self.session.cards_dealt,
            "committed": self.committed,
            "last_bank_deal": self.last_bank_deal,
            "target": self.closed.total if self.closed is not None else self.regulation.bank_target,
            "closed": self.closed is not None,
            "boards_made": self.closed.made if self.closed is not None else None,
            "pace": self.pace(),
            "show_cards": self.show_cards,
            "faults": list(self.faults)[:20],
            "voided": list(self.voided)[:50],
            "pending": self.pending.views(),
            "health": self.health(),
        }
        if self.show_cards:
            st["current"] = [{"position": p, "seat": SEATS[s], "card": int(c)} for p, s, c in self._current]
        return st

    def view(self) -> StationView:
        st = self.state()
        return (StationViewShown if "current" in st else StationView).model_validate(st)

    def send_state(self) -> None:
        self.operator.send(self.view())


class StationError(Exception):
    pass
