"""Big Deal's deal number: a bijection between deals and integers in [0, D), D = 52!/(13!)^4.

The construction follows Big Deal's ``binomial.c`` (``code_to_hand``) and ``Godel.pdf``: North's hand is
ranked lexicographically among the C(52,13) choices of 13 positions from the 52 cards in card-index
order, East's among C(39,13) choices from the cards North does not hold, South's among C(26,13) from
what is left, West takes the rest. The number is

    rank_N · C(39,13) · C(26,13) + rank_E · C(26,13) + rank_S

where a hand's rank counts the 13-subsets that come before it when subsets are compared by their
lowest differing position. Rank 0 is N all spades, E hearts, S diamonds, W clubs.
"""

from __future__ import annotations

from math import comb

from .deal import Deal
from .errors import DealNumberError

DEAL_COUNT = comb(52, 13) * comb(39, 13) * comb(26, 13)
assert DEAL_COUNT == 53_644_737_765_488_792_839_237_440_000

# _C[n][k] = C(n, k) for n <= 52, k <= 13
_C = [[comb(n, k) for k in range(14)] for n in range(53)]
_MULTIPLIER = (_C[39][13] * _C[26][13], _C[26][13], 1)


def _subset_rank(positions: list[int], n: int) -> int:
    """Lexicographic rank of a 13-subset (ascending positions) of range(n)."""
    rank = 0
    prev = -1
    for j, p in enumerate(positions):
        # subsets that put the j-th card at any q in (prev, p) come first
        rank += _C[n - prev - 1][13 - j] - _C[n - p][13 - j] if p > prev + 1 else 0
        prev = p
    return rank


def deal_rank(deal: Deal) -> int:
    seats = deal.seats
    remaining = list(range(52))
    number = 0
    for seat in range(3):
        positions = [i for i, card in enumerate(remaining) if seats[card] == seat]
        number += _subset_rank(positions, len(remaining)) * _MULTIPLIER[seat]
        remaining = [card for card in remaining if seats[card] != seat]
    return number


def deal_from_rank(number: int) -> Deal:
    if not isinstance(number, int) or isinstance(number, bool):
        raise DealNumberError("deal number must be an integer, got {number!r}", number=number)
    if not 0 <= number < DEAL_COUNT:
        raise DealNumberError(
            "deal number {number} is out of range: allowed 0 .. {maximum}",
            number=number,
            maximum=DEAL_COUNT - 1,
        )
    seats = bytearray([3] * 52)
    remaining = list(range(52))
    g = number
    for seat in range(3):
        sub, g = divmod(g, _MULTIPLIER[seat])
        n = len(remaining)
        chosen: list[int] = []
        prev = -1
        for j in range(13):
            # find the position p of the j-th card: skip positions while the block they start is <= sub
            p = prev + 1
            while True:
                block = _C[n - p - 1][13 - j - 1]  # subsets with the j-th card at p
                if sub < block:
                    break
                sub -= block
                p += 1
            chosen.append(p)
            prev = p
        for p in chosen:
            seats[remaining[p]] = seat
        taken = set(chosen)
        remaining = [card for i, card in enumerate(remaining) if i not in taken]
    return Deal._trusted(bytes(seats))


GROUP_SEPARATOR = {"ru": "\u00a0"}  # CLDR's (Babel's) group symbol: a no-break space in Russian; commas otherwise


def format_deal_number(number: int, lang: str = "en") -> str:
    """Thousands grouped as the language writes them: Big Deal's ``.goe`` commas in English, ``6 365 545 …``
    with no-break spaces in Russian."""
    return f"{number:,}".replace(",", GROUP_SEPARATOR.get(lang, ","))


def parse_deal_number(text: str) -> int:
    """A deal number as people write it: grouped by commas, underscores, spaces or no-break spaces, or not."""
    cleaned = text.strip()
    for separator in (",", "_", " ", "\u00a0", "\u202f"):
        cleaned = cleaned.replace(separator, "")
    if not cleaned.isdecimal():
        raise DealNumberError("deal number {text!r} is not a whole number", text=text)
    value = int(cleaned)
    if value >= DEAL_COUNT:
        raise DealNumberError(
            "deal number {text} is out of range: allowed 0 .. {maximum}", text=text, maximum=DEAL_COUNT - 1
        )
    return value
