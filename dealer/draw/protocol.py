"""The rules of the draw, pure: how many deals, the public value, the seed, the eligible set, the picks.

DESIGN.md §5 and docs/bundle.md: seed = SHA-256(K ‖ V ‖ root ‖ label) with K the 32-byte secret, V and
label UTF-8 and root the 32-byte sealed Merkle root; Rivest's sampler is run with the seed's lowercase hex
as its seed string, over the eligible deals numbered 1..E in bank order, without replacement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from hashlib import sha256
from typing import Any

from dealer.core.errors import DealerError

from .sampler import sample_without_replacement

COMMIT_FORMAT = "bridge-dealer-draw-commit/1"
MIN_PERCENT = 1
MAX_PERCENT = 10
SECRET_SIZE = 32


class DrawError(DealerError):
    """A draw step refused, with the figures."""


def deals_to_draw(eligible: int, share_percent: float | None = None, count: int | None = None) -> int:
    """The number of deals to draw: ``share_percent`` of ``eligible`` rounded half up, or ``count``.

    The result must be at least one deal and lie in [1%, 10%] of the eligible deals; otherwise DrawError
    names the figures and the range allowed.
    """
    if (share_percent is None) == (count is None):
        raise DrawError("give either a share in percent or a number of deals, not both")
    if eligible < 1:
        raise DrawError("no eligible deals: seal the bank (deals committed after the last seal are not eligible)")
    lo = -(-eligible * MIN_PERCENT // 100)  # smallest n with n/eligible >= 1%
    hi = eligible * MAX_PERCENT // 100  # largest n with n/eligible <= 10%
    if hi < 1 or lo > hi:
        raise DrawError(
            f"the bank is too small: {eligible} eligible deals; 10% of them is less than one deal "
            f"(at least {100 // MAX_PERCENT} eligible deals are needed)"
        )
    if share_percent is not None:
        n = int((Decimal(str(share_percent)) * eligible / 100).to_integral_value(ROUND_HALF_UP))
        asked = f"{share_percent:g}% of {eligible} eligible deals rounds to {n} deals"
    else:
        assert count is not None
        n = count
        asked = f"{count} deals"
    if not lo <= n <= hi or n < 1:
        actual = 100 * n / eligible
        raise DrawError(
            f"{asked} = {actual:.2f}% of {eligible} eligible deals, outside [{MIN_PERCENT}%, {MAX_PERCENT}%]: "
            f"draw between {lo} and {hi} deals"
        )
    return n


# -- the public value ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PublicValueSpec:
    """What public value V will be, announced in the commitment before V is known.

    ``dice``: each witness (in the order listed) gives exactly ``digits`` decimal digits; V is their digit
    strings joined by ``/``. ``named``: a named future public number (e.g. a lottery draw); V is its text.
    """

    kind: str  # "dice" or "named"
    description: str
    witnesses: tuple[str, ...] = ()
    digits: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "digits": self.digits,
            "kind": self.kind,
            "witnesses": list(self.witnesses),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PublicValueSpec:
        return cls(str(d["kind"]), str(d["description"]), tuple(str(w) for w in d["witnesses"]), int(d["digits"]))

    def check(self) -> None:
        if self.kind == "dice":
            if not self.witnesses:
                raise DrawError("dice: name at least one witness who will roll")
            if len(set(self.witnesses)) != len(self.witnesses):
                raise DrawError("dice: each witness is named once")
            if not 1 <= self.digits <= 100:
                raise DrawError(f"dice: digits per witness {self.digits} is outside 1..100")
        elif self.kind == "named":
            if not self.description.strip():
                raise DrawError("named public value: describe which public number will be used, and when")
        else:
            raise DrawError(f"public value kind {self.kind!r}: expected dice or named")


def dice_spec(witnesses: Sequence[str], digits: int, description: str = "") -> PublicValueSpec:
    names = tuple(w.strip() for w in witnesses)
    text = description or f"{digits} dice digits from each of {', '.join(names)}, in that order"
    spec = PublicValueSpec("dice", text, names, digits)
    spec.check()
    return spec


def named_spec(description: str) -> PublicValueSpec:
    spec = PublicValueSpec("named", description.strip())
    spec.check()
    return spec


_DIGITS = re.compile(r"[0-9]+")


def public_value(spec: PublicValueSpec, dice: Sequence[str] | None = None, named: str | None = None) -> str:
    """V as the commitment's spec says: dice digits of every witness joined by '/', or the named number."""
    if spec.kind == "dice":
        if dice is None or named is not None:
            raise DrawError("this draw's public value is dice digits from the witnesses")
        if len(dice) != len(spec.witnesses):
            raise DrawError(f"{len(dice)} dice entries given, {len(spec.witnesses)} witnesses committed")
        parts = []
        for witness, digits in zip(spec.witnesses, dice, strict=True):
            d = "".join(digits.split())
            if not _DIGITS.fullmatch(d) or len(d) != spec.digits:
                raise DrawError(f"witness {witness}: {digits!r} is not exactly {spec.digits} digits 0-9")
            parts.append(d)
        return "/".join(parts)
    if named is None or dice is not None:
        raise DrawError(f"this draw's public value is a named public number: {spec.description}")
    value = named.strip()
    if not value or not value.isprintable():
        raise DrawError(f"public number {named!r} is empty or has control characters")
    return value


def check_public_value(spec: PublicValueSpec, value: str) -> None:
    if spec.kind == "dice":
        public_value(spec, dice=value.split("/"))
    else:
        if public_value(spec, named=value) != value:
            raise DrawError(f"public value {value!r} has surrounding spaces")


# -- seed, eligible set, picks ----------------------------------------------------------------------
def draw_seed(secret: bytes, value: str, root: bytes, label: str) -> bytes:
    """seed = SHA-256(K ‖ V ‖ root ‖ label)."""
    if len(secret) != SECRET_SIZE or len(root) != 32:
        raise DrawError("the secret and the sealed root are 32 bytes each")
    return sha256(secret + value.encode() + root + label.encode()).digest()


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


def check_ranges(ranges: Any) -> int:
    """Validate eligible ranges (ascending, disjoint, non-adjacent, ids >= 1); return how many ids they hold."""
    if not isinstance(ranges, list):
        raise DrawError("eligible ranges must be a list")
    total = 0
    last = 0
    for r in ranges:
        if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r)):
            raise DrawError(f"eligible range {r!r} is not [first, last]")
        a, b = r
        if a <= last or b < a:
            raise DrawError(f"eligible range {r!r} is not ascending after {last}")
        total += b - a + 1
        last = b
    return total


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


def commitment_picks(doc: dict[str, Any], secret: bytes, value: str) -> tuple[bytes, list[tuple[int, int]]]:
    """The seed and the (position, deal id) picks a draw commitment selects with K and V."""
    seed = draw_seed(secret, value, bytes.fromhex(doc["seal"]["root"]), doc["label"])
    return seed, drawn_ids(seed, doc["eligible"]["ranges"], doc["eligible"]["count"], doc["n"])
