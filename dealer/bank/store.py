"""The SQLite deal bank: deals, the hash-chained ledger, seals and draw records.

WAL journal with ``synchronous=FULL``: a transaction is on disk (fsynced) when COMMIT returns, so a deal is
acknowledged only once it would survive a crash. Every write is one ``BEGIN IMMEDIATE`` … ``COMMIT``
transaction; the ledger head is re-read inside it, so several processes may share one bank file.
One writer at a time: a writer that finds the file locked waits up to ``busy_timeout`` seconds for its turn
(SQLite's busy handler), then gets ``BankBusyError`` naming the file and the wait; nothing is half-written.
This module is the only place with SQL: other engines can follow by implementing the same methods.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dealer.core import Deal
from dealer.core.errors import DealerError

from . import keys
from .api import CommittedDeal, DealSource
from .ledger import GENESIS_PREV, Entry, EntryKind, canonical_json, checkpoint, commitment
from .merkle import merkle_root

SCHEMA_VERSION = 1
SALT_SIZE = 16
DEFAULT_BANK_PATH = Path("var/bank.sqlite")
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another writer's transaction (CLI default; docs/service.md)

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
"""

SCHEMA_OBJECTS = frozenset(re.findall(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", SCHEMA))

# Deal states
IN_BANK = "bank"
DRAWN = "drawn"
PLAYED = "played"
DEAL_STATES = (IN_BANK, DRAWN, PLAYED)

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


class BankError(DealerError):
    """Something the bank refuses, naming what and why."""


class DuplicateDealError(BankError):
    def __init__(self, existing_id: int) -> None:
        self.existing_id = existing_id
        super().__init__(f"duplicate deal: it repeats deal {existing_id} already in the bank")


class BankUnavailableError(BankError):
    """A write that could not be made now but may succeed later (file locked, disk full, I/O error)."""


class BankBusyError(BankUnavailableError):
    def __init__(self, path: Path, waited: float) -> None:
        self.path = path
        self.waited = waited
        super().__init__(
            f"{path}: the bank is busy: another writer (a `dealer bank import`, another service) held it "
            f"for more than {waited:g} s; nothing was written, try again when it has finished"
        )


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def base_name(path: str) -> str:
    """A file's base name, whatever the separator: what the public ledger may say of a local path."""
    return re.split(r"[\\/]", path)[-1]


def source_public(source: DealSource) -> dict[str, Any]:
    """The part of a deal's source that goes into the (public) ledger; the dealing order stays secret, and of a
    file only its base name and SHA-256 (never the organiser's local path)."""
    out: dict[str, Any] = {"kind": source.kind, "shown": source.shown_cards}
    for name in ("station", "variant", "board", "line", "file_sha256"):
        value = getattr(source, name)
        if value is not None:
            out[name] = value
    if source.file is not None:
        out["file"] = base_name(source.file)
    return out


@dataclass(frozen=True, slots=True)
class StoredDeal:
    """A deal as the bank keeps it (director only: it holds the cards)."""

    deal_id: int
    ledger_index: int
    deal: Deal
    salt: bytes
    commitment: bytes
    source: dict[str, Any]
    dealing_order: bytes | None
    created: str
    state: str
    session: str | None


@dataclass(frozen=True, slots=True)
class Seal:
    ledger_index: int  # where the seal entry itself is
    size: int  # entries covered: 0 .. size-1
    root: str
    ts: str
    last_deal: int
    signature: str
    public_key: str


@dataclass(frozen=True, slots=True)
class DrawRecord:
    """A draw as the bank keeps it; ``secret`` and ``drawn`` are the director's until reveal."""

    label: str
    state: str  # committed, public-value, drawn, revealed; or void
    commit_index: int
    secret: bytes
    public_value: str | None
    drawn: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class ImportItem:
    deal: Deal
    source: DealSource


@dataclass(slots=True)
class ImportOutcome:
    imported: list[tuple[int, int]] = field(default_factory=list)  # (position in the items, new deal id)
    duplicates: list[tuple[int, int]] = field(default_factory=list)  # (position in the items, id it repeats)
    batch_index: int = -1


class SqliteBank:
    """The deal bank in one SQLite file, implementing ``dealer.bank.api.BankApi`` and more."""

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
        self.key_dir = Path(key_dir) if key_dir is not None else self.path.parent
        self._clock = clock
        self._lock = threading.RLock()
        self._key: Ed25519PrivateKey | None = None
        self._leaves: list[bytes] = []
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
        self._db = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._init_schema()

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
            if db.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0:  # a new bank
                bank_id = str(uuid.uuid4())
                db.execute("INSERT INTO meta VALUES ('bank_id', ?)", (bank_id,))
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                self._append(db, EntryKind.GENESIS, {"bank": bank_id, "schema": SCHEMA_VERSION})
        self._read_bank_id()

    def _read_bank_id(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key='bank_id'").fetchone()
        self.bank_id: str = str(row[0]) if row else ""  # "" only in a damaged bank (verify reports it)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
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
        return BankUnavailableError(f"{self.path}: the bank could not write ({text}); nothing was written")

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """One row of a read, under the lock (the connection is shared by threads)."""
        with self._lock:
            return self._db.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SqliteBank:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _head(self, db: sqlite3.Connection) -> tuple[int, str]:
        row = db.execute("SELECT idx, hash FROM ledger ORDER BY idx DESC LIMIT 1").fetchone()
        return (-1, GENESIS_PREV) if row is None else (row[0], bytes(row[1]).hex())

    def _append(self, db: sqlite3.Connection, kind: str, data: dict[str, Any], ts: str | None = None) -> Entry:
        last, prev = self._head(db)
        entry = Entry(last + 1, kind, ts or self._clock(), prev, data)
        body = entry.encode()
        db.execute("INSERT INTO ledger VALUES (?, ?, ?, ?)", (entry.index, kind, body, sha256(body).digest()))
        return entry

    def now(self) -> str:
        return self._clock()

    @property
    def signing_key(self) -> Ed25519PrivateKey:
        if self._key is None:
            self._key = self._load_signing_key()
        return self._key

    def _load_signing_key(self) -> Ed25519PrivateKey:
        """The bank's own key: once a seal exists, only the key that signed it (never a new one) (#19 item 6)."""
        latest = self.latest_seal()
        if latest is None:  # the first seal: the key is created where the bank keeps it
            return keys.load_or_create(self.key_dir)
        path = self.key_dir / keys.KEY_FILE
        key = keys.load(self.key_dir) if path.exists() else None
        if key is not None and keys.public_hex(key) == latest.public_key:
            return key
        found = path if key is not None else f"no {keys.KEY_FILE} in {self.key_dir}"
        hint = f"give --keys with the directory holding the key of public key {latest.public_key[:16]}…"
        default = self.path.parent / keys.KEY_FILE
        if default != path and default.exists():
            try:
                if keys.public_hex(keys.load(self.path.parent)) == latest.public_key:
                    hint = f"the right one is {default}: give --keys {self.path.parent} (or leave --keys out)"
            except (OSError, keys.SigningKeyError):
                pass
        raise keys.SigningKeyError(
            f"{found}: not this bank's signing key: its seals are signed by public key {latest.public_key[:16]}…; "
            f"nothing was signed; {hint}"
        )

    def sign(self, message: bytes) -> str:
        return self.signing_key.sign(message).hex()

    def public_key_hex(self) -> str:
        return keys.public_hex(self.signing_key)

    def public_key_pem(self) -> bytes:
        return keys.public_pem(self.signing_key)

    # -- BankApi -----------------------------------------------------------------------------------
    def commit_deal(self, deal: Deal, source: DealSource) -> CommittedDeal:
        canonical = deal.to_bytes()
        with self._tx() as db:
            existing = db.execute("SELECT deal_id FROM deals WHERE canonical=?", (canonical,)).fetchone()
            if existing is not None:
                raise DuplicateDealError(existing[0])
            last, prev = self._head(db)
            deal_id = db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0] + 1
            ledger_row, deal_row = _deal_rows(deal_id, last + 1, prev, self._clock(), canonical, source)
            db.execute("INSERT INTO ledger VALUES (?, ?, ?, ?)", ledger_row)
            db.execute("INSERT INTO deals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)", deal_row)
        return CommittedDeal(deal_id, deal_row[4].hex(), last + 1, ledger_row[3].hex())

    def void_deal(self, reason: str, station: str | None, detail: dict[str, Any] | None = None) -> int:
        if not reason.strip():
            raise BankError("a voided deal needs a reason")
        data: dict[str, Any] = {"reason": reason, "station": station}
        if detail:
            data["detail"] = detail
        with self._tx() as db:
            return self._append(db, EntryKind.VOID, data).index

    def record_event(self, kind: str, payload: dict[str, Any]) -> int:
        if kind in RESERVED_KINDS:
            raise BankError(f"ledger entry kind {kind!r} is written by the bank itself, not through record_event")
        with self._tx() as db:
            return self._append(db, kind, payload).index

    def deal_count(self) -> int:
        return int(self._one("SELECT COUNT(*) FROM deals")[0])

    def ledger_head(self) -> str:
        with self._lock:
            return self._head(self._db)[1]

    def ledger_size(self) -> int:
        with self._lock:
            return self._head(self._db)[0] + 1

    def anchor(self) -> tuple[int, str]:
        """The ledger's size and head hash, read together: what officials note as ``SIZE:HASH`` in their acts."""
        with self._lock:
            last, head = self._head(self._db)
            return last + 1, head

    def unsealed(self) -> tuple[int, int]:
        """Ledger entries after the latest seal entry, and deals after the deals it covers (for automatic seals)."""
        with self._lock:
            row = self._db.execute(
                "SELECT idx, body FROM ledger WHERE kind=? ORDER BY idx DESC LIMIT 1", (EntryKind.SEAL,)
            ).fetchone()
            last, _ = self._head(self._db)
            deals = self._db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0]
        if row is None:
            return last + 1, deals
        return last - row[0], deals - seal_from_entry(Entry.decode(bytes(row[1]))).last_deal

    # -- imports -----------------------------------------------------------------------------------
    def import_deals(
        self,
        items: Iterable[ImportItem],
        batch: dict[str, Any],
        progress: Callable[[int], None] | None = None,
    ) -> ImportOutcome:
        """Commit many deals in ONE transaction, closed by an ``import`` entry describing the batch.

        A deal already in the bank (or earlier in ``items``) is not committed; it is listed in
        ``duplicates`` with the id it repeats. Any error rolls the whole import back.
        """
        outcome = ImportOutcome()
        with self._tx() as db:
            last, prev = self._head(db)
            first_id = next_id = db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0] + 1
            seen: dict[Deal, int] = {}
            ledger_rows: list[tuple[int, str, bytes, bytes]] = []
            deal_rows: list[tuple[Any, ...]] = []
            ts = self._clock()  # one transaction: every deal of the import is committed at the same moment
            for position, item in enumerate(items):
                repeat = seen.get(item.deal)
                if repeat is None:
                    canonical = item.deal.to_bytes()
                    row = db.execute("SELECT deal_id FROM deals WHERE canonical=?", (canonical,)).fetchone()
                    repeat = None if row is None else row[0]
                if repeat is not None:
                    outcome.duplicates.append((position, repeat))
                else:
                    last += 1
                    ledger_row, deal_row = _deal_rows(next_id, last, prev, ts, canonical, item.source)
                    prev = ledger_row[3].hex()
                    ledger_rows.append(ledger_row)
                    deal_rows.append(deal_row)
                    seen[item.deal] = next_id
                    outcome.imported.append((position, next_id))
                    next_id += 1
                if progress is not None and (position + 1) % 1000 == 0:
                    progress(position + 1)
            db.executemany("INSERT INTO ledger VALUES (?, ?, ?, ?)", ledger_rows)
            db.executemany("INSERT INTO deals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)", deal_rows)
            summary = {
                **batch,
                "imported": len(outcome.imported),
                "duplicates": len(outcome.duplicates),
                "first_deal": first_id if outcome.imported else None,
                "last_deal": next_id - 1 if outcome.imported else None,
            }
            outcome.batch_index = self._append(db, EntryKind.IMPORT, summary).index
        if progress is not None:
            progress(len(outcome.imported) + len(outcome.duplicates))
        return outcome

    # -- ledger reading ----------------------------------------------------------------------------
    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, str, bytes, bytes]]:
        """Raw ledger rows (index, kind, body, hash) in order."""
        end = stop if stop is not None else 1 << 62
        while start < end:  # in pages, each read under the lock
            rows = self._all(
                "SELECT idx, kind, body, hash FROM ledger WHERE idx >= ? AND idx < ? ORDER BY idx LIMIT 20000",
                (start, end),
            )
            if not rows:
                return
            yield from rows
            start = rows[-1][0] + 1

    def entry_bodies(self, indices: Sequence[int]) -> dict[int, bytes]:
        """The exact bytes of several ledger entries, by index (read in batches)."""
        out: dict[int, bytes] = {}
        wanted = list(indices)
        for k in range(0, len(wanted), 500):
            batch = wanted[k : k + 500]
            marks = ",".join("?" * len(batch))
            out.update(self._all(f"SELECT idx, body FROM ledger WHERE idx IN ({marks})", batch))
        return out

    def entry(self, index: int) -> Entry:
        row = self._one("SELECT body FROM ledger WHERE idx=?", (index,))
        if row is None:
            raise BankError(f"ledger entry {index} does not exist")
        return Entry.decode(bytes(row[0]))

    def entries_of_kind(self, kind: str) -> list[Entry]:
        rows = self._all("SELECT body FROM ledger WHERE kind=? ORDER BY idx", (kind,))
        return [Entry.decode(bytes(r[0])) for r in rows]

    def leaves(self, size: int) -> list[bytes]:
        """Merkle leaf hashes of entries 0..size-1 (cached: entries never change once written)."""
        with self._lock:
            have = len(self._leaves)
            if have < size:
                rows = self._db.execute("SELECT body FROM ledger WHERE idx >= ? AND idx < ? ORDER BY idx", (have, size))
                self._leaves.extend(sha256(b"\x00" + r[0]).digest() for r in rows)  # merkle.leaf_hash, inlined
            if len(self._leaves) < size:
                raise BankError(f"the ledger has {len(self._leaves)} entries, not {size}")
            return self._leaves[:size]

    # -- seals -------------------------------------------------------------------------------------
    def seal(self) -> Seal:
        """Sign a checkpoint of the whole ledger so far; deals committed later go into a later seal."""
        key = self.signing_key
        with self._tx() as db:
            last, _ = self._head(db)
            size = last + 1
            root = merkle_root(self.leaves(size))
            last_deal = db.execute("SELECT COALESCE(MAX(deal_id), 0) FROM deals").fetchone()[0]
            ts = self._clock()
            cp = checkpoint(self.bank_id, size, root, ts, last_deal)
            signature = key.sign(canonical_json(cp)).hex()
            pub = keys.public_hex(key)
            entry = self._append(db, EntryKind.SEAL, {"checkpoint": cp, "public_key": pub, "signature": signature}, ts)
        return Seal(entry.index, size, root.hex(), ts, last_deal, signature, pub)

    def seals(self) -> list[Seal]:
        return [seal_from_entry(e) for e in self.entries_of_kind(EntryKind.SEAL)]

    def latest_seal(self) -> Seal | None:
        row = self._one("SELECT body FROM ledger WHERE kind=? ORDER BY idx DESC LIMIT 1", (EntryKind.SEAL,))
        return None if row is None else seal_from_entry(Entry.decode(bytes(row[0])))

    # -- deals -------------------------------------------------------------------------------------
    def get_deal(self, deal_id: int) -> StoredDeal:
        row = self._one("SELECT * FROM deals WHERE deal_id=?", (deal_id,))
        if row is None:
            raise BankError(f"deal {deal_id} is not in the bank")
        return _stored(row)

    def get_deals(self, deal_ids: Sequence[int]) -> list[StoredDeal]:
        """Several deals in the order asked (read in batches)."""
        found: dict[int, StoredDeal] = {}
        ids = list(deal_ids)
        for k in range(0, len(ids), 500):
            batch = ids[k : k + 500]
            marks = ",".join("?" * len(batch))
            for row in self._all(f"SELECT * FROM deals WHERE deal_id IN ({marks})", batch):
                found[row[0]] = _stored(row)
        missing = [i for i in ids if i not in found]
        if missing:
            raise BankError(f"deals {missing[:10]} are not in the bank")
        return [found[i] for i in ids]

    def iter_deals(self) -> Iterator[StoredDeal]:
        after = 0
        while rows := self._all("SELECT * FROM deals WHERE deal_id > ? ORDER BY deal_id LIMIT 20000", (after,)):
            yield from (_stored(r) for r in rows)
            after = rows[-1][0]

    def find_deal(self, deal: Deal) -> int | None:
        row = self._one("SELECT deal_id FROM deals WHERE canonical=?", (deal.to_bytes(),))
        return None if row is None else int(row[0])

    def state_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(DEAL_STATES, 0)
        for state, n in self._all("SELECT state, COUNT(*) FROM deals GROUP BY state"):
            counts[state] = n
        return counts

    def eligible_ids(self, last_deal: int) -> list[int]:
        """Deals up to ``last_deal`` (a seal's) that were never drawn, in bank order."""
        return [i for a, b in self.eligible_ranges(last_deal) for i in range(a, b + 1)]

    def _out_of_bank(self, last_deal: int) -> list[int]:
        rows = self._all(
            "SELECT deal_id FROM deals WHERE state <> 'bank' AND deal_id <= ? ORDER BY deal_id", (last_deal,)
        )  # served by the small partial index deals_out_of_bank
        return [r[0] for r in rows]

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

    # -- draws (used by dealer.draw) ----------------------------------------------------------------
    def draw_commit(self, label: str, secret: bytes, data: dict[str, Any]) -> Entry:
        """Record a signed commitment; inside the transaction, check it names the bank's previous draw and
        the running total drawn (so two processes cannot both chain onto the same draw)."""
        from dealer.draw.protocol import COMMIT_FORMAT, commitment_hash

        with self._tx() as db:
            if db.execute("SELECT 1 FROM draws WHERE label=?", (label,)).fetchone():
                raise BankError(f"a draw labelled {label!r} exists already: choose another session label")
            open_draw = db.execute("SELECT label FROM draws WHERE state IN ('committed', 'public-value')").fetchone()
            if open_draw:
                raise BankError(
                    f"draw {open_draw[0]!r} is prepared but not run: run it (or void it with a reason) first"
                )
            doc = data["commitment"]
            rows = db.execute("SELECT commit_index, drawn FROM draws ORDER BY commit_index").fetchall()
            previous = None
            drawn_before = 0
            for commit_index, drawn in rows:
                body = db.execute("SELECT body FROM ledger WHERE idx=?", (commit_index,)).fetchone()[0]
                earlier = Entry.decode(bytes(body)).data["commitment"]
                if earlier.get("format") != COMMIT_FORMAT:
                    raise BankError(
                        f"this bank holds a draw of the older format {earlier.get('format')!r}: start a new bank "
                        "file for the next stage (docs/bundle.md, migration)"
                    )
                previous = commitment_hash(earlier)
                drawn_before += 0 if drawn is None else len(json.loads(drawn))
            if doc["previous"] != previous or doc["drawn_before"] != drawn_before:
                raise BankError(f"another draw was made while {label!r} was prepared: prepare it again")
            entry = self._append(db, EntryKind.DRAW_COMMIT, data)
            db.execute("INSERT INTO draws VALUES (?, 'committed', ?, ?, NULL, NULL)", (label, entry.index, secret))
        return entry

    def draw_publish(self, label: str, data: dict[str, Any]) -> Entry:
        """The commitment was put before the hall: from now on the public value may be entered."""
        with self._tx() as db:
            self._expect_draw_state(db, label, ("committed", "public-value", "drawn", "revealed"))
            entry = self._append(db, EntryKind.DRAW_PUBLISHED, data)
        return entry

    def draw_published(self, label: str) -> bool:
        return any(e.data.get("label") == label for e in self.entries_of_kind(EntryKind.DRAW_PUBLISHED))

    def draw_void(self, label: str, data: dict[str, Any]) -> Entry:
        """Abandon a prepared draw, publicly: a ledger entry with its reason (and K); never silently. Only before
        its public value is entered: after that, the holder of K knows the result, and a void would let them
        throw away a draw they did not like."""
        with self._tx() as db:
            self._expect_draw_state(db, label, ("committed",))
            entry = self._append(db, EntryKind.DRAW_VOID, data)
            db.execute("UPDATE draws SET state='void' WHERE label=?", (label,))
        return entry

    def draw_public_value(self, label: str, value: str, data: dict[str, Any]) -> Entry:
        with self._tx() as db:
            self._expect_draw_state(db, label, ("committed",))
            published = db.execute(
                "SELECT body FROM ledger WHERE kind=? ORDER BY idx", (EntryKind.DRAW_PUBLISHED,)
            ).fetchall()
            if not any(Entry.decode(bytes(r[0])).data.get("label") == label for r in published):
                raise BankError(
                    f"draw {label!r}: its commitment has not been shown to the hall yet: publish it before "
                    "the public value is made"
                )
            entry = self._append(db, EntryKind.PUBLIC_VALUE, data)
            db.execute("UPDATE draws SET state='public-value', public_value=? WHERE label=?", (value, label))
        return entry

    def draw_result(self, label: str, drawn: Sequence[int], data: dict[str, Any]) -> Entry:
        with self._tx() as db:
            self._expect_draw_state(db, label, ("public-value",))
            entry = self._append(db, EntryKind.DRAW, data)
            db.execute("UPDATE draws SET state='drawn', drawn=? WHERE label=?", (json.dumps(list(drawn)), label))
            changed = db.executemany(
                "UPDATE deals SET state=?, session=? WHERE deal_id=? AND state=?",
                ((DRAWN, label, i, IN_BANK) for i in drawn),
            ).rowcount
            if changed != len(drawn):
                raise BankError(f"draw {label!r}: {len(drawn) - changed} of the drawn deals were no longer in the bank")
        return entry

    def draw_reveal(self, label: str, data: dict[str, Any]) -> Entry:
        with self._tx() as db:
            self._expect_draw_state(db, label, ("drawn",))
            earlier = db.execute(
                "SELECT label FROM draws WHERE state='drawn' AND commit_index < "
                "(SELECT commit_index FROM draws WHERE label=?) ORDER BY commit_index LIMIT 1",
                (label,),
            ).fetchone()
            if earlier:  # its positions would tell which deals the earlier draw took
                raise BankError(f"draw {earlier[0]!r} is drawn but not revealed: reveal the draws in order")
            entry = self._append(db, EntryKind.REVEAL, data)
            db.execute("UPDATE draws SET state='revealed' WHERE label=?", (label,))
            db.execute("UPDATE deals SET state=? WHERE session=? AND state=?", (PLAYED, label, DRAWN))
        return entry

    def _expect_draw_state(self, db: sqlite3.Connection, label: str, states: tuple[str, ...]) -> None:
        row = db.execute("SELECT state FROM draws WHERE label=?", (label,)).fetchone()
        if row is None:
            raise BankError(f"no draw labelled {label!r}")
        if row[0] not in states:
            raise BankError(f"draw {label!r} is {row[0]}; this step needs it {' or '.join(states)}")

    def get_draw(self, label: str) -> DrawRecord:
        row = self._one("SELECT * FROM draws WHERE label=?", (label,))
        if row is None:
            raise BankError(f"no draw labelled {label!r}")
        return _draw(row)

    def draws(self) -> list[DrawRecord]:
        return [_draw(r) for r in self._all("SELECT * FROM draws ORDER BY commit_index")]

    def meta(self) -> dict[str, str]:
        return dict(self._all("SELECT key, value FROM meta"))

    def raw_connection(self) -> sqlite3.Connection:
        """For the verifier and tests: the underlying connection (read it, do not write through it)."""
        return self._db


