"""``dealer bank verify``: recompute the ledger chain, every seal, every commitment and every draw.

Stops at the first thing that does not match and names it (ledger entry index, deal id or draw label).
Reads the database only; it needs no key (each seal carries its public key, and all must agree).

Damage of any kind — a file that is not a database, a malformed page, text that is not UTF-8, a missing table,
nesting too deep to parse — is a finding with the first bad place, never an exception (``verify_file``).

Anchors recorded outside the file (``anchors``: a noted head, a sealed record) close the gap a self-consistent
ledger leaves: its tail cut, or rewritten after the last seal.

What a draw's documents say (its commitment, the chain of draws, the recomputed result) is ``dealer.draw``'s to
check: ``verify_bank`` takes it as a ``DrawChecker``; ``dealer.draw.verify`` gives the full check with it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Protocol

from dealer.core import Deal
from dealer.core.errors import DealerError, Phrase
from dealer.core.json_types import JsonObject
from dealer.integrity.anchors import MAX_SINCE_BYTES, MIN_HEAD_DIGITS, AnchorError, Head, Since
from dealer.integrity.keys import verify_signature
from dealer.integrity.ledger import GENESIS_PREV, SEAL_FORMAT, Entry, EntryKind, canonical_json, commitment
from dealer.integrity.merkle import leaf_hash, merkle_root

from . import compact
from .batches import FORMAT
from .deals import DealRow, DealState
from .draws import DrawRow
from .errors import BankError
from .repository import BankRepository
from .store import SqliteBank

__all__ = [
    "MAX_SINCE_BYTES",
    "MIN_HEAD_DIGITS",
    "AnchorError",
    "DrawChecker",
    "Finding",
    "Head",
    "Since",
    "VerifyReport",
    "verify_bank",
    "verify_file",
]

FORMATS = ("1", str(compact.FORMAT), str(FORMAT))  # bank formats (``meta.schema``): 2 compact deals, 3 batches
DRAW_KINDS = (
    EntryKind.DRAW_COMMIT,
    EntryKind.DRAW_PUBLISHED,
    EntryKind.PUBLIC_VALUE,
    EntryKind.DRAW,
    EntryKind.REVEAL,
    EntryKind.DRAW_VOID,
)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    ok: bool
    entries: int
    deals: int
    seals: int
    draws: int
    problem: str | None = None  # the first entry/row that does not match, and why (English)
    finding: Finding | None = None  # the same as a catalogued template, for the reader's language


class Finding(DealerError):
    """The first thing in the bank that does not match, and where (what ``VerifyReport.problem`` says)."""


class DrawChecker(Protocol):
    """The draw's part of ``verify_bank``: it reads the draws' documents, which the bank only stores."""

    def label(self, entry: Entry) -> str:
        """The label of the draw a draw-step entry (commit, public value, result, reveal, void) belongs to."""
        ...

    def check(
        self,
        rows: Sequence[DrawRow],
        steps: Mapping[str, Mapping[str, Entry]],
        seals: Mapping[int, JsonObject],
        bank_id: str | None,
        public_key: str | None,
    ) -> dict[int, tuple[str, str]]:
        """Check every draw (``rows`` in commit order, ``steps`` its ledger entries by kind, ``seals`` the
        checkpoints by ledger index); return the deals the draws selected: id -> (state, label). Raises
        ``Finding``."""
        ...

    def check_since(self, since: Since, steps: Mapping[str, Mapping[str, Entry]]) -> None:
        """``since`` is a draw bundle: the draw it records must be in the ledger as it was. Raises ``Finding``."""
        ...


def verify_file(
    path: Path,
    progress: Callable[[int, int], None] | None = None,
    head: Head | None = None,
    since: Since | None = None,
    *,
    draws: DrawChecker,
) -> VerifyReport:
    """Open ``path`` read-only and verify it; any damage, the opening included, is a finding.

    ``path`` may be a ``postgresql://`` URL: that bank is opened without ever creating one."""
    from .engines import is_url

    if is_url(path):
        from .engines import open_bank_at

        try:
            pg = open_bank_at(path, create=False)
        except BankError as exc:
            found = Finding("{exc}", exc=exc)
            return VerifyReport(False, 0, 0, 0, 0, str(found), found)
        try:
            return verify_bank(pg, progress, head, since, draws=draws)
        finally:
            pg.close()
    try:
        bank = SqliteBank(path, read_only=True)
    except sqlite3.Error as exc:
        found = Finding("cannot be read as a bank: {problem}", problem=_sqlite_problem(exc))
        return VerifyReport(False, 0, 0, 0, 0, str(found), found)
    try:
        return verify_bank(bank, progress, head, since, draws=draws)
    finally:
        bank.close()


