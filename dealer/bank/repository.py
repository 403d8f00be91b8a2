"""The bank as a whole: the repository interface, made of the narrow protocols of ``protocols``.

``composed.Bank`` implements it over any engine (``SqliteBank``, ``PostgresBank``); a caller that needs only a
part types that part (``Ledger``, ``Draws``, …). The records it returns are the table modules' (``deals``,
``draws``, ``seals``) and ``dealer.integrity.ledger``'s.
"""

from __future__ import annotations

from typing import Protocol

from dealer.integrity.ledger import DealEntry, Entry

from .deals import DealRow, DealState, ImportItem, ImportOutcome, StoredDeal
from .draws import ChainCheck, DrawRecord, DrawRow, DrawState, PriorDraw
from .ledger_table import LedgerRow
from .protocols import Copies, Custody, Deals, Draws, Imports, Ledger, Opened, Seals, Tables
from .seals import Seal

__all__ = [  # the interface and the records it deals in: what the rest of the project imports
    "BankRepository",
    "ChainCheck",
    "Copies",
    "Custody",
    "DealEntry",
    "DealRow",
    "DealState",
    "Deals",
    "DrawRecord",
    "DrawRow",
    "DrawState",
    "Draws",
    "Entry",
    "ImportItem",
    "ImportOutcome",
    "Imports",
    "Ledger",
    "LedgerRow",
    "Opened",
    "PriorDraw",
    "Seal",
    "Seals",
    "StoredDeal",
    "Tables",
]


class BankRepository(Ledger, Deals, Imports, Seals, Custody, Draws, Copies, Tables, Opened, Protocol):
    """The whole bank: every narrow protocol of ``protocols`` at once (``composed.Bank`` over any engine)."""
