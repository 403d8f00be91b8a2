"""The rules of the draw, pure: the public value, the quota, the seed, the eligible set, the picks.

DESIGN.md §5 and docs/bundle.md: seed = SHA-256(K ‖ V ‖ root ‖ label) with K the 32-byte secret, V and
label UTF-8 and root the 32-byte sealed Merkle root; Rivest's sampler is run with the seed's lowercase hex
as its seed string, over the eligible deals numbered 1..E in bank order, without replacement. The eligible
deals are the sealed deals 1..last_deal minus every deal drawn by the earlier draws of the bank's chain;
a commitment never lists them (that would give away an unrevealed earlier draw), it names the previous
draw and the running total drawn instead.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from hashlib import sha256

from dealer.core.errors import DealerError, Phrase
from dealer.core.json_types import JsonObject

from .sampler import sample_without_replacement

COMMIT_FORMAT = "bridge-dealer-draw-commit/2"
VOID_FORMAT = "bridge-dealer-draw-void/2"
ELIGIBLE_RULE = "sealed-minus-chain"
MIN_PERCENT = 1
MAX_PERCENT = 10
SECRET_SIZE = 32
MIN_BITS = 32  # a public value with fewer possible outcomes lets the holder of K grind K against them
DRAW_KINDS = ("session", "replacement")
NAMED_MAX = 10**9  # the largest number a named public value may name (docs/bundle.md §12.10)
NAMED_MAX_WIDTH = 10  # its digits, with leading zeros: at most 10
NOT_PRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))  # controls (DEL too), format, surrogates, private, unassigned


def printable(text: str) -> bool:
    """Printable text (docs/bundle.md §12.14): non-empty, no character of the Unicode categories Cc, Cf, Cs, Co, Cn,
    and no surrounding space (any Unicode White_Space at either end, as ``str.strip`` removes)."""
    return bool(text) and text == text.strip() and not any(unicodedata.category(c) in NOT_PRINTABLE for c in text)


class DrawError(DealerError):
    """A draw step refused, with the figures."""


# -- the quota (Law 6: a share of the WHOLE sealed bank) -------------------------------------------------
def share_basis_points(percent: float | int | str) -> int:
    """The regulation's share in hundredths of a percent (5 -> 500, 2.5 -> 250); 1%..10%, two decimals."""
    try:
        bp = Decimal(str(percent)) * 100
    except InvalidOperation as exc:
        raise DrawError("share {percent!r} is not a number", percent=percent) from exc
    if bp != bp.to_integral_value():
        raise DrawError("share {percent}% has more than two decimals", percent=percent)
    value = int(bp)
    if not MIN_PERCENT * 100 <= value <= MAX_PERCENT * 100:
        raise DrawError(
            "share {percent}% is outside {MIN_PERCENT}%..{MAX_PERCENT}%",
            percent=percent,
            MIN_PERCENT=MIN_PERCENT,
            MAX_PERCENT=MAX_PERCENT,
        )
    return value


def percent_text(bp: int) -> str:
    """Hundredths of a percent as text: 1000 -> '10%', 250 -> '2.5%', 125 -> '1.25%'."""
    whole, frac = divmod(bp, 100)
    return f"{whole}%" if not frac else f"{whole}.{frac:02d}".rstrip("0") + "%"


def quota_limit(sealed: int, share_bp: int) -> int:
    """The most deals that may ever be drawn from a bank of ``sealed`` deals: floor(p% of it)."""
    return sealed * share_bp // 10000


def check_quota(sealed: int, share_bp: int, drawn_before: int, n: int) -> None:
    """Refuse, with the figures, a draw that would take the bank's total drawn above p% of the sealed bank."""
    if n < 1:
        raise DrawError("a draw takes at least one deal, not {n}", n=n)
    limit = quota_limit(sealed, share_bp)
    if drawn_before + n > limit:
        after = drawn_before + n
        raise DrawError(
            "drawing {n} deals would bring the bank's total drawn to {after} of {sealed} sealed deals = "
            "{percent:.2f}%, above the regulation's {percent_text}: at most {limit} deals may be drawn from this "
            "bank, {drawn_before} are drawn already ({max} left)",
            n=n,
            after=after,
            sealed=sealed,
            percent=100 * after / max(sealed, 1),
            percent_text=percent_text(share_bp),
            limit=limit,
            drawn_before=drawn_before,
            max=max(limit - drawn_before, 0),
        )


