"""The deal bank, engine-neutral: one ``engine.Engine`` composed with the bank's table classes.

The SQL lives in the table classes, one job each: ``ledger_table`` (the hash chain and its Merkle leaves),
``deals``, ``seals`` and ``draws`` (with the draw's state machine); their statements run unchanged on every
engine. What differs (connections, transactions, retries, bulk writes, copies) is the engine's: ``store`` builds
the bank over SQLite, ``pg_store`` over PostgreSQL. Implements ``repository.BankRepository``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Self

from dealer.core.json_types import JsonObject
from dealer.integrity.ledger import DealEntry, Entry, EntryKind

from .api import CommittedDeal, DealSource
from .deals import DealRow, DealsTable, ImportItem, ImportOutcome, StoredDeal
from .draws import ChainCheck, DrawRecord, DrawRow, DrawsTable
from .engine import Engine
from .errors import BankError
from .ledger_table import LedgerRow, LedgerTable
from .schema import ORDER, SCHEMA_VERSION, Connection, insert_sql, select_sql
from .seals import Seal, Seals

if TYPE_CHECKING:  # cryptography loads with the keyring, the cards with a deal: reading the bank goes without them
    from dealer.core import Deal
    from dealer.custody import Keyring

    from . import bulk

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


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Bank:
    """The deal bank over ``engine``; ``key_dir`` is where its custody record lives."""

    def __init__(self, engine: Engine, key_dir: Path | str, clock: Callable[[], str] = utc_now) -> None:
        self.engine = engine  # what differs between engines; the tables' SQL is the same on each
        self.key_dir = Path(key_dir)
        self._clock = clock
        self._keyring: Keyring | None = None
        self._ledger = LedgerTable()
        self._deals = DealsTable(self._ledger)
        self._seals = Seals(self._ledger)
        self._draws = DrawsTable(self._ledger, self._deals)
        self.bank_id: str = engine.open(self._create_bank)  # "" only in a damaged bank (verify reports it)

    # -- plumbing ----------------------------------------------------------------------------------
    def _create_bank(self, db: Connection) -> None:
        """Inside a transaction: a database without a bank gets its id, format version and genesis entry."""
        if db.execute("SELECT COUNT(*) FROM meta").fetchone()[0]:
            return
        import uuid  # here: only a new bank needs it (it loads platform)

        bank_id = str(uuid.uuid4())
        db.executemany(insert_sql("meta"), [("bank_id", bank_id), ("schema", str(SCHEMA_VERSION))])
        self._ledger.append(db, EntryKind.GENESIS, {"bank": bank_id, "schema": SCHEMA_VERSION}, self._clock())

    def _append(self, kind: str, data: JsonObject) -> Entry:
        with self.engine.tx() as db:
            return self._ledger.append(db, kind, data, self._clock())

    def describe(self) -> str:
        return self.engine.describe()

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> str:
        return self._clock()

    def meta(self) -> dict[str, str]:
        with self.engine.read() as db:
            return {str(k): str(v) for k, v in db.execute("SELECT key, value FROM meta").fetchall()}

    @property
    def import_batch(self) -> int:
        return self.engine.import_batch

    @property
    def in_process(self) -> bool:
        return self.engine.in_process

    @property
    def copies_to_file(self) -> bool:
        return self.engine.copies_to_file

    def stored_rows(self, table: str, page: int) -> Iterator[list[tuple[object, ...]]]:
        """Every row of ``table`` as stored, in its columns' order, ``page`` rows at a time (under the lock)."""
        with self.engine.read() as db:
            cur = db.execute(select_sql(table, tail=f"ORDER BY {ORDER[table]}"))
            while batch := cur.fetchmany(page):
                yield [tuple(row) for row in batch]

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
                "this step needs the chief judge's key: give the custody passphrase (chosen when the custody was "
                "set up)"
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

    # -- deals committed one by one ------------------------------------------------------------------
    def commit_deal(self, deal: Deal, source: DealSource) -> CommittedDeal:
        def attempt() -> CommittedDeal:
            with self.engine.tx() as db:
                return self._deals.commit(db, deal, source, self._clock())

        def recover() -> CommittedDeal | None:  # did our COMMIT land? the deal's cards say
            with self.engine.read() as db:
                return self._deals.committed(db, deal.to_bytes())

        return self.engine.write(attempt, recover)

    def void_deal(self, reason: str, station: str | None, detail: JsonObject | None = None) -> int:
        if not reason.strip():
            raise BankError("a voided deal needs a reason")
        data: JsonObject = {"reason": reason, "station": station}
        if detail:
            data["detail"] = detail
        return self.engine.write(lambda: self._append(EntryKind.VOID, data).index)

    def record_event(self, kind: str, payload: JsonObject) -> int:
        if kind in RESERVED_KINDS:
            raise BankError(
                "ledger entry kind {kind!r} is written by the bank itself, not through record_event", kind=kind
            )
        return self.engine.write(lambda: self._append(kind, payload).index)

    def deal_count(self) -> int:
        with self.engine.read() as db:
            return self._deals.count(db)

    def ledger_head(self) -> str:
        with self.engine.read() as db:
            return self._ledger.head(db)[1]

    def ledger_size(self) -> int:
        with self.engine.read() as db:
            return self._ledger.head(db)[0] + 1

    def anchor(self) -> tuple[int, str]:
        """The ledger's size and head hash, read together: what officials note as ``SIZE:HASH`` in their acts."""
        with self.engine.read() as db:
            last, head = self._ledger.head(db)
            return last + 1, head

    def copy_to(self, path: Path) -> tuple[int, str]:
        """A whole, consistent copy of this bank in ``path``, owner-only, with the custody record beside it; the
        copy is then opened on its own and its ledger's (size, head) returned, for the caller to compare with
        ``anchor``. The folder must be there: a pulled-out stick's mount point is not made again on the laptop's
        own disk. ``BankError`` on an engine whose copies are the server's (``copies_to_file``)."""
        return self.engine.copy_to(path, self.key_dir)

    def unsealed(self) -> tuple[int, int]:
        """Ledger entries after the latest seal entry, and deals after the deals it covers (for automatic seals)."""
        with self.engine.read() as db:
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
        with self.engine.tx() as db:
            outcome = self._deals.import_items(db, items, batch, self._clock(), progress)
        if progress is not None:
            progress(len(outcome.imported) + len(outcome.duplicates))
        return outcome

    def import_canonical(
        self,
        deals: Sequence[bytes],
        sources: Sequence[str],
        batch: JsonObject,
        progress: Callable[[int], None] | None = None,
        only_ours_upto: int | None = None,
        while_ledger: Callable[[ImportOutcome], None] | None = None,
        while_deals: Callable[[], None] | None = None,
        prepared: bulk.Salted | None = None,
    ) -> ImportOutcome:
        """Distinct canonical deals in the compact form, in one transaction (``bulk.import_canonical``)."""
        from . import bulk  # here: only an import of many files writes this way

        outcome = bulk.import_canonical(
            self.engine,
            self._ledger,
            self._clock,
            deals,
            sources,
            batch,
            only_ours_upto,
            while_ledger,
            while_deals,
            prepared,
        )
        if progress is not None:
            progress(len(deals))
        return outcome

    # -- ledger reading ----------------------------------------------------------------------------
    def entries(self, start: int = 0, stop: int | None = None) -> Iterator[LedgerRow]:
        """Raw ledger rows (index, kind, body, hash) in order, read in pages (each under the lock)."""
        end = stop if stop is not None else 1 << 62
        while start < end:
            with self.engine.read() as db:
                rows = list(self._ledger.page(db, start, end))
            if not rows:
                return
            yield from rows
            start = rows[-1].idx + 1

    def entry_bodies(self, indices: Sequence[int]) -> dict[int, bytes]:
        """The exact bytes of several ledger entries, by index (read in batches)."""
        with self.engine.read() as db:
            return self._ledger.bodies(db, indices)

    def entry(self, index: int) -> Entry:
        with self.engine.read() as db:
            return self._ledger.entry(db, index)

    def entries_of_kind(self, kind: str) -> list[Entry]:
        with self.engine.read() as db:
            return self._ledger.of_kind(db, kind)

    def deal_entries(self, start: int = 0) -> list[DealEntry]:
        """The ``deal`` entries from ledger index ``start`` on, typed (their commitment, id and public source)."""
        with self.engine.read() as db:
            return self._ledger.deal_entries(db, start)

    def leaves(self, size: int) -> list[bytes]:
        """Merkle leaf hashes of entries 0..size-1 (cached: entries never change once written)."""
        with self.engine.read() as db:
            return self._ledger.leaves(db, size)

    # -- seals -------------------------------------------------------------------------------------
    def seal(self) -> Seal:
        """Sign a checkpoint of the whole ledger so far; deals committed later go into a later seal."""
        keyring = self.keyring
        with self.engine.tx() as db:
            return self._seals.make(db, self.bank_id, keyring, self._deals.last_id(db), self._clock())

    def seals(self) -> list[Seal]:
        with self.engine.read() as db:
            return self._seals.all(db)

    def latest_seal(self) -> Seal | None:
        with self.engine.read() as db:
            return self._seals.latest(db)

    # -- deals -------------------------------------------------------------------------------------
    def get_deal(self, deal_id: int) -> StoredDeal:
        with self.engine.read() as db:
            return self._deals.get(db, deal_id)

    def get_deals(self, deal_ids: Sequence[int]) -> list[StoredDeal]:
        """Several deals in the order asked (read in batches)."""
        ids = list(deal_ids)
        with self.engine.read() as db:
            found = self._deals.get_many(db, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise BankError("deals {missing} are not in the bank", missing=missing[:10])
        return [found[i] for i in ids]

    def deal_rows(self) -> Iterator[DealRow]:
        """Every row of the deals table as stored, in id order (what ``verify_bank`` checks)."""
        after = 0
        while True:
            with self.engine.read() as db:
                rows = self._deals.page(db, after)
            if not rows:
                return
            yield from rows
            after = rows[-1].deal_id

    def iter_deals(self) -> Iterator[StoredDeal]:
        after = 0
        while True:
            with self.engine.read() as db:
                rows = self._deals.page(db, after)
                deals = self._deals.stored(db, rows)
            if not rows:
                return
            yield from deals
            after = rows[-1].deal_id

    def find_deal(self, deal: Deal) -> int | None:
        with self.engine.read() as db:
            return self._deals.id_of(db, deal.to_bytes())

    def state_counts(self) -> dict[str, int]:
        with self.engine.read() as db:
            return self._deals.state_counts(db)

    def eligible_ids(self, last_deal: int) -> list[int]:
        """Deals up to ``last_deal`` (a seal's) that were never drawn, in bank order."""
        return [i for a, b in self.eligible_ranges(last_deal) for i in range(a, b + 1)]

    def _out_of_bank(self, last_deal: int) -> list[int]:
        with self.engine.read() as db:
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
        with self.engine.tx() as db:
            return self._draws.commit(db, label, secret, data, self._clock(), follows)

    def draw_publish(self, label: str, data: JsonObject) -> Entry:
        """The commitment was put before the hall: from now on the public value may be entered."""
        with self.engine.tx() as db:
            return self._draws.publish(db, label, data, self._clock())

    def draw_published(self, label: str) -> bool:
        with self.engine.read() as db:
            return self._draws.published(db, label)

    def draw_void(self, label: str, secret: bytes, data: JsonObject, *, after_publish: bool = False) -> Entry:
        """Abandon a prepared draw, publicly: a ledger entry with its reason (and K, stored open from now); never
        silently. Only before its public value is entered; after its commitment was shown to the hall only when
        ``after_publish`` (the regulation's allowance, checked by the draw)."""
        with self.engine.tx() as db:
            return self._draws.void(db, label, secret, data, self._clock(), after_publish)

    def draw_public_value(self, label: str, value: str, data: JsonObject) -> Entry:
        with self.engine.tx() as db:
            return self._draws.public_value(db, label, value, data, self._clock())

    def draw_result(self, label: str, sealed: bytes, count: int, data: JsonObject) -> Entry:
        """Store a run draw's result sealed (the chief judge's custody): the deals stay in the bank, unmarked."""
        with self.engine.tx() as db:
            return self._draws.result(db, label, sealed, count, data, self._clock())

    def draw_reveal(self, label: str, secret: bytes, drawn: Sequence[int], data: JsonObject) -> Entry:
        """Publish K and the result: stored open from now, and the drawn deals marked played."""
        with self.engine.tx() as db:
            return self._draws.reveal(db, label, secret, drawn, data, self._clock())

    def get_draw(self, label: str) -> DrawRecord:
        with self.engine.read() as db:
            return self._draws.get(db, label)

    def draws(self) -> list[DrawRecord]:
        with self.engine.read() as db:
            return self._draws.all(db)

    def draw_rows(self) -> list[DrawRow]:
        """The draws table as stored, in commit order (what ``verify_bank`` checks)."""
        with self.engine.read() as db:
            return self._draws.rows(db)
