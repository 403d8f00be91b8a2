"""The verification bundle of a revealed (or voided) draw, and its verifier (no database; docs/bundle.md).

Reading is strict (``load_bundle``): UTF-8 JSON, no duplicate members, no floating-point numbers, exactly
the members of the format, lower-case hex of the exact length, whole numbers. ``verify_bundle`` then runs
the checks in a fixed order and stops at the first that fails; every check says what it found, and a
failed check says what failed — never the success wording. Earlier draws of the same bank are given as
``chain``: the verifier rebuilds each draw's eligible set from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from typing import NoReturn

from dealer.core import Deal, Seat
from dealer.core.errors import DealError, Phrase
from dealer.core.json_types import JsonObject
from dealer.integrity.anchors import Head
from dealer.integrity.keys import verify_signature
from dealer.integrity.ledger import SEAL_FORMAT, canonical_json, commitment
from dealer.integrity.merkle import leaf_hash, verify_inclusion

from .protocol import (
    COMMIT_FORMAT,
    DRAW_KINDS,
    ELIGIBLE_RULE,
    MAX_PERCENT,
    MIN_PERCENT,
    VOID_FORMAT,
    DrawError,
    PublicValueSpec,
    check_public_value,
    commitment_hash,
    commitment_picks,
    printable,
    quota_limit,
)

BUNDLE_FORMAT = "bridge-dealer-draw-bundle/3"
OLD_FORMATS = ("bridge-dealer-draw-bundle/1", "bridge-dealer-draw-bundle/2")
ENTRY_MEMBERS = ("d", "i", "k", "prev", "ts")
MAX_TARGET = 10_000_000  # quota.target: 1 … 10^7 deals, as a regulation's bank.target (docs/bundle.md §12.9)
MAX_OVERRIDE = 500  # quota.override: at most 500 characters
TIME_FORM = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00")  # §12.1: UTC, microseconds
BANK_ID_FORM = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # §12.2
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Check:
    """One check of a bundle: ``text`` is a phrase the catalogues translate (hashes stay as written);
    ``detail`` is its English text."""

    name: str
    ok: bool
    text: Phrase

    @property
    def detail(self) -> str:
        return str(self.text)


class BundleError(DrawError):
    """A bundle that is not well formed, naming the member and why."""


# -- strict reading ---------------------------------------------------------------------------------
def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise BundleError("member {key!r} appears twice in one object", key=key)
        out[key] = value
    return out


def _no_float(text: str) -> NoReturn:
    raise BundleError("number {text} is not a whole number: the bundle holds integers only", text=text)


def _no_constant(text: str) -> NoReturn:
    raise BundleError("{text} is not JSON", text=text)


def strict_json(data: bytes | str) -> object:
    """JSON with duplicate members, floats, NaN and Infinity refused."""
    if (isinstance(data, bytes) and data.startswith(BOM)) or (isinstance(data, str) and data.startswith("\ufeff")):
        raise BundleError("the file starts with a UTF-8 byte order mark (BOM): a bundle is UTF-8 without one")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BundleError("not UTF-8 at byte {start}", start=exc.start) from exc
    try:
        return json.loads(data, object_pairs_hook=_no_duplicates, parse_float=_no_float, parse_constant=_no_constant)
    except BundleError:
        raise
    except ValueError as exc:
        raise BundleError("not JSON: {exc}", exc=exc) from exc


def load_bundle(data: bytes) -> JsonObject:
    """Read a bundle file strictly, then check every member's type and form (``check_shape``)."""
    obj = strict_json(data)
    if not isinstance(obj, dict):
        raise BundleError("a bundle is a JSON object")
    check_shape(obj)
    return obj


_HEX = re.compile(r"[0-9a-f]*")


def _hex(value: object, where: str, size: int | None) -> bytes:
    if not isinstance(value, str) or not _HEX.fullmatch(value) or len(value) % 2:
        raise BundleError(
            "{where} = {short} is not lower-case hexadecimal (digits 0-9, a-f, nothing else)",
            where=where,
            short=_short(value),
        )
    if size is not None and len(value) != 2 * size:
        raise BundleError(
            "{where} is {len_value_2} bytes, {size} expected", where=where, len_value_2=len(value) // 2, size=size
        )
    return bytes.fromhex(value)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


def _intv(value: object, where: str, lo: int = 0) -> int:
    if type(value) is not int or value < lo:
        raise BundleError("{where} = {short} is not a whole number ≥ {lo}", where=where, short=_short(value), lo=lo)
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not printable(value):
        raise BundleError(
            "{where} = {short} is not printable text without surrounding space", where=where, short=_short(value)
        )
    return value


def _time(value: object, where: str) -> str:
    """A time exactly as the bank writes it: ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00`` (so that times compare as
    strings in the order of time)."""
    ok = isinstance(value, str) and TIME_FORM.fullmatch(value) is not None
    if ok:
        try:
            datetime.fromisoformat(str(value))
        except ValueError:
            ok = False
    if not ok:
        raise BundleError(
            "{where} = {short} is not a time of the form YYYY-MM-DDTHH:MM:SS.ffffff+00:00 (UTC, 6 digits of "
            "microseconds)",
            where=where,
            short=_short(value),
        )
    return str(value)


