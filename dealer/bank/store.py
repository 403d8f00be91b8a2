"""The SQLite deal bank: the connection, its transactions and the signing key, over the bank's table classes.

WAL journal with ``synchronous=FULL``: a transaction is on disk (fsynced) when COMMIT returns, so a deal is
acknowledged only once it would survive a crash. Every write is one ``BEGIN IMMEDIATE`` … ``COMMIT``
transaction; the ledger head is re-read inside it, so several processes may share one bank file.
One writer at a time: a writer that finds the file locked waits up to ``busy_timeout`` seconds for its turn
(SQLite's busy handler), then gets ``BankBusyError`` naming the file and the wait; nothing is half-written.

The SQL lives in the table classes, one job each: ``ledger_table`` (the hash chain and its Merkle leaves),
``deals``, ``seals`` and ``draws`` (with the draw's state machine); their statements run unchanged on
PostgreSQL (``pg_store``, the one place where the engines differ).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from dealer.core import Deal
from dealer.core.json_types import JsonObject

from .api import CommittedDeal, DealSource
from .deals import (
    DealRow,
    DealsTable,
    DealState,
    ImportItem,
    ImportOutcome,
    StoredDeal,
    base_name,
    deal_rows,
    source_public,
)
from .draws import ChainCheck, DrawRecord, DrawRow, DrawsTable, DrawState, PriorDraw
from .errors import BankBusyError, BankError, BankUnavailableError, DuplicateDealError
from .ledger import DealEntry, Entry, EntryKind
from .ledger_table import LedgerRow, LedgerTable
from .schema import SCHEMA, SCHEMA_OBJECTS, SCHEMA_VERSION, Connection, insert_sql
from .seals import Seal, Seals, seal_from_entry

if TYPE_CHECKING:  # cryptography loads with the keyring: reading the bank goes without it
    from dealer.custody import Keyring

__all__ = [  # the names other modules import from here (kept when the bank was split into its tables)
    "DEAL_STATES",
    "DEFAULT_BANK_PATH",
    "DRAWN",
    "IN_BANK",
    "PLAYED",
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

RESERVED_KINDS = frozenset(
    {
        EntryKind.GENESIS,
        EntryKind.DEAL,
        EntryKind.VOID,
        EntryKind.IMPORT,
        EntryKind.SEAL,
        EntryKind.DRAW_COMMIT,
        EntryKind.PUBLIC_VALUE,
        EntryKind.DRAW,
        EntryKind.REVEAL,
        EntryKind.DRAW_PUBLISHED,
        EntryKind.DRAW_VOID,
    }
)

_deal_rows = deal_rows  # the former private name (an importer may build rows with it)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class SqliteBank:
    """The deal bank in one SQLite file, implementing ``dealer.bank.repository.BankRepository``."""

    # deals an import commits in one transaction: about 20 ms of write lock on a 2-core laptop (larger batches
    # were measured no faster here)
    import_batch = 1000

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
        self._setup(self.path.parent if key_dir is None else key_dir, clock)
        if read_only:
            uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
            self._db = sqlite3.connect(
                uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            # damaged text (not UTF-8) reads as U+FFFD, so it fails the checks at its own row instead of a page early
            self._db.text_factory = lambda raw: raw.decode("utf-8", "replace")
            self._read_bank_id()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if str(self.path) != ":memory:" and not self.path.exists():
            # the bank holds every deal's cards and the draw secrets: owner-only, as SQLite's WAL files then are
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.OperationalError as exc:  # a folder, a file it may not open
            raise self._unavailable(exc) from exc
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._init_schema()
        except sqlite3.DatabaseError as exc:  # a file that is no database (or a damaged one): named, not a traceback
            self._db.close()
            if isinstance(exc, sqlite3.OperationalError):
                raise self._unavailable(exc) from exc
            raise BankUnavailableError(
                "{path}: not a bank: SQLite cannot read this file ({reason}); nothing was written",
                path=self.path,
                reason=str(exc),
            ) from exc

    def _setup(self, key_dir: Path | str, clock: Callable[[], str]) -> None:
        """What every engine's bank has besides its connection: the key's place, the clock, the tables."""
        self.key_dir = Path(key_dir)
        self._clock = clock
        self._lock = threading.RLock()
        self._keyring: Keyring | None = None
        self._ledger = LedgerTable()
        self._deals = DealsTable(self._ledger)
        self._seals = Seals(self._ledger)
        self._draws = DrawsTable(self._ledger, self._deals)

    # -- plumbing ----------------------------------------------------------------------------------
    def _init_schema(self) -> None:
        names = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        if names >= SCHEMA_OBJECTS and self._db.execute("SELECT COUNT(*) FROM meta").fetchone()[0]:
            self._read_bank_id()  # an existing bank opens without a write, so never waits for another writer
            return
        for statement in SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)
        with self._tx() as db:
            self._create_bank(db)
        self._read_bank_id()

    def _create_bank(self, db: Connection) -> None:
        """Inside a transaction: a database without a bank gets its id, format version and genesis entry."""
        if db.execute("SELECT COUNT(*) FROM meta").fetchone()[0]:
            return
        import uuid  # here: only a new bank needs it (it loads platform)

        bank_id = str(uuid.uuid4())
        db.executemany(insert_sql("meta"), [("bank_id", bank_id), ("schema", str(SCHEMA_VERSION))])
        self._append(db, EntryKind.GENESIS, {"bank": bank_id, "schema": SCHEMA_VERSION})

    def _read_bank_id(self) -> None:
        row = self._one("SELECT value FROM meta WHERE key='bank_id'")
        self.bank_id: str = str(row[0]) if row else ""  # "" only in a damaged bank (verify reports it)

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
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
    def _read(self) -> Iterator[Connection]:
        """The connection for a read, under the lock (the connection is shared by threads)."""
        with self._lock:
            yield self._db

    # Any: a sqlite3/psycopg row (or None); both libraries type its column values as Any
    def _one(self, sql: str, params: Sequence[object] = ()) -> Any:
        with self._lock:
            return self._db.execute(sql, params).fetchone()

    # Any: sqlite3/psycopg rows; both libraries type their column values as Any
    def _all(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self._lock:
            return list(self._db.execute(sql, params).fetchall())

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SqliteBank:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _head(self, db: Connection) -> tuple[int, str]:
        return self._ledger.head(db)

    def _append(self, db: Connection, kind: str, data: JsonObject, ts: str | None = None) -> Entry:
        return self._ledger.append(db, kind, data, ts or self._clock())

    def now(self) -> str:
        return self._clock()

    # -- the chief judge's custody (docs/custody.md) ---------------------------------------------------
    def unlock(self, keyring: Keyring) -> None:
        """Hold ``keyring`` (the chief judge's, unlocked) in memory: seals, commitments and voids are signed with it,
        and draw secrets sealed and opened. Refused unless it is the key that signed the bank's seals."""
        latest = self.latest_seal()
        if latest is not None and latest.public_key != keyring.public_key:
            from dealer.custody import CustodyError

            raise CustodyError(
                "this custody key ({given}…) did not sign the bank's seals (signed by {public}…): it is not this "
                "bank's; nothing was signed",
                given=keyring.public_key[:16],
                public=latest.public_key[:16],
            )
        self._keyring = keyring

    def lock(self) -> None:
        self._keyring = None

    @property
    def unlocked(self) -> bool:
        """The key is here for this step: unlocked, and not withheld from whoever asked (``custody.withheld``)."""
        if self._keyring is None:
            return False
        from dealer.custody.withheld import key_withheld  # loaded with the keyring already: it costs nothing here

        return not key_withheld()

    @property
    def key_loaded(self) -> bool:
        """The key is in memory, for whomever it is (``unlocked`` says whether this step may use it)."""
        return self._keyring is not None

    @property
    def keyring(self) -> Keyring:
        from dealer.custody import CustodyLockedError
        from dealer.custody.withheld import key_withheld

        if self._keyring is None:
            raise CustodyLockedError(
                "this step needs the chief judge's key: give the custody passphrase (dealer custody init makes it)"
            )
        if key_withheld():
            raise CustodyLockedError(
                "this step needs the chief judge's key, which is open for another browser: sign in here with the "
                "custody passphrase"
            )
        return self._keyring

    def sign(self, message: bytes) -> str:
        return self.keyring.sign(message)

    def public_key_hex(self) -> str:
        return self.keyring.public_key

    # -- BankApi -----------------------------------------------------------------------------------
    def commit_deal(self, deal: Deal, source: DealSource) -> CommittedDeal:
        with self._tx() as db:
            return self._deals.commit(db, deal, source, self._clock())

    def void_deal(self, reason: str, station: str | None, detail: JsonObject | None = None) -> int:
        if not reason.strip():
            raise BankError("a voided deal needs a reason")
        data: JsonObject = {"reason": reason, "station": station}
        if detail:
            data["detail"] = detail
        with self._tx() as db:
            return self._append(db, EntryKind.VOID, data).index

    def record_event(self, kind: str, payload: JsonObject) -> int:
        if kind in RESERVED_KINDS:
            raise BankError(
                "ledger entry kind {kind!r} is written by the bank itself, not through record_event", kind=kind
            )
        with self._tx() as db:
            return self._append(db, kind, payload).index

    def deal_count(self) -> int:
        with self._read() as db:
            return self._deals.count(db)

    def ledger_head(self) -> str:
        with self._read() as db:
            return self._ledger.head(db)[1]

    def ledger_size(self) -> int:
        with self._read() as db:
            return self._ledger.head(db)[0] + 1

    def anchor(self) -> tuple[int, str]:
        """The ledger's size and head hash, read together: what officials note as ``SIZE:HASH`` in their acts."""
        with self._read() as db:
            last, head = self._ledger.head(db)
            return last + 1, head

    def copy_to(self, path: Path) -> tuple[int, str]:
        """A whole, consistent copy of this bank in ``path`` (SQLite's online backup: the destination is written
        in one transaction, so a copy interrupted midway keeps its previous content), owner-only; then the copy
        is opened on its own and its ledger's (size, head) returned, for the caller to compare with ``anchor``.
        The folder must be there: a pulled-out stick's mount point is not made again on the laptop's own disk."""
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
        self._copy_custody(path)
        with SqliteBank(path, self.key_dir, read_only=True) as copy:
            return copy.anchor()

    def _copy_custody(self, path: Path) -> None:
        """The custody record (sealed under the chief judge's passphrase: no secret in the clear) beside the copy,
        so a restored bank keeps its signing key; written only when it changed."""
        from dealer.custody.files import copy_record_path, record_path
        from dealer.fsutil import write_atomic

        try:
            record = record_path(self.key_dir).read_bytes()
        except FileNotFoundError:
            return
        beside = copy_record_path(path)
        if not beside.exists() or beside.read_bytes() != record:
            write_atomic(beside, record)

    def unsealed(self) -> tuple[int, int]:
        """Ledger entries after the latest seal entry, and deals after the deals it covers (for automatic seals)."""
        with self._read() as db:
            latest = self._seals.latest(db)
            last, _ = self._ledger.head(db)
            deals = self._deals.last_id(db)
        if latest is None:
            return last + 1, deals
        return last - latest.ledger_index, deals - latest.last_deal

    # -- imports -----------------------------------------------------------------------------------
    def import_deals(
        self,
        items: Iterable[ImportItem],
        batch: JsonObject,
        progress: Callable[[int], None] | None = None,
    ) -> ImportOutcome:
        """Commit many deals in ONE transaction, closed by an ``import`` entry describing the batch.

        A deal already in the bank (or earlier in ``items``) is not committed; it is listed in
        ``duplicates`` with the id it repeats. Any error rolls the whole import back. Every deal of the
        import is committed at the same moment (one transaction, one time).
        """
        with self._tx() as db:
            outcome = self._deals.import_items(db, items, batch, self._clock(), progress)
        if progress is not None:
            progress(len(outcome.imported) + len(outcome.duplicates))
        return outcome

    # -- ledger reading ----------------------------------------------------------------------------
    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[LedgerRow]:
        """Raw ledger rows (index, kind, body, hash) in order, read in pages (each under the lock)."""
        end = stop if stop is not None else 1 << 62
        while start < end:
            with self._read() as db:
                rows = list(self._ledger.page(db, start, end))
            if not rows:
                return
            yield from rows
            start = rows[-1].idx + 1

    def entry_bodies(self, indices: Sequence[int]) -> dict[int, bytes]:
        """The exact bytes of several ledger entries, by index (read in batches)."""
        with self._read() as db:
            return self._ledger.bodies(db, indices)

    def entry(self, index: int) -> Entry:
        with self._read() as db:
            return self._ledger.entry(db, index)

    def entries_of_kind(self, kind: str) -> list[Entry]:
        with self._read() as db:
            return self._ledger.of_kind(db, kind)

    def deal_entries(self, start: int = 0) -> list[DealEntry]:
        """The ``deal`` entries from ledger index ``start`` on, typed (their commitment, id and public source)."""
        with self._read() as db:
            return self._ledger.deal_entries(db, start)

    def leaves(self, size: int) -> list[bytes]:
        """Merkle leaf hashes of entries 0..size-1 (cached: entries never change once written)."""
        with self._read() as db:
            return self._ledger.leaves(db, size)

    # -- seals -------------------------------------------------------------------------------------
    def seal(self) -> Seal:
        """Sign a checkpoint of the whole ledger so far; deals committed later go into a later seal."""
        keyring = self.keyring
        with self._tx() as db:
            return self._seals.make(db, self.bank_id, keyring, self._deals.last_id(db), self._clock())

    def seals(self) -> list[Seal]:
        with self._read() as db:
            return self._seals.all(db)

    def latest_seal(self) -> Seal | None:
        with self._read() as db:
            return self._seals.latest(db)

    # -- deals -------------------------------------------------------------------------------------
    def get_deal(self, deal_id: int) -> StoredDeal:
        with self._read() as db:
            return self._deals.get(db, deal_id)

    def get_deals(self, deal_ids: Sequence[int]) -> list[StoredDeal]:
        """Several deals in the order asked (read in batches)."""
        ids = list(deal_ids)
        with self._read() as db:
            found = self._deals.get_many(db, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise BankError("deals {missing} are not in the bank", missing=missing[:10])
        return [found[i] for i in ids]

    def deal_rows(self) -> Iterator[DealRow]:
        """Every row of the deals table as stored, in id order (what ``verify_bank`` checks)."""
        after = 0
        while True:
            with self._read() as db:
                rows = self._deals.page(db, after)
            if not rows:
                return
            yield from rows
            after = rows[-1].deal_id

    def iter_deals(self) -> Iterator[StoredDeal]:
        after = 0
        while True:
            with self._read() as db:
                rows = self._deals.page(db, after)
                deals = self._deals.stored(db, rows)
            if not rows:
                return
            yield from deals
            after = rows[-1].deal_id

    def find_deal(self, deal: Deal) -> int | None:
        with self._read() as db:
            return self._deals.id_of(db, deal.to_bytes())

    def state_counts(self) -> dict[str, int]:
        with self._read() as db:
            return self._deals.state_counts(db)

    def eligible_ids(self, last_deal: int) -> list[int]:
        """Deals up to ``last_deal`` (a seal's) that were never drawn, in bank order."""
        return [i for a, b in self.eligible_ranges(last_deal) for i in range(a, b + 1)]

    def _out_of_bank(self, last_deal: int) -> list[int]:
        with self._read() as db:
            return self._deals.out_of_bank(db, last_deal)

    def eligible_ranges(self, last_deal: int) -> list[list[int]]:
        """The eligible deal ids as inclusive ranges ``[[first, last], ...]``: 1..last_deal minus drawn deals.

        Deal ids run 1, 2, 3, … without gaps (``verify_bank`` checks it), so only the few drawn ids are read.
        """
        ranges: list[list[int]] = []
        start = 1
        for i in [*self._out_of_bank(last_deal), last_deal + 1]:
            if i > start:
                ranges.append([start, i - 1])
            start = i + 1
        return ranges

    def eligible_count(self, last_deal: int) -> int:
        return last_deal - len(self._out_of_bank(last_deal))

    # -- draws (used by dealer.draw, which reads and checks their documents) ------------------------
    def draw_commit(self, label: str, secret: bytes, data: JsonObject, *, follows: ChainCheck) -> Entry:
        """Record a signed commitment. Inside the transaction ``follows`` sees the bank's earlier draws and
        refuses unless the commitment names the previous one and the running total drawn (so two processes
        cannot both chain onto the same draw)."""
        with self._tx() as db:
            return self._draws.commit(db, label, secret, data, self._clock(), follows)

    def draw_publish(self, label: str, data: JsonObject) -> Entry:
        """The commitment was put before the hall: from now on the public value may be entered."""
        with self._tx() as db:
            return self._draws.publish(db, label, data, self._clock())

    def draw_published(self, label: str) -> bool:
        with self._read() as db:
            return self._draws.published(db, label)

    def draw_void(self, label: str, secret: bytes, data: JsonObject, *, after_publish: bool = False) -> Entry:
        """Abandon a prepared draw, publicly: a ledger entry with its reason (and K, stored open from now); never
        silently. Only before its public value is entered; after its commitment was shown to the hall only when
        ``after_publish`` (the regulation's allowance, checked by the draw)."""
        with self._tx() as db:
            return self._draws.void(db, label, secret, data, self._clock(), after_publish)

    def draw_public_value(self, label: str, value: str, data: JsonObject) -> Entry:
        with self._tx() as db:
            return self._draws.public_value(db, label, value, data, self._clock())

    def draw_result(self, label: str, sealed: bytes, count: int, data: JsonObject) -> Entry:
        """Store a run draw's result sealed (the chief judge's custody): the deals stay in the bank, unmarked."""
        with self._tx() as db:
            return self._draws.result(db, label, sealed, count, data, self._clock())

    def draw_reveal(self, label: str, secret: bytes, drawn: Sequence[int], data: JsonObject) -> Entry:
        """Publish K and the result: stored open from now, and the drawn deals marked played."""
        with self._tx() as db:
            return self._draws.reveal(db, label, secret, drawn, data, self._clock())

    def get_draw(self, label: str) -> DrawRecord:
        with self._read() as db:
            return self._draws.get(db, label)

    def draws(self) -> list[DrawRecord]:
        with self._read() as db:
            return self._draws.all(db)

    def draw_rows(self) -> list[DrawRow]:
        """The draws table as stored, in commit order (what ``verify_bank`` checks)."""
        with self._read() as db:
            return self._draws.rows(db)

    def meta(self) -> dict[str, str]:
        return dict(self._all("SELECT key, value FROM meta"))

    def raw_connection(self) -> sqlite3.Connection:
        """For the verifier and tests: the underlying connection (read it, do not write through it)."""
        return self._db
