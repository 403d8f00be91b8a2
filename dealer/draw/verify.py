"""``dealer bank verify`` with the draws: the bank's own checks (``dealer.bank.verify``) and, here, what only the
draw can read — each commitment's format, its chain to the previous draw and running total, its signature, K
against its hash, the result recomputed from K and V, the reveal and the void.

``verify_bank`` and ``verify_file`` here are the full check; every caller uses these.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from hashlib import sha256
from pathlib import Path

from dealer.bank import verify as bank_verify
from dealer.bank.deals import DealState
from dealer.bank.draws import RUN_ORDER, DrawRow, DrawState
from dealer.bank.repository import BankRepository
from dealer.bank.verify import AnchorError, Finding, Head, Since, VerifyReport
from dealer.core.errors import Phrase
from dealer.core.json_types import JsonObject
from dealer.custody.keyring import is_sealed
from dealer.integrity.keys import verify_signature
from dealer.integrity.ledger import Entry, EntryKind, canonical_json

from .protocol import (
    COMMIT_FORMAT,
    SECRET_SIZE,
    VOID_FORMAT,
    commitment_hash,
    commitment_picks,
    draw_seed,
    drawn_ids,
    to_ranges,
)

__all__ = ["AnchorError", "DrawChecks", "Head", "Since", "VerifyReport", "verify_bank", "verify_file"]

OLD_COMMIT_FORMAT = "bridge-dealer-draw-commit/1"  # listed its eligible ranges; banks made before format 2
STEP_KINDS = (EntryKind.DRAW_COMMIT, EntryKind.PUBLIC_VALUE, EntryKind.DRAW, EntryKind.REVEAL)


class DrawChecks:
    """The ``dealer.bank.verify.DrawChecker`` of this program's draw formats."""

    def label(self, entry: Entry) -> str:
        data = entry.data
        if entry.kind == EntryKind.DRAW_COMMIT:
            return str(data["commitment"]["label"])
        if entry.kind == EntryKind.DRAW_VOID:
            return str(data["void"].get("label"))
        return str(data.get("label"))

    def check(
        self,
        rows: Sequence[DrawRow],
        steps: Mapping[str, Mapping[str, Entry]],
        seals: Mapping[int, JsonObject],
        bank_id: str | None,
        public_key: str | None,
    ) -> dict[int, tuple[str, str]]:
        marked: dict[int, tuple[str, str]] = {}
        sealed_drawn = 0  # deals drawn by draws whose result is still sealed (the chief judge's, until reveal)
        previous: str | None = None
        for row in rows:
            label = str(row.label)
            doc = steps[label][EntryKind.DRAW_COMMIT].data["commitment"]
            cp = seals.get(doc["seal"]["index"], {})
            if any(cp.get(k) != doc["seal"][k] for k in ("size", "root", "last_deal", "ts")) or doc["bank"] != bank_id:
                raise Finding(
                    "draw {label!r}: its commitment names a seal that is not ledger entry {seal_index}",
                    label=label,
                    seal_index=doc["seal"]["index"],
                )
            if doc.get("format") == OLD_COMMIT_FORMAT and previous is None:  # format 1: no chain, ranges listed
                never_drawn = [i for i in range(1, doc["seal"]["last_deal"] + 1) if i not in marked]
                if doc["eligible"]["ranges"] != to_ranges(never_drawn):
                    raise Finding(
                        "draw {label!r}: its eligible set is not the sealed deals never drawn before", label=label
                    )
                for deal_id, state in _check_draw(row, steps[label], public_key, None, doc).items():
                    marked[deal_id] = (state, label)
                continue
            if doc.get("format") != COMMIT_FORMAT:
                raise Finding(
                    "draw {label!r}: commitment format {format!r} is not {commit_format!r}",
                    label=label,
                    format=doc.get("format"),
                    commit_format=COMMIT_FORMAT,
                )
            drawn_before = len(marked) + sealed_drawn
            if doc["previous"] != previous or doc["drawn_before"] != drawn_before:
                raise Finding(
                    "draw {label!r}: it does not follow the bank's previous draw and its running total", label=label
                )
            if doc["eligible"]["count"] != doc["seal"]["last_deal"] - drawn_before:
                raise Finding(
                    "draw {label!r}: its eligible count is not the sealed deals never drawn before", label=label
                )
            if not doc["seal"]["last_deal"] < doc["seal"]["size"]:
                raise Finding(
                    "draw {label!r}: its seal claims more deals than its ledger entries can hold", label=label
                )
            previous = commitment_hash(doc)
            before = list(marked)
            picked = _check_draw(row, steps[label], public_key, before, doc)
            if row.state == DrawState.DRAWN and not _open_secret(row.secret):
                sealed_drawn += doc["n"]
            for deal_id, state in picked.items():
                marked[deal_id] = (state, label)
        return marked

    def check_since(self, since: Since, steps: Mapping[str, Mapping[str, Entry]]) -> None:
        if since.commitment is None:
            return
        label = str(since.commitment.get("label"))
        found = steps.get(label, {})
        commit = found.get(EntryKind.DRAW_COMMIT)
        if commit is None or commit.data.get("commitment") != since.commitment:
            raise Finding(
                "{since_name}: draw {label!r} as it committed is not in the ledger: the draw was erased or redone",
                since_name=since.name,
                label=label,
            )
        pv, drawn = found.get(EntryKind.PUBLIC_VALUE), found.get(EntryKind.REVEAL)
        if since.public_value is not None and (pv is None or pv.data.get("value") != since.public_value):
            raise Finding(
                "{since_name}: draw {label!r}: the ledger's public value differs from the bundle's",
                since_name=since.name,
                label=label,
            )
        if since.drawn is not None and (drawn is None or sorted(drawn.data.get("drawn", [])) != sorted(since.drawn)):
            raise Finding(
                "{since_name}: draw {label!r}: the ledger's revealed deals differ from the bundle's",
                since_name=since.name,
                label=label,
            )