def _bank_id(value: object, where: str) -> str:
    if not isinstance(value, str) or BANK_ID_FORM.fullmatch(value) is None:
        raise BundleError(
            "{where} = {short} is not a bank id (a lower-case UUID: 8-4-4-4-12 hex digits)",
            where=where,
            short=_short(value),
        )
    return value


def _members(obj: object, where: str, names: Sequence[str]) -> JsonObject:
    if not isinstance(obj, dict):
        raise BundleError("{where} is not an object", where=where)
    missing = [n for n in names if n not in obj]
    extra = sorted(set(obj) - set(names))
    if missing:
        raise BundleError("{where} lacks {missing}", where=where, missing=", ".join(missing))
    if extra:
        raise BundleError("{where} has unknown member {extra!r}", where=where, extra=extra[0])
    return obj


BUNDLE_MEMBERS = (
    "format", "public_key", "seal", "seal_entry", "commitment", "commitment_signature", "commitment_entry",
    "public_value", "secret", "drawn", "void", "void_signature",
)  # fmt: skip
CHECKPOINT_MEMBERS = ("format", "bank", "size", "root", "last_deal", "ts")
COMMIT_MEMBERS = (
    "format", "bank", "label", "kind", "seal", "previous", "drawn_before", "eligible", "n", "quota", "k_hash",
    "public_value", "ts",
)  # fmt: skip
OPENING_MEMBERS = ("deal_id", "position", "deal", "salt", "pbn", "ledger_index", "entry", "proof")
VOID_MEMBERS = ("format", "label", "commitment", "published", "reason", "secret", "ts")


def check_shape(b: JsonObject) -> None:
    """Every member present, known, of its type and form; hex lower-case of its exact length."""
    fmt = b.get("format")
    if fmt == OLD_FORMATS[0]:
        raise BundleError(
            "format {fmt!r} is the previous bundle format (it published the eligible list and had no chain): see "
            "docs/bundle.md, migration",
            fmt=fmt,
        )
    if fmt in OLD_FORMATS:
        raise BundleError(
            "format {fmt!r} is an earlier bundle format without the ledger entries of its seal and commitment: "
            "make the bundle again with `dealer draw bundle` from the bank (docs/bundle.md, migration)",
            fmt=fmt,
        )
    if fmt != BUNDLE_FORMAT:
        raise BundleError(
            "format = {short}, expected {BUNDLE_FORMAT!r}", short=_short(fmt), BUNDLE_FORMAT=BUNDLE_FORMAT
        )
    _members(b, "bundle", BUNDLE_MEMBERS)
    _hex(b["public_key"], "public_key", 32)
    seal = _members(b["seal"], "seal", ("checkpoint", "signature"))
    _hex(seal["signature"], "seal.signature", 64)
    cp = _members(seal["checkpoint"], "seal.checkpoint", CHECKPOINT_MEMBERS)
    _text(cp["format"], "seal.checkpoint.format")
    _bank_id(cp["bank"], "seal.checkpoint.bank")
    _intv(cp["size"], "seal.checkpoint.size", 1)
    _hex(cp["root"], "seal.checkpoint.root", 32)
    _intv(cp["last_deal"], "seal.checkpoint.last_deal")
    _time(cp["ts"], "seal.checkpoint.ts")
    com = _members(b["commitment"], "commitment", COMMIT_MEMBERS)
    _text(com["format"], "commitment.format")
    _bank_id(com["bank"], "commitment.bank")
    _text(com["label"], "commitment.label")
    if com["kind"] not in DRAW_KINDS:
        raise BundleError(
            "commitment.kind = {short}, expected one of {DRAW_KINDS}", short=_short(com["kind"]), DRAW_KINDS=DRAW_KINDS
        )
    cs = _members(com["seal"], "commitment.seal", ("index", "size", "root", "last_deal", "ts"))
    _intv(cs["index"], "commitment.seal.index")
    _intv(cs["size"], "commitment.seal.size", 1)
    _hex(cs["root"], "commitment.seal.root", 32)
    _intv(cs["last_deal"], "commitment.seal.last_deal")
    _time(cs["ts"], "commitment.seal.ts")
    if com["previous"] is not None:
        _hex(com["previous"], "commitment.previous", 32)
    _intv(com["drawn_before"], "commitment.drawn_before")
    el = _members(com["eligible"], "commitment.eligible", ("count", "rule"))
    _intv(el["count"], "commitment.eligible.count")
    if el["rule"] != ELIGIBLE_RULE:
        raise BundleError(
            "commitment.eligible.rule = {short}, expected {ELIGIBLE_RULE!r}",
            short=_short(el["rule"]),
            ELIGIBLE_RULE=ELIGIBLE_RULE,
        )
    _intv(com["n"], "commitment.n", 1)
    if com["kind"] == "replacement" and com["n"] != 1:
        raise BundleError("commitment.n = {n}: a replacement draw draws exactly one deal", n=com["n"])
    q = _members(com["quota"], "commitment.quota", ("share_bp", "target", "override"))
    _intv(q["share_bp"], "commitment.quota.share_bp")
    target = _intv(q["target"], "commitment.quota.target", 1)
    if target > MAX_TARGET:
        raise BundleError("commitment.quota.target = {target} is above {most} deals", target=target, most=MAX_TARGET)
    if q["override"] is not None:
        _text(q["override"], "commitment.quota.override")
        if len(q["override"]) > MAX_OVERRIDE:
            raise BundleError(
                "commitment.quota.override is {n} characters long, at most {most}",
                n=len(q["override"]),
                most=MAX_OVERRIDE,
            )
    _hex(com["k_hash"], "commitment.k_hash", 32)
    try:
        PublicValueSpec.from_dict(com["public_value"])
    except DrawError as exc:
        raise BundleError("commitment.public_value: {exc}", exc=exc) from exc
    _time(com["ts"], "commitment.ts")
    _hex(b["commitment_signature"], "commitment_signature", 64)
    for name in ("seal_entry", "commitment_entry"):
        if not isinstance(b[name], str) or not b[name].isascii():
            raise BundleError("{name} is not an ASCII string", name=name)
    _hex(b["secret"], "secret", 32)
    if not isinstance(b["drawn"], list):
        raise BundleError("drawn is not a list")
    if b["void"] is None:
        if not isinstance(b["public_value"], str):
            raise BundleError("public_value = {short} is not a string", short=_short(b["public_value"]))
        if b["void_signature"] is not None:
            raise BundleError("void_signature is given but void is null")
        if len(b["drawn"]) != com["n"]:
            raise BundleError(
                "drawn lists {n_b} deals, the commitment draws n = {com}", n_b=len(b["drawn"]), com=com["n"]
            )
    else:
        v = _members(b["void"], "void", VOID_MEMBERS)
        for k in ("format", "label", "reason"):
            _text(v[k], f"void.{k}")
        _time(v["ts"], "void.ts")
        _hex(v["commitment"], "void.commitment", 32)
        _hex(v["secret"], "void.secret", 32)
        if not isinstance(v["published"], bool):
            raise BundleError("void.published = {short} is not true or false", short=_short(v["published"]))
        _hex(b["void_signature"], "void_signature", 64)
        if b["drawn"]:
            raise BundleError("a voided draw drew nothing, but drawn is not empty")
        if b["public_value"] is not None and not isinstance(b["public_value"], str):
            raise BundleError("public_value = {short} is neither a string nor null", short=_short(b["public_value"]))
    seen: set[int] = set()
    for j, d in enumerate(b["drawn"]):
        w = f"drawn[{j}]"
        _members(d, w, OPENING_MEMBERS)
        deal_id = _intv(d["deal_id"], f"{w}.deal_id", 1)
        if deal_id in seen:
            raise BundleError("{w}.deal_id = {deal_id} is listed twice", w=w, deal_id=deal_id)
        seen.add(deal_id)
        _intv(d["position"], f"{w}.position", 1)
        _hex(d["deal"], f"{w}.deal", 13)
        _hex(d["salt"], f"{w}.salt", 16)
        _text(d["pbn"], f"{w}.pbn")
        _intv(d["ledger_index"], f"{w}.ledger_index")
        if not isinstance(d["entry"], str) or not d["entry"].isascii():
            raise BundleError("{w}.entry is not an ASCII string", w=w)
        if not isinstance(d["proof"], list):
            raise BundleError("{w}.proof is not a list", w=w)
        for m, h in enumerate(d["proof"]):
            _hex(h, f"{w}.proof[{m}]", 32)


