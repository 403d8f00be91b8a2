"""The pure domain core: cards, hands, deals, numbering and boards. No I/O here.

The errors load with the package; cards, deals, numbering and boards when one of their names is first used
(``from dealer.core import Deal``): a module that needs only ``dealer.core.errors`` (the command line's start,
its help) goes without them and the dataclasses machinery they are built on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import (
    BoardNumberError,
    CardTokenError,
    DealerError,
    DealError,
    DealNumberError,
    DuplicateCardError,
    HandSizeError,
)
from .lazy import lazy_names

if TYPE_CHECKING:
    from .boards import Board, Vulnerability, board_dealer, board_vulnerability
    from .cards import ALL_CARDS, Card, Rank, Seat, Suit
    from .deal import Deal, Hand, PartialDeal, format_pbn_deal, parse_pbn_deal
    from .numbering import DEAL_COUNT, deal_from_rank, deal_rank

_MODULES = {
    "boards": ("Board", "Vulnerability", "board_dealer", "board_vulnerability"),
    "cards": ("ALL_CARDS", "Card", "Rank", "Seat", "Suit"),
    "deal": ("Deal", "Hand", "PartialDeal", "format_pbn_deal", "parse_pbn_deal"),
    "numbering": ("DEAL_COUNT", "deal_from_rank", "deal_rank"),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}
__getattr__ = lazy_names(__name__, _WHERE)  # a name of cards, deals, numbering or boards, imported on first use


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
