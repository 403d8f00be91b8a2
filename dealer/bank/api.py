"""What a dealt deal is to the bank (``DealSource``, ``CommittedDeal``) and ``BankApi``, the smallest view of it:
what a dealing station needs to commit and void. The whole bank is ``repository.BankRepository``, made of the
narrow protocols of ``protocols``; ``composed.Bank`` implements them over any engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from dealer.core.json_types import JsonObject

if TYPE_CHECKING:  # the cards' classes load when a deal is read: ``dealer bank status`` goes without them
    from dealer.core import Deal


class DealSource(NamedTuple):
    """Where a deal came from: a dealing station (and the variant it dealt under) or an imported file.

    This, ``CommittedDeal`` and the bank's other records are named tuples, not dataclasses: the bank's modules
    are what ``dealer bank status`` loads, and the dataclasses machinery (with ``inspect``) would cost its start a
    third of a bare Python's."""

    kind: str  # "station" or "import"
    station: str | None = None
    variant: int | None = None
    shown_cards: int = 0  # how many cards were shown publicly while it was dealt
    file: str | None = None
    board: int | None = None
    dealing_order: bytes | None = None  # card indices in the order dealt, when the device reports it
    line: int | None = None  # imports: the line (text formats) or byte offset of the record in ``file``
    file_sha256: str | None = None  # imports: SHA-256 of the file's bytes (the ledger holds this and its base name)


class CommittedDeal(NamedTuple):
    deal_id: int  # the bank's own number, 1, 2, ...
    commitment: str  # hex SHA-256(salt ‖ canonical deal)
    ledger_index: int
    ledger_head: str  # hex hash of the ledger head after this entry


class BankApi(Protocol):
    def commit_deal(self, deal: Deal, source: DealSource) -> CommittedDeal:
        """Store the deal and its ledger entry durably (fsync) before returning. Refuses a duplicate."""
        ...

    def void_deal(self, reason: str, station: str | None, detail: JsonObject | None = None) -> int:
        """Record a voided deal in the ledger; returns the ledger index."""
        ...

    def record_event(self, kind: str, payload: JsonObject) -> int:
        """Append any other event (cards shown on the judge console, export, ...) to the ledger."""
        ...

    def deal_count(self) -> int: ...

    def ledger_head(self) -> str: ...