# -- verification -----------------------------------------------------------------------------------
def verify_bundle(
    bundle: JsonObject, chain: Sequence[JsonObject] = (), folder: Sequence[JsonObject] = ()
) -> list[Check]:
    """All checks passed, or those passed followed by the first one failed (``ok`` False).

    ``chain`` holds bundles given one by one (any order): all must be of the bundle's bank (§12.11); ``folder``
    holds bundles read from a folder, of which those of other banks are ignored (``other_banks`` names them).
    Every draw the bundle's commitment follows must be among them.
    """
    foreign = [chain[k] for k in other_banks(bundle, chain)]
    ignored = set(other_banks(bundle, folder))
    pool = [*chain, *(b for k, b in enumerate(folder) if k not in ignored)]
    return _run(bundle, None, pool, foreign)


def bank_of(bundle: object) -> object:
    """The bank a bundle's commitment names (None when it has none)."""
    com = bundle.get("commitment") if isinstance(bundle, dict) else None
    return com.get("bank") if isinstance(com, dict) else None


def _label_of(bundle: object) -> object:
    com = bundle.get("commitment") if isinstance(bundle, dict) else None
    return com.get("label") if isinstance(com, dict) else None


def other_banks(bundle: JsonObject, bundles: Sequence[JsonObject]) -> list[int]:
    """The positions in ``bundles`` of those of another bank than ``bundle``'s (forks and chains are per bank)."""
    mine = bank_of(bundle)
    return [k for k, other in enumerate(bundles) if bank_of(other) != mine]


def _run(
    bundle: JsonObject,
    known: list[int] | None,
    pool: Sequence[JsonObject] = (),
    foreign: Sequence[JsonObject] = (),
) -> list[Check]:
    results: list[Check] = []
    try:
        for check in _checks(bundle, list(pool), known, foreign):
            results.append(check)
            if not check.ok:
                break
    except BundleError as exc:
        results.append(Check("well-formed", False, Phrase("{exc}", exc=exc)))
    except (KeyError, TypeError, ValueError, DealError, DrawError) as exc:
        step = results[-1].name if results else "format"
        results.append(
            Check(
                f"after {step}", False, Phrase("bundle is malformed: {kind}: {exc}", kind=type(exc).__name__, exc=exc)
            )
        )
    if not results:  # pragma: no cover - _checks always yields
        results.append(Check("format", False, Phrase("nothing checked")))
    return results


