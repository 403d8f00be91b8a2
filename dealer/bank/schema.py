"""The SQLite bank's tables and their columns, named once: every statement of the table classes is built from
these names (no ``SELECT *``, no positional ``INSERT``). PostgreSQL's migrations (``pg_schema``) lay the same
tables with the same columns; ``meta.schema`` is the version of what is stored, shared by both engines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ledger (
    idx INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    body BLOB NOT NULL,
    hash BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_kind ON ledger(kind);
CREATE TABLE IF NOT EXISTS deals (
    deal_id INTEGER PRIMARY KEY,
    ledger_index INTEGER NOT NULL,
    canonical BLOB NOT NULL UNIQUE,
    salt BLOB NOT NULL,
    commitment BLOB NOT NULL,
    source TEXT NOT NULL,
    dealing_order BLOB,
    created TEXT NOT NULL,
    state TEXT NOT NULL,
    session TEXT
);
CREATE INDEX IF NOT EXISTS deals_out_of_bank ON deals(deal_id) WHERE state <> 'bank';
CREATE TABLE IF NOT EXISTS draws (
    label TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    commit_index INTEGER NOT NULL,
    secret BLOB NOT NULL,
    public_value TEXT,
    drawn TEXT
);
CREATE TABLE IF NOT EXISTS batches (
    idx INTEGER PRIMARY KEY,
    first_deal INTEGER NOT NULL,
    deals INTEGER NOT NULL,
    packed BLOB NOT NULL
);
"""

SCHEMA_OBJECTS = frozenset(re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", SCHEMA))

COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "ledger": ("idx", "kind", "body", "hash"),
    "deals": (
        "deal_id",
        "ledger_index",
        "canonical",
        "salt",
        "commitment",
        "source",
        "dealing_order",
        "created",
        "state",
        "session",
    ),
    "draws": ("label", "state", "commit_index", "secret", "public_value", "drawn"),
    "batches": ("idx", "first_deal", "deals", "packed"),  # bank format 3 (``batches``)
}
ORDER = {"meta": "key", "ledger": "idx", "deals": "deal_id", "draws": "commit_index", "batches": "idx"}


def column_list(table: str) -> str:
    return ", ".join(COLUMNS[table])


def insert_sql(table: str, columns: Sequence[str] | None = None) -> str:
    """``INSERT INTO table (named columns) VALUES (?, …)``: the ``?`` marks run on both engines."""
    names = tuple(columns) if columns is not None else COLUMNS[table]
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"


def select_sql(table: str, where: str = "", tail: str = "") -> str:
    """``SELECT`` every named column of ``table``, in ``COLUMNS`` order (the row classes' field order)."""
    sql = f"SELECT {column_list(table)} FROM {table}"
    if where:
        sql += f" WHERE {where}"
    return f"{sql} {tail}" if tail else sql


class Connection(Protocol):
    """What the bank uses of a connection: ``sqlite3.Connection``, or ``pg_store``'s psycopg wrapper."""

    # Any: the cursor is sqlite3's or psycopg's; both type a row's column values as Any (typeshed, psycopg)
    # and the bank reads rows by column position into typed records (``DealRow``, ``DrawRow``)
    def execute(self, sql: str, params: Sequence[object] = (), /) -> Any: ...
    # Any: as above, the cursor of either library
    def executemany(self, sql: str, rows: Iterable[Sequence[object]], /) -> Any: ...
