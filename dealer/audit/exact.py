"""Exact null distributions, from combinatorics (no simulation).

Every law here is what a uniformly random deal (each of the 52!/(13!)^4 deals equally likely) gives:

- ``pattern_probabilities``: hand patterns (4-4-3-2, ...) of one hand;
- ``pattern_joint``: patterns of two different hands of the same deal (for the covariance of 4 hands);
- ``hcp_distribution``: high-card points 0..37 of one hand (generating function over 16 honours and 36 spots);
- ``overlap_pair_law``: law of S = Σ C(n_ij, 2) over the 4×4 table n_ij = |hand i of one deal ∩ hand j of an
  independent deal| (the number of card pairs together in a hand in both deals);
- ``same_seat_moments``: mean and variance of the number of cards in the same seat in two independent deals;
- ``mahonian``: law of the number of inversions of a uniform permutation (Kendall's discordant pairs).
"""

from __future__ import annotations

from functools import cache
from itertools import product
from math import comb

import numpy as np
from numpy.typing import NDArray

HAND = 13
DECK = 52
HANDS_TOTAL = comb(DECK, HAND)  # 635,013,559,600 hands


@cache
def suit_length_vectors() -> tuple[tuple[int, int, int, int], ...]:
    """All (♠, ♥, ♦, ♣) length vectors of a 13-card hand (560 of them)."""
    out = []
    for s, h, d in product(range(HAND + 1), repeat=3):
        c = HAND - s - h - d
        if c >= 0:
            out.append((s, h, d, c))
    return tuple(out)


def pattern_of(lengths: tuple[int, ...]) -> tuple[int, int, int, int]:
    a, b, c, d = sorted(lengths, reverse=True)
    return (a, b, c, d)


def pattern_name(pattern: tuple[int, ...]) -> str:
    return "-".join(str(n) for n in pattern)


@cache
def pattern_counts() -> dict[tuple[int, int, int, int], int]:
    """Number of hands (out of C(52,13)) with each pattern; exact integers."""
    counts: dict[tuple[int, int, int, int], int] = {}
    for v in suit_length_vectors():
        ways = 1
        for n in v:
            ways *= comb(HAND, n)
        key = pattern_of(v)
        counts[key] = counts.get(key, 0) + ways
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


@cache
def pattern_list() -> tuple[tuple[int, int, int, int], ...]:
    """The 39 patterns, most likely first."""
    return tuple(pattern_counts())


def pattern_probabilities() -> NDArray[np.float64]:
    """Probability of each pattern of ``pattern_list()`` for one hand."""
    return np.array([pattern_counts()[p] / HANDS_TOTAL for p in pattern_list()], dtype=np.float64)


@cache
def _pattern_index_of_vector() -> dict[tuple[int, ...], int]:
    index = {p: i for i, p in enumerate(pattern_list())}
    return {v: index[pattern_of(v)] for v in suit_length_vectors()}


def pattern_lookup_table() -> NDArray[np.int64]:
    """Pattern index for a hand's suit lengths, as a 14×14×14 array indexed by (♠, ♥, ♦) (♣ is implied)."""
    table = np.full((HAND + 1,) * 3, -1, dtype=np.int64)
    for v, i in _pattern_index_of_vector().items():
        table[v[0], v[1], v[2]] = i
    return table


@cache
def _pattern_joint() -> NDArray[np.float64]:
    vectors = np.array(suit_length_vectors(), dtype=np.int64)  # (560, 4)
    a = vectors[:, None, :]
    b = vectors[None, :, :]
    comb13 = np.array([comb(HAND, k) for k in range(HAND + 1)], dtype=np.float64)
    # C(13 - a, b) with zero where b > 13 - a
    rest = HAND - a
    ok = b <= rest
    table = np.zeros((HAND + 1, HAND + 1), dtype=np.float64)
    for n in range(HAND + 1):
        for k in range(n + 1):
            table[n, k] = comb(n, k)
    ways_b = np.where(ok, table[np.clip(rest, 0, HAND), np.clip(b, 0, HAND)], 0.0).prod(axis=2)
    ways_a = comb13[vectors].prod(axis=1)[:, None]
    weights = ways_a * ways_b / (HANDS_TOTAL * comb(DECK - HAND, HAND))
    index = _pattern_index_of_vector()
    idx = np.array([index[tuple(v)] for v in suit_length_vectors()], dtype=np.int64)
    k = len(pattern_list())
    joint = np.zeros((k, k), dtype=np.float64)
    np.add.at(joint, (idx[:, None].repeat(len(idx), 1), idx[None, :].repeat(len(idx), 0)), weights)
    joint.setflags(write=False)
    return joint


def pattern_joint() -> NDArray[np.float64]:
    """P(hand X has pattern a and hand Y has pattern b) for two different hands X, Y of one deal."""
    return _pattern_joint()


