"""A dealing station's logic as a pure state machine: typed events in, typed commands out, time passed in.

In the manner of h11 and ``DealingSession``: ``StationCore.handle(event)`` applies one event — the device's step,
its link coming up or going down, the bank's answer to a ledger write, a judge's command, the clock's tick — each
carrying ``now`` (the runner's clock), and answers with the commands the runner carries out, in order: publish to
the audience, tell the judge, commit a deal or record a void, retry at a time, read or close the device, mark or
unmark the crash marker, read the bank's progress. A command whose answer the core needs (a ledger write, the
bank's progress, the device's answer to a request) comes back as an event; ``Continue`` hands an event back to be
applied once the commands before it are done (the order the dealing loop keeps: a void is recorded, then the
status moves). The core does no I/O, reads no clock, holds no bank, hub or device: ``dealer.app.station.Station``
is its runner.

The core owns the station's state: the dealing session, the status machine (``dealer.app.station_state``), the
queue of ledger writes the bank has not taken (``dealer.app.ledger_writes.WriteQueue``), the write slot that orders
the judge's void against the write in flight (``WriteSlot``), the counters, the health figures and when the next
retry is due. What to do after a commit, a void, a board or the bank's return is ``dealer.app.station_steps``'s.

The writer-vs-void race is a transition here: ``VoidPending`` while a commit is in flight answers ``AwaitLanding``
(the runner waits for the attempt to end and asks again); the commit then banked leaves nothing to void
(``Refuse``); refused, it became its deal's void; failed (the bank unavailable), it is given up as a void entry by
the judge, tried at once (``Wake``) — and, failing again, retried at ``now + retry_pause(tries)`` (``RetryAt``).
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from dataclasses import dataclass, field, replace

from dealer.app.config import StationConfig
from dealer.app.ledger_writes import (
    BANK_REFUSED,
    BANK_UNAVAILABLE,
    LedgerWrite,
    SlotCommand,
    SlotEvent,
    WriteQueue,
    WriteSlot,
    retry_at,
)
from dealer.app.operator_messages import (
    OperatorBoard,
    OperatorCard,
    OperatorCardShown,
    OperatorCommitted,
    OperatorFault,
    OperatorMessage,
    StationView,
    StationViewShown,
)
from dealer.app.public import bank_message, board_message, from_projection, station_message
from dealer.app.station_state import StationEvent, StationMachine, StationStatus
from dealer.app.station_steps import Do, Next, after_board, after_commit, after_drain, after_void, before_next_deal
from dealer.bank.api import CommittedDeal, DealSource
from dealer.core import Deal
from dealer.core.cards import Card, Seat
from dealer.core.events import DeviceEvent, FaultKind
from dealer.core.json_types import JsonObject
from dealer.regulation import Regulation
from dealer.session import (
    CardAccepted,
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


# -- commands (what the runner does) -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Publish:
    """Publish ``message`` to the audience (the public hub)."""

    message: JsonObject


@dataclass(frozen=True, slots=True)
class Tell:
    """Send ``message`` to the judge's consoles."""

    message: OperatorMessage


@dataclass(frozen=True, slots=True)
class SendState:
    """Send the station's state (``StationCore.state``, with the device's own figures) to the judge's consoles."""


@dataclass(frozen=True, slots=True)
class Log:
    level: int
    text: str


@dataclass(frozen=True, slots=True)
class MarkDealing:
    """Write the crash marker: a deal (``attempt``) is in progress, with the ledger's size now."""

    attempt: int
    at: float


@dataclass(frozen=True, slots=True)
class Unmark:
    """Remove the crash marker: no deal is in progress any more."""


@dataclass(frozen=True, slots=True)
class Write:
    """A ledger write is owed: apply ``WriteTurn(item)`` when this command's turn comes (written now or queued)."""

    item: LedgerWrite


@dataclass(frozen=True, slots=True)
class CommitDeal:
    """Ask the bank to commit ``item``'s deal: ``WriteSucceeded``, ``WriteRefused`` or ``WriteUnavailable``."""

    item: LedgerWrite


@dataclass(frozen=True, slots=True)
class RecordVoid:
    """Ask the bank to record ``item``'s void entry: ``WriteSucceeded``, ``WriteRefused`` or ``WriteUnavailable``."""

    item: LedgerWrite


@dataclass(frozen=True, slots=True)
class CountCommit:
    """A deal is banked: bring the second copy to the ledger's ``size`` (if there is one) and read the deals formed
    (``CommitCounted``), before anyone is told."""

    item: LedgerWrite
    committed: CommittedDeal


@dataclass(frozen=True, slots=True)
class RecordBoard:
    """Variant 1: add the deal to the session's next board and record it (``BoardRecorded`` / ``BoardNotRecorded``)."""

    attempt: int
    deal: Deal