def _deal_rows(
    deal_id: int, index: int, prev: str, ts: str, canonical: bytes, source: DealSource
) -> tuple[tuple[int, str, bytes, bytes], tuple[Any, ...]]:
    """The ledger row and the deals row that commit one deal, with a fresh salt."""
    salt = os.urandom(SALT_SIZE)
    com = commitment(salt, canonical)
    public = source_public(source)
    data: dict[str, Any] = {"c": com.hex(), "id": deal_id, "src": public}
    if source.dealing_order is not None:
        data["order"] = sha256(salt + source.dealing_order).hexdigest()
    body = Entry(index, EntryKind.DEAL, ts, prev, data).encode()
    ledger_row = (index, EntryKind.DEAL, body, sha256(body).digest())
    deal_row = (
        deal_id,
        index,
        canonical,
        salt,
        com,
        canonical_json(public).decode(),
        source.dealing_order,
        ts,
        IN_BANK,
    )
    return ledger_row, deal_row


def seal_from_entry(entry: Entry) -> Seal:
    cp = entry.data["checkpoint"]
    return Seal(
        entry.index,
        cp["size"],
        cp["root"],
        cp["ts"],
        cp["last_deal"],
        entry.data["signature"],
        entry.data["public_key"],
    )


def _stored(row: Sequence[Any]) -> StoredDeal:
    deal_id, ledger_index, canonical, salt, com, source, order, created, state, session = row
    return StoredDeal(
        deal_id,
        ledger_index,
        Deal.from_bytes(bytes(canonical)),
        bytes(salt),
        bytes(com),
        json.loads(source),
        None if order is None else bytes(order),
        created,
        state,
        session,
    )


def _draw(row: Sequence[Any]) -> DrawRecord:
    label, state, commit_index, secret, public_value, drawn = row
    return DrawRecord(
        label, state, commit_index, bytes(secret), public_value, None if drawn is None else tuple(json.loads(drawn))
    )