def _fail_or(ok: bool, name: str, good: Phrase, bad: Phrase) -> Check:
    return Check(name, ok, good if ok else bad)


def _checks(
    b: JsonObject, pool: list[JsonObject], known: list[int] | None = None, foreign: Sequence[JsonObject] = ()
) -> Iterator[Check]:
    """``known``: the deals drawn before ``b``, when the chain is being checked by a later draw."""
    fmt = b.get("format")
    yield _fail_or(
        fmt == BUNDLE_FORMAT,
        "format",
        Phrase("format {fmt!r}", fmt=fmt),
        Phrase("format {short}, expected {expected!r}", short=_short(fmt), expected=BUNDLE_FORMAT),
    )
    check_shape(b)
    yield Check("well-formed", True, Phrase("every member present, of its type, hex lower-case of its exact length"))

    pub = b["public_key"]
    seal = b["seal"]
    cp = seal["checkpoint"]
    fmt_ok = cp["format"] == SEAL_FORMAT
    sig_ok = fmt_ok and verify_signature(pub, seal["signature"], canonical_json(cp))
    yield _fail_or(
        sig_ok,
        "seal signature",
        Phrase(
            "checkpoint of {size} ledger entries (deals 1..{last}), root {root}, signed {ts} by Ed25519 key {pub}",
            size=cp["size"],
            last=cp["last_deal"],
            root=cp["root"],
            ts=cp["ts"],
            pub=pub,
        ),
        Phrase("checkpoint format {fmt!r} is not {expected!r}", fmt=cp["format"], expected=SEAL_FORMAT)
        if not fmt_ok
        else Phrase("the seal signature does not verify with key {pub}", pub=pub),
    )

    com = b["commitment"]
    fmt_ok = com["format"] == COMMIT_FORMAT
    sig_ok = fmt_ok and verify_signature(pub, b["commitment_signature"], canonical_json(com))
    yield _fail_or(
        sig_ok,
        "commitment signature",
        Phrase("draw {label!r} committed {ts} by the same key", label=com["label"], ts=com["ts"]),
        Phrase("commitment format {fmt!r} is not {expected!r}", fmt=com["format"], expected=COMMIT_FORMAT)
        if not fmt_ok
        else Phrase(
            "the commitment signature of draw {label!r} does not verify with key {pub}", label=com["label"], pub=pub
        ),
    )

    cs = com["seal"]
    diff = [k for k in ("root", "size", "last_deal", "ts") if cs[k] != cp[k]]
    if com["bank"] != cp["bank"]:
        diff.append("bank")
    if cs["index"] != cp["size"]:  # the seal entry is the first entry after those it covers
        diff.append("index")
    yield _fail_or(
        cp["last_deal"] < cp["size"] and cp["ts"] <= com["ts"],
        "seal is possible",
        Phrase("deals 1..{last} lie in its {size} entries; sealed before the commitment", last=cp["last_deal"],
               size=cp["size"]),
        Phrase("the seal covers {size} ledger entries but claims deals 1..{last}: at most {most} deals fit",
               size=cp["size"], last=cp["last_deal"], most=cp["size"] - 1)
        if cp["last_deal"] >= cp["size"]
        else Phrase("the seal is dated after the commitment ({ts} > {com_ts})", ts=cp["ts"], com_ts=com["ts"]),
    )  # fmt: skip
    yield _fail_or(
        not diff,
        "commitment names the seal",
        Phrase("commitment seal {root} / bank {bank}", root=cs["root"], bank=com["bank"]),
        Phrase("the commitment's seal differs from the checkpoint in {fields}", fields=", ".join(diff)),
    )
    if diff:
        return
    entries_problem = _entries_problem(b)
    yield _fail_or(
        entries_problem is None,
        "ledger entries",
        Phrase(
            "seal entry {seal}, commitment entry {commit}: the heads {seal_head} and {commit_head}",
            seal=entry_index(b["seal_entry"]),
            commit=entry_index(b["commitment_entry"]),
            seal_head=entry_head(b["seal_entry"]),
            commit_head=entry_head(b["commitment_entry"]),
        ),
        entries_problem or Phrase("nothing checked"),
    )
    if entries_problem is not None:
        return

    if foreign:  # given one by one, a bundle of another bank is a mistake or a substitution (§12.11)
        other = foreign[0]
        yield Check(
            "chain",
            False,
            Phrase(
                "the bundle of draw {label!r} given is of bank {bank}, not of this draw's bank {mine}: give only this "
                "bank's bundles one by one (a folder given with --chain may hold other banks' bundles: they are "
                "ignored)",
                label=str(_label_of(other)),
                bank=str(bank_of(other)),
                mine=com["bank"],
            ),
        )
        return
    if known is None:
        ok, detail, before = _chain(b, pool)
    else:
        ok, detail, before = True, Phrase("checked with the later draw's chain"), known
    yield Check("chain", ok, detail)
    if not ok:
        return

    count = com["eligible"]["count"]
    want = cp["last_deal"] - com["drawn_before"]
    yield _fail_or(
        count == want and com["n"] <= count,
        "eligible set",
        Phrase(
            "{count} deals: sealed deals 1..{last} minus the {before} drawn by the chain",
            count=count,
            last=cp["last_deal"],
            before=com["drawn_before"],
        ),
        Phrase(
            "the commitment says {count} eligible deals for {n} to draw; sealed deals 1..{last} minus {before} "
            "drawn by the chain leave {want}",
            count=count,
            n=com["n"],
            last=cp["last_deal"],
            before=com["drawn_before"],
            want=want,
        ),
    )

    q = com["quota"]
    bp = q["share_bp"]
    limit = quota_limit(cp["last_deal"], bp) if MIN_PERCENT * 100 <= bp <= MAX_PERCENT * 100 else -1
    after = com["drawn_before"] + com["n"]
    target_ok = cp["last_deal"] >= q["target"] or q["override"] is not None
    if limit < 0:
        bad = Phrase(
            "share {share}% is outside {low}%..{high}%", share=f"{bp / 100:g}", low=MIN_PERCENT, high=MAX_PERCENT
        )
    elif not target_ok:
        bad = Phrase(
            "the sealed bank of {last} deals is below the target of {target} and no override is given",
            last=cp["last_deal"],
            target=q["target"],
        )
    else:
        bad = Phrase(
            "{before} drawn before + {n} = {after} deals, above {percent} of {last} sealed deals = {limit}",
            before=com["drawn_before"],
            n=com["n"],
            after=after,
            percent=_percent(bp),
            last=cp["last_deal"],
            limit=limit,
        )
    within = dict(
        before=com["drawn_before"], n=com["n"], after=after, limit=limit, percent=_percent(bp), last=cp["last_deal"]
    )
    good = (
        Phrase(
            "{before} drawn before + {n} = {after} of at most {limit} ({percent} of {last} sealed deals); the sealed "
            "bank is below the target of {target}, director's override: {override!r}",
            target=q["target"],
            override=q["override"],
            **within,
        )
        if cp["last_deal"] < q["target"]
        else Phrase(
            "{before} drawn before + {n} = {after} of at most {limit} ({percent} of {last} sealed deals)", **within
        )
    )
    yield _fail_or(0 <= after <= limit and target_ok, "quota", good, bad)

    secret = bytes.fromhex(b["secret"])
    k_ok = sha256(secret).hexdigest() == com["k_hash"]
    yield _fail_or(
        k_ok,
        "secret",
        Phrase("SHA-256 of the revealed K is the committed {k_hash}", k_hash=com["k_hash"]),
        Phrase(
            "SHA-256 of the revealed K is {got}, not the committed {k_hash}",
            got=sha256(secret).hexdigest(),
            k_hash=com["k_hash"],
        ),
    )
    if not k_ok:
        return

    if b["void"] is not None:
        yield _void_check(b, pub)
        return

    spec = PublicValueSpec.from_dict(com["public_value"])
    value = b["public_value"]
    try:
        check_public_value(spec, value)
        yield Check(
            "public value",
            True,
            Phrase("V = {value!r} is in the committed canonical form ({form})", value=value, form=spec.format_phrase()),
        )
    except DrawError as exc:
        yield Check("public value", False, Phrase("V = {short} is not canonical: {exc}", short=_short(value), exc=exc))
        return

    seed, expected = commitment_picks(com, secret, value, before)
    drawn = b["drawn"]
    got = [(d["position"], d["deal_id"]) for d in drawn]
    yield _fail_or(
        got == expected,
        "draw",
        Phrase(
            "seed {seed}; Rivest's sampler picks deals {picks}", seed=seed.hex(), picks=_list([i for _, i in expected])
        ),
        Phrase(
            "seed {seed}; Rivest's sampler picks deals {picks} but the bundle lists {listed}",
            seed=seed.hex(),
            picks=_list([i for _, i in expected]),
            listed=_list([i for _, i in got]),
        ),
    )
    if got != expected:
        return

    root = bytes.fromhex(cp["root"])
    yield _each(
        drawn,
        "openings",
        _opening,
        Phrase("SHA-256(salt ‖ deal) equals the ledger commitment for {n} deals", n=len(drawn)),
    )
    yield _each(
        drawn,
        "inclusion",
        lambda d: _inclusion(d, cp["size"], root),
        Phrase("every drawn deal's ledger entry is in the sealed tree of {size} entries", size=cp["size"]),
    )


