"""Bulk import of deals already in canonical form: one transaction per batch, rows sent as columns at once.

``Bank.import_deals`` takes ``ImportItem`` objects and asks the bank about each deal on its own, and writes
each deal's ledger entry in full; an import of thousands of files calls this instead, with the deals as canonical
13-byte forms and their sources as ``"F,B,L"`` texts (``source_text``), and writes them in the compact form
(``compact``): the batch's deals in one row of ``batches`` (bank format 3: cards, salts and sources packed,
``packed``), no ledger row for them; the batch's ``import`` entry closes the run, chained onto the hash of the
last deal's entry, computed here as every reader rebuilds it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import partial
from hashlib import sha256
from typing import NamedTuple

from dealer.core.json_types import JsonObject
from dealer.integrity.ledger import Entry, EntryKind

from . import compact
from .compact import ENTRY_HEAD, entry_tail
from .deals import ImportOutcome
from .engine import Engine
from .ledger_table import LedgerTable, ledger_row

SALT_SIZE = 16  # bytes of a deal's commitment salt, as the bank's own commits use


def source_text(file_index: int, board: int | None, line: int | None) -> str:
    """A deal's ``source`` as the bulk import stores it (``compact.compact_source``): its file's position in the
    batch's ``files``, its board and line."""
    return compact.compact_source(file_index, board, line)


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
    engine: Engine,
    ledger: LedgerTable,
    clock: Callable[[], str],
    deals: Sequence[bytes],
    sources: Sequence[str],
    batch: JsonObject,
    only_ours_upto: int | None = None,
    while_ledger: Callable[[ImportOutcome], None] | None = None,
    while_deals: Callable[[], None] | None = None,
    prepared: Salted | None = None,
) -> ImportOutcome:
    """Commit ``deals`` (distinct canonical forms) with their sources (``source_text``: the position of the deal's
    file in ``batch["files"]``, board, line) in ONE transaction of ``engine``, in the compact form (``compact``),
    closed by an ``import`` entry describing the batch; those already in the bank are listed as duplicates.
    Any error rolls the whole batch back. ``prepared``: ``salted(deals, sources)``, made beforehand.
    (``Bank.import_canonical`` calls this with its engine, ledger and clock.)

    ``only_ours_upto``: the caller knows the bank held no deal when its import began (0) or holds only the deals
    its earlier batches committed, up to this id. If the bank's last deal id is still that (deals are never
    removed, and any other writer's deal comes after it), none of ``deals`` can be in the bank, and it is not
    asked; otherwise it is (as it is without this).

    ``while_ledger(outcome)`` and ``while_deals()``: work to do while a PostgreSQL server writes the batch's
    rows (the client would otherwise wait about as long as the server takes over them), the outcome being what
    the batch commits if it commits (if it fails, the error stops the caller's import). Each is called once, in
    the transaction, in that order; on SQLite after the rows are written."""
    outcome = ImportOutcome()
    with engine.tx() as db:
        last, prev = ledger.head(db)
        own = db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0]
        held = max(int(own), ledger.batches.last_deal(db))
        known = {} if held == only_ours_upto else {**ledger.batches.ids_of(db, deals), **engine.existing_ids(db, deals)}
        first_id = next_id = held + 1
        ts = clock()  # one transaction: every deal of the batch is committed at the same moment
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
            ledger.batches.insert(db, batch_index, first_id, canonicals, salts, [compact.parse_source(s) for s in srcs])
        meanwhile()
        summary = {
            **batch,
            "imported": count,
            "duplicates": len(outcome.duplicates),
            "first_deal": first_id if count else None,
            "last_deal": next_id - 1 if count else None,
        }
        ledger.insert(db, [ledger_row(Entry(batch_index, EntryKind.IMPORT, ts, prev, summary))])
        outcome.batch_index = batch_index
    return outcome
