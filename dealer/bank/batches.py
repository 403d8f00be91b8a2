"""The ``batches`` table (bank format 3): an imported batch's deals in one row, packed (``packed``).

A row is ``(idx, first_deal, deals, packed)``: ``idx`` the ledger index of the ``import`` entry closing the batch,
its deals' ids ``first_deal …`` (``deals`` of them), their ledger indices the ``deals`` just before ``idx``. Their
ledger entries are the compact deals' (``compact``), rebuilt from this row, so the chain binds every byte of it.
A deal that leaves the bank (drawn) gets a row of its own in ``deals`` (the format-2 compact row: cards, salt,
``"F,B,L"``, with its state and session), which from then on says where it stands; ``bank verify`` checks that
row against the entry rebuilt from the batch. A bank is of format 3 (``meta.schema``) once it holds a batch:
older banks have no rows here (an old SQLite file opened read-only may not even have the table).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from . import compact, packed
from .errors import BankError
from .schema import Connection, insert_sql

if TYPE_CHECKING:
    from .deal_index import DealIndex

FORMAT = 3  # the bank format (``meta.schema``) from which batches are stored
CACHE = 64  # decoded batches kept (a batch never changes once written; the bytes read are compared)

# the columns of a deal's row in ``deals`` order: (deal_id, ledger_index, canonical, salt, commitment, source,
# dealing_order, created, state, session)
Row = tuple[int, int, bytes, bytes, bytes, str, None, str, str, None]


class Batch(NamedTuple):
    idx: int
    first_deal: int
    cards: list[bytes]
    salts: list[bytes]
    sources: list[str]  # ``compact.compact_source`` text of each deal

    @property
    def first_index(self) -> int:
        return self.idx - len(self.cards)

    def row(self, k: int) -> Row:
        """The deal at offset ``k`` as a format-2 compact ``deals`` row, in the bank."""
        return (
            self.first_deal + k,
            self.first_index + k,
            self.cards[k],
            self.salts[k],
            compact.EMPTY_COMMITMENT,
            self.sources[k],
            None,
            compact.EMPTY_CREATED,
            "bank",
            None,
        )


def decode(idx: int, first_deal: int, deals: int, blob: bytes) -> Batch:
    """A stored row as a ``Batch``; ``BankError`` when its packed value is not one of ``deals`` deals."""
    try:
        cards, salts, sources = packed.unpack(blob)
    except BankError as exc:
        raise BankError("batch {idx}: {exc}", idx=idx, exc=exc) from exc
    if len(cards) != deals:
        raise BankError(
            "batch {idx}: deals by its row {deals}, in its packed value {n}", idx=idx, deals=deals, n=len(cards)
        )
    texts = [compact.compact_source(*s) for s in sources]
    return Batch(idx, first_deal, cards, salts, texts)


class BatchesTable:
    INSERT = insert_sql("batches")

    def __init__(self) -> None:
        self._decoded: dict[int, tuple[bytes, Batch]] = {}
        self._format3 = False  # seen once, for good: a bank's format never goes down
        self._index: DealIndex | None = None  # the batches' deals, up to the batch ``_seen`` (idx, entry's hash)
        self._seen: tuple[int, bytes] | None = None

    def present(self, db: Connection) -> bool:
        """Whether the bank may hold batches (format 3)."""
        if not self._format3:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            self._format3 = row is not None and str(row[0]) == str(FORMAT)
        return self._format3

    # -- writing (inside a transaction) -------------------------------------------------------------------
    def insert(
        self,
        db: Connection,
        idx: int,
        first_deal: int,
        cards: Sequence[bytes],
        salts: Sequence[bytes],
        sources: Sequence[packed.Source],
    ) -> None:
        db.execute(self.INSERT, (idx, first_deal, len(cards), packed.pack(cards, salts, sources)))
        db.execute("UPDATE meta SET value=? WHERE key='schema' AND value IN ('1', '2')", (str(FORMAT),))

    # -- reading ------------------------------------------------------------------------------------------
    def _load(self, db: Connection, where: str, params: Sequence[object]) -> list[Batch]:
        if not self.present(db):
            return []
        out: list[Batch] = []
        sql = f"SELECT idx, first_deal, deals, packed FROM batches WHERE {where} ORDER BY first_deal"
        for idx, first_deal, deals, blob in db.execute(sql, params).fetchall():
            blob = bytes(blob)
            cached = self._decoded.get(int(idx))
            if cached is not None and cached[0] == blob and cached[1].first_deal == first_deal:
                out.append(cached[1])
                continue
            batch = decode(int(idx), int(first_deal), int(deals), blob)
            if len(self._decoded) >= CACHE:
                del self._decoded[next(iter(self._decoded))]
            self._decoded[batch.idx] = (blob, batch)
            out.append(batch)
        return out

    def closing(self, db: Connection, idx: int) -> Batch | None:
        """The batch closed by the ledger entry ``idx`` (None: that entry closes none)."""
        found = self._load(db, "idx = ?", (idx,))
        return found[0] if found else None

    def rows(self, db: Connection, low: int, high: int) -> list[Row]:
        """The rows of the batches' deals with ids in ``[low, high)``, in id order, as if they were in ``deals``."""
        out: list[Row] = []
        for batch in self._load(db, "first_deal < ? AND first_deal + deals > ?", (high, low)):
            start = max(0, low - batch.first_deal)
            stop = min(len(batch.cards), high - batch.first_deal)
            out.extend(batch.row(k) for k in range(start, stop))
        return out

    def pick(self, db: Connection, ids: Sequence[int]) -> list[Row]:
        """The rows of the batches' deals with these ids (in ascending order), those a batch holds."""
        if not ids:
            return []
        out: list[Row] = []
        batches = self._load(db, "first_deal <= ? AND first_deal + deals > ?", (ids[-1], ids[0]))
        for batch in batches:
            end = batch.first_deal + len(batch.cards)
            out.extend(batch.row(i - batch.first_deal) for i in ids if batch.first_deal <= i < end)
        return out

    def last_deal(self, db: Connection) -> int:
        """The highest id a batch holds (0: none)."""
        if not self.present(db):
            return 0
        return int(db.execute("SELECT COALESCE(MAX(first_deal + deals - 1), 0) FROM batches").fetchone()[0])

    def last_index(self, db: Connection) -> int:
        """The highest ledger index of a batch's deal (-1: none)."""
        if not self.present(db):
            return -1
        return int(db.execute("SELECT COALESCE(MAX(idx - 1), -1) FROM batches WHERE deals > 0").fetchone()[0])

    def total(self, db: Connection) -> int:
        """How many deals the batches hold."""
        if not self.present(db):
            return 0
        return int(db.execute("SELECT COALESCE(SUM(deals), 0) FROM batches").fetchone()[0])

    def ids_of(self, db: Connection, canonicals: Iterable[bytes]) -> dict[bytes, int]:
        """The ids of those of ``canonicals`` a batch holds, from the bank object's index of the batches' deals
        (``deal_index``), first brought up to date with the batches written since it was last (``_refresh``).
        Called in a write transaction (which holds the bank's write lock), the index then covers every batch
        committed before it: a duplicate check done there is complete."""
        wanted = list(dict.fromkeys(canonicals))
        if not wanted or not self.present(db):
            return {}
        return self._refresh(db).find(wanted)

    def _refresh(self, db: Connection) -> DealIndex:
        """Add the batches after the last one indexed (batches are append-only, their ``idx`` climbs with the
        ledger, and a batch commits with its ``import`` entry). That last one is recognised by its import entry's
        hash, which binds every byte of it: if the entry is no longer the one indexed (the database changed under
        the bank: a file restored, a transaction rolled back), the index is built again from the start."""
        if self._seen is not None:
            row = db.execute("SELECT hash FROM ledger WHERE idx = ?", (self._seen[0],)).fetchone()
            if row is None or bytes(row[0]) != self._seen[1]:
                self._seen = None
        if self._seen is None or self._index is None:  # nothing indexed is trusted without its batch's entry
            from .deal_index import DealIndex  # numpy: loaded by a bank's first duplicate check, not by every command

            self._index = DealIndex()
        after = -1 if self._seen is None else self._seen[0]
        runs: list[tuple[bytes, int]] = []
        last = after
        for idx, first_deal, deals, run in db.execute(CARDS_SQL, (after,)).fetchall():
            run = bytes(run)
            if len(run) != packed.CARDS * int(deals):
                raise BankError(
                    "batch {idx}: deals by its row {deals}, in its packed value {n}",
                    idx=idx,
                    deals=deals,
                    n=len(run) // packed.CARDS,
                )
            runs.append((run, int(first_deal)))
            last = int(idx)
        index = self._index
        if last == after:
            return index
        row = db.execute("SELECT hash FROM ledger WHERE idx = ?", (last,)).fetchone()
        index.add(runs)
        self._seen = None if row is None else (last, bytes(row[0]))
        return index


# the batches after a ledger index, in order: each one's index, first deal, count and run of cards (the bytes after
# the count, a varint: 1 byte below 128 deals, 2 below 16,384, …; 13 a deal), the only part of the packed value
# the server sends
CARDS_SQL = (
    "SELECT idx, first_deal, deals, substr(packed, CASE WHEN deals < 128 THEN 2 WHEN deals < 16384 THEN 3 "
    "WHEN deals < 2097152 THEN 4 ELSE 5 END, CAST(13 * deals AS INTEGER)) FROM batches WHERE idx > ? ORDER BY idx"
)


def check_span(batch: Batch, first_deal: object, imported: object) -> None:
    """The batch is the one its import entry describes (its first deal and count); ``BankError`` otherwise."""
    if first_deal != batch.first_deal or imported != len(batch.cards):
        raise BankError(
            "batch {idx}: its row holds deals {first}… ({n}), its import entry says {first_deal}… ({imported})",
            idx=batch.idx,
            first=batch.first_deal,
            n=len(batch.cards),
            first_deal=first_deal,
            imported=imported,
        )