# -- the public value ---------------------------------------------------------------------------------
DICE_FACES = {6: "123456", 10: "0123456789"}
NAMED_SEPARATORS = "-/,.:"
NAMED_ORDERS = ("ascending", "as drawn")
_ENTRY_SEPARATORS = set(",;/-_.:|")


def _exact(d: object, keys: Iterable[str], what: str) -> JsonObject:
    if not isinstance(d, dict):
        raise DrawError("{what} must be an object", what=what)
    want = set(keys)
    if set(d) != want:
        missing = ", ".join(sorted(want - set(d)))
        extra = ", ".join(sorted(set(d) - want))
        raise DrawError("{what}: missing [{missing}], unknown [{extra}]", what=what, missing=missing, extra=extra)
    return d


def _int_field(d: Mapping[str, object], key: str, lo: int, hi: int, what: str) -> int:
    v = d[key]
    if type(v) is not int or not lo <= v <= hi:
        raise DrawError(
            "{what}.{key} = {v!r} must be a whole number in {lo}..{hi}", what=what, key=key, v=v, lo=lo, hi=hi
        )
    return v


def _text_field(d: Mapping[str, object], key: str, what: str) -> str:
    v = d[key]
    if not isinstance(v, str) or not printable(v):
        raise DrawError(
            "{what}.{key} = {v!r} must be printable text without surrounding space", what=what, key=key, v=v
        )
    return v


