"""The public projection: everything the audience may ever learn about a deal being dealt.

These types are the only thing the web layer turns into public messages. A hidden card is represented by
``PublicCardHidden``, which has no field that could hold the card's identity: only its position in the deal,
the seat it went to and how many hidden cards that seat now holds. No code downstream can therefore turn a
hidden card into an open one; the decision is made once, in ``DealingSession``.
"""

from __future__ import annotations

from dataclasses import dataclass

from dealer.core.cards import Card, Seat


@dataclass(frozen=True, slots=True)
class PublicDealStarted:
    attempt: int  # the station's dealing attempt number (1, 2, ...), counting voided attempts
    variant: int
    open_count: int  # how many cards of this deal will be shown (0, K or 52)


@dataclass(frozen=True, slots=True)
class PublicCardOpen:
    attempt: int
    position: int
    seat: Seat
    card: Card


@dataclass(frozen=True, slots=True)
class PublicCardHidden:
    attempt: int
    position: int
    seat: Seat
    hidden_in_seat: int  # card backs that seat now shows


@dataclass(frozen=True, slots=True)
class PublicDealVoided:
    attempt: int
    reason: str  # a VoidReason value; never a card


@dataclass(frozen=True, slots=True)
class PublicDealCommitted:
    attempt: int
    bank_deal: int  # the bank's number for the deal
    ledger_head: str
    formed: int  # deals in the bank now


PublicEvent = PublicDealStarted | PublicCardOpen | PublicCardHidden | PublicDealVoided | PublicDealCommitted
