"""Power and calibration by simulation (for the documentation and the benchmark, not for the audit itself).

``detection_rate`` runs the whole audit (every test, Holm's correction) on many independent runs of a shuffler
and returns the share of runs it flags; ``deals_needed`` finds the fewest deals flagged in at least ``target``
of the runs (doubling, then bisection).
"""

from __future__ import annotations

import numpy as np

from .engine import DEFAULT_ALPHA, audit_dealset
from .records import DealSet
from .shufflers import FairShuffler, GsrShuffler, seats_from_orders


def simulate(spec: str, deals: int, seed: int) -> np.ndarray:
    """(deals, 52) dealing orders from ``fair`` or ``gsr:K``, reproducible by seed."""
    if spec == "fair":
        return FairShuffler(seed.to_bytes(8, "big")).orders(deals)
    riffles = int(spec.split(":")[1])
    return GsrShuffler(riffles, seed).orders(deals)


def flagged(spec: str, deals: int, with_order: bool, seed: int, alpha: float = DEFAULT_ALPHA) -> bool:
    orders = simulate(spec, deals, seed)
    ds = DealSet.from_arrays(seats_from_orders(orders), orders if with_order else None)
    return not audit_dealset(ds, alpha).passed


def detection_rate(
    spec: str, deals: int, with_order: bool, runs: int = 40, alpha: float = DEFAULT_ALPHA, seed: int = 1
) -> float:
    hits = sum(flagged(spec, deals, with_order, seed * 100_003 + r, alpha) for r in range(runs))
    return hits / runs


def deals_needed(
    spec: str,
    with_order: bool,
    target: float = 0.95,
    runs: int = 40,
    alpha: float = DEFAULT_ALPHA,
    limit: int = 20_000,
    seed: int = 1,
) -> int | None:
    """The fewest deals (≥ 2) flagged in at least ``target`` of ``runs`` runs; None beyond ``limit``."""
    lo, hi = 1, 2
    while detection_rate(spec, hi, with_order, runs, alpha, seed) < target:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while hi - lo > max(1, lo // 20):
        mid = (lo + hi) // 2
        if detection_rate(spec, mid, with_order, runs, alpha, seed) >= target:
            hi = mid
        else:
            lo = mid
    return hi