@dataclass(frozen=True, slots=True)
class RecordCardsShown:
    """Record in the ledger, before anything is shown, that the judge sees the cards."""

    data: JsonObject


@dataclass(frozen=True, slots=True)
class ReadProgress:
    """Read (made, target) — boards of the session for a closed station, deals in the bank otherwise — and apply
    ``ProgressRead(then, …)``."""

    then: AfterVoid | NextDeal


@dataclass(frozen=True, slots=True)
class RequestDeal:
    """Ask the device for the next deal: ``DealRequested``, or ``DealRefused``."""

    raise_refusal: bool


@dataclass(frozen=True, slots=True)
class AbortDevice:
    """Tell the device to abort the deal in progress; ``tolerant``: a device that is gone is only logged."""

    tolerant: bool


@dataclass(frozen=True, slots=True)
class OpenDevice:
    """Open the judge's device, start its reader (tagged ``generation``), then apply ``LinkUp``."""

    generation: int


@dataclass(frozen=True, slots=True)
class CloseDevice:
    """Close the device: apply ``LinkDown`` at once, close it and wait for its reader, then apply ``LinkClosed``."""


@dataclass(frozen=True, slots=True)
class InjectDeviceFault:
    """A simulator's fault, asked by the judge (the device answers whether it took it)."""

    kind: FaultKind


@dataclass(frozen=True, slots=True)
class RetryAt:
    """The head of the queue of waiting writes is due at ``at`` (the runner's clock): tick then (``Tick``)."""

    at: float


@dataclass(frozen=True, slots=True)
class Wake:
    """Tick now: a waiting write is due at once (the judge's retry or void)."""


@dataclass(frozen=True, slots=True)
class AwaitLanding:
    """The write in flight decides first: wait for it to end, then apply the judge's ``VoidPending`` again."""


@dataclass(frozen=True, slots=True)
class Refuse:
    """The judge's command is refused: the runner raises ``StationError(text)`` (the commands before it are done)."""

    text: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What the judge's command answers (the deals voided)."""

    value: int


@dataclass(frozen=True, slots=True)
class Continue:
    """Apply ``event`` (stamped with the runner's time then) once the commands before this one are done."""

    event: Event


Command = (
    Publish
    | Tell
    | SendState
    | Log
    | MarkDealing
    | Unmark
    | Write
    | CommitDeal
    | RecordVoid
    | CountCommit
    | RecordBoard
    | RecordCardsShown
    | ReadProgress
    | RequestDeal
    | AbortDevice
    | OpenDevice
    | CloseDevice
    | InjectDeviceFault
    | RetryAt
    | Wake
    | AwaitLanding
    | Refuse
    | Answer
    | Continue
)


# -- what a progress reading was for -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AfterVoid:
    by_device: bool
    by_operator: bool


@dataclass(frozen=True, slots=True)
class NextDeal:
    raise_refusal: bool  # the judge's Start or Redeal hears the device's refusal; the dealing loop reports a fault


# -- events (what happened) ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DeviceStep:
    """The device reported ``event``."""

    event: DeviceEvent
    now: float


@dataclass(frozen=True, slots=True)
class DeviceEnded:
    """The device's reader of ``generation`` ended: its stream closed, or (``failed``) the reader raised."""

    generation: int
    failed: bool
    now: float


@dataclass(frozen=True, slots=True)
class ReaderStopped:
    """After ``DeviceEnded``'s void (if any): a failed reader, and the loss of the station's current link."""

    generation: int
    failed: bool
    now: float


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The device of ``OpenDevice`` is open and its reader runs."""

    now: float


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The station let go of its device (``CloseDevice``): it is closing."""

    now: float


@dataclass(frozen=True, slots=True)
class LinkClosed:
    """The device is closed and its reader done: a deal still in progress ends with the stream."""

    now: float


@dataclass(frozen=True, slots=True)
class LinkFailed:
    """The service could not open the station's device (autostart)."""

    now: float


@dataclass(frozen=True, slots=True)
class WriteTurn:
    """``Write(item)``'s turn: write now, or queue behind the writes the bank has not taken yet."""

    item: LedgerWrite
    now: float


@dataclass(frozen=True, slots=True)
class WriteSucceeded:
    """The bank took ``item`` (``committed``: the banked deal of a commit; None for a void)."""

    item: LedgerWrite
    committed: CommittedDeal | None
    now: float


@dataclass(frozen=True, slots=True)
class WriteRefused:
    """The bank refused ``item`` for good (a duplicate of a banked deal)."""

    item: LedgerWrite
    error: str
    now: float


@dataclass(frozen=True, slots=True)
class WriteUnavailable:
    """The bank could not take ``item`` now (another writer, a full disk, an I/O failure)."""

    item: LedgerWrite
    error: str
    now: float


