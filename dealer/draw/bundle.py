"""The verification bundle of a revealed draw, and its verifier (no database; docs/bundle.md).

``verify_bundle`` runs the checks in a fixed order and stops at the first that fails; every check reports
what it found, so a witness can follow the reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from dealer.bank.keys import verify_signature
from dealer.bank.ledger import SEAL_FORMAT, Entry, EntryKind, canonical_json, commitment
from dealer.bank.merkle import leaf_hash, verify_inclusion
from dealer.core import Deal
from dealer.core.errors import DealError
from dealer.formats.pbn import fast_deal

from .protocol import (
    COMMIT_FORMAT,
    MAX_PERCENT,
    MIN_PERCENT,
    DrawError,
    PublicValueSpec,
    check_public_value,
    check_ranges,
    commitment_picks,
)

BUNDLE_FORMAT = "bridge-dealer-draw-bundle/1"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


class _Failed(Exception):
    pass


def load_bundle(data: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DrawError(f"bundle is not JSON: {exc}") from exc
    if not isinstance(obj, dict):
        raise DrawError("bundle must be a JSON object")
    return obj


def verify_bundle(bundle: dict[str, Any]) -> list[Check]:
    """All checks passed, or those passed followed by the first one failed (``ok`` False)."""
    results: list[Check] = []
    try:
        for check in _checks(bundle):
            results.append(check)
            if not check.ok:
                break
    except (KeyError, TypeError, ValueError, DealError, DrawError, _Failed) as exc:
        step = results[-1].name if results else "format"
        results.append(Check(f"after {step}", False, f"bundle is malformed: {type(exc).__name__}: {exc}"))
    return results


def _checks(b: dict[str, Any]) -> Iterator[Check]:
    fmt = b.get("format")
    yield Check("format", fmt == BUNDLE_FORMAT, f"format {fmt!r} (expected {BUNDLE_FORMAT!r})")

    pub = b["public_key"]
    seal = b["seal"]
    cp = seal["checkpoint"]
    ok = cp.get("format") == SEAL_FORMAT and verify_signature(pub, seal["signature"], canonical_json(cp))
    yield Check(
        "seal signature",
        ok,
        f"checkpoint of {cp['size']} ledger entries (deals 1..{cp['last_deal']}), root {cp['root']}, "
        f"signed {cp['ts']} by Ed25519 key {pub}",
    )

    com = b["commitment"]
    ok = com.get("format") == COMMIT_FORMAT and verify_signature(pub, b["commitment_signature"], canonical_json(com))
    yield Check("commitment signature", ok, f"draw {com['label']!r} committed {com['ts']} by the same key")

    cs = com["seal"]
    same = all(cs.get(k) == cp[k] for k in ("root", "size", "last_deal", "ts")) and com["bank"] == cp["bank"]
    yield Check("commitment names the seal", same, f"commitment seal {cs.get('root')} / bank {com['bank']}")

    el = com["eligible"]
    total = check_ranges(el["ranges"])
    in_seal = not el["ranges"] or el["ranges"][-1][1] <= cp["last_deal"]
    yield Check(
        "eligible set",
        total == el["count"] and in_seal,
        f"{total} deals in {len(el['ranges'])} ranges (declared {el['count']}), all within sealed deals "
        f"1..{cp['last_deal']}",
    )

    n = com["n"]
    share_ok = isinstance(n, int) and n >= 1 and n * 100 >= total * MIN_PERCENT and n * 100 <= total * MAX_PERCENT
    yield Check(
        "share", share_ok, f"{n} of {total} = {100 * n / max(total, 1):.2f}% (allowed {MIN_PERCENT}%..{MAX_PERCENT}%)"
    )

    secret = bytes.fromhex(b["secret"])
    ok = len(secret) == 32 and sha256(secret).hexdigest() == com["k_hash"]
    yield Check("secret", ok, f"SHA-256 of the revealed K is the committed {com['k_hash']}")

    spec = PublicValueSpec.from_dict(com["public_value"])
    value = b["public_value"]
    try:
        check_public_value(spec, value)
        yield Check("public value", True, f"V = {value!r} fits the committed '{spec.description}'")
    except DrawError as exc:
        yield Check("public value", False, f"V = {value!r}: {exc}")

    root = bytes.fromhex(cp["root"])
    seed, expected = commitment_picks(com, secret, value)
    drawn = b["drawn"]
    got = [(d["position"], d["deal_id"]) for d in drawn]
    yield Check(
        "draw",
        got == expected,
        f"seed {seed.hex()}; Rivest's sampler picks deals {_list([i for _, i in expected])}"
        + ("" if got == expected else f" but the bundle lists {_list([i for _, i in got])}"),
    )

    yield _each(
        drawn, "openings", _opening, f"SHA-256(salt ‖ deal) equals the ledger commitment for {len(drawn)} deals"
    )
    yield _each(
        drawn,
        "inclusion",
        lambda d: _inclusion(d, cp["size"], root),
        f"every drawn deal's ledger entry is in the sealed tree of {cp['size']} entries",
    )


def _list(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:20])) + (f", … ({len(ids)} deals)" if len(ids) > 20 else "")


def _each(drawn: list[dict[str, Any]], name: str, test: Callable[[dict[str, Any]], str | None], ok_text: str) -> Check:
    for d in drawn:
        problem = test(d)
        if problem is not None:
            return Check(name, False, f"deal {d.get('deal_id')}: {problem}")
    return Check(name, True, ok_text)


def _opening(d: dict[str, Any]) -> str | None:
    entry = Entry.decode(d["entry"].encode())
    if entry.kind != EntryKind.DEAL or entry.data.get("id") != d["deal_id"]:
        return f"ledger entry {entry.index} is not the commitment of deal {d['deal_id']}"
    if entry.index != d["ledger_index"]:
        return f"ledger entry index {entry.index} differs from ledger_index {d['ledger_index']}"
    canonical = bytes.fromhex(d["deal"])
    deal = Deal.from_bytes(canonical)  # checks 13 cards a hand
    if commitment(bytes.fromhex(d["salt"]), canonical).hex() != entry.data["c"]:
        return f"SHA-256(salt ‖ deal) is not the commitment {entry.data['c']}"
    if d.get("pbn") is not None and (fast_deal(d["pbn"]) or Deal.from_pbn(d["pbn"])) != deal:
        return f"the PBN {d['pbn']!r} is not the committed deal"
    return None


def _inclusion(d: dict[str, Any], size: int, root: bytes) -> str | None:
    body = d["entry"].encode()
    path = [bytes.fromhex(h) for h in d["proof"]]
    if not verify_inclusion(leaf_hash(body), d["ledger_index"], size, path, root):
        return f"the audit path does not lead from ledger entry {d['ledger_index']} to the sealed root"
    return None
