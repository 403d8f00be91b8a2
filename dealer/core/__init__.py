"""The pure domain core: cards, hands, deals, numbering and boards. No I/O here."""

from .boards import Board, Vulnerability, board_dealer, board_vulnerability
from .cards import ALL_CARDS, Card, Rank, Seat, Suit
from .deal import Deal, Hand, PartialDeal, format_pbn_deal, parse_pbn_deal
from .errors import (
    BoardNumberError,
    CardTokenError,
    DealerError,
    DealError,
    DealNumberError,
    DuplicateCardError,
    HandSizeError,
)
from .numbering import DEAL_COUNT, deal_from_rank, deal_rank

__all__ = [
    "ALL_CARDS",
    "DEAL_COUNT",
    "Board",
    "BoardNumberError",
    "Card",
    "CardTokenError",
    "Deal",
    "DealError",
    "DealNumberError",
    "DealerError",
    "DuplicateCardError",
    "Hand",
    "HandSizeError",
    "PartialDeal",
    "Rank",
    "Seat",
    "Suit",
    "Vulnerability",
    "board_dealer",
    "board_vulnerability",
    "deal_from_rank",
    "deal_rank",
    "format_pbn_deal",
    "parse_pbn_deal",
]
