"""The ``deals`` table: each deal's cards, salt, commitment and source, and where it stands (bank, drawn, played).

A deal is committed together with its ledger entry: ``DealsTable.commit`` and ``DealsTable.import_items``
build both rows in the caller's transaction. Deal ids run 1, 2, 3, … without gaps (``verify_bank`` checks it).

In a bank of format 3 most deals are in ``batches`` (a row per imported batch); every reader here sees them as
rows of this table (a batch's deal in the bank), and a deal that leaves the bank gets its row here (``mark_drawn``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from dealer.core.json_types import JsonObject
from dealer.integrity.ledger import Entry, EntryKind, canonical_json, commitment

from . import compact
from .api import CommittedDeal, DealSource
from .errors import BankError, DuplicateDealError
from .ledger_table import LedgerRow, LedgerTable, ledger_row
from .schema import Connection, insert_sql, select_sql

if TYPE_CHECKING:  # the cards' classes load with the first deal read: ``dealer bank status`` goes without them
    from dealer.core import Deal

SALT_SIZE = 16
BATCH = 500  # ids per ``IN (…)`` read
PAGE = 20000


class DealState(StrEnum):
    IN_BANK = "bank"
    DRAWN = "drawn"
    PLAYED = "played"


IN_BANK_TEXT = DealState.IN_BANK.value
_STATES = {state.value: state for state in DealState}


class DealRow(NamedTuple):
    """A row of ``deals`` as stored (columns in table order)."""

    deal_id: int
    ledger_index: int
    canonical: bytes
    salt: bytes
    commitment: bytes
    source: str  # canonical JSON of the public source (as in the ledger entry)
    dealing_order: bytes | None
    created: str
    state: str
    session: str | None


class StoredDeal(NamedTuple):
    """A deal as the bank keeps it (director only: it holds the cards). A named tuple, as ``api.DealSource``."""

    deal_id: int
    ledger_index: int
    deal: Deal
    salt: bytes
    commitment: bytes
    source: JsonObject
    dealing_order: bytes | None
    created: str
    state: DealState
    session: str | None

    @classmethod
    # Any: a sqlite3/psycopg row's column values, typed here field by field as they are unpacked
    def of(cls, row: Sequence[Any], batch: tuple[int, str] | None = None) -> StoredDeal:
        """From a row in ``DealRow``'s column order (a ``DealRow``, or a database row of ``select_sql``).

        A compact deal's row (``compact``) needs ``batch``: the index and time of the ``import`` entry closing its
        batch (``DealsTable`` finds them); its commitment is recomputed, its public source rebuilt."""
        from dealer.core import Deal

        deal_id, ledger_index, canonical, salt, com, source, order, created, state, session = row
        canonical, salt = bytes(canonical), bytes(salt)
        if compact.is_compact(source):
            if batch is None:
                raise BankError("deal {deal_id} is a compact deal: its batch is needed", deal_id=deal_id)
            public = compact.public_source(batch[0], source)
            com, created = commitment(salt, canonical), batch[1]
        else:
            public = json.loads(source)
        return cls(
            deal_id,
            ledger_index,
            Deal.from_bytes(canonical),
            salt,
            bytes(com),
            public,
            None if order is None else bytes(order),
            created,
            _STATES.get(state) or DealState(state),  # a dict look-up: Enum's own call is slow for a whole bank
            session,
        )


class ImportItem(NamedTuple):
    deal: Deal
    source: DealSource


class ImportOutcome:
    """What an import did, filled in as it goes (a plain class with slots: see ``api.DealSource``)."""

    __slots__ = ("batch_index", "duplicates", "imported")

    def __init__(self) -> None:
        self.imported: list[tuple[int, int]] = []  # (position in the items, new deal id)
        self.duplicates: list[tuple[int, int]] = []  # (position in the items, id it repeats)
        self.batch_index = -1

    def __repr__(self) -> str:
        return f"ImportOutcome({self.imported!r}, {self.duplicates!r}, batch_index={self.batch_index})"


def base_name(path: str) -> str:
    """A file's base name, whatever the separator: what the public ledger may say of a local path."""
    return re.split(r"[\\/]", path)[-1]


