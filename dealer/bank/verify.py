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
from dealer.core.json_types import JsonObject

from . import compact
from .anchors import MAX_SINCE_BYTES, MIN_HEAD_DIGITS, AnchorError, Head, Since
from .deals import DealRow, DealState
from .draws import DrawRow
from .errors import BankError
from .keys import verify_signature
from .ledger import GENESIS_PREV, SEAL_FORMAT, Entry, EntryKind, canonical_json, commitment
from .merkle import leaf_hash, merkle_root
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

FORMATS = ("1", str(compact.FORMAT))  # bank formats (``meta.schema``): 2 may hold compact deals
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
    problem: str | None = None  # the first entry/row that does not match, and why


class Finding(Exception):
    """The first thing in the bank that does not match, and where (what ``VerifyReport.problem`` says)."""


_Bad = Finding


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
            return VerifyReport(False, 0, 0, 0, 0, str(exc))
        try:
            return verify_bank(pg, progress, head, since, draws=draws)
        finally:
            pg.close()
    try:
        bank = SqliteBank(path, read_only=True)
    except sqlite3.Error as exc:
        return VerifyReport(False, 0, 0, 0, 0, f"cannot be read as a bank: {_sqlite_problem(exc)}")
    try:
        return verify_bank(bank, progress, head, since, draws=draws)
    finally:
        bank.close()


def _sqlite_problem(exc: BaseException) -> str:
    text = str(exc)
    missing = re.search(r"no such table: (\w+)", text)
    if missing:
        return f"the {missing.group(1)} table is missing (not a bank, or a damaged one)"
    return f"SQLite: {text}"


def verify_bank(
    bank: BankRepository,
    progress: Callable[[int, int], None] | None = None,
    head: Head | None = None,
    since: Since | None = None,
    *,
    draws: DrawChecker,
) -> VerifyReport:
    counts = {"entries": 0, "deals": 0, "seals": 0, "draws": 0}
    at = ["the meta table"]  # the place being read, for a finding the database itself raises
    problem: str | None = None
    try:
        _verify(bank, draws, counts, progress, at, head, since)
    except _Bad as exc:
        problem = str(exc)
    except BankError as exc:  # the ledger cannot be rebuilt where compact deals should be
        problem = f"{at[0]}: {exc}"
    except sqlite3.Error as exc:  # a malformed page, text that is not UTF-8, a missing table or column
        problem = f"{at[0]}: the database is damaged there ({_sqlite_problem(exc)})"
    except (TypeError, KeyError, ValueError, AttributeError, IndexError, RecursionError, OverflowError) as exc:
        problem = f"{at[0]}: damaged data ({type(exc).__name__}: {str(exc)[:200]})"
    except Exception as exc:  # anything else a damaged file can cause is still a finding, not a crash
        problem = f"{at[0]}: unreadable ({type(exc).__name__}: {str(exc)[:200]})"
    return VerifyReport(problem is None, counts["entries"], counts["deals"], counts["seals"], counts["draws"], problem)