@dataclass(frozen=True, slots=True)
class PublicValueSpec:
    """What public value V will be, announced in the commitment before V is known (docs/bundle.md §4).

    ``dice``: each witness (in the order listed) rolls ``rolls`` times a die of ``faces`` faces (6: digits
    1-6; 10: digits 0-9); V is each witness's digits, joined by ``/``. ``named``: ``count`` whole numbers of
    a named future public event, each in ``min..max``, written with exactly ``width`` digits (leading
    zeros), in ascending order or as drawn, joined by ``separator``. Either way exactly one V is valid for
    one real-world outcome.
    """

    kind: str  # "dice" or "named"
    description: str
    witnesses: tuple[str, ...] = ()
    faces: int = 0
    rolls: int = 0
    count: int = 0
    minimum: int = 0
    maximum: int = 0
    width: int = 0
    order: str = ""
    distinct: bool = False
    separator: str = ""

    def to_dict(self) -> JsonObject:
        if self.kind == "dice":
            return {
                "description": self.description,
                "faces": self.faces,
                "kind": "dice",
                "rolls": self.rolls,
                "witnesses": list(self.witnesses),
            }
        return {
            "count": self.count,
            "description": self.description,
            "distinct": self.distinct,
            "kind": "named",
            "max": self.maximum,
            "min": self.minimum,
            "order": self.order,
            "separator": self.separator,
            "width": self.width,
        }

    @classmethod
    def from_dict(cls, d: object) -> PublicValueSpec:
        """Strict: exactly the members of the kind, with exact types; then the same checks as at prepare."""
        what = "public value spec"
        if not isinstance(d, dict):
            raise DrawError("{what} must be an object", what=what)
        kind = d.get("kind")
        if kind == "dice":
            _exact(d, ("description", "faces", "kind", "rolls", "witnesses"), what)
            ws = d["witnesses"]
            if not isinstance(ws, list) or not all(isinstance(w, str) for w in ws):
                raise DrawError("{what}.witnesses must be a list of names", what=what)
            spec = cls(
                "dice",
                _text_field(d, "description", what),
                tuple(ws),
                faces=_int_field(d, "faces", 0, 1 << 30, what),
                rolls=_int_field(d, "rolls", 0, 1 << 30, what),
            )
        elif kind == "named":
            _exact(d, ("count", "description", "distinct", "kind", "max", "min", "order", "separator", "width"), what)
            if type(d["distinct"]) is not bool:
                raise DrawError("{what}.distinct = {d!r} must be true or false", what=what, d=d["distinct"])
            if not isinstance(d["order"], str) or not isinstance(d["separator"], str):
                raise DrawError("{what}: order and separator must be strings", what=what)
            spec = cls(
                "named",
                _text_field(d, "description", what),
                count=_int_field(d, "count", 0, 1 << 30, what),
                minimum=_int_field(d, "min", 0, 1 << 60, what),
                maximum=_int_field(d, "max", 0, 1 << 60, what),
                width=_int_field(d, "width", 0, 1 << 30, what),
                order=d["order"],
                distinct=d["distinct"],
                separator=d["separator"],
            )
        else:
            raise DrawError("public value kind {kind!r}: expected dice or named", kind=kind)
        spec.check()
        return spec

    def bits(self) -> float:
        """log2 of the number of possible values of V."""
        return math.log2(self.outcomes())

    def outcomes(self) -> int:
        if self.kind == "dice":
            return int(self.faces ** (len(self.witnesses) * self.rolls))
        r = self.maximum - self.minimum + 1
        c = self.count
        if self.distinct:
            return math.comb(r, c) if self.order == "ascending" else math.perm(r, c)
        return math.comb(r + c - 1, c) if self.order == "ascending" else r**c

    def format_text(self) -> str:
        """The committed format in words (English; shown with the commitment)."""
        return str(self.format_phrase())

    def format_phrase(self) -> Phrase:
        """The committed format in words, as a phrase the catalogues translate (the hall shows it in its language:
        ``valueFormat`` in ``dealer/web/static/i18n.js`` says the same)."""
        if self.kind == "dice":
            return Phrase(
                "{n} witnesses ({names}) × {rolls} rolls of a d{faces} ({symbols}), each witness's digits in that "
                "order, joined by '/'",
                n=len(self.witnesses),
                names=", ".join(self.witnesses),
                rolls=self.rolls,
                faces=self.faces,
                symbols="1-6" if self.faces == 6 else "0-9",
            )
        return Phrase(
            "{n} distinct numbers {minimum}..{maximum}, {width} digits each (leading zeros), {order}, joined by "
            "'{separator}'"
            if self.distinct
            else "{n} numbers {minimum}..{maximum}, {width} digits each (leading zeros), {order}, joined by "
            "'{separator}'",
            n=self.count,
            minimum=self.minimum,
            maximum=self.maximum,
            width=self.width,
            order=Phrase("ascending") if self.order == "ascending" else Phrase("as drawn"),
            separator=self.separator,
        )

    def example(self) -> str:
        if self.kind == "dice":
            sym = DICE_FACES[self.faces]
            return "/".join((sym * self.rolls)[: self.rolls] for _ in self.witnesses)
        return self.render(list(range(self.minimum, self.minimum + self.count)))

    def render(self, numbers: Sequence[int]) -> str:
        return self.separator.join(str(x).zfill(self.width) for x in numbers)

    def check(self) -> None:
        if self.kind == "dice":
            if not self.witnesses:
                raise DrawError("dice: name at least one witness who will roll")
            for w in self.witnesses:
                if not printable(w):
                    raise DrawError("dice: witness name {w!r} must be printable text without surrounding space", w=w)
            if len(set(self.witnesses)) != len(self.witnesses):
                raise DrawError("dice: each witness is named once")
            if self.faces not in DICE_FACES:
                raise DrawError("dice: {faces} faces; use 6 (digits 1-6) or 10 (digits 0-9)", faces=self.faces)
            if not 1 <= self.rolls <= 100:
                raise DrawError("dice: rolls per witness {rolls} is outside 1..100", rolls=self.rolls)
        elif self.kind == "named":
            if not self.description.strip():
                raise DrawError("named public value: describe which public number will be used, and when")
            if not 1 <= self.count <= 100:
                raise DrawError("named public value: count {count} is outside 1..100", count=self.count)
            if not 0 <= self.minimum < self.maximum <= NAMED_MAX:
                raise DrawError(
                    "named public value: range {minimum}..{maximum} is empty, negative or above {most}",
                    minimum=self.minimum,
                    maximum=self.maximum,
                    most=NAMED_MAX,
                )
            if not len(str(self.maximum)) <= self.width <= NAMED_MAX_WIDTH:
                raise DrawError(
                    "named public value: width {width} must hold {maximum} ({n_maximum}..{most} digits)",
                    width=self.width,
                    maximum=self.maximum,
                    n_maximum=len(str(self.maximum)),
                    most=NAMED_MAX_WIDTH,
                )
            if self.order not in NAMED_ORDERS:
                raise DrawError(
                    "named public value: order {order!r}: expected one of {NAMED_ORDERS}",
                    order=self.order,
                    NAMED_ORDERS=NAMED_ORDERS,
                )
            if len(self.separator) != 1 or self.separator not in NAMED_SEPARATORS:
                raise DrawError(
                    "named public value: separator {separator!r}: one of {NAMED_SEPARATORS}",
                    separator=self.separator,
                    NAMED_SEPARATORS=NAMED_SEPARATORS,
                )
            if self.distinct and self.count > self.maximum - self.minimum + 1:
                raise DrawError(
                    "named public value: {count} distinct numbers do not fit in the range", count=self.count
                )
        else:
            raise DrawError("public value kind {kind!r}: expected dice or named", kind=self.kind)
        if self.outcomes() < 1 << MIN_BITS:
            raise DrawError(
                "the public value carries {bits:.1f} bits ({format}); at least {minimum} bits are needed so that "
                "nobody can grind K against its likely values: add witnesses or rolls"
                if self.kind == "dice"
                else "the public value carries {bits:.1f} bits ({format}); at least {minimum} bits are needed so "
                "that nobody can grind K against its likely values: take more numbers",
                bits=self.bits(),
                format=self.format_phrase(),
                minimum=MIN_BITS,
            )


