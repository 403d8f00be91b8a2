"""The pure domain core: cards, hands, deals, numbering and boards. No I/O here.

The errors load with the package; cards, deals, numbering and boards when one of their names is first used
(``from dealer.core import Deal``): a module that needs only ``dealer.core.errors`` (the command line's start,
its help) goes without them and the dataclasses machinery they are built on.
"""

from __future__ import annotations

import importlib
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


def __getattr__(name: str) -> object:
    """A name of cards, deals, numbering or boards, its module imported on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


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