def _verify(
    bank: BankRepository,
    draws: DrawChecker,
    counts: dict[str, int],
    progress: Callable[[int, int], None] | None,
    at: list[str],
    head: Head | None = None,
    since: Since | None = None,
) -> None:
    meta = bank.meta()
    bank_id = meta.get("bank_id")
    if meta.get("schema") not in FORMATS or set(meta) != {"bank_id", "schema"}:
        raise _Bad(f"meta table: unexpected contents {sorted(meta)} / schema {meta.get('schema')!r}")
    may_be_compact = meta.get("schema") != "1"

    # 1. the ledger: contiguous indices, canonical bytes, hash column, chain, seals
    at[0] = "the ledger table"
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
        where = f"ledger entry {idx}"
        at[0] = f"ledger entry {expected} (or the page after entry {expected - 1})"
        if idx != expected:
            raise _Bad(f"ledger entry {expected} is missing (next is {idx})")
        if not isinstance(body, bytes) or not isinstance(digest, bytes):
            raise _Bad(f"{where}: body or hash is not stored as bytes")
        try:
            entry = Entry.decode(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _Bad(f"{where}: bytes do not decode as a canonical entry ({exc})") from exc
        if entry.index != idx or entry.kind != kind:
            raise _Bad(f"{where}: its bytes say entry {entry.index} of kind {entry.kind!r}, the row {idx} {kind!r}")
        if sha256(body).digest() != digest:
            raise _Bad(f"{where}: stored hash {digest.hex()} is not SHA-256 of its bytes")
        if entry.prev != prev:
            rebuilt = ""
            if batch and kind == EntryKind.IMPORT:  # its deals' entries are rebuilt from their rows: one changed
                first_id, last_id = batch[0].data.get("id"), batch[-1].data.get("id")
                rebuilt = (f": the compact deals {first_id}…{last_id} of its batch are not those it chained onto "
                           f"(a deal's cards, salt or source changed)")  # fmt: skip
            raise _Bad(f"{where}: chain broken: prev {entry.prev} but entry {idx - 1} hashes to {prev}{rebuilt}")
        prev = digest.hex()
        if head is not None and head_at is None and prev.startswith(head.prefix):
            if head.size is not None and head.size != idx + 1:
                raise _Bad(f"{where}: hashes to the recorded head {head} but the head was noted at size {head.size}")
            head_at = idx
        data = entry.data
        if idx == 0 and (kind != EntryKind.GENESIS or data.get("bank") != bank_id):
            raise _Bad(f"{where}: the first entry must be the genesis of bank {bank_id}")
        if batch and (kind != EntryKind.DEAL or not _in_batch(entry)):
            _check_batch(batch, entry)
            batch = []
        if kind == EntryKind.DEAL and _in_batch(entry):
            if not may_be_compact:
                raise _Bad(f"{where}: a compact deal's entry in a bank of format 1")
            if batch and entry.data["src"]["batch"] != batch[0].data["src"]["batch"]:
                raise _Bad(f"{where}: names batch {entry.data['src']['batch']}, the deals before it another")
            batch.append(entry)
        if kind == EntryKind.DEAL:
            deal_id = data.get("id")
            if deal_id != last_deal + 1:
                raise _Bad(f"{where}: deal id {deal_id} out of sequence (expected {last_deal + 1})")
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
                raise _Bad(f"{where}: a second {kind} entry for draw {label!r}")
            steps[kind] = entry
        leaves.append(leaf_hash(body))
        counts["entries"] = idx + 1
        if progress is not None and idx % 10000 == 0:
            progress(idx, total)

    if batch:
        raise _Bad(f"ledger entry {batch[-1].index}: the batch of its compact deals is not closed by an import entry")
    if progress is not None:
        progress(counts["entries"], total)
    if head is not None and head_at is None:
        raise _Bad(
            f"the recorded head {head} is not in the ledger (now {counts['entries']} entries, head {prev[:16]}): "
            f"entries were removed, or the ledger before the head was rewritten"
        )
    if since is not None:
        _check_since(since, seal_entries, seals)
        if since.commitment is not None:
            draws.check_since(since, draw_entries)

    # 2. the deals: one row per deal entry, commitments recomputed
    states: dict[int, tuple[str, str | None]] = {}
    n_rows = 0
    at[0] = "the deals table"
    for row in bank.deal_rows():
        n_rows += 1
        at[0] = f"the deals table after deal {row.deal_id}"
        _check_deal_row(row, deal_entries.get(row.deal_id))
        states[row.deal_id] = (row.state, row.session)
        counts["deals"] = n_rows
    if n_rows != len(deal_entries):
        missing = sorted(set(deal_entries) - set(states))[:5]
        raise _Bad(f"deals table has {n_rows} rows for {len(deal_entries)} deal entries (missing {missing})")

    # 3. the draws: the draw checks its documents and results; the deals' states must be what the draws say
    at[0] = "the draws table"
    rows = bank.draw_rows()
    if {str(r.label) for r in rows} != set(draw_entries):
        raise _Bad(
            f"draws table {sorted(str(r.label) for r in rows)} does not match the ledger's {sorted(draw_entries)}"
        )
    marked = draws.check(rows, draw_entries, seals, bank_id, public_key)
    counts["draws"] = len(rows)
    for deal_id, (state, session) in states.items():
        want = marked.get(deal_id)
        if want is None and (state != DealState.IN_BANK or session is not None):
            raise _Bad(f"deal {deal_id}: state {state!r} session {session!r}, but no draw selected it")
        if want is not None and (state, session) != want:
            raise _Bad(f"deal {deal_id}: state {state!r} session {session!r}, the draws say {want}")


def _check_since(since: Since, seal_entries: dict[str, int], seals: dict[int, JsonObject]) -> None:
    cp = since.checkpoint
    idx = seal_entries.get(since.signature)
    if idx is None or seals.get(idx) != cp:
        raise _Bad(
            f"{since.name}: its seal ({cp.get('size')} entries, root {str(cp.get('root'))[:16]}) is not in the ledger: "
            f"the ledger it sealed was cut or rewritten"
        )


def _check_seal(entry: Entry, leaves: list[bytes], bank_id: str | None, key: str | None, last_deal: int) -> str:
    where = f"ledger entry {entry.index} (seal)"
    cp = entry.data.get("checkpoint")
    pub = entry.data.get("public_key")
    if not isinstance(cp, dict) or not isinstance(pub, str):
        raise _Bad(f"{where}: no checkpoint or public key")
    if cp.get("format") != SEAL_FORMAT or cp.get("bank") != bank_id:
        raise _Bad(f"{where}: checkpoint is not a {SEAL_FORMAT} of bank {bank_id}")
    if cp.get("size") != len(leaves) or cp.get("last_deal") != last_deal or cp.get("ts") != entry.ts:
        raise _Bad(f"{where}: checkpoint says {cp.get('size')} entries / deal {cp.get('last_deal')}, "
                   f"the ledger has {len(leaves)} / {last_deal} before it")  # fmt: skip
    if merkle_root(leaves).hex() != cp.get("root"):
        raise _Bad(f"{where}: Merkle root of the first {len(leaves)} entries is not {cp.get('root')}")
    if not verify_signature(pub, str(entry.data.get("signature")), canonical_json(cp)):
        raise _Bad(f"{where}: Ed25519 signature does not verify")
    if key is not None and pub != key:
        raise _Bad(f"{where}: signed by key {pub}, earlier seals by {key}")
    return pub


def _in_batch(entry: Entry) -> bool:
    """Whether a deal's entry is of the compact form (its source references its batch's import entry)."""
    src = entry.data.get("src")
    return isinstance(src, dict) and "batch" in src


def _check_batch(batch: list[Entry], closing: Entry) -> None:
    """The compact deals' entries ``batch`` are closed by ``closing``: the import entry they reference, right after
    them, that counts them, names their ids and has their time."""
    where = f"ledger entry {closing.index}"
    first, last = batch[0], batch[-1]
    if first.data["src"]["batch"] != closing.index or closing.kind != EntryKind.IMPORT:
        raise _Bad(f"{where}: the compact deals before it name batch {first.data['src']['batch']}, not this entry")
    data = closing.data
    ids = (first.data.get("id"), last.data.get("id"), len(batch))
    if (data.get("first_deal"), data.get("last_deal"), data.get("imported")) != ids:
        raise _Bad(f"{where}: the import says deals {data.get('first_deal')}…{data.get('last_deal')} "
                   f"({data.get('imported')}), its compact deals are {ids[0]}…{ids[1]} ({ids[2]})")  # fmt: skip
    if any(e.ts != closing.ts for e in batch):
        raise _Bad(f"{where}: its compact deals do not have its time {closing.ts!r}")


def _check_deal_row(row: DealRow, entry: Entry | None) -> None:
    deal_id, ledger_index, canonical, salt, com, source, order, created, state, session = row
    where = f"deal {deal_id}"
    if entry is None:
        raise _Bad(f"{where}: no ledger entry commits it")
    if ledger_index != entry.index:
        raise _Bad(f"{where}: row says ledger entry {ledger_index}, its entry is {entry.index}")
    if not all(isinstance(x, bytes) for x in (canonical, salt, com)) or len(salt) != 16:
        raise _Bad(f"{where}: canonical deal, salt or commitment damaged")
    try:
        Deal.from_bytes(canonical)
    except ValueError as exc:
        raise _Bad(f"{where}: canonical bytes are not a deal ({exc})") from exc
    if isinstance(source, str) and compact.is_compact(source):
        _check_compact_row(row, entry)
        return
    if _in_batch(entry):
        raise _Bad(f"{where}: ledger entry {entry.index} is a compact deal's, the row is not")
    if commitment(salt, canonical) != com or com.hex() != entry.data.get("c"):
        raise _Bad(f"{where}: SHA-256(salt ‖ deal) does not match the commitment in ledger entry {entry.index}")
    if source != canonical_json(entry.data.get("src")).decode():
        raise _Bad(f"{where}: source {source!r} differs from ledger entry {entry.index}")
    if order is not None and not isinstance(order, bytes):
        raise _Bad(f"{where}: dealing order is not stored as bytes")
    want_order = entry.data.get("order")
    got_order = None if order is None else sha256(salt + order).hexdigest()
    if want_order != got_order:
        raise _Bad(f"{where}: dealing order does not match its hash in ledger entry {entry.index}")
    if created != entry.ts:
        raise _Bad(f"{where}: created {created!r}, ledger entry {entry.index} says {entry.ts!r}")
    _check_state(where, state, session)


def _check_state(where: str, state: object, session: object) -> None:
    if state not in tuple(DealState):
        raise _Bad(f"{where}: unknown state {state!r}")
    if session is not None and not isinstance(session, str):
        raise _Bad(f"{where}: session {session!r} is not a label")


def _check_compact_row(row: DealRow, entry: Entry) -> None:
    """A compact deal's row against its entry: the entry is rebuilt from the row when read (``compact``), so what
    binds the row is the hash chain, checked above; here, that the row is all of the compact form."""
    deal_id, _, canonical, salt, com, source, order, created, state, session = row
    where = f"deal {deal_id}"
    if not _in_batch(entry):
        raise _Bad(f"{where}: the row is a compact deal's, ledger entry {entry.index} is not")
    if com != compact.EMPTY_COMMITMENT or created != compact.EMPTY_CREATED or order is not None:
        raise _Bad(f"{where}: a compact deal's row holds a commitment, time or dealing order")
    batch = entry.data["src"]["batch"]
    try:
        src = compact.src_json(batch, source)
        compact.parse_source(source)
    except (BankError, ValueError) as exc:
        raise _Bad(f"{where}: compact source {source!r} damaged") from exc
    if commitment(salt, canonical).hex() != entry.data.get("c"):
        raise _Bad(f"{where}: SHA-256(salt ‖ deal) does not match the commitment in ledger entry {entry.index}")
    if src != canonical_json(entry.data.get("src")).decode():
        raise _Bad(f"{where}: source {source!r} differs from ledger entry {entry.index}")
    _check_state(where, state, session)
