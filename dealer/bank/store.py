"""The SQLite deal bank: ``composed.Bank`` over ``SqliteEngine``, one file, its connection and transactions.

WAL journal with ``synchronous=FULL``: a transaction is on disk (fsynced) when COMMIT returns, so a deal is
acknowledged only once it would survive a crash. Every write is one ``BEGIN IMMEDIATE`` … ``COMMIT``
transaction; the ledger head is re-read inside it, so several processes may share one bank file.
One writer at a time: a writer that finds the file locked waits up to ``busy_timeout`` seconds for its turn
(SQLite's busy handler), then gets ``BankBusyError`` naming the file and the wait; nothing is half-written.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from .composed import RESERVED_KINDS, Bank, utc_now
from .deals import DealState, ImportItem, ImportOutcome, StoredDeal, base_name, deal_rows, source_public
from .draws import ChainCheck, DrawRecord, DrawState, PriorDraw
from .errors import BankBusyError, BankError, BankUnavailableError, DuplicateDealError
from .schema import SCHEMA, SCHEMA_OBJECTS, SCHEMA_VERSION, Connection
from .seals import Seal, seal_from_entry

__all__ = [  # the names other modules import from here (kept when the bank was split into its tables)
    "DEAL_STATES",
    "DEFAULT_BANK_PATH",
    "DRAWN",
    "IN_BANK",
    "PLAYED",
    "RESERVED_KINDS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "BankBusyError",
    "BankError",
    "BankUnavailableError",
    "ChainCheck",
    "DealState",
    "DrawRecord",
    "DrawState",
    "DuplicateDealError",
    "ImportItem",
    "ImportOutcome",
    "PriorDraw",
    "Seal",
    "SqliteBank",
    "SqliteEngine",
    "StoredDeal",
    "base_name",
    "seal_from_entry",
    "source_public",
    "utc_now",
]

DEFAULT_BANK_PATH = Path("var/bank.sqlite")
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another writer's transaction (CLI default; docs/service.md)

# deal states, by their stored names
IN_BANK = DealState.IN_BANK
DRAWN = DealState.DRAWN
PLAYED = DealState.PLAYED
DEAL_STATES = tuple(DealState)

_deal_rows = deal_rows  # the former private name (an importer may build rows with it)
LOOKUP_CHUNK = 500  # deals asked about in one query (SQLite allows 32,766 parameters)
T = TypeVar("T")


class SqliteEngine:
    """One SQLite file: its connection (shared by threads, under a lock), its transactions, its copies."""

    # deals an import commits in one transaction: about 20 ms of write lock on a 2-core laptop (larger batches
    # were measured no faster here)
    import_batch = 1000
    in_process = True
    copies_to_file = True

    def __init__(self, path: Path, busy_timeout: float = BUSY_TIMEOUT_S, read_only: bool = False) -> None:
        """``read_only``: open an existing file without ever writing to it (``bank verify`` reads evidence)."""
        self.path = path
        self.busy_timeout = busy_timeout
        self.read_only = read_only
        self._lock = threading.RLock()
        if read_only:
            uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
            self._db = sqlite3.connect(
                uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            # damaged text (not UTF-8) reads as U+FFFD, so it fails the checks at its own row instead of a page early
            self._db.text_factory = lambda raw: raw.decode("utf-8", "replace")
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if str(self.path) != ":memory:" and not self.path.exists():
            # the bank holds every deal's cards and the draw secrets: owner-only, as SQLite's WAL files then are
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.OperationalError as exc:  # a folder, a file it may not open
            raise self._unavailable(exc) from exc

    def open(self, create_bank: Callable[[Connection], None]) -> str:
        if not self.read_only:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._init_schema(create_bank)
            except sqlite3.DatabaseError as exc:  # a file that is no database (or a damaged one): named
                self._db.close()
                if isinstance(exc, sqlite3.OperationalError):
                    raise self._unavailable(exc) from exc
                raise BankUnavailableError(
                    "{path}: not a bank: SQLite cannot read this file ({reason}); nothing was written",
                    path=self.path,
                    reason=str(exc),
                ) from exc
        with self.read() as db:
            row = db.execute("SELECT value FROM meta WHERE key='bank_id'").fetchone()
        return str(row[0]) if row else ""

    def _init_schema(self, create_bank: Callable[[Connection], None]) -> None:
        names = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        if names >= SCHEMA_OBJECTS and self._db.execute("SELECT COUNT(*) FROM meta").fetchone()[0]:
            return  # an existing bank opens without a write, so never waits for another writer
        for statement in SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)
        with self.tx() as db:
            create_bank(db)

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        """One write transaction; a locked file or a failed write is a ``BankUnavailableError`` (rolled back)."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")  # waits up to busy_timeout for another writer's COMMIT
            except sqlite3.OperationalError as exc:
                raise self._unavailable(exc) from exc
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise self._unavailable(exc) from exc
                raise

    def _unavailable(self, exc: sqlite3.OperationalError) -> BankUnavailableError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return BankBusyError(self.path, self.busy_timeout)
        return BankUnavailableError(
            "{path}: the bank could not write ({reason}); nothing was written", path=self.path, reason=text
        )

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._lock:
            yield self._db

    def write(self, attempt: Callable[[], T], recover: Callable[[], T | None] | None = None) -> T:
        return attempt()  # a COMMIT in this process either returned or raised: nothing to recover

    def existing_ids(self, db: Connection, deals: Sequence[bytes]) -> dict[bytes, int]:
        found: dict[bytes, int] = {}
        for start in range(0, len(deals), LOOKUP_CHUNK):
            part = deals[start : start + LOOKUP_CHUNK]
            sql = f"SELECT canonical, deal_id FROM deals WHERE canonical IN ({','.join('?' * len(part))})"
            for canonical, deal_id in db.execute(sql, part):
                found[bytes(canonical)] = int(deal_id)
        return found

    def copy_to(self, path: Path, key_dir: Path) -> tuple[int, str]:
        """SQLite's online backup: the destination is written in one transaction, so a copy interrupted midway
        keeps its previous content."""
        if not path.parent.is_dir():
            raise FileNotFoundError(f"{path.parent}: no such folder (is the disk of the copy there?)")
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        target = sqlite3.connect(path, timeout=self.busy_timeout, isolation_level=None)
        try:
            target.execute("PRAGMA synchronous=FULL")  # the copy's commit is on its disk when backup returns
            with self._lock:
                self._db.backup(target)
        finally:
            target.close()
        _copy_custody(key_dir, path)
        with SqliteBank(path, key_dir, read_only=True) as copy:
            return copy.anchor()

    def describe(self) -> str:
        return str(self.path)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _copy_custody(key_dir: Path, path: Path) -> None:
    """The custody record (sealed under the chief judge's passphrase: no secret in the clear) beside the copy,
    so a restored bank keeps its signing key; written only when it changed."""
    from dealer.custody.files import copy_record_path, record_path
    from dealer.fsutil import write_atomic

    try:
        record = record_path(key_dir).read_bytes()
    except FileNotFoundError:
        return
    beside = copy_record_path(path)
    if not beside.exists() or beside.read_bytes() != record:
        write_atomic(beside, record)


class SqliteBank(Bank):
    """The deal bank in one SQLite file, implementing ``dealer.bank.repository.BankRepository``."""

    def __init__(
        self,
        path: Path | str = DEFAULT_BANK_PATH,
        key_dir: Path | str | None = None,
        clock: Callable[[], str] = utc_now,
        busy_timeout: float = BUSY_TIMEOUT_S,
        read_only: bool = False,
    ) -> None:
        """``read_only``: open an existing file without ever writing to it (``bank verify`` reads evidence)."""
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._sqlite = SqliteEngine(self.path, busy_timeout, read_only)
        super().__init__(self._sqlite, self.path.parent if key_dir is None else key_dir, clock)

    def raw_connection(self) -> sqlite3.Connection:
        """For the verifier and tests: the underlying connection (read it, do not write through it)."""
        return self._sqlite._db