def _void_check(b: JsonObject, pub: str) -> Check:
    v = b["void"]
    com = b["commitment"]
    problems: list[Phrase] = []
    if v["format"] != VOID_FORMAT:
        problems.append(Phrase("void format {fmt!r} is not {expected!r}", fmt=v["format"], expected=VOID_FORMAT))
    if not verify_signature(pub, b["void_signature"], canonical_json(v)):
        problems.append(Phrase("the void signature does not verify"))
    if v["commitment"] != commitment_hash(com) or v["label"] != com["label"]:
        problems.append(Phrase("the void names another draw"))
    if v["secret"] != b["secret"]:
        problems.append(Phrase("the void's K differs from the bundle's"))
    if v["ts"] < com["ts"]:  # §12.12: a draw is voided after it was committed
        problems.append(
            Phrase("the void is dated {ts}, before the commitment ({com_ts})", ts=v["ts"], com_ts=com["ts"])
        )
    if v["published"] is not False:  # once before the hall, whoever could read K could void a draw they disliked
        problems.append(Phrase("the draw was voided after its commitment was shown to the hall"))
    if b["public_value"] is not None:  # with K and V the result is fixed: a void then would discard a known draw
        problems.append(
            Phrase("the draw was voided after its public value was entered, when its result was already fixed")
        )
    bad = problems[0] if problems else Phrase("nothing checked")
    for more in problems[1:]:
        bad = Phrase("{first}; {then}", first=bad, then=more)
    return _fail_or(
        not problems,
        "void",
        Phrase(
            "draw {label!r} was voided before it was run ({ts}): {reason!r}; it drew nothing",
            label=com["label"],
            ts=v["ts"],
            reason=v["reason"],
        ),
        bad,
    )