def dice_description(witnesses: Sequence[str], rolls: int, faces: int = 6) -> Phrase:
    """The dice draw's description in words, as the catalogues translate it: the commitment signs it in the
    language of the one who prepares the draw (a Russian chief judge's commitment reads in Russian)."""
    return Phrase(
        "{rolls} rolls of a d{faces} by each of {names}, in that order",
        rolls=rolls,
        faces=faces,
        names=", ".join(w.strip() for w in witnesses),
    )


def dice_spec(witnesses: Sequence[str], rolls: int, faces: int = 6, description: str = "") -> PublicValueSpec:
    names = tuple(w.strip() for w in witnesses)
    text = description.strip() or str(dice_description(names, rolls, faces))
    spec = PublicValueSpec("dice", text, names, faces=faces, rolls=rolls)
    spec.check()
    return spec


def named_spec(
    description: str,
    count: int,
    minimum: int,
    maximum: int,
    width: int | None = None,
    order: str = "ascending",
    distinct: bool = True,
    separator: str = "-",
) -> PublicValueSpec:
    spec = PublicValueSpec(
        "named",
        description.strip(),
        count=count,
        minimum=minimum,
        maximum=maximum,
        width=len(str(maximum)) if width is None else width,
        order=order,
        distinct=distinct,
        separator=separator,
    )
    spec.check()
    return spec


def _entry_digits(text: str, who: str) -> list[str]:
    """The runs of digits a person typed (any Unicode decimal digit read as 0-9); refuse anything else."""
    runs: list[str] = []
    cur: list[str] = []
    for pos, ch in enumerate(text, start=1):
        if unicodedata.category(ch) == "Nd":
            cur.append(str(unicodedata.digit(ch)))
            continue
        if ch.isspace() or unicodedata.category(ch) in ("Zs", "Cf") or ch in _ENTRY_SEPARATORS:
            if cur:
                runs.append("".join(cur))
                cur = []
            continue
        raise DrawError(
            "{who}: {text!r} has {name!s} at character {pos}; type digits",
            who=who,
            text=text,
            name=unicodedata.name(ch, repr(ch)),
            pos=pos,
        )
    if cur:
        runs.append("".join(cur))
    return runs


