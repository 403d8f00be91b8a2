"""Moving a bank between engines (SQLite <-> PostgreSQL): every row copied verbatim, in one transaction.

The destination must hold no bank yet. Ledger entries, deals, draws and meta are copied byte for byte (the ledger
bodies are the hashed bytes, so the hash chain, seals and every draw's bundle are the same on both sides); the
caller then runs ``verify_bank`` on both. Nothing is half written: the copy commits at the end or not at all.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .batches import FORMAT
from .errors import BankError
from .repository import BankRepository
from .schema import SCHEMA, insert_sql

TABLES = ("meta", "ledger", "deals", "draws", "batches")
PAGE = 5000


@dataclass(frozen=True, slots=True)
class MigrateReport:
    rows: dict[str, int]


def _sqlite_destination(path: Path) -> sqlite3.Connection:
    if path.exists() and path.stat().st_size > 0:
        raise BankError("{path}: exists already; migrate into a new file", path=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():  # the bank holds every deal's cards: owner-only, as SqliteBank makes it
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    return db


def migrate_bank(
    source: BankRepository, destination: str | Path, progress: Callable[[str, int], None] | None = None
) -> MigrateReport:
    """Copy ``source`` into a new bank at ``destination`` (a SQLite path or a postgresql:// URL)."""
    from .engines import is_url
    from .pg_store import PostgresBank, normalise_url

    pg: PostgresBank | None = None
    if is_url(destination):
        pg = PostgresBank(normalise_url(destination), create=False, schema=True)
        if pg.bank_id or pg.ledger_size() > 0:
            pg.close()
            raise BankError(
                "{destination}: that database holds a bank already; migrate into an empty one", destination=destination
            )
        # Any: a psycopg connection here, a sqlite3 one below; only commit/rollback/execute are used of either
        target: Any = pg.raw_connection()
        start, finish, undo = "BEGIN", target.commit, target.rollback
    else:
        target = _sqlite_destination(Path(destination))
        start = "BEGIN IMMEDIATE"

        def finish() -> None:
            target.execute("COMMIT")

        def undo() -> None:
            target.execute("ROLLBACK")

    rows: dict[str, int] = {}
    try:
        target.execute(start)
        try:
            packs = source.meta().get("schema") == str(FORMAT)  # an older bank has no batches (nor, maybe, their table)
            for table in TABLES if packs else TABLES[:-1]:
                n = 0
                for batch in source.stored_rows(table, PAGE):
                    target.executemany(insert_sql(table), batch)
                    n += len(batch)
                    if progress is not None:
                        progress(table, n)
                rows[table] = n
        except BaseException:
            undo()
            raise
        finish()
    finally:
        target.close()
    return MigrateReport(rows)
