"""Seals: signed checkpoints of the ledger (its size, Merkle root and last deal), kept as ``seal`` entries.

A seal has no table of its own: the ledger holds it. ``Seals`` reads and makes them over ``LedgerTable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from dealer.integrity.ledger import Entry, EntryKind, canonical_json, checkpoint

from .ledger_table import LedgerTable
from .schema import Connection

if TYPE_CHECKING:  # cryptography loads with the keyring: reading the bank goes without it
    from dealer.custody import Keyring


class Seal(NamedTuple):
    """A seal as the ledger holds it (a named tuple, as ``api.DealSource``)."""

    ledger_index: int  # where the seal entry itself is
    size: int  # entries covered: 0 .. size-1
    root: str
    ts: str
    last_deal: int
    signature: str
    public_key: str


def seal_from_entry(entry: Entry) -> Seal:
    cp = entry.data["checkpoint"]
    return Seal(
        entry.index,
        cp["size"],
        cp["root"],
        cp["ts"],
        cp["last_deal"],
        entry.data["signature"],
        entry.data["public_key"],
    )


class Seals:
    def __init__(self, ledger: LedgerTable) -> None:
        self.ledger = ledger

    def make(self, db: Connection, bank_id: str, key: Keyring, last_deal: int, ts: str) -> Seal:
        """Sign a checkpoint of the whole ledger so far (inside the caller's transaction) and append it."""
        from dealer.integrity.merkle import merkle_root  # with hashlib: reading the bank hashes nothing

        last, _ = self.ledger.head(db)
        size = last + 1
        root = merkle_root(self.ledger.leaves(db, size))
        cp = checkpoint(bank_id, size, root, ts, last_deal)
        signature = key.sign(canonical_json(cp))
        pub = key.public_key
        entry = self.ledger.append(
            db, EntryKind.SEAL, {"checkpoint": cp, "public_key": pub, "signature": signature}, ts
        )
        return Seal(entry.index, size, root.hex(), ts, last_deal, signature, pub)

    def all(self, db: Connection) -> list[Seal]:
        return [seal_from_entry(e) for e in self.ledger.of_kind(db, EntryKind.SEAL)]

    def latest(self, db: Connection) -> Seal | None:
        entry = self.ledger.latest_of_kind(db, EntryKind.SEAL)
        return None if entry is None else seal_from_entry(entry)