def _chain(b: JsonObject, pool: list[JsonObject]) -> tuple[bool, Phrase, list[int]]:
    """Follow ``previous`` back through ``pool``; every earlier draw must be there and verify. Returns the
    deals drawn before this draw."""
    com = b["commitment"]
    me = commitment_hash(com)
    by_hash: dict[str, JsonObject] = {}
    given = {me: canonical_json(b)}
    for other in pool:
        if isinstance(other, dict) and isinstance(other.get("commitment"), dict):
            digest = commitment_hash(other["commitment"])
            if given.setdefault(digest, canonical_json(other)) != canonical_json(other):  # §12.5, whatever the order
                return (
                    False,
                    Phrase(
                        "two different bundles of draw {label!r} (commitment {digest}) were given: a draw has one "
                        "bundle (a run draw re-issued as a void, or a bundle altered)",
                        label=str(other["commitment"].get("label")),
                        digest=digest,
                    ),
                    [],
                )
            if digest != me:
                by_hash[digest] = other
    links: list[JsonObject] = []
    cur = b
    while cur["commitment"]["previous"] is not None:
        prev_hash = cur["commitment"]["previous"]
        prev = by_hash.get(prev_hash)
        if prev is None:
            where = Phrase("this draw") if cur is b else Phrase("draw {label!r}", label=cur["commitment"]["label"])
            return (
                False,
                Phrase(
                    "{where} follows draw {prev}, which is not among the earlier bundles given: every earlier "
                    "draw of the bank is needed (--chain DIR)",
                    where=where,
                    prev=prev_hash,
                ),
                [],
            )
        if len(links) > len(by_hash):
            return False, Phrase("the earlier draws name each other in a loop"), []
        links.append(prev)
        cur = prev
    links.reverse()  # oldest first
    members = {me, *(commitment_hash(x["commitment"]) for x in links)}
    for member in [*links, b]:  # no other given draw may follow the same draw as one of the chain (a fork)
        follows = member["commitment"]["previous"]
        forks = [o["commitment"]["label"] for h, o in by_hash.items()
                 if h not in members and o["commitment"]["previous"] == follows]  # fmt: skip
        if forks:
            return (
                False,
                Phrase(
                    "draw {label!r} also follows {follows}: two chains of one bank",
                    label=forks[0],
                    follows=follows or Phrase("nothing"),
                ),
                [],
            )
    drawn: list[int] = []
    prev_doc: JsonObject | None = None
    for earlier in [*links, b]:
        doc = earlier["commitment"]
        label = doc["label"]
        if doc["drawn_before"] != len(drawn):
            return (
                False,
                Phrase(
                    "draw {label!r} says {before} deals were drawn before it; the chain drew {drawn}",
                    label=label,
                    before=doc["drawn_before"],
                    drawn=len(drawn),
                ),
                [],
            )
        if earlier is not b:
            if earlier["public_key"] != b["public_key"] or doc["bank"] != com["bank"]:
                return False, Phrase("earlier draw {label!r} is of another bank or key", label=label), []
            checks = _run(earlier, list(drawn))
            if not checks[-1].ok:
                return (
                    False,
                    Phrase(
                        "earlier draw {label!r} does not verify: {name}: {detail}",
                        label=label,
                        name=checks[-1].name,
                        detail=checks[-1].text,
                    ),
                    [],
                )
        if prev_doc is not None:
            if doc["ts"] <= prev_doc["ts"] or doc["seal"]["size"] < prev_doc["seal"]["size"]:
                return (
                    False,
                    Phrase(
                        "draw {label!r} is not later than the draw it follows ({previous!r})",
                        label=label,
                        previous=prev_doc["label"],
                    ),
                    [],
                )
            if doc["quota"]["share_bp"] != prev_doc["quota"]["share_bp"]:
                return (
                    False,
                    Phrase("draw {label!r} uses another share than the earlier draws of its bank", label=label),
                    [],
                )
        if earlier is not b:
            drawn.extend(d["deal_id"] for d in earlier["drawn"])
        prev_doc = doc
    if len(set(drawn)) != len(drawn):
        return False, Phrase("the earlier draws drew one deal twice"), []
    labels = [x["commitment"]["label"] for x in links]
    detail = (
        Phrase("first draw of bank {bank}", bank=com["bank"])
        if not links
        else Phrase(
            "follows {n} earlier draws ({labels}) that drew {drawn} deals, all verified",
            n=len(links),
            labels=", ".join(labels),
            drawn=len(drawn),
        )
    )
    return True, detail, drawn


