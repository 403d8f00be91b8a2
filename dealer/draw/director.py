"""The director's operations on a bank, as one API for the CLI and the web pages.

Public (may be shown to anyone): ``status``, ``commitment``. Director only: ``seal``, ``prepare``,
``enter_public_value``, ``run`` and ``drawn_deals`` (the result stays secret until ``reveal``), ``reveal``,
``bundle`` (after reveal). Nothing public carries K or which deals were drawn before the reveal.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import sha256
from typing import TypedDict

from dealer.bank.register import PlayedRegister
from dealer.bank.repository import BankRepository, DrawRecord, DrawState, PriorDraw, Seal, StoredDeal
from dealer.core import Seat
from dealer.core.json_types import JsonObject
from dealer.integrity.keys import verify_signature
from dealer.integrity.ledger import canonical_json, entry_hash
from dealer.integrity.merkle import audit_path, leaf_hash, tree_levels
from dealer.regulation import Regulation

from .bundle import BUNDLE_FORMAT, MAX_OVERRIDE, register_source
from .protocol import (
    COMMIT_FORMAT,
    ELIGIBLE_RULE,
    MIN_PERCENT,
    SECRET_SIZE,
    VOID_FORMAT,
    DrawError,
    PublicValueSpec,
    check_quota,
    commitment_hash,
    commitment_picks,
    percent_text,
    printable,
    public_value,
    quota_limit,
)
from .status import public_status, seal_view

RESULT_ID_WIDTH = 12  # a deal id and its separator, at most: the sealed result's room per drawn deal


@dataclass(frozen=True, slots=True)
class DrawnDeal:
    """One drawn deal for the director: where the sampler picked it and the deal itself."""

    position: int
    deal: StoredDeal


class DrawPlan(TypedDict):
    """Where the bank stands against the regulation's quota (``Director.plan``)."""

    share: str
    sessions: int
    boards: int
    spare: int
    target: int
    sealed: int
    below_target: bool
    quota: int
    drawn: int
    left: int
    session_draws: int


@dataclass(frozen=True, slots=True)
class ChainOf:
    """The bank's ``ChainCheck`` for a new commitment ``doc``: run inside the bank's transaction, it refuses unless
    ``doc`` names the bank's previous draw and the running total drawn (another process may have drawn since)."""

    doc: JsonObject

    def __call__(self, prior: Sequence[PriorDraw]) -> None:
        previous: str | None = None
        drawn_before = 0
        for draw in prior:
            earlier = draw.commit.data["commitment"]
            if earlier.get("format") != COMMIT_FORMAT:
                raise DrawError(
                    "this bank holds a draw of the older format {format!r}: start a new bank file for the next "
                    "stage (docs/bundle.md, migration)",
                    format=earlier.get("format"),
                )
            previous = commitment_hash(earlier)
            drawn_before += draw.drawn
        if self.doc["previous"] != previous or self.doc["drawn_before"] != drawn_before:
            raise DrawError(
                "another draw was made while {label!r} was prepared: prepare it again", label=self.doc["label"]
            )


