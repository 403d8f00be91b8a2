"""The ``ledger`` table: the hash-chained entries, appended only, and the Merkle leaves cached in memory.

Every method takes the connection to use: inside a write transaction the table reads the head under the
transaction (so several processes chain onto one head), outside it reads under the bank's lock.

The entries of compact deals (``compact``: a bulk import's deals, bank format 2) have no row here: a run of
missing indices is closed by the batch's ``import`` entry, and every reader below rebuilds those entries, bytes
and hashes, from the deals' rows (format 2) or the batch's row in ``batches`` (format 3, ``batches``), so that to
its callers the ledger is whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from dealer.core.json_types import JsonObject
from dealer.integrity.ledger import GENESIS_PREV, DealEntry, Entry, EntryKind

from . import compact
from .batches import BatchesTable, check_span
from .errors import BankError
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
    from hashlib import sha256  # here, as the bank's other hashes: reading it (``bank status``) loads no OpenSSL

    body = entry.encode()
    return LedgerRow(entry.index, entry.kind, body, sha256(body).digest())


class LedgerTable:
    INSERT = insert_sql("ledger")

    def __init__(self) -> None:
        self.batches = BatchesTable()  # format 3: the imported batches, whose deals' entries are rebuilt here
        self._leaves: list[bytes] = []  # Merkle leaf hashes of entries 0, 1, …: entries never change once written
        self._run: tuple[LedgerRow, list[LedgerRow]] | None = None  # the last compact run rebuilt, by its closing row

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
        """The rows from index ``start`` (before ``end``), in order: up to ``PAGE`` stored rows, and the compact
        deals' entries among and after them (rebuilt) up to the next stored row."""
        stored = [
            LedgerRow(*r)
            for r in db.execute(
                "SELECT idx, kind, body, hash FROM ledger WHERE idx >= ? AND idx < ? ORDER BY idx LIMIT ?",
                (start, end, PAGE),
            ).fetchall()
        ]
        out: list[LedgerRow] = []
        at = start
        for row in stored:
            if row.idx > at:
                out.extend(r for r in self._compact_run(db, row) if at <= r.idx)
            out.append(row)
            at = row.idx + 1
        if len(stored) < PAGE and at < end:  # the page may end inside a compact run: its closing row is further on
            following = self._next_stored(db, at)
            if following is not None and following.idx > at:
                out.extend(r for r in self._compact_run(db, following) if at <= r.idx < end)
        return out

    def _next_stored(self, db: Connection, index: int) -> LedgerRow | None:
        row = db.execute("SELECT idx, kind, body, hash FROM ledger WHERE idx >= ? ORDER BY idx LIMIT 1", (index,))
        found = row.fetchone()
        return None if found is None else LedgerRow(*found)

    def _compact_run(self, db: Connection, closing: LedgerRow) -> list[LedgerRow]:
        """The rebuilt entries of the compact deals just before the stored row ``closing`` (their ``import``
        entry): from the stored row before them, whose hash the first one chains onto."""
        if self._run is not None and self._run[0] == closing:
            return self._run[1]
        before = db.execute(
            "SELECT idx, hash FROM ledger WHERE idx < ? ORDER BY idx DESC LIMIT 1", (closing.idx,)
        ).fetchone()
        first = 0 if before is None else int(before[0]) + 1
        prev = GENESIS_PREV if before is None else bytes(before[1]).hex()
        count = closing.idx - first
        entry = Entry.decode(bytes(closing.body)) if closing.kind == EntryKind.IMPORT else None
        first_deal = None if entry is None else entry.data.get("first_deal")
        if entry is None or not isinstance(first_deal, int) or entry.data.get("imported") != count:
            raise BankError(
                "ledger entries {first} to {last} are missing (entry {closing} does not close a compact batch; "
                "entries missing: {count})",
                first=first,
                last=closing.idx - 1,
                closing=closing.idx,
                count=count,
            )
        # Any: as the database rows below, (deal_id, ledger_index, canonical, salt, source)
        rows: Sequence[Sequence[Any]]
        stored = self.batches.closing(db, closing.idx)
        if stored is not None:  # format 3: the batch's own row (a drawn deal's row in ``deals`` is checked by verify)
            check_span(stored, first_deal, entry.data.get("imported"))
            rows = [(r[0], r[1], r[2], r[3], r[5]) for r in map(stored.row, range(count))]
        else:
            rows = db.execute(
                "SELECT deal_id, ledger_index, canonical, salt, source FROM deals "
                "WHERE deal_id >= ? AND deal_id < ? ORDER BY deal_id",
                (first_deal, first_deal + count),
            ).fetchall()
        if len(rows) != count:
            raise BankError(
                "ledger entries {first} to {last} are missing: deals of their batch in the deals table: {have}, "
                "expected: {count}",
                first=first,
                last=closing.idx - 1,
                have=len(rows),
                count=count,
            )
        built = compact.expand(first, prev, json.dumps(entry.ts), closing.idx, rows)
        run = [LedgerRow(index, EntryKind.DEAL, body, digest) for index, body, digest in built]
        self._run = (closing, run)
        return run

    def bodies(self, db: Connection, indices: Sequence[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        wanted = list(indices)
        for k in range(0, len(wanted), BATCH):
            batch = wanted[k : k + BATCH]
            marks = ",".join("?" * len(batch))
            out.update(db.execute(f"SELECT idx, body FROM ledger WHERE idx IN ({marks})", batch).fetchall())
        for index in sorted(set(wanted) - set(out)):  # compact deals' entries, a run at a time
            if index in out:
                continue
            closing = self._next_stored(db, index)
            if closing is None or index < 0:
                continue
            out.update((r.idx, r.body) for r in self._compact_run(db, closing))
        return {index: out[index] for index in wanted if index in out}

    def entry(self, db: Connection, index: int) -> Entry:
        body = self.bodies(db, [index]).get(index)
        if body is None:
            raise BankError("ledger entry {index} does not exist", index=index)
        return Entry.decode(bytes(body))

    def of_kind(self, db: Connection, kind: str, start: int = 0) -> list[Entry]:
        if kind == EntryKind.DEAL:  # compact deals' entries are rebuilt in order with the stored ones
            found: list[Entry] = []
            end = self.head(db)[0] + 1
            while start < end:
                rows = self.page(db, start, end)
                if not rows:
                    break
                found.extend(Entry.decode(bytes(r.body)) for r in rows if r.kind == kind)
                start = rows[-1].idx + 1
            return found
        rows = db.execute("SELECT body FROM ledger WHERE kind=? AND idx >= ? ORDER BY idx", (kind, start)).fetchall()
        return [Entry.decode(bytes(r[0])) for r in rows]

    def latest_of_kind(self, db: Connection, kind: str) -> Entry | None:
        if kind == EntryKind.DEAL:
            row = db.execute("SELECT MAX(ledger_index) FROM deals").fetchone()
            last = max(-1 if row is None or row[0] is None else int(row[0]), self.batches.last_index(db))
            return None if last < 0 else self.entry(db, last)
        row = db.execute("SELECT body FROM ledger WHERE kind=? ORDER BY idx DESC LIMIT 1", (kind,)).fetchone()
        return None if row is None else Entry.decode(bytes(row[0]))

    def deal_entries(self, db: Connection, start: int = 0) -> list[DealEntry]:
        """The ``deal`` entries from index ``start`` on, typed (what the web reads of them)."""
        return [DealEntry.of(e) for e in self.of_kind(db, EntryKind.DEAL, start)]

    def leaves(self, db: Connection, size: int) -> list[bytes]:
        """Merkle leaf hashes of entries 0..size-1 (only the entries not yet cached are read)."""
        from dealer.integrity.merkle import leaf_hash

        have = len(self._leaves)
        while have < size:
            rows = self.page(db, have, size)
            for row in rows:
                if row.idx != len(self._leaves):
                    break
                self._leaves.append(leaf_hash(bytes(row.body)))
            if len(self._leaves) == have:
                break
            have = len(self._leaves)
        if len(self._leaves) < size:
            raise BankError("the ledger has {have} entries, not {size}", have=len(self._leaves), size=size)
        return self._leaves[:size]
