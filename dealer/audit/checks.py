"""The statistical tests of an audit. Each takes a ``DealSet`` and returns a ``Check`` with its raw p-value.

The engine (``engine.py``) applies Holm's correction and writes the verdicts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import comb

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from dealer.core.json_types import JsonObject
from dealer.core.numbering import DEAL_COUNT

from . import exact
from .records import DealSet
from .stats import aggregate, pool_ordered, pool_unordered, sum_tails, two_sided

HCP_OF_CARD = np.array([max(0, 4 - (c % 13)) for c in range(52)], dtype=np.int64)
MIN_DEALS_CARD_SEAT = 20  # n/4 ≥ 5 in every cell
MIN_PAIRS_SAME_SEAT = 10


@dataclass
class Check:
    """One test. ``p_value`` is None when the test could not run (``reason`` says why)."""

    id: str
    statistic: float | None
    statistic_name: str
    df: int | None
    p_value: float | None
    method: str
    sample: int  # deals, hands or pairs of deals the test used
    reason_en: str = ""
    reason_ru: str = ""
    details: JsonObject = field(default_factory=dict)
    p_holm: float | None = None
    status: str = "skipped"  # pass, fail or skipped, set by the engine
    verdict_en: str = ""
    verdict_ru: str = ""


def skipped(check_id: str, sample: int, en: str, ru: str, details: JsonObject | None = None) -> Check:
    return Check(check_id, None, "", None, None, "", sample, en, ru, details=dict(details or {}))


# -- from the hands alone ------------------------------------------------------------------------------


def hand_lengths(seats: NDArray[np.uint8]) -> NDArray[np.int64]:
    """(n, 4 seats, 4 suits) suit lengths."""
    out = np.empty((seats.shape[0], 4, 4), dtype=np.int64)
    for suit in range(4):
        block = seats[:, 13 * suit : 13 * suit + 13]
        for seat in range(4):
            out[:, seat, suit] = (block == seat).sum(axis=1)
    return out


def pattern_counts(seats: NDArray[np.uint8]) -> NDArray[np.int64]:
    lengths = hand_lengths(seats)
    idx = exact.pattern_lookup_table()[lengths[..., 0], lengths[..., 1], lengths[..., 2]]
    return np.bincount(idx.ravel(), minlength=len(exact.pattern_list()))


def check_patterns(ds: DealSet) -> Check:
    """Hand patterns of all four hands against the exact probabilities.

    The four hands of a deal are dependent, so the statistic is the Wald form (O−E)ᵀ Σ⁺ (O−E) with Σ the exact
    covariance of the pattern counts of one deal (from the exact joint law of two hands), times n; it is
    χ² with (groups − 1) degrees of freedom for large n. Rare patterns are pooled until each group expects ≥ 5.
    """
    n = ds.n
    p = exact.pattern_probabilities()
    observed = pattern_counts(ds.seats).astype(np.float64)
    expected = 4 * n * p
    names = [exact.pattern_name(q) for q in exact.pattern_list()]
    table = [
        {"pattern": names[i], "probability": float(p[i]), "observed": int(observed[i]), "expected": float(expected[i])}
        for i in range(len(p))
    ]
    groups = pool_unordered(expected)
    if len(groups) < 2:
        return skipped(
            "patterns", n, "too few deals to compare patterns", "слишком мало сдач для сравнения распределений"
        )
    g = np.zeros((len(groups), len(p)))
    for k, grp in enumerate(groups):
        g[k, grp] = 1.0
    pg = g @ p
    joint = g @ exact.pattern_joint() @ g.T
    cov = 4 * (np.diag(pg) - np.outer(pg, pg)) + 12 * (joint - np.outer(pg, pg))
    diff = g @ observed - n * 4 * pg
    stat = float(diff @ np.linalg.pinv(cov * n) @ diff)
    df = len(groups) - 1
    pooled = [
        {
            "patterns": [names[i] for i in grp],
            "observed": int(observed[grp].sum()),
            "expected": float(expected[grp].sum()),
        }
        for grp in groups
    ]
    return Check(
        "patterns", stat, "Wald χ²", df, float(stats.chi2.sf(stat, df)), "wald-exact-covariance", 4 * n,
        details={"table": table, "groups": pooled},
    )  # fmt: skip


HONOURS = np.flatnonzero(HCP_OF_CARD)
HONOUR_POINTS = HCP_OF_CARD[HONOURS]


def hcp_matrix(seats: NDArray[np.uint8]) -> NDArray[np.int64]:
    """(n, 4) HCP of each seat."""
    honours = seats[:, HONOURS]
    out = np.empty((seats.shape[0], 4), dtype=np.int64)
    for seat in range(4):
        out[:, seat] = (honours == seat).astype(np.int64) @ HONOUR_POINTS
    return out


def hcp_of(ds: DealSet) -> NDArray[np.int64]:
    if "hcp" not in ds.cache:
        ds.cache["hcp"] = hcp_matrix(ds.seats)
    hcp: NDArray[np.int64] = ds.cache["hcp"]
    return hcp


def check_hcp(ds: DealSet, seat: int) -> Check:
    """HCP of one seat against the exact law 0..37: Pearson χ², tails pooled until each group expects ≥ 5."""
    check_id = f"hcp_{'NESW'[seat]}"
    n = ds.n
    probs = exact.hcp_distribution()
    hcp = hcp_of(ds)[:, seat]
    observed = np.bincount(hcp, minlength=38).astype(np.float64)
    expected = n * probs
    groups = pool_ordered(expected)
    details: JsonObject = {
        "seat": "NESW"[seat],
        "mean": float(hcp.mean()) if n else None,
        "observed": observed.astype(int).tolist(),
        "expected": expected.tolist(),
    }
    if len(groups) < 2:
        return skipped(check_id, n, "too few deals to compare HCP", "слишком мало сдач для сравнения очков", details)
    obs_g, exp_g = aggregate(observed, groups), aggregate(expected, groups)
    stat = float(((obs_g - exp_g) ** 2 / exp_g).sum())
    df = len(groups) - 1
    details["groups"] = [
        {"hcp": [g[0], g[-1]], "observed": int(o), "expected": float(e)}
        for g, o, e in zip(groups, obs_g, exp_g, strict=True)
    ]
    return Check(check_id, stat, "χ²", df, float(stats.chi2.sf(stat, df)), "pearson", n, details=details)


def assignment_table(seats_by_row: NDArray[np.uint8]) -> NDArray[np.int64]:
    """(52, 4) counts of (column, seat) over deals; the 52 columns are cards or dealing positions."""
    table = np.empty((52, 4), dtype=np.int64)
    for seat in range(4):
        table[:, seat] = (seats_by_row == seat).sum(axis=0)
    return table


def assignment_chi2(table: NDArray[np.int64], n: int) -> tuple[float, int, float]:
    """Pearson χ² of a 52×4 table of n deals, scaled by 51/52.

    Within one deal the 52 cards are not independent (13 to a seat): the exact per-deal covariance is 52/51 times
    the multinomial one on the 153-dimensional space of deviations, so X² · 51/52 is χ²(153) for large n.
    """
    expected = n / 4
    x2 = float(((table - expected) ** 2).sum() / expected) * 51 / 52
    return x2, 153, float(stats.chi2.sf(x2, 153))


def check_card_seat(ds: DealSet) -> Check:
    """Every card equally likely in every seat (52 × 4)."""
    n = ds.n
    table = assignment_table(ds.seats)
    details = {"observed": table.astype(int).tolist(), "expected": n / 4}
    if n < MIN_DEALS_CARD_SEAT:
        return skipped(
            "card_seat", n, f"needs at least {MIN_DEALS_CARD_SEAT} deals", f"нужно не менее {MIN_DEALS_CARD_SEAT} сдач",
            details,
        )  # fmt: skip
    x2, df, p = assignment_chi2(table, n)
    residuals = (table - n / 4) / np.sqrt(n * 3 / 16)
    details["max_abs_residual"] = float(np.abs(residuals).max())
    return Check("card_seat", x2, "χ² × 51/52", df, p, "pearson-scaled", n, details=details)


def check_duplicates(ds: DealSet) -> Check:
    """Identical deals, reported by id. By chance two equal deals among n have probability ≤ C(n,2)/D."""
    seen: dict[bytes, list[int | str]] = {}
    for row, deal_id in zip(ds.seats, ds.ids, strict=True):
        seen.setdefault(row.tobytes(), []).append(deal_id)
    groups = [ids for ids in seen.values() if len(ids) > 1]
    extra = sum(len(g) - 1 for g in groups)
    p = 1.0 if not groups else min(1.0, comb(ds.n, 2) / DEAL_COUNT)
    return Check(
        "duplicates", float(extra), "repeated deals", None, p, "birthday-bound", ds.n,
        details={"groups": [[str(i) for i in g] for g in groups]},
    )  # fmt: skip


# -- consecutive deals -------------------------------------------------------------------------------


CHUNK = 1 << 15  # rows processed at once where intermediate arrays grow with 52 × rows


def overlap_tables(ds: DealSet) -> NDArray[np.int64]:
    """(m, 4, 4) for each pair of consecutive deals: n_ij = cards in hand i of the first and hand j of the next."""
    if "overlap" in ds.cache:
        cached: NDArray[np.int64] = ds.cache["overlap"]
        return cached
    m = len(ds.pairs)
    out = np.empty((m, 16), dtype=np.int64)
    for start in range(0, m, CHUNK):
        pairs = ds.pairs[start : start + CHUNK]
        code = ds.seats[pairs[:, 0]] * 4 + ds.seats[pairs[:, 1]]  # uint8, 0..15
        for v in range(16):
            out[start : start + len(pairs), v] = (code == v).sum(axis=1)
    tables = out.reshape(m, 4, 4)
    ds.cache["overlap"] = tables
    return tables


def check_pair_repeat(ds: DealSet) -> Check:
    """Pairs of cards together in a hand in deal k and again in deal k+1.

    Per pair of consecutive deals, S = Σ C(n_ij, 2) over the overlap table; under a fair shuffle the S of
    successive pairs are independent with the exact law of ``exact.overlap_pair_law`` (mean 312·12/51), because
    the law of S given either deal does not depend on that deal. The total is tested two-sided: too many repeats
    (cards stick together) or too few (cards of a hand spread evenly, as round-robin dealing of a packed deck does).
    """
    tables = overlap_tables(ds)
    m = tables.shape[0]
    if m < 1:
        return skipped(
            "pair_repeat", 0, "needs two consecutive deals of one station", "нужны две подряд сдачи одного места"
        )
    s = (tables * (tables - 1) // 2).sum(axis=(1, 2))
    total = int(s.sum())
    law = exact.overlap_pair_law()
    lower, upper, method = sum_tails(law, m, total)
    mean1, var1 = exact.law_moments(law)
    return Check(
        "pair_repeat", float(total), "repeated pairs", None, two_sided(lower, upper), method, m,
        details={
            "pairs_of_deals": m, "observed": total, "expected": mean1 * m, "sd": float(np.sqrt(var1 * m)),
            "per_deal_observed": total / m, "per_deal_expected": mean1, "probability_per_pair": 12 / 51,
        },
    )  # fmt: skip


def check_same_seat(ds: DealSet) -> Check:
    """The same card in the same seat in consecutive deals: 1/4 per card; mean 13 and exact variance 9.94 per pair
    (the 52 cards of a deal are dependent, so the binomial variance 9.75 would be slightly wrong)."""
    tables = overlap_tables(ds)
    m = tables.shape[0]
    if m < MIN_PAIRS_SAME_SEAT:
        return skipped(
            "same_seat", m, f"needs at least {MIN_PAIRS_SAME_SEAT} pairs of consecutive deals",
            f"нужно не менее {MIN_PAIRS_SAME_SEAT} пар соседних сдач",
        )  # fmt: skip
    total = int(np.trace(tables, axis1=1, axis2=2).sum())
    mean1, var1 = exact.same_seat_moments()
    z = (total - mean1 * m) / np.sqrt(var1 * m)
    return Check(
        "same_seat", float(z), "z", None, float(2 * stats.norm.sf(abs(z))), "normal-exact-variance", m,
        details={"observed": total, "expected": mean1 * m, "rate": total / (52 * m), "expected_rate": 0.25},
    )  # fmt: skip


# -- dealing order ----------------------------------------------------------------------------------


def _round_robin(ds: DealSet, rows: NDArray[np.int64]) -> bool:
    """True when every deal gives card t of its order to seat (first + t) mod 4: position fixes the seat."""
    for start in range(0, rows.size, CHUNK):
        part = rows[start : start + CHUNK]
        seats = np.take_along_axis(ds.seats[part], ds.order[part].astype(np.int64), axis=1).astype(np.int64)
        if not ((seats - seats[:, :1] - np.arange(52)[None, :]) % 4 == 0).all():
            return False
    return True


def check_position_seat(ds: DealSet) -> Check:
    """Where the device reports the order: the position in the deal against the seat (52 × 4)."""
    rows = np.flatnonzero(ds.has_order)
    k = rows.size
    if k < MIN_DEALS_CARD_SEAT:
        return skipped(
            "position_seat", k, f"needs at least {MIN_DEALS_CARD_SEAT} deals with a known dealing order",
            f"нужно не менее {MIN_DEALS_CARD_SEAT} сдач с известным порядком раздачи",
        )  # fmt: skip
    if _round_robin(ds, rows):
        return skipped(
            "position_seat", k, "cards are dealt one at a time clockwise, so the position fixes the seat",
            "карты раздаются по одной по часовой стрелке, место определяется позицией",
        )  # fmt: skip
    table = np.zeros((52, 4), dtype=np.int64)
    for start in range(0, k, CHUNK):
        part = rows[start : start + CHUNK]
        table += assignment_table(np.take_along_axis(ds.seats[part], ds.order[part].astype(np.int64), axis=1))
    x2, df, p = assignment_chi2(table, k)
    return Check("position_seat", x2, "χ² × 51/52", df, p, "pearson-scaled", k, details={"observed": table.tolist()})


def hand_inversions(ds: DealSet, pairs: NDArray[np.int64]) -> NDArray[np.int64]:
    """(m, 4): for each previous hand, the inversions between the order its 13 cards were dealt in the previous
    deal and the order they came out in the next deal."""
    out = np.empty((len(pairs), 4), dtype=np.int64)
    upper = np.triu(np.ones((13, 13), dtype=bool), 1)
    for start in range(0, len(pairs), CHUNK // 8):
        part = pairs[start : start + CHUNK // 8]
        m = len(part)
        prev_order = ds.order[part[:, 0]].astype(np.int64)  # card at each position
        prev_seat_by_pos = np.take_along_axis(ds.seats[part[:, 0]], prev_order, axis=1)
        grouped = np.take_along_axis(prev_order, np.argsort(prev_seat_by_pos, axis=1, kind="stable"), axis=1)
        new_pos = np.empty((m, 52), dtype=np.int8)
        np.put_along_axis(
            new_pos, ds.order[part[:, 1]].astype(np.int64), np.broadcast_to(np.arange(52, dtype=np.int8), (m, 52)), 1
        )
        seq = np.take_along_axis(new_pos, grouped, axis=1).reshape(m, 4, 13)
        out[start : start + m] = ((seq[..., :, None] > seq[..., None, :]) & upper).sum(axis=(2, 3))
    return out


def check_order_kept(ds: DealSet) -> Check:
    """Runs of the previous order: does each previous hand come out in (or against) the order it was dealt?

    For each previous hand, I = inversions between its previous dealing order and its new one; a fair shuffle
    makes I Mahonian (mean 39) independently for the four hands, so Q = Σ (I − 39)² has an exact law; riffles
    keep packets in order and push Q up (tested one-sided, upper tail). Either orientation of the collected hands
    counts.
    """
    if not len(ds.pairs):
        return skipped(
            "order_kept", 0, "needs two consecutive deals of one station", "нужны две подряд сдачи одного места"
        )
    both = ds.has_order[ds.pairs[:, 0]] & ds.has_order[ds.pairs[:, 1]]
    pairs = ds.pairs[both]
    m = pairs.shape[0]
    if m < 1:
        return skipped(
            "order_kept", 0, "needs consecutive deals with a known dealing order",
            "нужны соседние сдачи с известным порядком раздачи",
        )  # fmt: skip
    inv = hand_inversions(ds, pairs)
    q = int(((inv - 39) ** 2).sum())
    law = exact.order_dispersion_law()
    _lower, upper, method = sum_tails(law, m, q)
    mean1, _var = exact.law_moments(law)
    return Check(
        "order_kept", float(q), "Σ (I − 39)²", None, upper, method, m,
        details={
            "pairs_of_deals": m, "expected": mean1 * m,
            "mean_inversions": float(inv.mean()), "expected_inversions": 39.0,
        },
    )  # fmt: skip


ALL_CHECKS: tuple[Callable[[DealSet], Check], ...] = (
    check_patterns,
    lambda ds: check_hcp(ds, 0),
    lambda ds: check_hcp(ds, 1),
    lambda ds: check_hcp(ds, 2),
    lambda ds: check_hcp(ds, 3),
    check_card_seat,
    check_pair_repeat,
    check_same_seat,
    check_position_seat,
    check_order_kept,
    check_duplicates,
)