class Director:
    def __init__(self, bank: BankRepository, register: PlayedRegister | None = None) -> None:
        """``register``: the played deals of the competition (Law 15): a bank holding one draws nothing, and every
        revealed draw's deals are added to it."""
        self.bank = bank
        self.register = register
        self._levels: dict[tuple[int, str], list[list[bytes]]] = {}  # per seal: its tree, checked against its root

    # -- public ------------------------------------------------------------------------------------
    def status(self) -> JsonObject:
        """The bank's public status (``dealer.draw.status``): counts, sealed roots, draws (nothing secret)."""
        return public_status(self.bank)

    def commitment(self, label: str) -> JsonObject:
        """The published commitment of a draw (and its signature) for the audience display."""
        entry = self.bank.entry(self.bank.get_draw(label).commit_index)
        return {"commitment": entry.data["commitment"], "signature": entry.data["signature"]}

    def hall_view(self, label: str) -> JsonObject:
        """What the hall is shown of a prepared draw: its hash, the witnesses and the format of V."""
        rec = self.bank.get_draw(label)
        doc = self.commitment(label)["commitment"]
        spec = PublicValueSpec.from_dict(doc["public_value"])
        commit = self.bank.entry(rec.commit_index)
        return {
            "label": label,
            "commitment": commitment_hash(doc),
            # the ledger head once the commitment was in it, as the draw protocol prints it: what officials note
            # at publish and give to `dealer draw verify --head` (docs/bundle.md)
            "head": f"{commit.index + 1}:{entry_hash(commit.encode())}",
            "deals": doc["n"],
            "kind": doc["kind"],
            "previous": doc["previous"],
            "drawn_before": doc["drawn_before"],
            "public_value": spec.description,
            "public_value_spec": spec.to_dict(),
            "witnesses": list(spec.witnesses),
            "format": spec.format_text(),
            "bits": round(spec.bits(), 1),
            "value": rec.public_value,
            "state": rec.state,
            **self._after_reveal(rec),
        }

    def _after_reveal(self, rec: DrawRecord) -> JsonObject:
        """K and the drawn ids once revealed; K and the reason once voided; nothing before."""
        if rec.state == DrawState.REVEALED:
            return {"secret": rec.secret.hex(), "drawn": list(rec.drawn or ())}
        if rec.state == DrawState.VOID:
            void = next(e for e in self.bank.entries_of_kind("draw-void") if e.data["void"]["label"] == rec.label)
            return {"secret": rec.secret.hex(), "reason": void.data["void"]["reason"]}
        return {}

    # -- director ----------------------------------------------------------------------------------
    def seal(self) -> Seal:
        return self.bank.seal()

    def plan(self, regulation: Regulation) -> DrawPlan:
        """Where the bank stands against the regulation's quota (public figures only)."""
        seal = self.bank.latest_seal()
        sealed = seal.last_deal if seal else 0
        draws = [r for r in self.bank.draws() if r.state != DrawState.VOID]
        drawn = sum(r.drawn_count for r in draws)
        limit = quota_limit(sealed, regulation.share_bp)
        return {
            "share": percent_text(regulation.share_bp),
            "sessions": regulation.sessions,
            "boards": regulation.deals_per_session,
            "spare": regulation.spare_deals,
            "target": regulation.bank_target,
            "sealed": sealed,
            "below_target": sealed < regulation.bank_target,
            "quota": limit,
            "drawn": drawn,
            "left": max(limit - drawn, 0),
            "session_draws": sum(1 for r in draws if self._kind(r) == "session"),
        }

    def _kind(self, rec: DrawRecord) -> str:
        return str(self.bank.entry(rec.commit_index).data["commitment"].get("kind", "session"))

    def prepare(
        self,
        label: str,
        spec: PublicValueSpec,
        regulation: Regulation,
        replacement: bool = False,
        override: str | None = None,
    ) -> JsonObject:
        """Commit to a draw: the sealed root, the chain (previous draw, running total), n from the
        regulation's schedule, the label, SHA-256(K) and the committed format of V. No eligible list."""
        label = label.strip()
        if not printable(label):
            raise DrawError("a draw needs a session label (printable text)")
        spec.check()
        bank = self.bank
        seal = bank.latest_seal()
        if seal is None:
            raise DrawError("the bank has no seal yet: seal it before preparing a draw")
        draws = bank.draws()
        previous = commitment_hash(bank.entry(draws[-1].commit_index).data["commitment"]) if draws else None
        drawn_before = sum(r.drawn_count for r in draws)
        sealed = seal.last_deal
        if replacement:
            n, kind = 1, "replacement"
        else:
            done = sum(1 for r in draws if r.state != DrawState.VOID and self._kind(r) == "session")
            if done >= regulation.sessions:
                raise DrawError(
                    "the schedule has {sessions} sessions and {done} session draws are made: only a replacement "
                    "board (one deal) can be drawn now",
                    sessions=regulation.sessions,
                    done=done,
                )
            n, kind = regulation.deals_per_session, "session"
        reason = (override or "").strip() or None
        if reason is not None and (not printable(reason) or len(reason) > MAX_OVERRIDE):
            raise DrawError(
                "the override reason must be printable text of at most {most} characters", most=MAX_OVERRIDE
            )
        if sealed < regulation.bank_target and reason is None:
            raise DrawError(
                "the sealed bank holds {sealed} deals, below the regulation's target of {bank_target} "
                "({plan_text}): seal more deals, or record the director's override with a reason",
                sealed=sealed,
                bank_target=regulation.bank_target,
                plan_text=regulation.plan_phrase(),
            )
        check_quota(sealed, regulation.share_bp, drawn_before, n)
        planned = regulation.sessions * regulation.deals_per_session
        if planned * 10000 < MIN_PERCENT * 100 * sealed and reason is None:
            raise DrawError(
                "the regulation's schedule plays {planned} deals, {share} of the whole sealed bank of {sealed}: "
                "Law 6 asks for at least {least}%; seal a smaller bank for this stage, or record the director's "
                "override with a reason",
                planned=planned,
                share=percent_text(planned * 10000 // sealed),
                sealed=sealed,
                least=MIN_PERCENT,
            )
        self._check_register(sealed)
        keyring = bank.keyring  # the chief judge's: K is sealed under it at once, and the commitment signed
        secret = secrets.token_bytes(SECRET_SIZE)
        doc = {
            "bank": bank.bank_id,
            "drawn_before": drawn_before,
            "eligible": {"count": sealed - drawn_before, "rule": ELIGIBLE_RULE},
            "format": COMMIT_FORMAT,
            "k_hash": sha256(secret).hexdigest(),
            "kind": kind,
            "label": label,
            "n": n,
            "previous": previous,
            "public_value": spec.to_dict(),
            "quota": {
                "override": reason,
                "share_bp": regulation.share_bp,
                "target": regulation.bank_target,
            },
            "seal": seal_view(seal),
            "ts": bank.now(),
        }
        signature = keyring.sign(canonical_json(doc))
        sealed_k = keyring.seal(secret, self._context(b"draw-secret", label))
        bank.draw_commit(label, sealed_k, {"commitment": doc, "signature": signature}, follows=ChainOf(doc))
        return {"commitment": doc, "signature": signature}

    def publish(self, label: str) -> JsonObject:
        """Record that the commitment is shown to the hall (before V); returns what the hall shows."""
        view = self.hall_view(label)
        if not self.bank.draw_published(label):
            self.bank.draw_publish(label, {"commitment": view["commitment"], "label": label})
        return view

    def void(self, label: str, reason: str) -> JsonObject:
        """Abandon a prepared (not run) draw publicly: a signed void with the reason and K, in the ledger."""
        reason = reason.strip()
        if not printable(reason):
            raise DrawError("voiding a draw needs a reason (printable text)")
        rec = self.bank.get_draw(label)
        if self.bank.draw_published(label):  # the bank refuses it too; said here before the key is asked for
            raise DrawError(
                "draw {label!r}: its commitment is before the hall: a draw cannot be voided once the witnesses may "
                "make its value (docs/custody.md); run it with the witnesses' value",
                label=label,
            )
        secret = self._secret(rec)
        doc = {
            "commitment": commitment_hash(self.commitment(label)["commitment"]),
            "format": VOID_FORMAT,
            "label": label,
            "published": False,
            "reason": reason,
            "secret": secret.hex(),
            "ts": self.bank.now(),
        }
        data = {"signature": self.bank.keyring.sign(canonical_json(doc)), "void": doc}
        self.bank.draw_void(label, secret, data)
        return data

    def normalise(self, label: str, dice: Sequence[str] | None = None, named: str | None = None) -> str:
        """The canonical V for what was typed (to show back before it is stored)."""
        doc = self.commitment(label)["commitment"]
        return public_value(PublicValueSpec.from_dict(doc["public_value"]), dice, named)

    def enter_public_value(self, label: str, dice: Sequence[str] | None = None, named: str | None = None) -> str:
        value = self.normalise(label, dice, named)
        if not self.bank.draw_published(label):
            raise DrawError(
                "draw {label!r}: its commitment has not been shown to the hall yet: publish it before the public "
                "value is made",
                label=label,
            )
        self.bank.draw_public_value(label, value, {"label": label, "value": value})
        return value

    # -- the chief judge's custody: K and the result are sealed until the reveal ----------------------------
    def _context(self, purpose: bytes, label: str) -> bytes:
        return b"\x00".join((purpose, self.bank.bank_id.encode(), label.encode()))

    def _secret(self, rec: DrawRecord) -> bytes:
        """K, opened with the chief judge's key while it is sealed."""
        if rec.secret_open:
            return rec.secret
        return self.bank.keyring.open(rec.secret, self._context(b"draw-secret", rec.label))

    def _drawn(self, rec: DrawRecord) -> list[int]:
        """The drawn deal ids in pick order, opened with the chief judge's key while they are sealed."""
        if rec.drawn is not None:
            return list(rec.drawn)
        if rec.sealed_result is None:
            return []
        opened = self.bank.keyring.open(rec.sealed_result, self._context(b"draw-result", rec.label))
        return [int(i) for i in json.loads(opened)]

    def _before(self, rec: DrawRecord) -> list[int]:
        """Deals drawn by the draws of the chain before ``rec``."""
        return [i for r in self.bank.draws() if r.commit_index < rec.commit_index for i in self._drawn(r)]

    def run(self, label: str) -> list[DrawnDeal]:
        """Draw (director only): the result is stored and marked, never published before ``reveal``."""
        rec = self.bank.get_draw(label)
        if rec.state == DrawState.VOID:
            raise DrawError("draw {label!r} is void: it draws nothing", label=label)
        if rec.public_value is None:
            raise DrawError("draw {label!r} has no public value yet: enter it first", label=label)
        published = self.commitment(label)
        doc = published["commitment"]
        picks = commitment_picks(doc, self._secret(rec), rec.public_value, self._before(rec))[1]
        drawn = self._with_deals(picks, published)  # checked against the seal before anything is recorded
        ids = json.dumps([i for _, i in picks]).encode()
        ids = ids.ljust(RESULT_ID_WIDTH * len(picks) + 2)  # padded: the sealed size tells how many, not which
        sealed = self.bank.keyring.seal(ids, self._context(b"draw-result", label))
        self.bank.draw_result(label, sealed, len(picks), {"label": label, "value": rec.public_value})
        self.bank.seal()  # every draw is sealed at once: its result is under a signed root (#19)
        return drawn

    def drawn_deals(self, label: str) -> list[DrawnDeal]:
        """The drawn deals in pick order (director only)."""
        rec = self.bank.get_draw(label)
        if rec.state not in (DrawState.DRAWN, DrawState.REVEALED):
            raise DrawError("draw {label!r} has not been run", label=label)
        published = self.commitment(label)
        doc = published["commitment"]
        picks = commitment_picks(doc, self._secret(rec), rec.public_value or "", self._before(rec))[1]
        if [i for _, i in picks] != self._drawn(rec):
            raise DrawError("draw {label!r}: the stored result differs from K and V (verify the bank)", label=label)
        return self._with_deals(picks, published)

    def _with_deals(self, picks: list[tuple[int, int]], published: JsonObject) -> list[DrawnDeal]:
        """``published``: the signed commitment as the bank holds it (``commitment`` and its ``signature``)."""
        deals = self.bank.get_deals([i for _, i in picks])
        self._as_sealed(deals, published)
        return [DrawnDeal(p, d) for (p, _), d in zip(picks, deals, strict=True)]

    def _sealed_levels(self, doc: JsonObject) -> list[list[bytes]]:
        """The Merkle tree of the ledger the commitment's seal signed, checked against its root (kept per seal:
        whatever changes in the database afterwards is then measured against the tree as it was)."""
        seal = doc["seal"]
        key = (int(seal["size"]), str(seal["root"]))
        levels = self._levels.get(key)
        if levels is None:
            levels = tree_levels(self.bank.leaves(key[0]))
            if levels[-1][0].hex() != key[1]:
                raise DrawError(
                    "the bank's ledger no longer has the root its seal signed ({root}…): the bank was altered; run "
                    "dealer bank verify",
                    root=key[1][:16],
                )
            self._levels[key] = levels
        return levels

    def _as_sealed(self, deals: Sequence[StoredDeal], published: JsonObject) -> None:
        """Each deal the draw picked is the deal its sealed ledger entry committed: H(salt ‖ deal) is the entry's
        commitment, the entry is that deal's, and its bytes are the leaf under the signed seal. The account that
        runs the service can rewrite the database; it cannot make a deal the seal did not commit reach a board."""
        doc = published["commitment"]
        # the commitment is the one the chief judge's key signed (its seal's root included); a revealed draw's
        # bundle is made without the key, and strangers check its signature
        if self.bank.unlocked and not verify_signature(
            self.bank.keyring.public_key, str(published["signature"]), canonical_json(doc)
        ):
            raise DrawError(
                "draw {label!r}: its commitment in the bank is not the one the chief judge's key signed: the bank "
                "was altered; verify the bank",
                label=doc["label"],
            )
        levels = self._sealed_levels(doc)
        bodies = self.bank.entry_bodies([d.ledger_index for d in deals])
        for d in deals:
            body = bodies[d.ledger_index]
            data = json.loads(body)["d"]
            opened = sha256(d.salt + d.deal.to_bytes()).hexdigest()
            index = d.ledger_index
            if (
                data.get("id") != d.deal_id
                or data.get("c") != opened
                or index >= len(levels[0])
                or leaf_hash(body) != levels[0][index]
            ):
                raise DrawError(
                    "deal {id} in the bank is not the deal its sealed ledger entry committed: the bank was altered "
                    "after the seal; nothing is shown or written; verify the bank",
                    id=d.deal_id,
                )

    def reveal(self, label: str) -> JsonObject:
        """After play: publish K and the drawn deal ids (the openings go into the bundle)."""
        rec = self.bank.get_draw(label)
        if rec.state != DrawState.DRAWN:
            raise DrawError("draw {label!r} has not been run: nothing to reveal", label=label)
        secret, drawn = self._secret(rec), self._drawn(rec)
        deals = [item.deal for item in self.drawn_deals(label)]  # the sealed deals, checked, or nothing revealed
        data = {"drawn": drawn, "label": label, "secret": secret.hex()}
        self.bank.draw_reveal(label, secret, drawn, data)
        if self.register is not None:  # played from now on, in every bank of the competition
            source = register_source({"commitment": {"bank": self.bank.bank_id, "label": label}})
            self.register.add((d.deal.to_bytes() for d in deals), source, self.bank.now())
        return data

    def _check_register(self, sealed: int) -> None:
        """Refuse to draw from a bank whose sealed deals include one already played in the competition."""
        if self.register is None:
            return
        rows = [r for r in self.bank.deal_rows() if r.deal_id <= sealed and r.state == "bank"]
        played = self.register.played(bytes(r.canonical) for r in rows)
        if played:
            ids = [r.deal_id for r in rows if bytes(r.canonical) in played]
            raise DrawError(
                "the sealed bank holds {n} deals already played in the competition (deals {ids}; register {path}): "
                "a deal is never played twice (Law 15); form a bank without them",
                n=len(ids),
                ids=", ".join(map(str, ids[:10])),
                path=self.register.path,
            )

    def bundle(self, label: str) -> JsonObject:
        """The verification bundle (docs/bundle.md); only after the reveal, or of a voided draw."""
        bank = self.bank
        rec = bank.get_draw(label)
        if rec.state not in (DrawState.REVEALED, DrawState.VOID):
            raise DrawError(
                "draw {label!r} is {state}: the bundle holds K, so it exists only after reveal",
                label=label,
                state=rec.state,
            )
        published = self.commitment(label)
        doc = published["commitment"]
        seal_entry = bank.entry(doc["seal"]["index"])
        bodies = bank.entry_bodies([seal_entry.index, rec.commit_index])  # the exact bytes: a head is their hash
        out: JsonObject = {
            "commitment_entry": bodies[rec.commit_index].decode(),
            "seal_entry": bodies[seal_entry.index].decode(),
            "commitment": doc,
            "commitment_signature": published["signature"],
            "format": BUNDLE_FORMAT,
            "public_key": seal_entry.data["public_key"],
            "seal": {"checkpoint": seal_entry.data["checkpoint"], "signature": seal_entry.data["signature"]},
            "secret": rec.secret.hex(),
        }
        if rec.state == DrawState.VOID:
            void = next(e for e in bank.entries_of_kind("draw-void") if e.data["void"]["label"] == label)
            out.update(drawn=[], public_value=rec.public_value, void=void.data["void"])
            out["void_signature"] = void.data["signature"]
            return out
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
        out.update(drawn=drawn, public_value=rec.public_value, void=None, void_signature=None)
        return out
