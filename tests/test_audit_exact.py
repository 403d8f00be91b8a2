"""Exact null laws: they sum to 1, match published values and agree with independent computations."""

from itertools import permutations
from math import comb, factorial

import numpy as np
import pytest
from scipy import stats

from dealer.audit import exact
from dealer.audit.checks import overlap_tables
from dealer.audit.records import DealSet
from dealer.audit.shufflers import FairShuffler, seats_from_orders
from dealer.audit.stats import aggregate, pool_ordered


def pattern(name: str) -> float:
    names = [exact.pattern_name(p) for p in exact.pattern_list()]
    return float(exact.pattern_probabilities()[names.index(name)])


def test_patterns_sum_to_one_and_match_published_values() -> None:
    p = exact.pattern_probabilities()
    assert len(p) == 39
    assert sum(exact.pattern_counts().values()) == comb(52, 13)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    # Published (e.g. Wikipedia "Contract bridge probabilities"): 21.5512%, 15.5168%, 10.5361%, 12.9307%
    assert pattern("4-4-3-2") == pytest.approx(0.215512, abs=5e-7)
    assert pattern("5-3-3-2") == pytest.approx(0.155168, abs=5e-7)
    assert pattern("4-3-3-3") == pytest.approx(0.105361, abs=5e-7)
    assert pattern("5-4-3-1") == pytest.approx(0.129307, abs=5e-7)
    assert exact.pattern_counts()[(13, 0, 0, 0)] == 4
    assert exact.pattern_list()[0] == (4, 4, 3, 2)


def test_pattern_joint_is_a_symmetric_law_with_the_right_marginals() -> None:
    joint = exact.pattern_joint()
    p = exact.pattern_probabilities()
    assert joint.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(joint.sum(axis=1), p, atol=1e-14)
    np.testing.assert_allclose(joint, joint.T, atol=1e-15)
    # Two hands cannot both be 13-0-0-0 in the same suit, but can in different suits: 4*3 ways over C(52,13)·C(39,13)
    i = exact.pattern_list().index((13, 0, 0, 0))
    assert joint[i, i] == pytest.approx(12 / (comb(52, 13) * comb(39, 13)), rel=1e-12)


def test_hcp_distribution_sums_to_one_with_mean_ten_and_published_values() -> None:
    counts = exact.hcp_counts()
    assert sum(counts) == comb(52, 13)
    h = exact.hcp_distribution()
    assert h.sum() == pytest.approx(1.0, abs=1e-12)
    mean = float((np.arange(38) * h).sum())
    assert mean == pytest.approx(10.0, abs=1e-12)
    # Variance of HCP of one hand: 13·(39/51)·Var(points of one card) = 17.0588...
    var = float((np.arange(38) ** 2 * h).sum()) - mean * mean
    assert var == pytest.approx(13 * (39 / 51) * (120 / 52 - (10 / 13) ** 2), rel=1e-12)
    assert h[10] == pytest.approx(0.09405, abs=5e-6)  # published 9.405%
    assert counts[37] == 4  # the 12 aces, kings, queens and one of the 4 jacks
    assert counts[0] == comb(36, 13)


def test_overlap_pair_law_has_the_exact_mean_and_fits_independent_deals() -> None:
    law = exact.overlap_pair_law()
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    mean, _var = exact.law_moments(law)
    assert mean == pytest.approx(312 * 12 / 51, abs=1e-9)
    assert exact.pair_repeat_mean() == pytest.approx(mean, abs=1e-9)
    # Against 4,000 pairs of independent fair deals (a check of the dynamic programme, not its source)
    orders = FairShuffler(b"overlap-law").orders(8000)
    seats = seats_from_orders(orders)
    ds = DealSet.from_arrays(seats)
    tables = overlap_tables(ds)[::2]
    s = (tables * (tables - 1) // 2).sum(axis=(1, 2))
    groups = pool_ordered(law * len(s))
    observed = aggregate(np.bincount(s, minlength=law.size).astype(float), groups)
    expected = aggregate(law * len(s), groups)
    assert len(groups) > 10
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_same_seat_moments_against_direct_enumeration_of_indicator_pairs() -> None:
    mean, var = exact.same_seat_moments()
    assert mean == 13
    # Var = Σ var + Σ cov over ordered pairs: same hand cov = 13·12/(52·51) − 1/16, other hand 13·13/(52·51) − 1/16
    direct = 52 * (3 / 16) + 52 * 12 * (156 / 2652 - 1 / 16) + 52 * 39 * (169 / 2652 - 1 / 16)
    assert var == pytest.approx(direct, rel=1e-12)
    assert var > 52 * 0.25 * 0.75  # a binomial would understate it


def test_mahonian_law_against_enumeration() -> None:
    law = exact.mahonian(5)
    counts = np.zeros(11)
    for perm in permutations(range(5)):
        counts[sum(perm[i] > perm[j] for i in range(5) for j in range(i + 1, 5))] += 1
    np.testing.assert_allclose(law, counts / factorial(5), atol=1e-15)
    mean, var = exact.law_moments(exact.mahonian(13))
    assert mean == pytest.approx(39.0, abs=1e-9)
    assert var == pytest.approx(13 * 12 * 31 / 72, rel=1e-9)


def test_order_dispersion_law_moments() -> None:
    law = exact.order_dispersion_law()
    assert law.sum() == pytest.approx(1.0, abs=1e-12)
    mean, _ = exact.law_moments(law)
    assert mean == pytest.approx(4 * 13 * 12 * 31 / 72, rel=1e-9)