@dataclass(frozen=True, slots=True)
class CommitCounted:
    """``CountCommit``'s answer: the second copy's (``copied``; None: no copy) and the deals formed."""

    item: LedgerWrite
    committed: CommittedDeal
    copied: bool | None
    formed: int
    now: float


@dataclass(frozen=True, slots=True)
class ProgressRead:
    then: AfterVoid | NextDeal
    made: int
    target: int
    now: float


@dataclass(frozen=True, slots=True)
class DealRequested:
    now: float


@dataclass(frozen=True, slots=True)
class DealRefused:
    """The device refused (or did not answer) the request for a deal."""

    error: str
    raise_refusal: bool
    now: float


@dataclass(frozen=True, slots=True)
class BoardRecorded:
    attempt: int
    board: int
    boards: int
    complete: bool
    now: float


@dataclass(frozen=True, slots=True)
class BoardNotRecorded:
    attempt: int
    error: str
    complete: bool
    now: float


@dataclass(frozen=True, slots=True)
class Tick:
    """The clock: a waiting write may be due."""

    now: float


@dataclass(frozen=True, slots=True)
class Interrupted:
    """At start-up: the crash marker says the previous run died during a deal the bank does not hold."""

    detail: JsonObject
    now: float


@dataclass(frozen=True, slots=True)
class Connect:
    now: float


@dataclass(frozen=True, slots=True)
class Disconnect:
    now: float


@dataclass(frozen=True, slots=True)
class Reset:
    now: float


@dataclass(frozen=True, slots=True)
class Start:
    """The judge's Start (and Resume)."""

    now: float


@dataclass(frozen=True, slots=True)
class Pause:
    now: float


@dataclass(frozen=True, slots=True)
class Stop:
    now: float


@dataclass(frozen=True, slots=True)
class Redeal:
    now: float


@dataclass(frozen=True, slots=True)
class InjectFault:
    kind: FaultKind
    now: float


@dataclass(frozen=True, slots=True)
class ShowCards:
    show: bool
    who: str
    now: float


@dataclass(frozen=True, slots=True)
class RetryPending:
    """The judge: try the waiting ledger writes now."""

    now: float


@dataclass(frozen=True, slots=True)
class VoidPending:
    """The judge gives up the deals waiting for the bank."""

    who: str
    now: float


# continuations (``Continue``): the rest of a step, once the commands before it are done
@dataclass(frozen=True, slots=True)
class Move:
    """The status moves by ``event`` (announced, the judge told)."""

    event: StationEvent
    now: float


@dataclass(frozen=True, slots=True)
class ResetDone:
    now: float


@dataclass(frozen=True, slots=True)
class StopDevice:
    """After the device's abort: the judge's Stop voids the deal in progress."""

    now: float


@dataclass(frozen=True, slots=True)
class CardsShownRecorded:
    now: float


Event = (
    DeviceStep
    | DeviceEnded
    | ReaderStopped
    | LinkUp
    | LinkDown
    | LinkClosed
    | LinkFailed
    | WriteTurn
    | WriteSucceeded
    | WriteRefused
    | WriteUnavailable
    | CommitCounted
    | ProgressRead
    | DealRequested
    | DealRefused
    | BoardRecorded
    | BoardNotRecorded
    | Tick
    | Interrupted
    | Connect
    | Disconnect
    | Reset
    | Start
    | Pause
    | Stop
    | Redeal
    | InjectFault
    | ShowCards
    | RetryPending
    | VoidPending
    | Move
    | ResetDone
    | StopDevice
    | CardsShownRecorded
)


def restamp(event: Event, now: float) -> Event:
    """``event`` as of ``now`` (a continuation is applied later than it was made)."""
    return replace(event, now=now)


@dataclass(frozen=True, slots=True)
class DeviceView:
    """What the runner's device says of itself, for the judge's view (None: no device)."""

    info: JsonObject | None = None
    status: JsonObject | None = None
    can_inject: bool = False


@dataclass(frozen=True, slots=True)
class Boards:
    """Variant 1: the session's boards made and their number."""

    made: int
    total: int