def _percent(bp: int) -> Phrase:
    """Hundredths of a percent as a phrase: ``10%`` (en) and ``10 %``, ``2,5 %`` (ru), as ``percent_text``."""
    return Phrase("{share}%", share=bp // 100 if bp % 100 == 0 else bp / 100)


def _list(ids: list[int]) -> str:
    return ", ".join(map(str, ids[:20])) + (f", … ({len(ids)} deals)" if len(ids) > 20 else "")


def _each(drawn: list[JsonObject], name: str, test: Callable[[JsonObject], Phrase | None], ok_text: Phrase) -> Check:
    for d in drawn:
        problem = test(d)
        if problem is not None:
            return Check(name, False, Phrase("deal {deal_id}: {problem}", deal_id=d.get("deal_id"), problem=problem))
    return Check(name, True, ok_text)


def _opening(d: JsonObject) -> Phrase | None:
    body = d["entry"]
    try:
        entry = strict_json(body)
    except BundleError as exc:
        return Phrase("ledger entry: {exc}", exc=exc)
    if not isinstance(entry, dict) or set(entry) != {"d", "i", "k", "prev", "ts"}:
        return Phrase("the ledger entry is not an object with exactly d, i, k, prev, ts")
    if canonical_json(entry).decode() != body:
        return Phrase("the ledger entry's bytes are not in canonical form")
    data = entry["d"]
    if entry["k"] != "deal" or not isinstance(data, dict) or type(data.get("id")) is not int:
        return Phrase("ledger entry {i} is not the commitment of a deal", i=entry["i"])
    if data["id"] != d["deal_id"]:
        return Phrase(
            "ledger entry {i} commits deal {got}, not {want}", i=entry["i"], got=data["id"], want=d["deal_id"]
        )
    if type(entry["i"]) is not int or entry["i"] != d["ledger_index"]:
        return Phrase(
            "ledger entry index {i!r} differs from ledger_index {index}", i=entry["i"], index=d["ledger_index"]
        )
    canonical = bytes.fromhex(d["deal"])
    deal = Deal.from_bytes(canonical)  # checks 13 cards a hand
    if commitment(bytes.fromhex(d["salt"]), canonical).hex() != data.get("c"):
        return Phrase("SHA-256(salt ‖ deal) is not the commitment {c}", c=data.get("c"))
    spelling = deal.to_pbn(Seat.N)  # §12.3: the one spelling the bank writes
    if d["pbn"] != spelling:
        try:
            same = Deal.from_pbn(d["pbn"]) == deal
        except (DealError, ValueError):
            same = False
        if same:
            return Phrase("the PBN {pbn!r} is not spelled as the bank writes it: {spelling!r}", pbn=d["pbn"],
                          spelling=spelling)  # fmt: skip
        return Phrase("the PBN {pbn!r} is not the committed deal", pbn=d["pbn"])
    return None


def _inclusion(d: JsonObject, size: int, root: bytes) -> Phrase | None:
    body = d["entry"].encode()
    path = [bytes.fromhex(h) for h in d["proof"]]
    if not verify_inclusion(leaf_hash(body), d["ledger_index"], size, path, root):
        return Phrase(
            "the audit path does not lead from ledger entry {index} to the sealed root", index=d["ledger_index"]
        )
    return None


# -- the ledger entries of the seal and the commitment, and the heads they prove (docs/bundle.md §3, check 7) ----
def _entry(body: str, name: str) -> JsonObject:
    """A ledger entry's bytes, strictly: exactly d, i, k, prev, ts, canonical, i a whole number, prev a hash."""
    entry = strict_json(body)
    if not isinstance(entry, dict) or set(entry) != set(ENTRY_MEMBERS):
        raise BundleError("{name} is not a ledger entry with exactly d, i, k, prev, ts", name=name)
    if canonical_json(entry).decode() != body:
        raise BundleError("{name}: the ledger entry's bytes are not in canonical form", name=name)
    _intv(entry["i"], f"{name}.i")
    _hex(entry["prev"], f"{name}.prev", 32)
    _time(entry["ts"], f"{name}.ts")
    return entry


def entry_index(body: str) -> int:
    """The ledger index ``i`` of a well-formed entry (``check_shape`` and check 7 have read it)."""
    entry = strict_json(body)
    return int(entry["i"]) if isinstance(entry, dict) and type(entry.get("i")) is int else -1


def entry_head(body: str) -> str:
    """The ledger head once ``body`` was the last entry: ``SIZE:HASH`` with SIZE = i + 1 and HASH = hex(H(body))."""
    return f"{entry_index(body) + 1}:{sha256(body.encode()).hexdigest()}"


def _entries_problem(b: JsonObject) -> Phrase | None:
    """The seal entry and the draw-commit entry are the bank's: the bundle's own seal and commitment, where the
    bank writes them. None when they are."""
    try:
        seal = _entry(b["seal_entry"], "seal_entry")
        com = _entry(b["commitment_entry"], "commitment_entry")
    except BundleError as exc:
        return Phrase("{exc}", exc=exc)
    cp = b["seal"]["checkpoint"]
    if seal["k"] != "seal":
        return Phrase("seal_entry is a {kind!r} entry, not a 'seal' entry", kind=_short(seal["k"]))
    if seal["d"] != {"checkpoint": cp, "public_key": b["public_key"], "signature": b["seal"]["signature"]}:
        return Phrase("seal_entry does not hold exactly the bundle's checkpoint, its signature and the public key")
    if seal["i"] != cp["size"]:
        return Phrase(
            "seal_entry is ledger entry {i}, but a seal of {size} entries is entry {size}", i=seal["i"], size=cp["size"]
        )
    if seal["ts"] != cp["ts"]:
        return Phrase("seal_entry is dated {ts}, its checkpoint {cp_ts}", ts=seal["ts"], cp_ts=cp["ts"])
    if com["k"] != "draw-commit":
        return Phrase("commitment_entry is a {kind!r} entry, not a 'draw-commit' entry", kind=_short(com["k"]))
    if com["d"] != {"commitment": b["commitment"], "signature": b["commitment_signature"]}:
        return Phrase("commitment_entry does not hold exactly the bundle's commitment and its signature")
    if com["i"] <= seal["i"]:
        return Phrase(
            "commitment_entry is ledger entry {i}, not after the seal entry {seal}", i=com["i"], seal=seal["i"]
        )
    if com["ts"] < b["commitment"]["ts"] or com["ts"] < seal["ts"]:
        return Phrase(
            "commitment_entry is dated {ts}, before the commitment ({com_ts}) or the seal ({seal_ts})",
            ts=com["ts"],
            com_ts=b["commitment"]["ts"],
            seal_ts=seal["ts"],
        )
    if com["i"] == seal["i"] + 1 and com["prev"] != sha256(b["seal_entry"].encode()).hexdigest():
        return Phrase("commitment_entry follows the seal entry but does not chain onto its hash")
    return None


def head_check(bundle: JsonObject, noted: Head) -> Check:
    """The ledger head the officials noted is one this bundle proves: the ledger right after its seal entry, or
    right after its commitment entry (``SIZE:HASH`` as ``dealer bank seal`` and the draw protocol print it). A head
    noted at another moment is for ``dealer bank verify --head``."""
    heads = {"seal": entry_head(bundle["seal_entry"]), "commitment": entry_head(bundle["commitment_entry"])}

    def fits(head: str) -> bool:
        size, _, digest = head.partition(":")
        return digest.startswith(noted.prefix) and (noted.size is None or noted.size == int(size))

    if fits(heads["seal"]):
        return Check(
            "head as printed",
            True,
            Phrase("the ledger head {head} noted is the one right after the seal", head=str(noted)),
        )
    if fits(heads["commitment"]):
        return Check(
            "head as printed",
            True,
            Phrase("the ledger head {head} noted is the one right after the commitment", head=str(noted)),
        )
    return Check(
        "head as printed",
        False,
        Phrase(
            "the ledger head {head} noted is neither the one after this bundle's seal ({seal}) nor the one after its "
            "commitment ({commitment}): this is not the draw or the seal that was noted (a head noted at another "
            "moment is checked by dealer bank verify --head)",
            head=str(noted),
            seal=heads["seal"],
            commitment=heads["commitment"],
        ),
    )


def anchor_check(bundle: JsonObject, noted: str) -> Check:
    """The bundle's commitment is the one the officials noted (its SHA-256, or the first 16+ hex digits of it, as
    the hall showed it and the draw protocol printed it): a draw re-prepared, re-sealed or re-signed afterwards has
    another commitment, whatever else in it verifies."""
    text = noted.strip().lower()
    digest = commitment_hash(bundle["commitment"])
    if not 16 <= len(text) <= 64 or any(c not in "0123456789abcdef" for c in text):
        return Check(
            "commitment as printed",
            False,
            Phrase("{noted!r} is not a SHA-256 as noted (16 to 64 hex digits)", noted=_short(noted)),
        )
    return _fail_or(
        digest.startswith(text),
        "commitment as printed",
        Phrase("the commitment's SHA-256 {digest} is the one noted", digest=digest),
        Phrase(
            "the commitment's SHA-256 is {digest}, not the {noted} noted in the hall and the protocol: this is not the "
            "draw that was shown",
            digest=digest,
            noted=text,
        ),
    )


def value_check(bundle: JsonObject, noted: str) -> Check:
    """The bundle's V is the one the witnesses rolled and the hall showed (typed as people type it: spaces, commas,
    slashes), not one written into the bank afterwards: a V changed in the database, with its ledger entry
    rewritten, still verifies by itself (docs/bundle.md §3)."""
    from .protocol import normalise_dice, normalise_named

    spec = PublicValueSpec.from_dict(bundle["commitment"]["public_value"])
    value = bundle["public_value"]
    if value is None:
        return Check("value as shown", False, Phrase("a voided draw has no public value to compare"))
    try:
        shown = normalise_dice(spec, [noted]) if spec.kind == "dice" else normalise_named(spec, noted)
    except DrawError as exc:
        return Check("value as shown", False, Phrase("the value noted does not fit the committed format: {error}",
                                                     error=exc))  # fmt: skip
    return _fail_or(
        shown == value,
        "value as shown",
        Phrase("V {value} is the one noted in the hall", value=value),
        Phrase(
            "V in the bundle is {value}, not the {shown} noted in the hall: the draw did not use the witnesses' V",
            value=value,
            shown=shown,
        ),
    )


def register_source(bundle: JsonObject) -> str:
    """How the register of played deals names the draw of ``bundle`` (``Director.reveal`` writes it)."""
    return f"bank {bundle['commitment']['bank']}, draw {bundle['commitment']['label']}"