@cache
def hcp_counts() -> tuple[int, ...]:
    """Number of hands with 0..37 HCP; exact integers summing to C(52,13)."""
    # honours[h][p]: ways to hold h of the 16 honours worth p points
    honours = [[0] * 38 for _ in range(17)]
    honours[0][0] = 1
    for value in (4, 3, 2, 1) * 4:
        for h in range(15, -1, -1):
            for p in range(37 - value, -1, -1):
                if honours[h][p]:
                    honours[h + 1][p + value] += honours[h][p]
    spots = DECK - 16
    return tuple(sum(honours[h][p] * comb(spots, HAND - h) for h in range(0, 14)) for p in range(38))


def hcp_distribution() -> NDArray[np.float64]:
    """P(one hand has p HCP), p = 0..37."""
    return np.array([c / HANDS_TOTAL for c in hcp_counts()], dtype=np.float64)


def _row_law(capacity: tuple[int, ...]) -> list[tuple[tuple[int, ...], float]]:
    """Law of the next row (13 cards drawn from the remaining cards of each column) given column capacities."""
    total = comb(sum(capacity), HAND)
    out: list[tuple[tuple[int, ...], float]] = []
    c0, c1, c2, c3 = capacity
    for x0 in range(min(c0, HAND) + 1):
        for x1 in range(min(c1, HAND - x0) + 1):
            for x2 in range(min(c2, HAND - x0 - x1) + 1):
                x3 = HAND - x0 - x1 - x2
                if x3 > c3:
                    continue
                ways = comb(c0, x0) * comb(c1, x1) * comb(c2, x2) * comb(c3, x3)
                out.append(((x0, x1, x2, x3), ways / total))
    return out


@cache
def overlap_pair_law() -> NDArray[np.float64]:
    """Exact law of S = Σ_ij C(n_ij, 2), index = S (0..312), for two independent uniform deals.

    Dynamic programming over the rows of the 4×4 overlap table (hands of the first deal), the state being the
    multiset of cards still free in each hand of the second deal; S is symmetric in the columns so states are
    kept sorted.
    """
    smax = 4 * comb(HAND, 2)
    states: dict[tuple[int, ...], NDArray[np.float64]] = {(HAND,) * 4: _unit(0, smax + 1)}
    for _row in range(4):
        nxt: dict[tuple[int, ...], NDArray[np.float64]] = {}
        for capacity, law in states.items():
            for x, prob in _row_law(capacity):
                gain = sum(comb(v, 2) for v in x)
                key = tuple(sorted(c - v for c, v in zip(capacity, x, strict=True)))
                shifted = np.zeros(smax + 1)
                shifted[gain:] = law[: smax + 1 - gain] * prob
                if key in nxt:
                    nxt[key] += shifted
                else:
                    nxt[key] = shifted
        states = nxt
    (law,) = states.values()
    law.setflags(write=False)
    return law


def _unit(at: int, size: int) -> NDArray[np.float64]:
    v = np.zeros(size)
    v[at] = 1.0
    return v


def pair_repeat_mean() -> float:
    """E[S] = 312 pairs × 12/51."""
    return 4 * comb(HAND, 2) * (HAND - 1) / (DECK - 1)


def same_seat_moments() -> tuple[float, float]:
    """Mean and variance of M = number of cards in the same seat in two independent uniform deals.

    Each card stays with probability 1/4; two cards that shared a hand both stay with probability
    (13/52)(12/51), two from different hands with (13/52)(13/51).
    """
    p = 0.25
    same = DECK * (HAND - 1)  # ordered pairs from the same hand
    diff = DECK * (DECK - HAND)  # ordered pairs from different hands
    second = DECK * p + same * (HAND / DECK) * ((HAND - 1) / (DECK - 1)) + diff * (HAND / DECK) * (HAND / (DECK - 1))
    mean = DECK * p
    return mean, second - mean * mean


@cache
def mahonian(n: int) -> NDArray[np.float64]:
    """Law of the number of inversions of a uniform random permutation of n items."""
    law = np.array([1.0])
    for k in range(1, n + 1):
        law = np.convolve(law, np.ones(k) / k)
    law.setflags(write=False)
    return law


@cache
def order_dispersion_law() -> NDArray[np.float64]:
    """Law of Q = Σ over 4 hands of (I_h − 39)², I_h the inversions of 13 cards in a uniform order."""
    inv = mahonian(HAND)
    mean = HAND * (HAND - 1) // 4
    one = np.zeros((inv.size - 1 - mean) ** 2 + 1)
    for i, p in enumerate(inv):
        one[(i - mean) ** 2] += p
    law = one
    for _ in range(3):
        law = np.convolve(law, one)
    law.setflags(write=False)
    return law


def law_moments(law: NDArray[np.float64]) -> tuple[float, float]:
    x = np.arange(law.size, dtype=np.float64)
    mean = float((x * law).sum())
    return mean, float((x * x * law).sum() - mean * mean)