@dataclass
class StationCore:
    """One station's state and rules; ``handle`` is the only way in (``announce``, ``state`` and the figures
    only read)."""

    config: StationConfig
    regulation: Regulation
    closed: bool = False  # variant 1: deals become boards, never bank deals
    since: float = 0.0
    session: DealingSession = field(init=False)
    machine: StationMachine = field(init=False)
    running: bool = False
    show_cards: bool = False
    linked: bool = False  # a device is held (from LinkUp to LinkDown)
    generation: int = 0  # the device being opened or held (a reader of an older one is stale)
    cards_read: int = 0
    errors: int = 0
    committed: int = 0
    committing: int = 0  # accepted deals on their way to disk
    last_bank_deal: int | None = None
    retry_due: float | None = None  # when the head of the waiting writes is tried next (None: at once)
    paused_under_wait: bool = False  # the judge's pause that a queued write covered with bank_waiting
    voided_deal: int | None = None  # the device deal id of the last void (its late fault is the same fault)
    fault_counts: Counter[str] = field(default_factory=Counter)
    faults: deque[JsonObject] = field(default_factory=lambda: deque(maxlen=100))
    voided: deque[JsonObject] = field(default_factory=lambda: deque(maxlen=500))
    pending: WriteQueue = field(default_factory=WriteQueue)  # ledger writes the bank could not take yet, in order
    slot: WriteSlot = field(default_factory=WriteSlot)  # what the bank's thread is writing now
    current: list[tuple[int, Seat, Card]] = field(default_factory=list)  # the deal in progress (operator only)
    done_times: deque[float] = field(default_factory=lambda: deque(maxlen=PACE_WINDOW))  # recent deals accepted

    def __post_init__(self) -> None:
        c, r = self.config, self.regulation
        self.session = DealingSession(c.name, r.variant, r.open_cards, c.first_seat)
        self.machine = StationMachine(StationStatus.IDLE, self.since)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def status(self) -> StationStatus:
        return self.machine.status

    # -- the one way in ------------------------------------------------------------------------------------------
    def handle(self, event: Event) -> list[Command]:
        """Apply ``event``: the commands to carry out, in order."""
        now = event.now
        match event:
            case DeviceStep():
                return self._step(self.session.feed(event.event), now)
            case DeviceEnded():
                return [*self._step(self.session.end_of_stream(), now), Continue(ReaderStopped(event.generation,
                        event.failed, now))]  # fmt: skip
            case ReaderStopped():
                if event.failed:
                    self.machine.handle(StationEvent.READER_FAILED, now)  # told with the link's loss below
                if self.linked and event.generation == self.generation:
                    self.running = False
                    return self._on(StationEvent.LINK_CLOSED, now)
                return []  # a stale reader: untold
            case LinkUp():
                self.linked = True
                return self._on(StationEvent.LINK_OPENED, now)
            case LinkDown():
                self.linked = False
                return []
            case LinkClosed():
                return self._step(self.session.end_of_stream(), now) if self.session.dealing else []
            case LinkFailed():
                self.machine.handle(StationEvent.LINK_CLOSED, now)
                return self.announce()
            case WriteTurn():
                return self._write_turn(event.item, now)
            case WriteSucceeded():
                return self._write_succeeded(event.item, event.committed, now)
            case WriteRefused():
                return self._write_refused(event.item, event.error, now)
            case WriteUnavailable():
                return self._write_unavailable(event.item, event.error, now)
            case CommitCounted():
                return self._commit_counted(event, now)
            case ProgressRead():
                return self._progress_read(event, now)
            case DealRequested():
                return self._on(StationEvent.DEAL_REQUESTED, now)
            case DealRefused():
                return self._deal_refused(event.error, event.raise_refusal, now)
            case BoardRecorded():
                return self._board_recorded(event, now)
            case BoardNotRecorded():
                return self._board_not_recorded(event, now)
            case Tick():
                return self._tick(now)
            case Interrupted():
                return self._interrupted(event.detail, now)
            case _:
                return self._judge(event, now)

    def _judge(self, event: Event, now: float) -> list[Command]:
        """The judge's commands and the continuations of their steps."""
        match event:
            case Connect():
                cmds: list[Command] = []
                if self.linked:
                    cmds += self._operator_void("the technical judge connected another device during the deal", now)
                    self.running = False
                    cmds.append(CloseDevice())
                self.generation += 1
                return [*cmds, Continue(Move(StationEvent.CONNECT, now)), OpenDevice(self.generation)]
            case Disconnect():
                self.running = False
                cmds = self._operator_void("the technical judge disconnected the device during the deal", now)
                return [*cmds, CloseDevice(), Continue(Move(StationEvent.LINK_CLOSED, now))]
            case Reset():
                self.running = False
                cmds = self._operator_void("the technical judge reset the station during the deal", now)
                return [*cmds, Continue(ResetDone(now))]
            case ResetDone():
                return self._on(StationEvent.RESET if self.linked else StationEvent.LINK_CLOSED, now)
            case Start():
                if not self.linked:
                    return [Refuse(f"station {self.name}: connect a device first")]
                if self.running:  # pressed again while dealing: the station's own loop asks for each next deal
                    return []  # (a second request could cross it between two deals, the machine answer busy)
                self.running = True
                return [] if self.session.dealing else self._next_deal(now, raise_refusal=True)
            case Pause():
                self.running = False
                return self._on(StationEvent.PAUSE, now)
            case Stop():
                self.running = False
                return [AbortDevice(tolerant=False), Continue(StopDevice(now))] if self.linked else self._stop(now)
            case StopDevice():
                return self._stop(now)
            case Redeal():
                if not self.linked:
                    return [Refuse(f"station {self.name}: connect a device first")]
                if self.session.dealing:
                    return [Refuse(f"station {self.name}: a deal is in progress")]
                self.running = True
                return self._next_deal(now, raise_refusal=True)
            case InjectFault():
                if not self.linked:
                    return [Refuse(f"station {self.name}: connect a device first")]
                return [InjectDeviceFault(event.kind)]
            case ShowCards():
                if event.show and self.closed:
                    return [Refuse(f"station {self.name}: variant 1 is closed dealing: its cards are never shown")]
                if event.show and not self.show_cards:  # recorded before anything is shown
                    data: JsonObject = {"station": self.name, "by": event.who, "attempt": self.session.attempts,
                                        "time": now}  # fmt: skip
                    return [RecordCardsShown(data), Continue(CardsShownRecorded(now))]
                self.show_cards = event.show
                return [SendState()]
            case CardsShownRecorded():
                self.show_cards = True
                return [SendState()]
            case RetryPending():
                if not self.pending:
                    return [Refuse(f"station {self.name}: no ledger write is waiting for the bank")]
                self.retry_due = now
                return [Wake()]
            case VoidPending():
                return self._void_pending(event.who, now)
            case Move():
                return self._on(event.event, now)
        raise TypeError(f"the station core has no rule for {event!r}")  # pragma: no cover - the union is matched

    # -- the public and the judge's views ------------------------------------------------------------------------
    def announce(self) -> list[Command]:
        variant, status = int(self.session.variant), self.status.value
        return [Publish(station_message(self.name, variant, self.session.open_count, status))]

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
        t = self.done_times
        return (t[-1] - t[0]) / (len(t) - 1) if len(t) >= 2 else None

    def state(self, device: DeviceView, boards: Boards | None) -> JsonObject:
        st: JsonObject = {
            "type": "station",
            "station": self.name,
            "status": self.status.value,
            "running": self.running,
            "in_deal": self.session.dealing,
            "variant": int(self.session.variant),
            "open_count": self.session.open_count,
            "device": device.info,
            "device_status": device.status,
            "can_inject": device.can_inject,
            "attempt": self.session.attempts,
            "cards_dealt": self.session.cards_dealt,
            "committed": self.committed,
            "last_bank_deal": self.last_bank_deal,
            "target": boards.total if boards is not None else self.regulation.bank_target,
            "closed": boards is not None,
            "boards_made": boards.made if boards is not None else None,
            "pace": self.pace(),
            "show_cards": self.show_cards,
            "faults": list(self.faults)[:20],
            "voided": list(self.voided)[:50],
            "pending": self.pending.views(),
            "health": self.health(),
        }
        if self.show_cards:
            st["current"] = [{"position": p, "seat": SEATS[s], "card": int(c)} for p, s, c in self.current]
        return st

    def view(self, device: DeviceView, boards: Boards | None) -> StationView:
        st = self.state(device, boards)
        return (StationViewShown if "current" in st else StationView).model_validate(st)

    # -- status ------------------------------------------------------------------------------------------------------
    def _on(self, event: StationEvent, now: float) -> list[Command]:
        """The status moves by ``event``: a change is announced to the audience, the judge gets the state."""
        step = self.machine.handle(event, now)
        cmds: list[Command] = []
        if step.changed:
            cmds += self.announce()
            if step.after is StationStatus.TARGET_REACHED and not self.closed:  # the bank is formed: none of its
                cmds.append(Publish({"type": "cleared", "station": self.name}))  # deals stays on the pages
        cmds.append(SendState())
        return cmds

    def _carry(self, nxt: Next, now: float) -> list[Command]:
        """Carry out what ``dealer.app.station_steps`` decided (the next deal: its refusal is a fault)."""
        if nxt.stop_running:
            self.running = False
        if nxt.do is Do.SEND_STATE:
            return [SendState()]
        if nxt.do is Do.EVENT and nxt.event is not None:
            return self._on(nxt.event, now)
        if nxt.do is Do.NEXT_DEAL:
            return self._next_deal(now, raise_refusal=False)
        return []

    def _fault(self, key: str, params: JsonObject, kind: str, now: float) -> list[Command]:
        entry = {"time": now, "station": self.name, "key": key, "params": params, "kind": kind}
        self.faults.appendleft(entry)
        return [Tell(OperatorFault.model_validate(entry))]

    # -- the next deal ----------------------------------------------------------------------------------------------
    def _next_deal(self, now: float, *, raise_refusal: bool) -> list[Command]:
        if self.pending:  # the bank is not taking writes: deal no more until it does (retried by the ticks)
            return self._on(StationEvent.WRITE_HELD, now)
        return [ReadProgress(NextDeal(raise_refusal))]

    def _progress_read(self, event: ProgressRead, now: float) -> list[Command]:
        then, made, target = event.then, event.made, event.target
        if isinstance(then, AfterVoid):
            nxt = after_void(running=self.running, auto_redeal=self.config.auto_redeal, by_device=then.by_device,
                             by_operator=then.by_operator, made=made, committing=self.committing,
                             target=target)  # fmt: skip
            return self._carry(nxt, now)
        nxt = before_next_deal(made=made, committing=self.committing, target=target, linked=self.linked)
        if nxt.do is not Do.REQUEST_DEAL:
            return self._carry(nxt, now)
        # a machine deals; a manual station (can_deal False) arms its reader for the operator's next deal
        return [RequestDeal(then.raise_refusal)]

    def _deal_refused(self, error: str, raise_refusal: bool, now: float) -> list[Command]:
        """The device is reconnecting, refuses, does not answer: the judge decides."""
        self.running = False
        cmds = self._on(StationEvent.DEVICE_REFUSED, now)
        text = f"station {self.name}: {error}"
        if raise_refusal:
            return [*cmds, Refuse(text)]
        return cmds + self._fault("guide.fault", {"kind": "other", "pos": 0, "n": 0, "detail": text}, "other", now)

    # -- the device's steps ------------------------------------------------------------------------------------------
    def _step(self, step: Step, now: float) -> list[Command]:
        cmds: list[Command] = []
        voids = any(isinstance(op, DealVoided) for op in step.operator)
        for pub in step.public:
            if isinstance(pub, PublicDealVoided):
                continue  # published after the ledger has the void
            if self.closed and isinstance(pub, PublicCardOpen | PublicCardHidden):
                continue  # variant 1: nothing of any card is public, not even where a hidden one went
            if isinstance(pub, PublicDealStarted):
                self.voided_deal = None
                cmds.append(MarkDealing(pub.attempt, now))
            cmds.append(Publish(from_projection(self.name, pub)))
        for op in step.operator:
            if isinstance(op, CardAccepted):
                self.cards_read += 1
                self.current.append((op.position, op.seat, op.card))
                seat = SEATS[op.seat]
                if self.show_cards:
                    cmds.append(Tell(OperatorCardShown(station=self.name, attempt=op.attempt, position=op.position,
                                                       seat=seat, open=op.open, card=int(op.card))))  # fmt: skip
                else:
                    cmds.append(Tell(OperatorCard(station=self.name, attempt=op.attempt, position=op.position,
                                                  seat=seat, open=op.open)))  # fmt: skip
            elif isinstance(op, FaultReported):
                late = not self.session.dealing and op.deal_id is not None and op.deal_id == self.voided_deal
                if late and not voids:
                    continue  # the device's own report of the fault that has just voided this deal: one fault
                self.fault_counts[op.kind.value] += 1
                if not voids:  # a fault that voids a deal is reported once, with the void's guidance
                    key = f"guide.{op.kind.value}" if op.kind.value in FAULT_GUIDES else "guide.fault"
                    params = {"kind": op.kind.value, "pos": (op.position or 0) + 1, "n": 0, "detail": op.detail}
                    cmds += self._fault(key, params, op.kind.value, now)
            elif isinstance(op, DealVoided):
                cmds += self._voided(op, now)
            elif isinstance(op, DealComplete):
                self.done_times.append(now)
                cmds += self._board(op) if self.closed else self._complete(op, now)
        return cmds

    def _operator_void(self, detail: str, now: float) -> list[Command]:
        """The judge's action voids the deal in progress (first: the device's echo is late)."""
        if not self.session.dealing:
            return []
        cmds = self._step(self.session.abort(detail, VoidReason.OPERATOR), now)
        return [*cmds, AbortDevice(tolerant=True)] if self.linked else cmds

    def _stop(self, now: float) -> list[Command]:
        cmds = self._step(self.session.abort("stopped by the technical judge"), now)
        return [*cmds, Continue(Move(StationEvent.STOP, now))]

    def _voided(self, op: DealVoided, now: float) -> list[Command]:
        self.current = []
        self.voided_deal = op.deal_id
        device = op.reason not in NOT_THE_DEVICE
        if device:
            self.errors += 1
        if device and op.reason not in (VoidReason.FAULT, VoidReason.DISCONNECTED):
            self.fault_counts[op.reason.value] += 1
        detail: JsonObject = {"attempt": op.attempt, "device_deal": op.deal_id, "cards_dealt": op.cards_dealt,
                              "detail": op.detail}  # fmt: skip
        if op.position is not None:
            detail["position"] = op.position + 1
        cmds: list[Command] = [Write(LedgerWrite("void", op.attempt, now, reason=op.reason.value, detail=detail))]
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
        entry = {"time": now, "attempt": op.attempt, "reason": op.reason.value, "cards_dealt": op.cards_dealt,
                 "key": key, "params": params}  # fmt: skip
        self.voided.appendleft(entry)
        if device:
            cmds += self._fault(key, params, str(params["kind"]), now)
        by_operator = op.reason is VoidReason.OPERATOR  # the judge's action sets the status
        return [*cmds, ReadProgress(AfterVoid(by_device=device, by_operator=by_operator))]

    def _complete(self, op: DealComplete, now: float) -> list[Command]:
        self.current = []
        self.committing += 1
        # the machine deals the next deal while this one goes to disk
        cmds = self._next_deal(now, raise_refusal=False) if self.running else []
        source = DealSource(kind="station", station=self.name, variant=op.variant, shown_cards=op.shown_cards,
                            dealing_order=op.dealing_order)  # fmt: skip
        return [*cmds, Write(LedgerWrite("commit", op.attempt, now, deal=op.deal, source=source))]

    def _board(self, op: DealComplete) -> list[Command]:
        """Variant 1: the deal went face down into the next board; recorded for the hand records, never banked."""
        self.current = []
        return [RecordBoard(op.attempt, op.deal)]

    def _board_recorded(self, event: BoardRecorded, now: float) -> list[Command]:
        self.committed += 1
        cmds: list[Command] = [Unmark(), Publish(board_message(self.name, event.board, event.boards))]
        cmds.append(Tell(OperatorBoard(station=self.name, board=event.board, boards=event.boards)))
        return cmds + self._carry(after_board(complete=event.complete, running=self.running), now)

    def _board_not_recorded(self, event: BoardNotRecorded, now: float) -> list[Command]:
        """The session's boards are all made, or the disk refused: say so, deal no more."""
        self.running = False
        cmds: list[Command] = [Log(logging.WARNING, f"station {self.name}: board not recorded: {event.error}")]
        cmds += [Unmark(), Publish(from_projection(self.name, PublicDealVoided(event.attempt, BANK_REFUSED)))]
        cmds += self._fault("guide.bank_refused", {"detail": event.error}, BANK_REFUSED, now)
        return cmds + self._on(StationEvent.TARGET_REACHED if event.complete else StationEvent.BOARD_REFUSED, now)

    def _interrupted(self, detail: JsonObject, now: float) -> list[Command]:
        entry = {"time": now, "attempt": 0, "reason": INTERRUPTED, "cards_dealt": 0, "key": f"guide.{INTERRUPTED}",
                 "params": {}}  # fmt: skip
        self.voided.appendleft(entry)
        return [Write(LedgerWrite("void", 0, now, reason=INTERRUPTED, detail=detail))]

    # -- ledger writes: one ordered queue, retried until the bank takes them -------------------------------------
    def _queued(self, item: LedgerWrite) -> bool:
        """Is ``item`` the head of the waiting writes (an attempt of the queue, not a write tried at once)?"""
        return bool(self.pending) and self.pending.head() is item

    def _attempt(self, item: LedgerWrite, now: float) -> list[Command]:
        if item.kind == "commit":
            self.slot.handle(SlotEvent.COMMIT_SENT, now)
            return [CommitDeal(item)]
        self.slot.handle(SlotEvent.VOID_SENT, now)
        return [RecordVoid(item)]

    def _write_turn(self, item: LedgerWrite, now: float) -> list[Command]:
        """Write now, or queue behind earlier writes the bank has not taken yet (order kept)."""
        if self.pending.attempt_now():
            return self._attempt(item, now)
        return self._hold(item, now)

    def _hold(self, item: LedgerWrite, now: float) -> list[Command]:
        self.pending.hold(item)
        cmds: list[Command] = []
        if self.pending.head() is item and item.tries:  # the first of the queue: retried after its pause
            cmds += self._schedule(item, now)
        if self.status is StationStatus.PAUSED and not self.running:  # a deal the judge's pause let finish:
            self.paused_under_wait = True  # still paused after
        return self._on(StationEvent.WRITE_HELD, now) + cmds

    def _schedule(self, head: LedgerWrite, now: float) -> list[Command]:
        """The head of the queue has failed ``tries`` times: the judge sees the queue, it is tried again later."""
        self.retry_due = retry_at(head.tries, now)
        return [SendState(), RetryAt(self.retry_due)]

    def _tick(self, now: float) -> list[Command]:
        if not self.pending or (self.retry_due is not None and now < self.retry_due):
            return []
        self.retry_due = None
        return self._attempt(self.pending.head(), now)

    def _write_succeeded(self, item: LedgerWrite, committed: CommittedDeal | None, now: float) -> list[Command]:
        self.slot.handle(SlotEvent.LANDED, now)
        if item.kind == "commit":
            assert committed is not None
            item.banked = True
            self.committing -= 1
            self.committed += 1
            self.last_bank_deal = committed.deal_id
            return [Unmark(), CountCommit(item, committed)]  # told once the copy and the count are read
        cmds: list[Command] = [Unmark(), Publish(from_projection(self.name, PublicDealVoided(item.attempt,
                               item.reason)))]  # fmt: skip
        if item.reason in (BANK_REFUSED, BANK_UNAVAILABLE) and not self.session.dealing and not self.pending:
            cmds += self._on(StationEvent.LOST_DEAL_VOIDED, now)
        return cmds + self._drained(item, now)

    def _commit_counted(self, event: CommitCounted, now: float) -> list[Command]:
        item, committed, formed, target = event.item, event.committed, event.formed, self.regulation.bank_target
        size = committed.ledger_index + 1
        told = PublicDealCommitted(item.attempt, committed.deal_id, committed.ledger_head, formed)
        cmds: list[Command] = [Publish(from_projection(self.name, told))]
        cmds.append(Publish(bank_message(formed, target, committed.ledger_head, size)))
        cmds.append(Tell(OperatorCommitted(station=self.name, bank_deal=committed.deal_id, formed=formed,
                                           ledger_head=committed.ledger_head, copied=event.copied)))  # fmt: skip
        nxt = after_commit(waiting=bool(self.pending), running=self.running, formed=formed, target=target)
        return cmds + self._carry(nxt, now) + self._drained(item, now)

    def _write_refused(self, item: LedgerWrite, error: str, now: float) -> list[Command]:
        """Refused for good (a duplicate of a banked deal): a commit becomes its deal's void, tried at once."""
        self.slot.handle(SlotEvent.LANDED, now)
        if item.kind != "commit":
            cmds: list[Command] = [Log(logging.ERROR, f"station {self.name}: the bank refused a void entry: {error}")]
            cmds += self._fault("guide.bank_refused", {"detail": error}, BANK_REFUSED, now)
            return cmds + self._drained(item, now)
        cmds = [Log(logging.WARNING, f"station {self.name}: bank refused the deal: {error}")]
        self.committing -= 1  # not a device error: health counts only what the device got wrong
        cmds += self._fault("guide.bank_refused", {"detail": error}, BANK_REFUSED, now)
        self.pending.refused(item, error)
        return cmds + self._attempt(item, now)

    def _write_unavailable(self, item: LedgerWrite, error: str, now: float) -> list[Command]:
        self.slot.handle(SlotEvent.LANDED, now)
        queued = self._queued(item)
        tell, _ = self.pending.failed(item, error, now)
        cmds: list[Command] = []
        if tell:  # shown once per new trouble, not on every retry
            cmds.append(Log(logging.WARNING, f"station {self.name}: the bank cannot take the {item.kind} now: {error}"))
            n = len(self.pending) + 1
            cmds += self._fault("guide.bank_waiting", {"detail": error, "n": n}, BANK_WAITING, now)
        return cmds + (self._schedule(item, now) if queued else self._hold(item, now))

    def _drained(self, item: LedgerWrite, now: float) -> list[Command]:
        """``item`` is done: if it was the head of the queue, the next is tried (now, or after its pause), or —
        the queue empty — the bank is back."""
        if not self._queued(item):
            return []
        self.pending.done()
        if self.pending:
            head = self.pending.head()
            return self._schedule(head, now) if head.tries else self._attempt(head, now)
        self.retry_due = None
        cmds = self._fault("guide.bank_back", {}, "bank_back", now)
        paused, self.paused_under_wait = self.paused_under_wait, False
        nxt = after_drain(status=self.status, dealing=self.session.dealing, running=self.running,
                          paused_under_wait=paused)  # fmt: skip
        return cmds + self._carry(nxt, now)

    def _void_pending(self, who: str, now: float) -> list[Command]:
        """The judge gives up the deals waiting for the bank; each is voided with a ledger entry (queued too).

        A commit already in the bank's thread cannot be stopped: the void waits for that attempt to end
        (``AwaitLanding``), so what it answers (and the state it sends) is what the ledger will hold — the deal
        banked (not counted), or voided."""
        if self.slot.handle(SlotEvent.VOID_ASKED, now).command is SlotCommand.AWAIT_LANDING:
            return [AwaitLanding()]
        n = self.pending.give_up(who)  # each waiting commit becomes a void entry in its place
        self.committing -= n
        if not n:
            return [Refuse(f"station {self.name}: no dealt deal is waiting for the bank")]
        self.retry_due = now
        return [Wake(), SendState(), Answer(n)]