DRAW_CHECKS = DrawChecks()


def verify_bank(
    bank: BankRepository,
    progress: Callable[[int, int], None] | None = None,
    head: Head | None = None,
    since: Since | None = None,
) -> VerifyReport:
    """Recompute the ledger chain, every seal, every commitment and every draw; the first mismatch is named."""
    return bank_verify.verify_bank(bank, progress, head, since, draws=DRAW_CHECKS)


def verify_file(
    path: Path,
    progress: Callable[[int, int], None] | None = None,
    head: Head | None = None,
    since: Since | None = None,
) -> VerifyReport:
    """Open the bank at ``path`` (a file, or a postgresql:// URL) read-only and verify it, draws included."""
    return bank_verify.verify_file(path, progress, head, since, draws=DRAW_CHECKS)


def _open_secret(secret: object) -> bool:
    return isinstance(secret, bytes) and len(secret) == SECRET_SIZE


def _check_draw(
    row: DrawRow, steps: Mapping[str, Entry], key: str | None, before: list[int] | None, doc: JsonObject
) -> dict[int, str]:
    """``before``: the deals drawn by the earlier draws of the chain (None for a format-1 draw).

    Until the reveal (or void) K and the result are sealed under the chief judge's key (docs/custody.md): the
    verifier, who has no key, checks their form; once open they are recomputed. A bank made before custody holds
    them open throughout, and is checked as before."""
    label, state, commit_index, secret, value, drawn = row
    where = Phrase("draw {label!r}", label=label)
    entry = steps.get(EntryKind.DRAW_COMMIT)
    if entry is None or entry.index != commit_index:
        raise Finding(
            "{where}: its commitment is not ledger entry {commit_index}", where=where, commit_index=commit_index
        )
    if key is None or not verify_signature(key, str(entry.data.get("signature")), canonical_json(doc)):
        raise Finding("{where}: commitment signature does not verify with the bank's key", where=where)
    if EntryKind.DRAW_VOID in steps and EntryKind.DRAW_PUBLISHED in steps:
        raise Finding("{where}: voided after its commitment was shown to the hall", where=where)
    if state not in (DrawState.REVEALED, DrawState.VOID) and not _open_secret(secret):
        if not isinstance(secret, bytes) or not is_sealed(secret, SECRET_SIZE):
            raise Finding(
                "{where}: the stored secret K is neither K nor K sealed under the chief judge's key", where=where
            )
        return _check_sealed(row, steps, where, doc["n"])
    if not isinstance(secret, bytes) or sha256(secret).hexdigest() != doc["k_hash"]:
        raise Finding(
            "{where}: the stored secret K does not hash to the committed {k_hash}", where=where, k_hash=doc["k_hash"]
        )
    _check_public_value(row, steps, where)
    void = steps.get(EntryKind.DRAW_VOID)
    if (state == DrawState.VOID) != (void is not None):
        raise Finding(
            "{where}: state {state!r} but the ledger has a void entry"
            if void
            else "{where}: state {state!r} but the ledger lacks a void entry",
            where=where,
            state=state,
        )
    if void is not None:
        vd = void.data["void"]
        if vd.get("format") == VOID_FORMAT and vd.get("published") is not False:
            raise Finding("{where}: its void says it was made after the commitment was shown to the hall", where=where)
        if key is None or not verify_signature(key, str(void.data.get("signature")), canonical_json(vd)):
            raise Finding("{where}: the void's signature does not verify with the bank's key", where=where)
        if vd.get("secret") != secret.hex() or drawn is not None or EntryKind.DRAW in steps:
            raise Finding("{where}: voided, but its void entry or result does not match", where=where)
        return {}
    if _reached(row, steps, where, RUN_ORDER) < 2:
        return {}
    if before is None:
        seed = draw_seed(secret, str(value), bytes.fromhex(doc["seal"]["root"]), doc["label"])
        ids = [i for _, i in drawn_ids(seed, doc["eligible"]["ranges"], doc["eligible"]["count"], doc["n"])]
    else:
        ids = [i for _, i in commitment_picks(doc, secret, str(value), before)[1]]
    try:
        stored = json.loads(drawn)  # type: ignore[arg-type]  # None is a finding too (TypeError below)
    except (TypeError, ValueError) as exc:
        raise Finding("{where}: stored result is damaged", where=where) from exc
    if stored != ids:
        raise Finding("{where}: stored result differs from the draw recomputed from K and V", where=where)
    reveal = steps.get(EntryKind.REVEAL)
    if reveal is not None and (reveal.data.get("drawn") != ids or reveal.data.get("secret") != secret.hex()):
        raise Finding(
            "{where}: the reveal entry {reveal_index} does not match K and the result",
            where=where,
            reveal_index=reveal.index,
        )
    return dict.fromkeys(ids, DealState.PLAYED if reveal is not None else DealState.DRAWN)