def source_public(source: DealSource) -> JsonObject:
    """The part of a deal's source that goes into the (public) ledger; the dealing order stays secret, and of a
    file only its base name and SHA-256 (never the organiser's local path)."""
    out: JsonObject = {"kind": source.kind, "shown": source.shown_cards}
    for name in ("station", "variant", "board", "line", "file_sha256"):
        value = getattr(source, name)
        if value is not None:
            out[name] = value
    if source.file is not None:
        out["file"] = base_name(source.file)
    return out


def deal_rows(
    deal_id: int, index: int, prev: str, ts: str, canonical: bytes, source: DealSource
) -> tuple[LedgerRow, DealRow]:
    """The ledger row and the deals row that commit one deal, with a fresh salt."""
    salt = os.urandom(SALT_SIZE)
    com = commitment(salt, canonical)
    public = source_public(source)
    data: JsonObject = {"c": com.hex(), "id": deal_id, "src": public}
    if source.dealing_order is not None:
        from hashlib import sha256

        data["order"] = sha256(salt + source.dealing_order).hexdigest()
    entry = ledger_row(Entry(index, EntryKind.DEAL, ts, prev, data))
    source_text = canonical_json(public).decode()
    # positional, in column order (deal_id, ledger_index, canonical, salt, commitment, source, dealing_order,
    # created, state, session): built once per deal of an import, so kept cheap; the state as plain text
    row = DealRow(deal_id, index, canonical, salt, com, source_text, source.dealing_order, ts, IN_BANK_TEXT, None)
    return entry, row