def normalise_dice(spec: PublicValueSpec, entries: Sequence[str]) -> str:
    """What people typed for dice (per witness, or all in one field) -> the canonical V."""
    w, r = len(spec.witnesses), spec.rolls
    allowed = DICE_FACES[spec.faces]
    if len(entries) == 1 and w > 1:  # one field: all witnesses' digits, in order
        digits = "".join(_entry_digits(entries[0], "public value"))
        if len(digits) != w * r:
            raise DrawError(
                "{n_digits} digits typed, {w} witnesses × {r} rolls = {wr} expected (in the order {witnesses})",
                n_digits=len(digits),
                w=w,
                r=r,
                wr=w * r,
                witnesses=", ".join(spec.witnesses),
            )
        parts = [digits[i * r : (i + 1) * r] for i in range(w)]
    elif len(entries) == w:
        parts = []
        for witness, text in zip(spec.witnesses, entries, strict=True):
            d = "".join(_entry_digits(text, f"witness {witness}"))
            if len(d) != r:
                raise DrawError(
                    "witness {witness}: {text!r} has {n_d} digits, {r} rolls were committed",
                    witness=witness,
                    text=text,
                    n_d=len(d),
                    r=r,
                )
            parts.append(d)
    else:
        raise DrawError("{n_entries} dice entries given, {w} witnesses committed", n_entries=len(entries), w=w)
    for witness, part in zip(spec.witnesses, parts, strict=True):
        for k, ch in enumerate(part, start=1):
            if ch not in allowed:
                raise DrawError(
                    "witness {witness}: roll {k} is {ch}, a d{faces} gives {allowed}..{allowed2}",
                    witness=witness,
                    k=k,
                    ch=ch,
                    faces=spec.faces,
                    allowed=allowed[0],
                    allowed2=allowed[-1],
                )
    return "/".join(parts)


def normalise_named(spec: PublicValueSpec, text: str) -> str:
    """What a person typed for a named public number -> the canonical V (ascending: sorted)."""
    numbers = [int(run) for run in _entry_digits(text, "public number")]
    if len(numbers) != spec.count:
        raise DrawError(
            "{n_numbers} numbers typed in {text!r}, the commitment says {count}",
            n_numbers=len(numbers),
            text=text,
            count=spec.count,
        )
    if spec.order == "ascending":
        numbers.sort()
    _check_numbers(spec, numbers)
    return spec.render(numbers)


def _check_numbers(spec: PublicValueSpec, numbers: Sequence[int]) -> None:
    for k, x in enumerate(numbers, start=1):
        if not spec.minimum <= x <= spec.maximum:
            raise DrawError(
                "number {k} is {x}, outside the committed {minimum}..{maximum}",
                k=k,
                x=x,
                minimum=spec.minimum,
                maximum=spec.maximum,
            )
    if spec.distinct and len(set(numbers)) != len(numbers):
        raise DrawError("the numbers {numbers} repeat, the commitment says distinct", numbers=list(numbers))
    if spec.order == "ascending" and list(numbers) != sorted(numbers):
        raise DrawError("the numbers {numbers} are not ascending", numbers=list(numbers))


def public_value(spec: PublicValueSpec, dice: Sequence[str] | None = None, named: str | None = None) -> str:
    """V from what was typed, normalised to the spec's one canonical form (show it back before storing)."""
    if spec.kind == "dice":
        if dice is None or named is not None:
            raise DrawError("this draw's public value is dice rolled by the witnesses")
        value = normalise_dice(spec, dice)
    else:
        if named is None or dice is not None:
            raise DrawError(
                "this draw's public value is a named public number: {description}", description=spec.description
            )
        value = normalise_named(spec, named)
    check_public_value(spec, value)
    return value


def check_public_value(spec: PublicValueSpec, value: object) -> None:
    """Strict: ``value`` must be exactly the canonical V of some outcome; refuse any other form."""
    if not isinstance(value, str):
        raise DrawError("V = {value!r} is not a string", value=value)
    bad = next((c for c in value if not ("!" <= c <= "~")), None)
    if bad is not None:
        raise DrawError(
            "V = {value!r} holds {name}: only the canonical ASCII form",
            value=value,
            name=unicodedata.name(bad, repr(bad)),
        )
    if spec.kind == "dice":
        parts = value.split("/")
        if len(parts) != len(spec.witnesses):
            raise DrawError(
                "V = {value!r} has {n_parts} parts split on '/', {n_witnesses} witnesses",
                value=value,
                n_parts=len(parts),
                n_witnesses=len(spec.witnesses),
            )
        allowed = DICE_FACES[spec.faces]
        for witness, part in zip(spec.witnesses, parts, strict=True):
            if len(part) != spec.rolls or any(c not in allowed for c in part):
                raise DrawError(
                    "V = {value!r}: witness {witness}'s part {part!r} is not exactly {rolls} digits {allowed}",
                    value=value,
                    witness=witness,
                    part=part,
                    rolls=spec.rolls,
                    allowed=allowed,
                )
        return
    parts = value.split(spec.separator)
    if len(parts) != spec.count:
        raise DrawError(
            "V = {value!r} has {n_parts} parts split on {separator!r}, {count} committed",
            value=value,
            n_parts=len(parts),
            separator=spec.separator,
            count=spec.count,
        )
    for part in parts:
        if len(part) != spec.width or any(c not in "0123456789" for c in part):
            raise DrawError(
                "V = {value!r}: {part!r} is not exactly {width} digits 0-9", value=value, part=part, width=spec.width
            )
    _check_numbers(spec, [int(p) for p in parts])


