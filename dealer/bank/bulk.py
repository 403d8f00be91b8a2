"""Bulk import of deals already in canonical form: one transaction per batch, rows sent as columns at once.

``SqliteBank.import_deals`` takes ``ImportItem`` objects and asks the bank about each deal on its own, and writes
each deal's ledger entry in full; an import of thousands of files calls this instead, with the deals as canonical
13-byte forms and their sources as ``"F,B,L"`` texts (``source_text``), and writes them in the compact form
(``compact``): a deal row each (cards, salt, source text), no ledger row; the batch's ``import`` entry closes the
run, chained onto the hash of the last deal's entry, computed here as every reader rebuilds it. On SQLite the
rows go in with one ``executemany``, on PostgreSQL with one binary ``COPY``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import partial
from hashlib import sha256
from itertools import repeat
from typing import Any, NamedTuple

from dealer.core.json_types import JsonObject

from . import compact
from .compact import ENTRY_HEAD, entry_tail
from .ledger import Entry, EntryKind
from .ledger_table import ledger_row
from .schema import Connection
from .store import IN_BANK, ImportOutcome, SqliteBank

SALT_SIZE = 16  # bytes of a deal's commitment salt, as the bank's own commits use
# The columns an import writes: those bound a row, then the constants (a new deal's state), written into the SQL
# on SQLite (fewer values bound a row: 0.16 s against 0.19 s for 20,000 deals) and sent as values in
# PostgreSQL's COPY, in its binary format, each column's type named (binary went in in two thirds of the time of
# text, which spells every byte in hex for the server to read back). A new deal's dealing order and session are
# left to their default, NULL; its commitment and time are empty (``compact``: recomputed when read).
_WRITTEN: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "deals": (
        ("deal_id", "ledger_index", "canonical", "salt", "commitment", "source", "created"),
        ("state",),
        (str(IN_BANK),),
    ),
}
_PG_TYPES = {
    "deals": ("int8", "int8", "bytea", "bytea", "bytea", "text", "text", "text"),
}
_SQLITE_INSERT = {
    table: f"INSERT INTO {table} ({', '.join(bound + named)}) "
    f"VALUES ({', '.join(['?'] * len(bound) + [repr(value) for value in values])})"
    for table, (bound, named, values) in _WRITTEN.items()
}
_PG_COPY = {
    table: f"COPY {table} ({', '.join(bound + named)}) FROM STDIN (FORMAT BINARY)"
    for table, (bound, named, _) in _WRITTEN.items()
}
LOOKUP_CHUNK = 500  # deals asked about in one query (SQLite allows 32,766 parameters; PostgreSQL 65,535)


def source_text(file_index: int, board: int | None, line: int | None) -> str:
    """A deal's ``source`` as the bulk import stores it (``compact.compact_source``): its file's position in the
    batch's ``files``, its board and line."""
    return compact.compact_source(file_index, board, line)


def existing_ids(db: Connection, deals: Sequence[bytes]) -> dict[bytes, int]:
    """The bank's ids of those of ``deals`` it already holds, in a few queries (on PostgreSQL in one, the deals
    sent as one array: a query of hundreds of placeholders costs psycopg more to prepare than to run)."""
    found: dict[bytes, int] = {}
    if _postgres(db) is not None and deals:
        for canonical, deal_id in db.execute("SELECT canonical, deal_id FROM deals WHERE canonical = ANY(%b)", [deals]):
            found[bytes(canonical)] = int(deal_id)
        return found
    for start in range(0, len(deals), LOOKUP_CHUNK):
        part = deals[start : start + LOOKUP_CHUNK]
        sql = f"SELECT canonical, deal_id FROM deals WHERE canonical IN ({','.join('?' * len(part))})"
        for canonical, deal_id in db.execute(sql, part):
            found[bytes(canonical)] = int(deal_id)
    return found


class Salted(NamedTuple):
    """A batch's deals with what their rows need and no bank decides: each deal's source (``source_json``), its
    random salt and its commitment (SHA-256 of salt and deal). Made before the batch's transaction (``salted``),
    while the server writes the batch before it."""

    deals: Sequence[bytes]
    sources: Sequence[str]
    salts: list[bytes]
    coms: list[bytes]

    def only(self, keep: Sequence[int]) -> Salted:
        """The rows of the deals at ``keep`` (those the bank does not hold yet)."""
        return Salted(
            [self.deals[k] for k in keep],
            [self.sources[k] for k in keep],
            [self.salts[k] for k in keep],
            [self.coms[k] for k in keep],
        )


def salted(deals: Sequence[bytes], sources: Sequence[str]) -> Salted:
    count = len(deals)
    blob = os.urandom(SALT_SIZE * count)
    salts = [blob[i : i + SALT_SIZE] for i in range(0, SALT_SIZE * count, SALT_SIZE)]
    return Salted(
        deals, sources, salts, [sha256(salt + canonical).digest() for salt, canonical in zip(salts, deals, strict=True)]
    )


