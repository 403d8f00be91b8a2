"""The bank's public status: counts, sealed roots and draws, as anyone may see them (no K, no drawn deals
before the reveal).

Apart from the director's operations (``dealer.draw.director``) so that ``dealer bank status``, typed at a desk,
starts without the draw's protocol, the regulation reader and the bundle code; ``Director.status`` is this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from dealer.bank.draws import DrawState
from dealer.core.json_types import JsonObject

if TYPE_CHECKING:  # the interface's protocols are types here: the status goes without building them
    from dealer.bank.repository import BankRepository, DrawRecord, Seal


class SealView(TypedDict):
    """A seal as the status lists it."""

    index: int
    last_deal: int
    root: str
    size: int
    ts: str


def public_status(bank: BankRepository) -> JsonObject:
    """The bank's public status: counts, sealed roots, draws (no K, no drawn deals before reveal)."""
    counts = bank.state_counts()
    seals = bank.seals()
    last = seals[-1] if seals else None
    total = sum(counts.values())
    draws = bank.draws()
    drawn_total = sum(r.drawn_count for r in draws)
    return {
        "bank": bank.bank_id,
        "deals": total,
        "in_bank": counts["bank"],
        "drawn": counts["drawn"],
        "played": counts["played"],
        "drawn_total": drawn_total,
        "sealed_deals": last.last_deal if last else 0,
        "unsealed_deals": total - (last.last_deal if last else 0),
        "eligible": (last.last_deal - drawn_total) if last else 0,
        "ledger_size": bank.ledger_size(),
        "ledger_head": bank.ledger_head(),
        "seals": [seal_view(s) for s in seals],
        "draws": [draw_public(bank, r) for r in draws],
    }


def draw_public(bank: BankRepository, rec: DrawRecord) -> JsonObject:
    """A draw as the status shows it: its commitment's public parts; K and the drawn deals once revealed."""
    doc = bank.entry(rec.commit_index).data["commitment"]
    out: JsonObject = {
        "label": rec.label,
        "state": rec.state,
        "kind": doc.get("kind", "session"),
        "n": doc["n"],
        "eligible": doc["eligible"]["count"],
        "k_hash": doc["k_hash"],
        "public_value_spec": doc["public_value"],
        "public_value": rec.public_value,
    }
    if rec.state in (DrawState.REVEALED, DrawState.VOID):
        out["secret"] = rec.secret.hex()
    if rec.state == DrawState.REVEALED:
        out["drawn_ids"] = list(rec.drawn or ())
    return out


def seal_view(seal: Seal) -> SealView:
    return {
        "index": seal.ledger_index,
        "last_deal": seal.last_deal,
        "root": seal.root,
        "size": seal.size,
        "ts": seal.ts,
    }
