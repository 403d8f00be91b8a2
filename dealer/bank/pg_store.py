"""The deal bank on PostgreSQL (psycopg 3): ``composed.Bank`` over ``PgEngine``, for several writers at once.

The bank's SQL is engine-neutral and goes through ``_PgConnection``, which turns ``?`` placeholders into
psycopg's and keeps the connection alive. What differs is the engine's:

* a write transaction is ``BEGIN`` (READ COMMITTED) then ``pg_advisory_xact_lock`` on the bank's key, so the
  appends of every process on the database are serialised in the database itself: the head is read under the
  lock and the ledger stays one hash chain, and the duplicate check reads every deal committed before (the
  batches' deals have no unique index: ``batches.BatchesTable.ids_of``); the lock goes with the transaction's end
  (commit, rollback, or a dead connection);
* the schema comes from versioned migrations (``pg_schema``), applied under a session advisory lock;
* a lost connection is reopened by itself: a read is simply repeated; a write whose transaction failed before
  COMMIT was rolled back by the server and is retried; a deal whose COMMIT got no answer is looked up by its
  cards, so an acknowledged deal is reported once and never committed twice (other writes then report that the
  outcome is unknown).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg.rows import TupleRow

from .composed import Bank, utc_now
from .errors import BankError, BankUnavailableError
from .pg_schema import LATEST, MIGRATIONS
from .schema import Connection

WRITE_LOCK = 0x6465616C6572  # "dealer": pg_advisory_xact_lock key serialising the bank's writes
MIGRATE_LOCK = WRITE_LOCK + 1
RETRY_SECONDS = 30.0
T = TypeVar("T")


class BankUnavailable(BankUnavailableError):
    """The database could not be reached (or the connection broke) for this operation."""

    def __init__(self, template: str, /, maybe_committed: bool = False, **params: object) -> None:
        super().__init__(template, **params)
        self.maybe_committed = maybe_committed


def normalise_url(value: str | Path) -> str:
    """A URL that went through ``pathlib.Path`` lost a slash (``postgresql:/host/db``): put it back."""
    text = str(value)
    for scheme in ("postgresql:", "postgres:"):
        if text.startswith(scheme) and not text.startswith(scheme + "//"):
            return scheme + "/" + text[len(scheme) :]
    return text


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://…"
    host, db = info.get("host", ""), info.get("dbname", "")
    return f"postgresql://{info.get('user', '')}@{host}:{info.get('port', 5432)}/{db}"


# Any: psycopg types a row's column values as Any; callers convert the one value (int(...))
def _scalar(cur: psycopg.Cursor[TupleRow]) -> Any:
    row = cur.fetchone()
    if row is None:
        raise BankError("the database returned no row")
    return row[0]


@lru_cache(maxsize=512)
def _sql(statement: str) -> str:
    return statement.replace("?", "%s")


class _PgConnection:
    """The subset of ``sqlite3.Connection`` the bank uses, over a psycopg connection that reopens itself."""

    def __init__(self, url: str, connect_timeout: float = 5.0) -> None:
        self.url = url
        self.connect_timeout = connect_timeout
        self._conn: psycopg.Connection[TupleRow] | None = None
        self.in_tx = False
        self.reconnects = 0

    def _open(self) -> psycopg.Connection[TupleRow]:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        if self._conn is not None:
            self.reconnects += 1
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                self._conn = psycopg.connect(
                    self.url, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
                )
                return self._conn
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise BankUnavailable(
                        "cannot reach the bank at {url}: {exc}", url=redact(self.url), exc=exc
                    ) from exc
                time.sleep(0.2)

    def execute(self, sql: str, params: Sequence[object] = ()) -> psycopg.Cursor[TupleRow]:
        word = sql.lstrip()[:8].upper()
        if self.in_tx:
            try:
                return self._open().execute(_sql(sql), params or None)
            except psycopg.OperationalError as exc:
                raise BankUnavailable("the bank's connection was lost in a transaction: {exc}", exc=exc) from exc
        for attempt in (1, 2):  # outside a transaction a statement is a read (or BEGIN): repeat it once
            try:
                cur = self._open().execute(_sql(sql), params or None)
                if word.startswith("BEGIN"):
                    self.in_tx = True
                return cur
            except psycopg.OperationalError as exc:
                if attempt == 2:
                    raise BankUnavailable("the bank's connection was lost: {exc}", exc=exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> psycopg.Cursor[TupleRow]:
        cur = self._open().cursor()
        try:
            cur.executemany(_sql(sql), list(rows))
        except psycopg.OperationalError as exc:
            raise BankUnavailable("the bank's connection was lost in a transaction: {exc}", exc=exc) from exc
        return cur

    def commit(self) -> None:
        conn = self._open()
        try:
            conn.execute("COMMIT")
        except psycopg.OperationalError as exc:
            raise BankUnavailable(
                "the bank's connection was lost at COMMIT: {exc}", maybe_committed=True, exc=exc
            ) from exc
        finally:
            self.in_tx = False

    def rollback(self) -> None:
        self.in_tx = False
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            return  # the server rolls back a dead connection's transaction itself
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            conn.close()

    def connection(self) -> psycopg.Connection[TupleRow]:
        """The psycopg connection (opened again if it was lost), for what the wrapper does not cover (``COPY``)."""
        return self._open()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


class PgEngine:
    """A PostgreSQL database holding one bank: a connection that reopens itself, writes serialised by an advisory
    lock, the schema from versioned migrations."""

    # each transaction costs a handful of round trips and a commit on top of its rows: an import of 20,080 new
    # deals took 0.30 s to write in batches of 5,000 against 0.34 s in batches of 1,000 (each about 80 ms of
    # the write lock)
    import_batch = 5000
    in_process = False
    copies_to_file = False

    def __init__(self, url: str, create: bool = True, schema: bool | None = None) -> None:
        self.url = normalise_url(url)
        self.db = _PgConnection(self.url)
        self._lock = threading.RLock()
        self._create = create
        self._schema = create if schema is None else schema

    # -- the schema ---------------------------------------------------------------------------------------
    # Any: a psycopg row (or None); psycopg types its column values as Any, callers convert the one they read
    def _one(self, sql: str, params: Sequence[object] = ()) -> Any:
        with self._lock:
            return self.db.execute(sql, params).fetchone()

    def schema_version(self) -> int:
        if not self._has_schema():
            return 0
        row = self._one("SELECT COALESCE(MAX(version), 0) FROM schema_version")
        return int(row[0])

    def _migrate(self) -> None:
        db = self.db
        with self._lock:
            db.execute("SELECT pg_advisory_lock(?)", (MIGRATE_LOCK,))
            try:
                # a row per migration, written under MIGRATE_LOCK: no index, and no TOAST table (a time, not text);
                # databases laid before bank format 3 keep theirs (version INTEGER PRIMARY KEY, applied TEXT)
                db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied TIMESTAMPTZ)")
                have = int(_scalar(db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")))
                if have > LATEST:
                    raise BankError(
                        "{url}: the bank's schema is version {have}, newer than this program's {latest}: "
                        "update bridge-dealer",
                        url=redact(self.url),
                        have=have,
                        latest=LATEST,
                    )
                for version, sql in MIGRATIONS:
                    if version <= have:
                        continue
                    db.execute("BEGIN")
                    try:
                        db.execute(sql)
                        db.execute("INSERT INTO schema_version (version, applied) VALUES (?, ?)", (version, utc_now()))
                    except BaseException:
                        db.rollback()
                        raise
                    db.commit()
            finally:
                db.execute("SELECT pg_advisory_unlock(?)", (MIGRATE_LOCK,))

    def open(self, create_bank: Callable[[Connection], None]) -> str:
        deadline = time.monotonic() + RETRY_SECONDS
        while True:  # every step is idempotent: a connection lost on the way means starting over
            try:
                return self._open_once(create_bank)
            except BankUnavailable:
                self.db.rollback()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _has_schema(self) -> bool:
        row = self._one("SELECT to_regclass('schema_version') IS NOT NULL")
        return bool(row[0])

    def _open_once(self, create_bank: Callable[[Connection], None]) -> str:
        if not self._schema and not self._has_schema():  # open only: never lay a schema into a stranger's database
            return ""
        self._migrate()
        if self._create:
            with self.tx() as db:
                create_bank(db)
        row = self._one("SELECT value FROM meta WHERE key='bank_id'")
        return str(row[0]) if row else ""

    # -- transactions -------------------------------------------------------------------------------------
    @contextmanager
    def tx(self) -> Iterator[Connection]:
        db = self.db
        with self._lock:
            # READ COMMITTED whatever the server's default: each statement after the lock sees every write
            # committed before it was granted (the head, the batches the duplicate check reads); REPEATABLE READ
            # would take the snapshot at the lock's own statement, before the previous writer's commit
            db.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            try:
                db.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
                yield db
            except BaseException:
                db.rollback()
                raise
            db.commit()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._lock:
            yield self.db

    def write(self, attempt: Callable[[], T], recover: Callable[[], T | None] | None = None) -> T:
        """A write survives a lost connection: a transaction that failed before COMMIT was rolled back by the
        server and is tried again; one whose COMMIT got no answer is looked up (``recover``), so an acknowledged
        write is reported once and never made twice (without ``recover`` its outcome is reported unknown)."""
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                return attempt()
            except BankUnavailable as exc:
                if exc.maybe_committed:
                    if recover is None:
                        raise
                    found = self._retrying(recover)
                    if found is not None:
                        return found
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def _retrying(self, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + RETRY_SECONDS
        while True:
            try:
                return fn()
            except BankUnavailable as exc:
                if exc.maybe_committed or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    # -- bulk writes --------------------------------------------------------------------------------------
    def existing_ids(self, db: Connection, deals: Sequence[bytes]) -> dict[bytes, int]:
        """In one query, the deals sent as one array (a query of hundreds of placeholders costs psycopg more to
        prepare than to run)."""
        found: dict[bytes, int] = {}
        if deals:
            for canonical, deal_id in db.execute(
                "SELECT canonical, deal_id FROM deals WHERE canonical = ANY(%b)", [deals]
            ):
                found[bytes(canonical)] = int(deal_id)
        return found

    def copy_to(self, path: Path, key_dir: Path) -> tuple[int, str]:
        raise BankError(
            "{url}: a PostgreSQL bank is not copied into a file; its second copy is a synchronous standby "
            "(streaming replication, docs/scale.md)",
            url=redact(self.url),
        )

    def describe(self) -> str:
        return redact(self.url)

    def close(self) -> None:
        with self._lock:
            self.db.close()


class PostgresBank(Bank):
    """The deal bank in a PostgreSQL database (one bank per database)."""

    def __init__(
        self,
        url: str,
        key_dir: Path | str | None = None,
        clock: Callable[[], str] = utc_now,
        create: bool = True,
        schema: bool | None = None,
    ) -> None:
        """``create``: make the bank (schema and genesis) when the database has none. ``schema`` (default: as
        ``create``): lay the schema into a database without one, but no genesis (``dealer bank migrate``)."""
        self._pg = PgEngine(url, create, schema)
        self.url = self._pg.url
        super().__init__(self._pg, Path("var") if key_dir is None else key_dir, clock)

    def schema_version(self) -> int:
        return self._pg.schema_version()

    def raw_connection(self) -> _PgConnection:
        """For ``dealer bank migrate`` and tests: the bank's connection wrapper (read it, do not write through it)."""
        return self._pg.db
