"""Pooling, Holm's step-down and tails of sums of exact laws."""

import numpy as np
import pytest
from scipy import stats

from dealer.audit.stats import holm, law_power, pool_ordered, pool_unordered, sum_tails, two_sided


def test_holm_matches_the_textbook_example() -> None:
    # Holm (1979) style: p = 0.01, 0.04, 0.03, 0.005 → adjusted 0.03, 0.06, 0.06, 0.02
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_pool_ordered_gives_every_group_at_least_five() -> None:
    expected = np.array([0.1, 0.5, 2.0, 4.0, 10.0, 20.0, 10.0, 3.0, 1.0, 0.2])
    groups = pool_ordered(expected)
    assert sorted(i for g in groups for i in g) == list(range(10))
    assert all(expected[g].sum() >= 5 for g in groups)
    assert all(g == list(range(g[0], g[-1] + 1)) for g in groups)  # contiguous
    assert groups == [[0, 1, 2, 3], [4], [5], [6, 7, 8, 9]]


def test_pool_unordered_keeps_likely_categories_and_pools_the_rest() -> None:
    expected = np.array([30.0, 2.0, 12.0, 1.0, 2.5, 6.0])
    groups = pool_unordered(expected)
    assert groups[:3] == [[0], [2], [5]]
    assert sorted(groups[3]) == [1, 3, 4]
    assert pool_unordered(np.array([30.0, 12.0, 1.0])) == [[0], [1, 2]]  # a short "other" joins the last kept
    assert pool_unordered(np.array([30.0, 2.0, 12.0, 1.0, 1.5, 6.0]))[-1] == [5, 1, 4, 3]


def test_law_power_is_the_binomial_for_a_bernoulli_law() -> None:
    dist = law_power(np.array([0.75, 0.25]), 40)
    np.testing.assert_allclose(dist, stats.binom.pmf(np.arange(41), 40, 0.25), atol=1e-13)


def test_sum_tails_exact_and_approximate_agree() -> None:
    law = stats.binom.pmf(np.arange(11), 10, 0.3)
    lower, upper, method = sum_tails(law, 50, 160)
    assert method == "exact"
    assert lower == pytest.approx(stats.binom.cdf(160, 500, 0.3), rel=1e-9)
    assert upper == pytest.approx(stats.binom.sf(159, 500, 0.3), rel=1e-9)
    _lower_n, upper_n, method_n = sum_tails(law, 200_000, 600_000 + 500)
    assert method_n in ("normal", "gamma")
    assert upper_n == pytest.approx(stats.binom.sf(600_499, 2_000_000, 0.3), rel=0.05)
    assert two_sided(0.3, 0.8) == pytest.approx(0.6)