def import_canonical(
    bank: SqliteBank,
    deals: Sequence[bytes],
    sources: Sequence[str],
    batch: JsonObject,
    progress: Callable[[int], None] | None = None,
    only_ours_upto: int | None = None,
    while_ledger: Callable[[ImportOutcome], None] | None = None,
    while_deals: Callable[[], None] | None = None,
    prepared: Salted | None = None,
) -> ImportOutcome:
    """Commit ``deals`` (distinct canonical forms) with their sources (``source_text``: the position of the deal's
    file in ``batch["files"]``, board, line) in ONE transaction, in the compact form (``compact``), closed by an
    ``import`` entry describing the batch; those already in the bank are listed as duplicates.
    Any error rolls the whole batch back. ``prepared``: ``salted(deals, sources)``, made beforehand.

    ``only_ours_upto``: the caller knows the bank held no deal when its import began (0) or holds only the deals
    its earlier batches committed, up to this id. If the bank's last deal id is still that (deals are never
    removed, and any other writer's deal comes after it), none of ``deals`` can be in the bank, and it is not
    asked; otherwise it is (as it is without this).

    ``while_ledger(outcome)`` and ``while_deals()``: work to do while a PostgreSQL server writes the batch's
    rows (the client would otherwise wait about as long as the server takes over them), the outcome being what
    the batch commits if it commits (if it fails, the error stops the caller's import). Each is called once, in
    the transaction, in that order; on SQLite after the rows are written."""
    outcome = ImportOutcome()
    with bank._tx() as db:
        last, prev = bank._head(db)
        held = db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0]
        known = {} if held == only_ours_upto else existing_ids(db, deals)
        first_id = next_id = held + 1
        ts = bank._clock()  # one transaction: every deal of the batch is committed at the same moment
        ts_json = json.dumps(ts)
        # the columns of the new deals at once, a deal at a time in C; only the hash chain is a Python loop
        outcome.duplicates.extend((k, known[canonical]) for k, canonical in enumerate(deals) if canonical in known)
        fresh: Sequence[int] = range(len(deals))
        if known:
            fresh = [k for k, canonical in enumerate(deals) if canonical not in known]
        if prepared is None:
            prepared = salted([deals[k] for k in fresh], [sources[k] for k in fresh])
        elif known:  # what was made beforehand, less the deals the bank holds
            prepared = prepared.only(fresh)
        canonicals, srcs, salts, coms = prepared
        count = len(fresh)
        ids = range(next_id, next_id + count)
        indices = range(last + 1, last + 1 + count)
        batch_index = last + 1 + count  # the import entry closing the batch: its deals' sources reference it
        tail = entry_tail(ts_json)
        src_of = partial(compact.src_json, batch_index)
        for head in map(ENTRY_HEAD.__mod__, zip(map(bytes.hex, coms), ids, map(src_of, srcs), indices, strict=True)):
            prev = sha256((head + prev + tail).encode()).hexdigest()  # compact entries: hashed, never stored
        outcome.imported.extend(zip(fresh, ids, strict=True))
        next_id += count
        works = [w for w in (None if while_ledger is None else partial(while_ledger, outcome), while_deals) if w]

        def meanwhile() -> None:
            for work in works:
                work()

        if count:
            blank_coms, blank_created = [compact.EMPTY_COMMITMENT] * count, [compact.EMPTY_CREATED] * count
            _insert(db, "deals", (ids, indices, canonicals, salts, blank_coms, srcs, blank_created), meanwhile)
            db.execute("UPDATE meta SET value=? WHERE key='schema' AND value='1'", (str(compact.FORMAT),))
        else:
            meanwhile()
        summary = {
            **batch,
            "imported": count,
            "duplicates": len(outcome.duplicates),
            "first_deal": first_id if count else None,
            "last_deal": next_id - 1 if count else None,
        }
        bank._ledger.insert(db, [ledger_row(Entry(batch_index, EntryKind.IMPORT, ts, prev, summary))])
        outcome.batch_index = batch_index
    if progress is not None:
        progress(len(deals))
    return outcome


def _insert(
    db: Connection, table: str, columns: Sequence[Sequence[object]], meanwhile: Callable[[], None] | None = None
) -> None:
    """Rows of ``table`` given as columns (``_WRITTEN``'s bound ones, in order), in one ``executemany`` (SQLite), or
    one ``COPY … FROM STDIN`` on PostgreSQL (a fraction of the round trips); a lost connection there is the
    bank's ``BankUnavailable``, as for its other writes. ``meanwhile()`` is called once the rows are sent, before
    the end of the ``COPY``, which waits for the server to have written them (20 ms for 5,000 ledger rows)."""
    open_connection = _postgres(db)
    if open_connection is None:
        db.executemany(_SQLITE_INSERT[table], zip(*columns, strict=True))
        if meanwhile is not None:
            meanwhile()
        return
    import psycopg
    from psycopg.types.string import BytesBinaryDumper

    from .pg_store import BankUnavailable

    rows = zip(*columns, *map(repeat, _WRITTEN[table][2]), strict=False)  # the constants repeat: not strict
    try:
        with open_connection().cursor() as cur:
            # the bytea columns through psycopg's C dumper: the one ``set_types`` finds for the type by default
            # is dbapi20's for its ``Binary`` wrapper, two Python calls a value (100,400 values of 20,080 deals)
            cur.adapters.register_dumper(None, BytesBinaryDumper)
            with cur.copy(_PG_COPY[table]) as copy:
                copy.set_types(_PG_TYPES[table])
                for row in rows:
                    copy.write_row(row)
                if meanwhile is not None:
                    meanwhile()
    except psycopg.OperationalError as exc:
        raise BankUnavailable("the bank's connection was lost in a transaction: {exc}", exc=exc) from exc


def in_process(bank: SqliteBank) -> bool:
    """Whether the bank's engine works in this process (SQLite), not in a server of its own (PostgreSQL)."""
    return _postgres(bank._db) is None


# Any: the PostgreSQL bank's connection wrapper (pg_store) hands out its psycopg connection through ``_open``
def _postgres(db: Connection) -> Any:
    """The PostgreSQL bank's way to its psycopg connection, or None on SQLite (the engines share this module)."""
    return getattr(db, "_open", None)