class DealsTable:
    INSERT = insert_sql("deals")

    def __init__(self, ledger: LedgerTable) -> None:
        self.ledger = ledger
        self.batches = ledger.batches

    # -- writing (inside a transaction) -------------------------------------------------------------------
    def last_id(self, db: Connection) -> int:
        own = int(db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0])
        return max(own, self.batches.last_deal(db))

    def commit(self, db: Connection, deal: Deal, source: DealSource, ts: str) -> CommittedDeal:
        canonical = deal.to_bytes()
        existing = self.id_of(db, canonical)
        if existing is not None:
            raise DuplicateDealError(existing)
        last, prev = self.ledger.head(db)
        deal_id = self.last_id(db) + 1
        entry, row = deal_rows(deal_id, last + 1, prev, ts, canonical, source)
        self.ledger.insert(db, [entry])
        db.execute(self.INSERT, tuple(row))
        return CommittedDeal(deal_id, row.commitment.hex(), entry.idx, entry.hash.hex())

    def import_items(
        self,
        db: Connection,
        items: Iterable[ImportItem],
        batch: JsonObject,
        ts: str,
        progress: Callable[[int], None] | None = None,
    ) -> ImportOutcome:
        """Commit many deals, closed by an ``import`` entry describing the batch (see ``SqliteBank.import_deals``)."""
        outcome = ImportOutcome()
        last, prev = self.ledger.head(db)
        first_id = next_id = self.last_id(db) + 1
        seen: dict[Deal, int] = {}
        ledger_rows: list[LedgerRow] = []
        rows: list[DealRow] = []
        for position, item in enumerate(items):
            repeat = seen.get(item.deal)
            if repeat is None:
                canonical = item.deal.to_bytes()
                repeat = self.id_of(db, canonical)
            if repeat is not None:
                outcome.duplicates.append((position, repeat))
            else:
                last += 1
                entry, row = deal_rows(next_id, last, prev, ts, canonical, item.source)
                prev = entry.hash.hex()
                ledger_rows.append(entry)
                rows.append(row)
                seen[item.deal] = next_id
                outcome.imported.append((position, next_id))
                next_id += 1
            if progress is not None and (position + 1) % 1000 == 0:
                progress(position + 1)
        self.ledger.insert(db, ledger_rows)
        if rows:
            db.executemany(self.INSERT, [tuple(r) for r in rows])  # plain tuples: sqlite3 binds them fastest
        summary = {
            **batch,
            "imported": len(outcome.imported),
            "duplicates": len(outcome.duplicates),
            "first_deal": first_id if outcome.imported else None,
            "last_deal": next_id - 1 if outcome.imported else None,
        }
        outcome.batch_index = self.ledger.append(db, EntryKind.IMPORT, summary, ts).index
        return outcome

    def mark_drawn(self, db: Connection, label: str, drawn: Sequence[int]) -> int:
        """Deals ``drawn`` leave the bank for session ``label``; returns how many were still in the bank. A batch's
        deal (format 3) gets its own row here, drawn."""
        cur = db.executemany(
            "UPDATE deals SET state=?, session=? WHERE deal_id=? AND state=?",
            [(DealState.DRAWN, label, i, DealState.IN_BANK) for i in drawn],
        )
        changed = int(cur.rowcount)
        if not self.batches.present(db) or not drawn:
            return changed
        ids = sorted(set(drawn))
        have = self._own_ids(db, ids)
        wanted = [i for i in ids if i not in have]
        if wanted:
            rows = self.batches.pick(db, wanted)
            moved = [(*r[:8], DealState.DRAWN.value, label) for r in rows]
            db.executemany(self.INSERT, moved)
            changed += len(moved)
        return changed

    def _own_ids(self, db: Connection, ids: Sequence[int]) -> set[int]:
        """Those of ``ids`` with a row of their own in this table."""
        have: set[int] = set()
        for k in range(0, len(ids), BATCH):
            part = ids[k : k + BATCH]
            marks = ",".join("?" * len(part))
            have.update(int(r[0]) for r in db.execute(f"SELECT deal_id FROM deals WHERE deal_id IN ({marks})", part))
        return have

    def mark_played(self, db: Connection, label: str) -> None:
        db.execute("UPDATE deals SET state=? WHERE session=? AND state=?", (DealState.PLAYED, label, DealState.DRAWN))

    # -- reading ------------------------------------------------------------------------------------------
    def id_of(self, db: Connection, canonical: bytes) -> int | None:
        row = db.execute("SELECT deal_id FROM deals WHERE canonical=?", (canonical,)).fetchone()
        if row is not None:
            return int(row[0])
        return self.batches.ids_of(db, [canonical]).get(canonical)

    def committed(self, db: Connection, canonical: bytes) -> CommittedDeal | None:
        """The deal committed with these cards, as its commit answered (None: the bank does not hold it)."""
        row = db.execute(
            "SELECT d.deal_id, d.commitment, d.ledger_index, l.hash FROM deals d JOIN ledger l "
            "ON l.idx = d.ledger_index WHERE d.canonical = ?",
            (canonical,),
        ).fetchone()
        if row is None:
            return None
        return CommittedDeal(int(row[0]), bytes(row[1]).hex(), int(row[2]), bytes(row[3]).hex())

    def count(self, db: Connection) -> int:
        return int(db.execute("SELECT COUNT(*) FROM deals").fetchone()[0]) + self._in_batches_only(db)

    def _in_batches_only(self, db: Connection) -> int:
        """How many deals are in batches without a row here (those still in the bank)."""
        if not self.batches.present(db):
            return 0
        own = db.execute(
            "SELECT COUNT(*) FROM deals d WHERE EXISTS (SELECT 1 FROM batches b "
            "WHERE d.deal_id >= b.first_deal AND d.deal_id < b.first_deal + b.deals)"
        ).fetchone()[0]
        return self.batches.total(db) - int(own)

    def get(self, db: Connection, deal_id: int) -> StoredDeal:
        row = db.execute(select_sql("deals", "deal_id=?"), (deal_id,)).fetchone()
        if row is None:
            row = next(iter(self.batches.rows(db, deal_id, deal_id + 1)), None)
        if row is None:
            raise BankError("deal {deal_id} is not in the bank", deal_id=deal_id)
        return self.stored(db, [row])[0]

    def get_many(self, db: Connection, deal_ids: Sequence[int]) -> dict[int, StoredDeal]:
        found: dict[int, StoredDeal] = {}
        ids = list(deal_ids)
        for k in range(0, len(ids), BATCH):
            batch = ids[k : k + BATCH]
            marks = ",".join("?" * len(batch))
            rows = db.execute(select_sql("deals", f"deal_id IN ({marks})"), batch).fetchall()
            if self.batches.present(db) and batch:
                have, wanted = {int(r[0]) for r in rows}, set(batch)
                rows.extend(self.batches.pick(db, sorted(wanted - have)))
            for deal in self.stored(db, sorted(rows, key=lambda r: int(r[0]))):
                found[deal.deal_id] = deal
        return found

    # Any: sqlite3/psycopg rows in ``DealRow``'s column order
    def stored(self, db: Connection, rows: Sequence[Sequence[Any]]) -> list[StoredDeal]:
        """The rows as ``StoredDeal``s, a compact deal's with its batch (the ``import`` entry after it in the
        ledger, read once for the rows of one batch: ``rows`` in id order)."""
        out: list[StoredDeal] = []
        span: tuple[int, int, tuple[int, str]] | None = None  # ledger indices [low, batch) and the batch
        for row in rows:
            ledger_index, source = int(row[1]), row[5]
            batch = None
            if compact.is_compact(source):
                if span is None or not span[0] <= ledger_index < span[1]:
                    closing = db.execute(
                        "SELECT idx, body FROM ledger WHERE idx > ? ORDER BY idx LIMIT 1", (ledger_index,)
                    ).fetchone()
                    if closing is None:
                        raise BankError("deal {deal_id}: no import entry closes its batch", deal_id=row[0])
                    entry = Entry.decode(bytes(closing[1]))
                    span = (ledger_index, int(closing[0]), (entry.index, entry.ts))
                batch = span[2]
            out.append(StoredDeal.of(row, batch))
        return out

    def page(self, db: Connection, after: int) -> list[DealRow]:
        """Up to ``PAGE`` rows with ids above ``after``, as stored (``verify_bank`` checks them raw)."""
        rows = db.execute(select_sql("deals", "deal_id > ?", "ORDER BY deal_id LIMIT ?"), (after, PAGE)).fetchall()
        if not self.batches.present(db):
            return [DealRow(*r) for r in rows]
        # the batches' deals among them: a row here says where a deal stands (it left the bank), else its batch's
        high = after + PAGE + 1 if len(rows) < PAGE else int(rows[-1][0]) + 1
        merged = {r[0]: DealRow(*r) for r in self.batches.rows(db, after + 1, high)}
        merged.update((int(r[0]), DealRow(*r)) for r in rows if int(r[0]) < high)
        return [merged[i] for i in sorted(merged)][:PAGE]

    def state_counts(self, db: Connection) -> dict[str, int]:
        counts = dict.fromkeys(DealState, 0)
        for state, n in db.execute("SELECT state, COUNT(*) FROM deals GROUP BY state").fetchall():
            counts[DealState(state)] = int(n)
        counts[DealState.IN_BANK] += self._in_batches_only(db)
        return {str(state): n for state, n in counts.items()}

    def out_of_bank(self, db: Connection, last_deal: int) -> list[int]:
        """Ids up to ``last_deal`` that left the bank (served by the small partial index ``deals_out_of_bank``)."""
        rows = db.execute(
            "SELECT deal_id FROM deals WHERE state <> 'bank' AND deal_id <= ? ORDER BY deal_id", (last_deal,)
        ).fetchall()
        return [int(r[0]) for r in rows]