def _sqlite_problem(exc: BaseException) -> Phrase:
    text = str(exc)
    missing = re.search(r"no such table: (\w+)", text)
    if missing:
        return Phrase("the {table} table is missing (not a bank, or a damaged one)", table=missing.group(1))
    if text in ("file is not a database", "database disk image is malformed"):  # the two a damaged file gives
        return Phrase("the file is not an SQLite database, or a damaged one")
    return Phrase("SQLite: {text}", text=text)  # SQLite's own words


def verify_bank(
    bank: BankRepository,
    progress: Callable[[int, int], None] | None = None,
    head: Head | None = None,
    since: Since | None = None,
    *,
    draws: DrawChecker,
) -> VerifyReport:
    counts = {"entries": 0, "deals": 0, "seals": 0, "draws": 0}
    at = [Phrase("the meta table")]  # the place being read, for a finding the database itself raises
    found: Finding | None = None
    try:
        _verify(bank, draws, counts, progress, at, head, since)
    except Finding as exc:
        found = exc
    except BankError as exc:  # the ledger cannot be rebuilt where compact deals should be
        found = Finding("{where}: {exc}", where=at[0], exc=exc)
    except sqlite3.Error as exc:  # a malformed page, text that is not UTF-8, a missing table or column
        found = Finding("{where}: the database is damaged there ({problem})", where=at[0], problem=_sqlite_problem(exc))
    except (TypeError, KeyError, ValueError, AttributeError, IndexError, RecursionError, OverflowError) as exc:
        found = Finding(
            "{where}: damaged data ({kind}: {text})", where=at[0], kind=type(exc).__name__, text=str(exc)[:200]
        )
    except Exception as exc:  # anything else a damaged file can cause is still a finding, not a crash
        found = Finding(
            "{where}: unreadable ({kind}: {text})", where=at[0], kind=type(exc).__name__, text=str(exc)[:200]
        )
    problem = None if found is None else str(found)
    c = counts
    return VerifyReport(found is None, c["entries"], c["deals"], c["seals"], c["draws"], problem, found)


