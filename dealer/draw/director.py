"""The director's operations on a bank, as one API for the CLI and the web pages.

Public (may be shown to anyone): ``status``, ``commitment``. Director only: ``seal``, ``prepare``,
``enter_public_value``, ``run`` and ``drawn_deals`` (the result stays secret until ``reveal``), ``reveal``,
``bundle`` (after reveal). Nothing public carries K or which deals were drawn before the reveal.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from dealer.bank.ledger import canonical_json
from dealer.bank.merkle import audit_path, tree_levels
from dealer.bank.repository import BankRepository
from dealer.bank.store import DrawRecord, Seal, StoredDeal
from dealer.core import Seat

from .bundle import BUNDLE_FORMAT
from .protocol import (
    COMMIT_FORMAT,
    SECRET_SIZE,
    DrawError,
    PublicValueSpec,
    commitment_picks,
    deals_to_draw,
    public_value,
)


@dataclass(frozen=True, slots=True)
class DrawnDeal:
    """One drawn deal for the director: where the sampler picked it and the deal itself."""

    position: int
    deal: StoredDeal


class Director:
    def __init__(self, bank: BankRepository) -> None:
        self.bank = bank

    # -- public ------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The bank's public status: counts, sealed roots, draws (no K, no drawn deals before reveal)."""
        bank = self.bank
        counts = bank.state_counts()
        seals = bank.seals()
        last = seals[-1] if seals else None
        total = sum(counts.values())
        return {
            "bank": bank.bank_id,
            "deals": total,
            "in_bank": counts["bank"],
            "drawn": counts["drawn"],
            "played": counts["played"],
            "sealed_deals": last.last_deal if last else 0,
            "unsealed_deals": total - (last.last_deal if last else 0),
            "eligible": bank.eligible_count(last.last_deal) if last else 0,
            "ledger_size": bank.ledger_size(),
            "ledger_head": bank.ledger_head(),
            "seals": [_seal_dict(s) for s in seals],
            "draws": [self._draw_public(r) for r in bank.draws()],
        }

    def commitment(self, label: str) -> dict[str, Any]:
        """The published commitment of a draw (and its signature) for the audience display."""
        entry = self.bank.entry(self.bank.get_draw(label).commit_index)
        return {"commitment": entry.data["commitment"], "signature": entry.data["signature"]}

    def _draw_public(self, rec: DrawRecord) -> dict[str, Any]:
        doc = self.bank.entry(rec.commit_index).data["commitment"]
        out: dict[str, Any] = {
            "label": rec.label,
            "state": rec.state,
            "n": doc["n"],
            "eligible": doc["eligible"]["count"],
            "k_hash": doc["k_hash"],
            "public_value_spec": doc["public_value"],
            "public_value": rec.public_value,
        }
        if rec.state == "revealed":
            out["secret"] = rec.secret.hex()
            out["drawn_ids"] = list(rec.drawn or ())
        return out

    # -- director ----------------------------------------------------------------------------------
    def seal(self) -> Seal:
        return self.bank.seal()

    def prepare(
        self,
        label: str,
        spec: PublicValueSpec,
        share_percent: float | None = None,
        count: int | None = None,
    ) -> dict[str, Any]:
        """Commit to a draw: the sealed root, eligible set, n, label, SHA-256(K) and how V will be made."""
        label = label.strip()
        if not label or not label.isprintable():
            raise DrawError("a draw needs a session label (printable text)")
        spec.check()
        bank = self.bank
        seal = bank.latest_seal()
        if seal is None:
            raise DrawError("the bank has no seal yet: seal it before preparing a draw")
        ranges = bank.eligible_ranges(seal.last_deal)
        eligible = sum(b - a + 1 for a, b in ranges)
        n = deals_to_draw(eligible, share_percent, count)
        secret = secrets.token_bytes(SECRET_SIZE)
        doc = {
            "bank": bank.bank_id,
            "eligible": {"count": eligible, "ranges": ranges},
            "format": COMMIT_FORMAT,
            "k_hash": sha256(secret).hexdigest(),
            "label": label,
            "n": n,
            "public_value": spec.to_dict(),
            "seal": _seal_dict(seal),
            "ts": bank.now(),
        }
        signature = bank.sign(canonical_json(doc))
        bank.draw_commit(label, secret, {"commitment": doc, "signature": signature})
        return {"commitment": doc, "signature": signature}

    def enter_public_value(self, label: str, dice: Sequence[str] | None = None, named: str | None = None) -> str:
        doc = self.commitment(label)["commitment"]
        value = public_value(PublicValueSpec.from_dict(doc["public_value"]), dice, named)
        self.bank.draw_public_value(label, value, {"label": label, "value": value})
        return value

    def run(self, label: str) -> list[DrawnDeal]:
        """Draw (director only): the result is stored and marked, never published before ``reveal``."""
        rec = self.bank.get_draw(label)
        if rec.public_value is None:
            raise DrawError(f"draw {label!r} has no public value yet: enter it first")
        doc = self.commitment(label)["commitment"]
        picks = self._picks(doc, rec.secret, rec.public_value)
        self.bank.draw_result(label, [i for _, i in picks], {"label": label, "value": rec.public_value})
        self.bank.seal()  # every draw is sealed at once: its result is under a signed root (#19)
        return self._with_deals(picks)

    @staticmethod
    def _picks(doc: dict[str, Any], secret: bytes, value: str) -> list[tuple[int, int]]:
        return commitment_picks(doc, secret, value)[1]

    def drawn_deals(self, label: str) -> list[DrawnDeal]:
        """The drawn deals in pick order (director only)."""
        rec = self.bank.get_draw(label)
        if rec.drawn is None:
            raise DrawError(f"draw {label!r} has not been run")
        doc = self.commitment(label)["commitment"]
        picks = self._picks(doc, rec.secret, rec.public_value or "")
        if [i for _, i in picks] != list(rec.drawn):
            raise DrawError(f"draw {label!r}: the stored result differs from K and V (run dealer bank verify)")
        return self._with_deals(picks)

    def _with_deals(self, picks: list[tuple[int, int]]) -> list[DrawnDeal]:
        deals = self.bank.get_deals([i for _, i in picks])
        return [DrawnDeal(p, d) for (p, _), d in zip(picks, deals, strict=True)]

    def reveal(self, label: str) -> dict[str, Any]:
        """After play: publish K and the drawn deal ids (the openings go into the bundle)."""
        rec = self.bank.get_draw(label)
        if rec.drawn is None:
            raise DrawError(f"draw {label!r} has not been run: nothing to reveal")
        data = {"drawn": list(rec.drawn), "label": label, "secret": rec.secret.hex()}
        self.bank.draw_reveal(label, data)
        return data

    def bundle(self, label: str) -> dict[str, Any]:
        """The verification bundle (docs/bundle.md); only after the reveal."""
        bank = self.bank
        rec = bank.get_draw(label)
        if rec.state != "revealed":
            raise DrawError(f"draw {label!r} is {rec.state}: the bundle holds K, so it exists only after reveal")
        published = self.commitment(label)
        doc = published["commitment"]
        seal_entry = bank.entry(doc["seal"]["index"])
        size = doc["seal"]["size"]
        levels = tree_levels(bank.leaves(size))
        drawn = []
        items = self.drawn_deals(label)
        bodies = bank.entry_bodies([item.deal.ledger_index for item in items])
        for item in items:
            d = item.deal
            body = bodies[d.ledger_index]
            drawn.append(
                {
                    "deal": d.deal.to_bytes().hex(),
                    "deal_id": d.deal_id,
                    "entry": body.decode(),
                    "ledger_index": d.ledger_index,
                    "pbn": d.deal.to_pbn(Seat.N),
                    "position": item.position,
                    "proof": [h.hex() for h in audit_path(levels, d.ledger_index)],
                    "salt": d.salt.hex(),
                }
            )
        return {
            "commitment": doc,
            "commitment_signature": published["signature"],
            "drawn": drawn,
            "format": BUNDLE_FORMAT,
            "public_key": seal_entry.data["public_key"],
            "public_value": rec.public_value,
            "seal": {"checkpoint": seal_entry.data["checkpoint"], "signature": seal_entry.data["signature"]},
            "secret": rec.secret.hex(),
        }


def _seal_dict(seal: Seal) -> dict[str, Any]:
    return {
        "index": seal.ledger_index,
        "last_deal": seal.last_deal,
        "root": seal.root,
        "size": seal.size,
        "ts": seal.ts,
    }