def _check_sealed(row: DrawRow, steps: Mapping[str, Entry], where: Phrase, n: int) -> dict[int, str]:
    """A draw whose K (and result, once run) are sealed: the steps match its state, the result has its form;
    it marks no deal (the deals stay in the bank's table until the reveal)."""
    if row.state not in RUN_ORDER[:3]:
        raise Finding("{where}: unknown state {state!r}", where=where, state=row.state)
    _check_public_value(row, steps, where)
    if _reached(row, steps, where, RUN_ORDER[:3]) < 2:
        return {}
    try:
        stored = json.loads(row.drawn)  # type: ignore[arg-type]  # None is a finding too (TypeError below)
        sealed = bytes.fromhex(stored["sealed"])
        ok = set(stored) == {"count", "sealed"} and stored["count"] == n and sealed[:1] == b"\x01"
    except (TypeError, ValueError, KeyError) as exc:
        raise Finding("{where}: stored sealed result is damaged", where=where) from exc
    if not ok:
        raise Finding("{where}: stored sealed result is damaged", where=where)
    return {}


def _check_public_value(row: DrawRow, steps: Mapping[str, Entry], where: Phrase) -> None:
    pv = steps.get(EntryKind.PUBLIC_VALUE)
    if (pv.data.get("value") if pv else None) != row.public_value:
        raise Finding(
            "{where}: public value {public_value!r} differs from the ledger's",
            where=where,
            public_value=row.public_value,
        )


def _reached(row: DrawRow, steps: Mapping[str, Entry], where: Phrase, states: Sequence[DrawState]) -> int:
    """How far the draw ran (its index in ``RUN_ORDER``), its ledger steps being exactly those up to there; no
    result before it was run."""
    if row.state not in states:
        raise Finding("{where}: unknown state {state!r}", where=where, state=row.state)
    reached = RUN_ORDER.index(DrawState(row.state))
    for k, kind in enumerate(STEP_KINDS):
        if (kind in steps) != (k <= reached):
            raise Finding(
                "{where}: state {state!r} but the ledger has {kind}"
                if kind in steps
                else "{where}: state {state!r} but the ledger lacks {kind}",
                where=where,
                state=row.state,
                kind=kind,
            )
    if reached < 2 and row.drawn is not None:
        raise Finding("{where}: has a result before it was run", where=where)
    return reached
