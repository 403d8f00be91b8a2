"""Small statistical helpers: pooling of small cells, the Holm step-down, tails of sums of i.i.d. exact laws."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import signal, stats

MIN_EXPECTED = 5.0
EXACT_SUPPORT_LIMIT = 1 << 20


def pool_ordered(expected: NDArray[np.float64], minimum: float = MIN_EXPECTED) -> list[list[int]]:
    """Group adjacent bins (e.g. HCP 0..37) so every group expects at least ``minimum``.

    Greedy from the left; a short last group is merged into the one before it.
    """
    groups: list[list[int]] = []
    current: list[int] = []
    acc = 0.0
    for i, e in enumerate(expected):
        current.append(i)
        acc += float(e)
        if acc >= minimum:
            groups.append(current)
            current, acc = [], 0.0
    if current:
        if groups:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return groups


def pool_unordered(expected: NDArray[np.float64], minimum: float = MIN_EXPECTED) -> list[list[int]]:
    """Group categories (e.g. hand patterns): each likely one alone, the rare ones together as "other".

    When "other" still expects less than ``minimum`` it joins the least likely kept category.
    """
    order = np.argsort(-expected, kind="stable")
    kept = [[int(i)] for i in order if expected[i] >= minimum]
    rest = [int(i) for i in order if expected[i] < minimum]
    if rest:
        if float(expected[rest].sum()) >= minimum or not kept:
            kept.append(rest)
        else:
            kept[-1].extend(rest)
    return kept


def aggregate(values: NDArray[np.float64], groups: Sequence[Sequence[int]]) -> NDArray[np.float64]:
    return np.array([float(np.asarray(values)[list(g)].sum()) for g in groups], dtype=np.float64)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (control the family-wise error under any dependence)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def law_power(law: NDArray[np.float64], m: int) -> NDArray[np.float64]:
    """The law of the sum of m i.i.d. copies (FFT convolution by repeated squaring)."""
    result = np.array([1.0])
    base = np.asarray(law, dtype=np.float64)
    while m:
        if m & 1:
            result = np.clip(signal.fftconvolve(result, base), 0.0, None)
        m >>= 1
        if m:
            base = np.clip(signal.fftconvolve(base, base), 0.0, None)
    normalised: NDArray[np.float64] = result / result.sum()
    return normalised


def sum_tails(law: NDArray[np.float64], m: int, total: float) -> tuple[float, float, str]:
    """P(T ≤ total), P(T ≥ total) for T the sum of m i.i.d. integer variables with ``law``.

    Exact (convolution) while the support is small; otherwise a gamma approximation with the exact mean and
    variance (a normal one when the law is nearly symmetric). Returns the method used.
    """
    x = np.arange(law.size, dtype=np.float64)
    mean1 = float((x * law).sum())
    var1 = float((x * x * law).sum()) - mean1 * mean1
    if m * (law.size - 1) <= EXACT_SUPPORT_LIMIT:
        dist = law_power(law, m)
        t = round(total)
        lower = float(dist[: t + 1].sum()) if t >= 0 else 0.0
        upper = float(dist[max(t, 0) :].sum()) if t < dist.size else 0.0
        return min(lower, 1.0), min(upper, 1.0), "exact"
    mean, var = m * mean1, m * var1
    skew1 = float((((x - mean1) ** 3) * law).sum()) / var1**1.5
    if abs(skew1) / np.sqrt(m) < 0.02:
        sd = np.sqrt(var)
        return float(stats.norm.cdf(total + 0.5, mean, sd)), float(stats.norm.sf(total - 0.5, mean, sd)), "normal"
    shape = mean * mean / var
    scale = var / mean
    return (
        float(stats.gamma.cdf(total + 0.5, shape, scale=scale)),
        float(stats.gamma.sf(total - 0.5, shape, scale=scale)),
        "gamma",
    )


def two_sided(lower: float, upper: float) -> float:
    return min(1.0, 2.0 * min(lower, upper))
