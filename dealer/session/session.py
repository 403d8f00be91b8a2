"""One station's dealing session: consumes device events, accepts or voids deals, decides what is public.

Pure: no clock, no I/O. Feed it ``dealer.core.events`` one at a time with ``feed``; each call returns a
``Step`` with the public projection (``PublicEvent``) and the operator's events (the technical judge's console,
the bank). A deal is accepted only when 52 distinct, readable cards arrived, 13 in each seat, in dealing order,
and the device closed it (``DealEnded``, whose own record, when given, must agree). Anything else voids it with a
reason and the session waits for a re-deal.

Seats come from the machine's pocket; for manual dealing (``pocket`` None) card ``i`` goes to seat
``(first + i) mod 4``, ``first`` being the seat left of the dealer (North by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from dealer.core.cards import Card, Seat
from dealer.core.deal import Deal
from dealer.core.dealcheck import DealCheck, Problem, Verdict
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
from dealer.regulation import DealingVariant

from .projection import (
    PublicCardHidden,
    PublicCardOpen,
    PublicDealStarted,
    PublicDealVoided,
    PublicEvent,
)


class VoidReason(Enum):
    DUPLICATE_CARD = "duplicate_card"
    SEAT_OVERFULL = "seat_overfull"  # a 14th card to a seat
    UNREADABLE_CARD = "unreadable_card"
    OUT_OF_ORDER = "out_of_order"  # a card at an unexpected position
    WRONG_DEAL = "wrong_deal"  # a card of another deal id
    SHORT_DEAL = "short_deal"  # the device closed the deal before 52 cards
    EXTRA_CARD = "extra_card"  # a 53rd card
    RECORD_MISMATCH = "record_mismatch"  # the machine's own record differs from what was read
    FAULT = "fault"
    DISCONNECTED = "disconnected"
    ABORTED = "aborted"
    OPERATOR = "operator"  # the technical judge connected, disconnected or reset the device during the deal
    STREAM_ENDED = "stream_ended"
    NEW_DEAL_STARTED = "new_deal_started"  # a new deal began before this one ended


# -- operator events (technical judge console, bank); may carry card identities ------------------------------


@dataclass(frozen=True, slots=True)
class CardAccepted:
    attempt: int
    deal_id: int
    position: int
    seat: Seat
    card: Card
    open: bool


@dataclass(frozen=True, slots=True)
class CardIgnored:
    """A card that arrived while no deal was being accepted (after a void, before a re-deal)."""

    deal_id: int
    position: int
    card: Card | None


@dataclass(frozen=True, slots=True)
class FaultReported:
    kind: FaultKind
    detail: str
    deal_id: int | None
    position: int | None
    card: Card | None
    seat: Seat | None


@dataclass(frozen=True, slots=True)
class DealVoided:
    attempt: int
    deal_id: int
    reason: VoidReason
    position: int | None  # the card (0-based) at which the deal went wrong, if one
    card: Card | None  # the card involved (operator only: may be a hidden card)
    seat: Seat | None
    detail: str
    cards_dealt: int
    dealing_order: bytes  # card indices accepted so far, in dealing order
    fault: FaultKind | None = None  # the device's fault, when a fault voided the deal


@dataclass(frozen=True, slots=True)
class DealComplete:
    attempt: int
    deal_id: int
    deal: Deal
    dealing_order: bytes
    shown_cards: int
    variant: int


OperatorEvent = CardAccepted | CardIgnored | FaultReported | DealVoided | DealComplete


@dataclass(slots=True)
class Step:
    public: list[PublicEvent] = field(default_factory=list)
    operator: list[OperatorEvent] = field(default_factory=list)


_FAULT_VOID = {FaultKind.ABORTED: VoidReason.ABORTED, FaultKind.DISCONNECTED: VoidReason.DISCONNECTED}


class DealingSession:
    """The dealing state machine of one station."""

    def __init__(
        self,
        station: str,
        variant: DealingVariant | int,
        open_cards: int | None = None,
        first_seat: Seat = Seat.N,
    ) -> None:
        self.station = station
        self.variant = DealingVariant(variant)
        if self.variant is DealingVariant.PARTIALLY_OPEN:
            if open_cards is None or not 0 <= open_cards <= 52:
                raise ValueError(f"variant 2 needs open_cards in 0..52, got {open_cards!r}")
            self.open_count = open_cards
        else:
            self.open_count = 0 if self.variant is DealingVariant.CLOSED else 52
        self.first_seat = first_seat
        self.attempts = 0
        self.accepted = 0
        self.voided = 0
        self._active = False
        self._deal_id = -1
        self._check = DealCheck(first_seat=self.first_seat)
        self._hidden = [0, 0, 0, 0]

    # -- state -------------------------------------------------------------------------------------------
    @property
    def dealing(self) -> bool:
        """A deal is in progress (started and neither accepted nor voided)."""
        return self._active

    @property
    def cards_dealt(self) -> int:
        return self._check.cards_read

    def is_open(self, position: int) -> bool:
        return position < self.open_count

    # -- input -------------------------------------------------------------------------------------------
    def feed(self, event: DeviceEvent) -> Step:
        step = Step()
        if isinstance(event, DealStarted):
            self._on_started(event.deal_id, step)
        elif isinstance(event, CardSeen):
            self._on_card(event, step)
        elif isinstance(event, DealEnded):
            self._on_ended(event, step)
        elif isinstance(event, DeviceFault):
            self._on_fault(event, step)
        elif isinstance(event, Disconnected):
            step.operator.append(
                FaultReported(FaultKind.DISCONNECTED, event.reason, event.deal_in_progress, None, None, None)
            )
            if self._active:
                self._void(step, VoidReason.DISCONNECTED, detail=event.reason)
        elif isinstance(event, Reconnected):
            pass
        else:  # pragma: no cover - the union is closed
            raise TypeError(f"not a device event: {event!r}")
        return step

    def end_of_stream(self) -> Step:
        """The device's event stream ended (driver closed, file ended): a deal in progress is void."""
        step = Step()
        if self._active:
            self._void(step, VoidReason.STREAM_ENDED, detail="the device stopped sending before the deal ended")
        return step

    def abort(self, detail: str = "aborted by the operator", reason: VoidReason = VoidReason.ABORTED) -> Step:
        step = Step()
        if self._active:
            self._void(step, reason, detail=detail)
        return step

    # -- transitions -------------------------------------------------------------------------------------
    def _begin(self, deal_id: int, step: Step) -> None:
        self.attempts += 1
        self._active = True
        self._deal_id = deal_id
        self._check = DealCheck(first_seat=self.first_seat)
        self._hidden = [0, 0, 0, 0]
        step.public.append(PublicDealStarted(self.attempts, int(self.variant), self.open_count))

    def _on_started(self, deal_id: int, step: Step) -> None:
        if self._active:
            self._void(
                step, VoidReason.NEW_DEAL_STARTED, detail=f"deal {deal_id} started before deal {self._deal_id} ended"
            )
        self._begin(deal_id, step)

    def _on_card(self, ev: CardSeen, step: Step) -> None:
        if not self._active:
            if ev.position == 0 and ev.deal_id != self._deal_id:
                self._begin(ev.deal_id, step)  # a device that does not announce deals
            else:
                step.operator.append(CardIgnored(ev.deal_id, ev.position, ev.card))
                return
        if ev.deal_id != self._deal_id:
            self._void(
                step,
                VoidReason.WRONG_DEAL,
                ev.position,
                ev.card,
                ev.pocket,
                f"card of deal {ev.deal_id} during deal {self._deal_id}",
            )
            return
        position = self._check.next_position
        verdict = self._check.card(ev.position, ev.card, ev.pocket)
        if verdict is not None:
            self._void_card(ev, verdict, position, step)
            return
        card = ev.card
        assert card is not None  # accepted: readable
        seat = Seat(self._check.seat_of(card))
        is_open = self.is_open(position)
        step.operator.append(CardAccepted(self.attempts, self._deal_id, position, seat, card, is_open))
        if is_open:
            step.public.append(PublicCardOpen(self.attempts, position, seat, card))
        else:
            self._hidden[seat] += 1
            step.public.append(PublicCardHidden(self.attempts, position, seat, self._hidden[seat]))

    def _void_card(self, ev: CardSeen, verdict: Verdict, position: int, step: Step) -> None:
        """A card broke a rule of :class:`DealCheck`: the deal is void, worded as the session words it."""
        problem = verdict.problem
        seat = None if verdict.seat is None else Seat(verdict.seat)
        if problem is Problem.EXTRA:
            self._void(step, VoidReason.EXTRA_CARD, ev.position, ev.card, ev.pocket, "a 53rd card")
        elif problem in (Problem.GAP, Problem.REPEATED):
            detail = f"expected card {position + 1}, got card {ev.position + 1}"
            self._void(step, VoidReason.OUT_OF_ORDER, ev.position, ev.card, ev.pocket, detail)
        elif problem is Problem.UNREADABLE:
            detail = "the reader could not read the card"
            self._void(step, VoidReason.UNREADABLE_CARD, position, None, ev.pocket, detail)
        elif problem is Problem.DUPLICATE:
            first = Seat(verdict.expected if verdict.expected is not None else 0)
            self._void(step, VoidReason.DUPLICATE_CARD, position, ev.card, seat, f"already dealt to {first.letter}")
        else:  # SEAT_FULL (a session has no intended deal, and a seat for every card)
            letter = seat.letter if seat is not None else "?"
            self._void(step, VoidReason.SEAT_OVERFULL, position, ev.card, seat, f"a 14th card to {letter}")

    def _on_ended(self, ev: DealEnded, step: Step) -> None:
        if not self._active or ev.deal_id != self._deal_id:
            if self._active:
                self._void(step, VoidReason.WRONG_DEAL, detail=f"deal {ev.deal_id} ended during deal {self._deal_id}")
            return
        verdict = self._check.end(ev.record)
        if verdict is not None and verdict.problem is Problem.SHORT:
            cards = self._check.cards_read
            self._void(step, VoidReason.SHORT_DEAL, detail=f"the device ended the deal after {cards} cards")
            return
        if verdict is not None:
            self._void(step, VoidReason.RECORD_MISMATCH, detail="the machine's own record differs from the cards read")
            return
        deal = self._check.deal()
        self._active = False
        self.accepted += 1
        step.operator.append(
            DealComplete(
                self.attempts, self._deal_id, deal, bytes(self._check.order), self.open_count, int(self.variant)
            )
        )

    def _on_fault(self, ev: DeviceFault, step: Step) -> None:
        step.operator.append(FaultReported(ev.kind, ev.detail, ev.deal_id, ev.position, ev.card, ev.pocket))
        if self._active:
            reason = _FAULT_VOID.get(ev.kind, VoidReason.FAULT)
            self._void(step, reason, ev.position, ev.card, ev.pocket, f"{ev.kind.value}: {ev.detail}", ev.kind)

    def _void(
        self,
        step: Step,
        reason: VoidReason,
        position: int | None = None,
        card: Card | None = None,
        seat: Seat | None = None,
        detail: str = "",
        fault: FaultKind | None = None,
    ) -> None:
        self._active = False
        self.voided += 1
        order = bytes(self._check.order)
        step.operator.append(
            DealVoided(self.attempts, self._deal_id, reason, position, card, seat, detail, len(order), order, fault)
        )
        step.public.append(PublicDealVoided(self.attempts, reason.value))