def _verify(
    bank: BankRepository,
    draws: DrawChecker,
    counts: dict[str, int],
    progress: Callable[[int, int], None] | None,
    at: list[Phrase],
    head: Head | None = None,
    since: Since | None = None,
) -> None:
    meta = bank.meta()
    bank_id = meta.get("bank_id")
    if meta.get("schema") not in FORMATS or set(meta) != {"bank_id", "schema"}:
        raise Finding(
            "meta table: unexpected contents {meta} / schema {meta_schema!r}",
            meta=sorted(meta),
            meta_schema=meta.get("schema"),
        )
    may_be_compact = meta.get("schema") != "1"

    # 1. the ledger: contiguous indices, canonical bytes, hash column, chain, seals
    at[0] = Phrase("the ledger table")
    total = bank.ledger_size()
    deal_entries: dict[int, Entry] = {}
    draw_entries: dict[str, dict[str, Entry]] = {}
    leaves: list[bytes] = []
    prev = GENESIS_PREV
    public_key: str | None = None
    seals: dict[int, JsonObject] = {}  # ledger index of a seal -> its checkpoint
    last_deal = 0
    head_at: int | None = None  # where the recorded head is
    seal_entries: dict[str, int] = {}  # signature of a seal -> its ledger index
    batch: list[Entry] = []  # the compact deals' entries read since the last import entry (their batch's)
    for expected, (idx, kind, body, digest) in enumerate(bank.entries()):
        where = Phrase("ledger entry {n}", n=idx)
        at[0] = Phrase("ledger entry {n} (or the page after entry {before})", n=expected, before=expected - 1)
        if idx != expected:
            raise Finding("ledger entry {expected} is missing (next is {idx})", expected=expected, idx=idx)
        if not isinstance(body, bytes) or not isinstance(digest, bytes):
            raise Finding("{where}: body or hash is not stored as bytes", where=where)
        try:
            entry = Entry.decode(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise Finding("{where}: bytes do not decode as a canonical entry ({exc})", where=where, exc=exc) from exc
        if entry.index != idx or entry.kind != kind:
            raise Finding(
                "{where}: its bytes say entry {index} of kind {kind!r}, the row {idx} {kind2!r}",
                where=where,
                index=entry.index,
                kind=entry.kind,
                idx=idx,
                kind2=kind,
            )
        if sha256(body).digest() != digest:
            raise Finding(
                "{where}: stored hash {digest_hex} is not SHA-256 of its bytes", where=where, digest_hex=digest.hex()
            )
        if entry.prev != prev:
            if batch and kind == EntryKind.IMPORT:  # its deals' entries are rebuilt from their rows: one changed
                raise Finding(
                    "{where}: chain broken: prev {prev} but entry {idx} hashes to {got}: the compact deals "
                    "{first}…{last} of its batch are not those it chained onto (a deal's cards, salt "
                    "or source changed)",
                    where=where,
                    prev=entry.prev,
                    idx=idx - 1,
                    got=prev,
                    first=batch[0].data.get("id"),
                    last=batch[-1].data.get("id"),
                )
            raise Finding(
                "{where}: chain broken: prev {prev} but entry {idx} hashes to {got}",
                where=where,
                prev=entry.prev,
                idx=idx - 1,
                got=prev,
            )
        prev = digest.hex()
        if head is not None and head_at is None and prev.startswith(head.prefix):
            if head.size is not None and head.size != idx + 1:
                raise Finding(
                    "{where}: hashes to the recorded head {head} but the head was noted at size {head_size}",
                    where=where,
                    head=head,
                    head_size=head.size,
                )
            head_at = idx
        data = entry.data
        if idx == 0 and (kind != EntryKind.GENESIS or data.get("bank") != bank_id):
            raise Finding(
                "{where}: the first entry must be the genesis of bank {bank_id}", where=where, bank_id=bank_id
            )
        if batch and (kind != EntryKind.DEAL or not _in_batch(entry)):
            _check_batch(batch, entry)
            batch = []
        if kind == EntryKind.DEAL and _in_batch(entry):
            if not may_be_compact:
                raise Finding("{where}: a compact deal's entry in a bank of format 1", where=where)
            if batch and entry.data["src"]["batch"] != batch[0].data["src"]["batch"]:
                raise Finding(
                    "{where}: names batch {src_batch}, the deals before it another",
                    where=where,
                    src_batch=entry.data["src"]["batch"],
                )
            batch.append(entry)
        if kind == EntryKind.DEAL:
            deal_id = data.get("id")
            if deal_id != last_deal + 1:
                raise Finding(
                    "{where}: deal id {deal_id} out of sequence (expected {last_deal})",
                    where=where,
                    deal_id=deal_id,
                    last_deal=last_deal + 1,
                )
            last_deal = deal_id
            deal_entries[deal_id] = entry
        elif kind == EntryKind.SEAL:
            public_key = _check_seal(entry, leaves, bank_id, public_key, last_deal)
            seals[idx] = data["checkpoint"]
            seal_entries[str(data.get("signature"))] = idx
            counts["seals"] += 1
        elif kind in DRAW_KINDS:
            label = draws.label(entry)
            steps = draw_entries.setdefault(str(label), {})
            if kind in steps:
                raise Finding("{where}: a second {kind} entry for draw {label!r}", where=where, kind=kind, label=label)
            steps[kind] = entry
        leaves.append(leaf_hash(body))
        counts["entries"] = idx + 1
        if progress is not None and idx % 10000 == 0:
            progress(idx, total)

    if batch:
        raise Finding(
            "ledger entry {batch_index}: the batch of its compact deals is not closed by an import entry",
            batch_index=batch[-1].index,
        )
    if progress is not None:
        progress(counts["entries"], total)
    if head is not None and head_at is None:
        raise Finding(
            "the recorded head {head} is not in the ledger (now {counts_entries} entries, head "
            "{prev}): entries were removed, or the ledger before the head was rewritten",
            head=head,
            counts_entries=counts["entries"],
            prev=prev[:16],
        )
    if since is not None:
        _check_since(since, seal_entries, seals)
        if since.commitment is not None:
            draws.check_since(since, draw_entries)

    # 2. the deals: one row per deal entry, commitments recomputed
    states: dict[int, tuple[str, str | None]] = {}
    n_rows = 0
    at[0] = Phrase("the deals table")
    for row in bank.deal_rows():
        n_rows += 1
        at[0] = Phrase("the deals table after deal {n}", n=row.deal_id)
        _check_deal_row(row, deal_entries.get(row.deal_id))
        states[row.deal_id] = (row.state, row.session)
        counts["deals"] = n_rows
    if n_rows != len(deal_entries):
        missing = sorted(set(deal_entries) - set(states))[:5]
        raise Finding(
            "deals table has {n_rows} rows for {n_deal_entries} deal entries (missing {missing})",
            n_rows=n_rows,
            n_deal_entries=len(deal_entries),
            missing=missing,
        )

    # 3. the draws: the draw checks its documents and results; the deals' states must be what the draws say
    at[0] = Phrase("the draws table")
    rows = bank.draw_rows()
    if {str(r.label) for r in rows} != set(draw_entries):
        raise Finding(
            "draws table {label_rows} does not match the ledger's {draw_entries}",
            label_rows=sorted(str(r.label) for r in rows),
            draw_entries=sorted(draw_entries),
        )
    marked = draws.check(rows, draw_entries, seals, bank_id, public_key)
    counts["draws"] = len(rows)
    for deal_id, (state, session) in states.items():
        want = marked.get(deal_id)
        if want is None and (state != DealState.IN_BANK or session is not None):
            raise Finding(
                "deal {deal_id}: state {state!r} session {session!r}, but no draw selected it",
                deal_id=deal_id,
                state=state,
                session=session,
            )
        if want is not None and (state, session) != want:
            raise Finding(
                "deal {deal_id}: state {state!r} session {session!r}, the draws say {want}",
                deal_id=deal_id,
                state=state,
                session=session,
                want=want,
            )


def _check_since(since: Since, seal_entries: dict[str, int], seals: dict[int, JsonObject]) -> None:
    cp = since.checkpoint
    idx = seal_entries.get(since.signature)
    if idx is None or seals.get(idx) != cp:
        raise Finding(
            "{since_name}: its seal ({size} entries, root {root}) is not in the ledger: the ledger "
            "it sealed was cut or rewritten",
            since_name=since.name,
            size=cp.get("size"),
            root=str(cp.get("root"))[:16],
        )


def _check_seal(entry: Entry, leaves: list[bytes], bank_id: str | None, key: str | None, last_deal: int) -> str:
    where = Phrase("ledger entry {n} (seal)", n=entry.index)
    cp = entry.data.get("checkpoint")
    pub = entry.data.get("public_key")
    if not isinstance(cp, dict) or not isinstance(pub, str):
        raise Finding("{where}: no checkpoint or public key", where=where)
    if cp.get("format") != SEAL_FORMAT or cp.get("bank") != bank_id:
        raise Finding(
            "{where}: checkpoint is not a {seal_format} of bank {bank_id}",
            where=where,
            seal_format=SEAL_FORMAT,
            bank_id=bank_id,
        )
    if cp.get("size") != len(leaves) or cp.get("last_deal") != last_deal or cp.get("ts") != entry.ts:
        raise Finding(
            "{where}: checkpoint says {size} entries / deal {last_deal}, the ledger has {n_leaves} / "
            "{last_deal2} before it",
            where=where,
            size=cp.get("size"),
            last_deal=cp.get("last_deal"),
            n_leaves=len(leaves),
            last_deal2=last_deal,
        )
    if merkle_root(leaves).hex() != cp.get("root"):
        raise Finding(
            "{where}: Merkle root of the first {n_leaves} entries is not {root}",
            where=where,
            n_leaves=len(leaves),
            root=cp.get("root"),
        )
    if not verify_signature(pub, str(entry.data.get("signature")), canonical_json(cp)):
        raise Finding("{where}: Ed25519 signature does not verify", where=where)
    if key is not None and pub != key:
        raise Finding("{where}: signed by key {pub}, earlier seals by {key}", where=where, pub=pub, key=key)
    return pub


def _in_batch(entry: Entry) -> bool:
    """Whether a deal's entry is of the compact form (its source references its batch's import entry)."""
    src = entry.data.get("src")
    return isinstance(src, dict) and "batch" in src


def _check_batch(batch: list[Entry], closing: Entry) -> None:
    """The compact deals' entries ``batch`` are closed by ``closing``: the import entry they reference, right after
    them, that counts them, names their ids and has their time."""
    where = Phrase("ledger entry {n}", n=closing.index)
    first, last = batch[0], batch[-1]
    if first.data["src"]["batch"] != closing.index or closing.kind != EntryKind.IMPORT:
        raise Finding(
            "{where}: the compact deals before it name batch {src_batch}, not this entry",
            where=where,
            src_batch=first.data["src"]["batch"],
        )
    data = closing.data
    ids = (first.data.get("id"), last.data.get("id"), len(batch))
    if (data.get("first_deal"), data.get("last_deal"), data.get("imported")) != ids:
        raise Finding(
            "{where}: the import says deals {first_deal}…{last_deal} ({imported}), its compact deals "
            "are {ids}…{ids2} ({ids3})",
            where=where,
            first_deal=data.get("first_deal"),
            last_deal=data.get("last_deal"),
            imported=data.get("imported"),
            ids=ids[0],
            ids2=ids[1],
            ids3=ids[2],
        )
    if any(e.ts != closing.ts for e in batch):
        raise Finding(
            "{where}: its compact deals do not have its time {closing_ts!r}", where=where, closing_ts=closing.ts
        )


def _check_deal_row(row: DealRow, entry: Entry | None) -> None:
    deal_id, ledger_index, canonical, salt, com, source, order, created, state, session = row
    where = Phrase("deal {n}", n=deal_id)
    if entry is None:
        raise Finding("{where}: no ledger entry commits it", where=where)
    if ledger_index != entry.index:
        raise Finding(
            "{where}: row says ledger entry {ledger_index}, its entry is {index}",
            where=where,
            ledger_index=ledger_index,
            index=entry.index,
        )
    if not all(isinstance(x, bytes) for x in (canonical, salt, com)) or len(salt) != 16:
        raise Finding("{where}: canonical deal, salt or commitment damaged", where=where)
    try:
        Deal.from_bytes(canonical)
    except ValueError as exc:
        raise Finding("{where}: canonical bytes are not a deal ({exc})", where=where, exc=exc) from exc
    if isinstance(source, str) and compact.is_compact(source):
        _check_compact_row(row, entry)
        return
    if _in_batch(entry):
        raise Finding(
            "{where}: ledger entry {index} is a compact deal's, the row is not", where=where, index=entry.index
        )
    if commitment(salt, canonical) != com or com.hex() != entry.data.get("c"):
        raise Finding(
            "{where}: SHA-256(salt ‖ deal) does not match the commitment in ledger entry {index}",
            where=where,
            index=entry.index,
        )
    if source != canonical_json(entry.data.get("src")).decode():
        raise Finding(
            "{where}: source {source!r} differs from ledger entry {index}",
            where=where,
            source=source,
            index=entry.index,
        )
    if order is not None and not isinstance(order, bytes):
        raise Finding("{where}: dealing order is not stored as bytes", where=where)
    want_order = entry.data.get("order")
    got_order = None if order is None else sha256(salt + order).hexdigest()
    if want_order != got_order:
        raise Finding(
            "{where}: dealing order does not match its hash in ledger entry {index}", where=where, index=entry.index
        )
    if created != entry.ts:
        raise Finding(
            "{where}: created {created!r}, ledger entry {index} says {ts!r}",
            where=where,
            created=created,
            index=entry.index,
            ts=entry.ts,
        )
    _check_state(where, state, session)


def _check_state(where: Phrase, state: object, session: object) -> None:
    if state not in tuple(DealState):
        raise Finding("{where}: unknown state {state!r}", where=where, state=state)
    if session is not None and not isinstance(session, str):
        raise Finding("{where}: session {session!r} is not a label", where=where, session=session)


def _check_compact_row(row: DealRow, entry: Entry) -> None:
    """A compact deal's row against its entry: the entry is rebuilt from the row when read (``compact``), so what
    binds the row is the hash chain, checked above; here, that the row is all of the compact form."""
    deal_id, _, canonical, salt, com, source, order, created, state, session = row
    where = Phrase("deal {n}", n=deal_id)
    if not _in_batch(entry):
        raise Finding(
            "{where}: the row is a compact deal's, ledger entry {index} is not", where=where, index=entry.index
        )
    if com != compact.EMPTY_COMMITMENT or created != compact.EMPTY_CREATED or order is not None:
        raise Finding("{where}: a compact deal's row holds a commitment, time or dealing order", where=where)
    batch = entry.data["src"]["batch"]
    try:
        src = compact.src_json(batch, source)
        compact.parse_source(source)
    except (BankError, ValueError) as exc:
        raise Finding("{where}: compact source {source!r} damaged", where=where, source=source) from exc
    if commitment(salt, canonical).hex() != entry.data.get("c"):
        raise Finding(
            "{where}: SHA-256(salt ‖ deal) does not match the commitment in ledger entry {index}",
            where=where,
            index=entry.index,
        )
    if src != canonical_json(entry.data.get("src")).decode():
        raise Finding(
            "{where}: source {source!r} differs from ledger entry {index}",
            where=where,
            source=source,
            index=entry.index,
        )
    _check_state(where, state, session)
