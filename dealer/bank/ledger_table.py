"""The ``ledger`` table: the hash-chained entries, appended only, and the Merkle leaves cached in memory.

Every method takes the connection to use: inside a write transaction the table reads the head under the
transaction (so several processes chain onto one head), outside it reads under the bank's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256
from typing import NamedTuple

from dealer.core.json_types import JsonObject

from .errors import BankError
from .ledger import GENESIS_PREV, DealEntry, Entry, EntryKind
from .merkle import leaf_hash
from .schema import Connection, insert_sql

PAGE = 20000  # rows per read of a long scan
BATCH = 500  # indices per ``IN (…)`` read


class LedgerRow(NamedTuple):
    """A row of ``ledger`` as stored: ``body`` is the entry's exact bytes, ``hash`` their SHA-256."""

    idx: int
    kind: str
    body: bytes
    hash: bytes


def ledger_row(entry: Entry) -> LedgerRow:
    body = entry.encode()
    return LedgerRow(entry.index, entry.kind, body, sha256(body).digest())


class LedgerTable:
    INSERT = insert_sql("ledger")

    def __init__(self) -> None:
        self._leaves: list[bytes] = []  # Merkle leaf hashes of entries 0, 1, …: entries never change once written

    # -- writing (inside a transaction) -------------------------------------------------------------------
    def head(self, db: Connection) -> tuple[int, str]:
        """The last entry's index and hex hash; ``(-1, GENESIS_PREV)`` for an empty ledger."""
        row = db.execute("SELECT idx, hash FROM ledger ORDER BY idx DESC LIMIT 1").fetchone()
        return (-1, GENESIS_PREV) if row is None else (int(row[0]), bytes(row[1]).hex())

    def append(self, db: Connection, kind: str, data: JsonObject, ts: str) -> Entry:
        last, prev = self.head(db)
        entry = Entry(last + 1, kind, ts, prev, data)
        self.insert(db, [ledger_row(entry)])
        return entry

    def insert(self, db: Connection, rows: Sequence[LedgerRow]) -> None:
        """Rows already chained by the caller (``deals.DealsTable`` builds a deal's entry with its row)."""
        if len(rows) == 1:
            db.execute(self.INSERT, tuple(rows[0]))
        elif rows:
            db.executemany(self.INSERT, [tuple(r) for r in rows])  # plain tuples: sqlite3 binds them fastest

    # -- reading ------------------------------------------------------------------------------------------
    def page(self, db: Connection, start: int, end: int) -> list[LedgerRow]:
        """Up to ``PAGE`` raw rows from index ``start`` (before ``end``), in order."""
        rows = db.execute(
            "SELECT idx, kind, body, hash FROM ledger WHERE idx >= ? AND idx < ? ORDER BY idx LIMIT ?",
            (start, end, PAGE),
        ).fetchall()
        return [LedgerRow(*r) for r in rows]

    def bodies(self, db: Connection, indices: Sequence[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        wanted = list(indices)
        for k in range(0, len(wanted), BATCH):
            batch = wanted[k : k + BATCH]
            marks = ",".join("?" * len(batch))
            out.update(db.execute(f"SELECT idx, body FROM ledger WHERE idx IN ({marks})", batch).fetchall())
        return out

    def entry(self, db: Connection, index: int) -> Entry:
        row = db.execute("SELECT body FROM ledger WHERE idx=?", (index,)).fetchone()
        if row is None:
            raise BankError("ledger entry {index} does not exist", index=index)
        return Entry.decode(bytes(row[0]))

    def of_kind(self, db: Connection, kind: str, start: int = 0) -> list[Entry]:
        rows = db.execute("SELECT body FROM ledger WHERE kind=? AND idx >= ? ORDER BY idx", (kind, start)).fetchall()
        return [Entry.decode(bytes(r[0])) for r in rows]

    def latest_of_kind(self, db: Connection, kind: str) -> Entry | None:
        row = db.execute("SELECT body FROM ledger WHERE kind=? ORDER BY idx DESC LIMIT 1", (kind,)).fetchone()
        return None if row is None else Entry.decode(bytes(row[0]))

    def deal_entries(self, db: Connection, start: int = 0) -> list[DealEntry]:
        """The ``deal`` entries from index ``start`` on, typed (what the web reads of them)."""
        return [DealEntry.of(e) for e in self.of_kind(db, EntryKind.DEAL, start)]

    def leaves(self, db: Connection, size: int) -> list[bytes]:
        """Merkle leaf hashes of entries 0..size-1 (only the entries not yet cached are read)."""
        have = len(self._leaves)
        if have < size:
            rows = db.execute("SELECT body FROM ledger WHERE idx >= ? AND idx < ? ORDER BY idx", (have, size))
            self._leaves.extend(leaf_hash(bytes(r[0])) for r in rows.fetchall())
        if len(self._leaves) < size:
            raise BankError("the ledger has {have} entries, not {size}", have=len(self._leaves), size=size)
        return self._leaves[:size]
