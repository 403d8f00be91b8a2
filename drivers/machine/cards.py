"""What the driver makes of the cards a machine reports: one operation's :class:`DealCheck`, and a broken rule
worded as the machine fault the judge reads (pure: no I/O, no clock)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from dealer.core import Card, Deal, Seat
from dealer.core.dealcheck import CARDS, DealCheck, Problem, Verdict
from dealer.core.events import DealEnded, DeviceFault, FaultKind
from firmware_protocol.messages import FaultCode


def card_name(card: int | None) -> str:
    return "unreadable" if card is None else Card(card).name


def seat_name(pocket: int | None) -> str:
    return "-" if pocket is None else Seat(pocket).name


def fault_kind(code: int) -> FaultKind:
    """The event vocabulary's fault for a protocol FAULT code (OTHER for a code this host does not know)."""
    try:
        return FaultKind[FaultCode(code).name]
    except (ValueError, KeyError):
        return FaultKind.OTHER


@dataclass(slots=True)
class Operation:
    """One deal or one board copy in progress on the machine."""

    deal_id: int
    board: int | None = None
    copy: int | None = None
    target: Deal | None = None  # the board's deal: every card must go into its seat
    check: DealCheck = field(init=False)
    outcome: asyncio.Future[DeviceFault | DealEnded] | None = None
    # the host's watch on a quiet device (monotonic time of the last report, what it was, DEAL_START seen)
    last_report: float = 0.0
    last_what: str = ""
    started: bool = False

    def __post_init__(self) -> None:
        self.check = DealCheck(self.target)


@dataclass(frozen=True, slots=True)
class Void:
    """Why the driver voids an operation: a fault kind, its detail, and the card involved."""

    kind: FaultKind
    detail: str
    position: int | None = None
    card: int | None = None
    pocket: int | None = None


def card_void(op: Operation, verdict: Verdict) -> Void | None:
    """The fault for a card that broke a rule; None for an unreadable card (reported at the deal's end)."""
    p, card, pocket = verdict.position, verdict.card, verdict.seat
    match verdict.problem:
        case Problem.UNREADABLE:
            return None
        case Problem.GAP:
            return Void(FaultKind.MISSING_CARD, f"card positions jump from {verdict.number} to {p}", p)
        case Problem.REPEATED:
            detail = f"position {p} reported again (the next was {verdict.number}) (PROTOCOL.md §8)"
            return Void(FaultKind.PROTOCOL, detail, p, card, pocket)
        case Problem.NO_POCKET:
            return Void(FaultKind.PROTOCOL, f"card at position {p} reported without a pocket", p, card)
        case Problem.DUPLICATE:
            detail = (
                f"{card_name(card)} read twice: first into {seat_name(verdict.expected)}, again into "
                f"{seat_name(pocket)} at position {p}"
            )
            return Void(FaultKind.DUPLICATE_CARD, detail, p, card, pocket)
        case Problem.WRONG_POCKET:
            detail = (
                f"board {op.board} copy {op.copy}: {card_name(card)} went into {seat_name(pocket)}, "
                f"the deal puts it in {seat_name(verdict.expected)}"
            )
            return Void(FaultKind.WRONG_POCKET, detail, p, card, pocket)
        case Problem.SEAT_FULL:
            detail = f"{card_name(card)} would be the 14th card in pocket {seat_name(pocket)}"
            return Void(FaultKind.WRONG_POCKET, detail, p, card, pocket)
        case _:  # EXTRA
            return Void(FaultKind.EXTRA_CARD, f"a card after the 52nd, at position {p}", p, card, pocket)


def end_void(op: Operation, verdict: Verdict) -> Void:
    """The fault for a deal end that broke a rule (unreadable cards, cards never read, a count or record off)."""
    match verdict.problem:
        case Problem.UNREADABLE:
            return Void(FaultKind.UNREADABLE_CARD, f"unreadable card at position {verdict.position}", verdict.position)
        case Problem.SHORT:
            missing = [c for c in range(CARDS) if op.check.seats[c] > 3]
            names = " ".join(card_name(c) for c in missing)
            first, where = verdict.card, verdict.expected
            detail = (
                f"{len(missing)} card(s) never read: {names} (the machine's record puts {card_name(first)} "
                f"in {seat_name(where)})"
            )
            return Void(FaultKind.MISSING_CARD, detail, None, first, where)
        case Problem.COUNT:
            counted = verdict.number or 0
            kind = FaultKind.EXTRA_CARD if counted > CARDS else FaultKind.MISSING_CARD
            return Void(kind, f"the machine counted {counted} cards, 52 were read")
        case _:  # RECORD
            if verdict.card is None:
                return Void(FaultKind.PROTOCOL, "the machine's record of the deal is not 13 bytes")
            detail = (
                f"the machine's record puts {card_name(verdict.card)} in {seat_name(verdict.expected)}, "
                f"it was read into {seat_name(verdict.seat)}"
            )
            return Void(FaultKind.WRONG_POCKET, detail, None, verdict.card, verdict.expected)