# -- seed, eligible set, picks ----------------------------------------------------------------------
def draw_seed(secret: bytes, value: str, root: bytes, label: str) -> bytes:
    """seed = SHA-256(K ‖ V ‖ root ‖ label)."""
    if len(secret) != SECRET_SIZE or len(root) != 32:
        raise DrawError("the secret and the sealed root are 32 bytes each")
    return sha256(secret + value.encode() + root + label.encode()).digest()


def commitment_hash(doc: JsonObject) -> str:
    """hex SHA-256 of a commitment's canonical JSON: how the next draw names it."""
    from dealer.integrity.ledger import canonical_json

    return sha256(canonical_json(doc)).hexdigest()


def to_ranges(ids: Sequence[int]) -> list[list[int]]:
    """Ascending ids as inclusive ranges ``[[first, last], ...]``."""
    ranges: list[list[int]] = []
    for i in ids:
        if ranges and i == ranges[-1][1] + 1:
            ranges[-1][1] = i
        else:
            if ranges and i <= ranges[-1][1]:
                raise DrawError("eligible deal ids must be strictly ascending")
            ranges.append([i, i])
    return ranges


def eligible_ranges(last_deal: int, drawn_before: Iterable[int]) -> list[list[int]]:
    """Deals 1..last_deal minus the deals drawn by earlier draws, as inclusive ranges."""
    ranges: list[list[int]] = []
    start = 1
    for i in [*sorted(set(drawn_before)), last_deal + 1]:
        if i > last_deal + 1:
            raise DrawError(
                "an earlier draw drew deal {i}, beyond the sealed deals 1..{last_deal}", i=i, last_deal=last_deal
            )
        if i > start:
            ranges.append([start, i - 1])
        start = i + 1
    return ranges


def id_at(ranges: Sequence[Sequence[int]], position: int, starts: Sequence[int]) -> int:
    """The deal id at 1-based ``position`` of the eligible set; ``starts`` from ``range_starts``."""
    from bisect import bisect_right

    k = bisect_right(starts, position - 1) - 1
    return ranges[k][0] + (position - 1 - starts[k])


def range_starts(ranges: Sequence[Sequence[int]]) -> list[int]:
    starts = []
    acc = 0
    for a, b in ranges:
        starts.append(acc)
        acc += b - a + 1
    return starts


def draw_positions(seed: bytes, eligible: int, n: int) -> list[int]:
    """1-based positions in the eligible set, in the order Rivest's sampler picks them."""
    return sample_without_replacement(seed.hex(), eligible, n)


def drawn_ids(seed: bytes, ranges: Sequence[Sequence[int]], eligible: int, n: int) -> list[tuple[int, int]]:
    """(position, deal id) of every drawn deal, in pick order."""
    starts = range_starts(ranges)
    return [(p, id_at(ranges, p, starts)) for p in draw_positions(seed, eligible, n)]


def commitment_picks(
    doc: JsonObject, secret: bytes, value: str, drawn_before: Iterable[int]
) -> tuple[bytes, list[tuple[int, int]]]:
    """The seed and the (position, deal id) picks a commitment selects with K and V, given the deals the
    earlier draws of its chain drew."""
    before = set(drawn_before)
    if len(before) != doc["drawn_before"]:
        raise DrawError(
            "the chain drew {n_before} deals before this draw, its commitment says {doc}",
            n_before=len(before),
            doc=doc["drawn_before"],
        )
    ranges = eligible_ranges(doc["seal"]["last_deal"], before)
    count = sum(b - a + 1 for a, b in ranges)
    if count != doc["eligible"]["count"]:
        raise DrawError(
            "the chain leaves {count} eligible deals, the commitment says {doc}",
            count=count,
            doc=doc["eligible"]["count"],
        )
    seed = draw_seed(secret, value, bytes.fromhex(doc["seal"]["root"]), doc["label"])
    return seed, drawn_ids(seed, ranges, count, doc["n"])
