"""Fairness audit: time to audit 10,000 deals; calibration (false alarms of fair deals); power (deals needed)."""

from __future__ import annotations

import time
from typing import Any

from scipy import stats

from dealer.audit.engine import audit_dealset
from dealer.audit.power import deals_needed, simulate
from dealer.audit.records import DealSet
from dealer.audit.report_html import render_html
from dealer.audit.report_json import to_json
from dealer.audit.shufflers import seats_from_orders

# (shuffler, uses the dealing order)
POWER_CASES = (
    ("gsr:1", False),
    ("gsr:2", True),
    ("gsr:3", True),
    ("gsr:4", True),
    ("gsr:2", False),
)


def _timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def run(quick: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    n = 10_000
    orders = simulate("fair", n, 2026)
    seats = seats_from_orders(orders)
    audit_dealset(DealSet.from_arrays(seats[:100], orders[:100]))  # warm the exact-law caches
    hands, t_hands = _timed(lambda: audit_dealset(DealSet.from_arrays(seats)))
    full, t_full = _timed(lambda: audit_dealset(DealSet.from_arrays(seats, orders)))
    _, t_report = _timed(lambda: render_html(full, "en", to_json(full)))
    rows += [
        {"name": "audit 10,000 deals, hands only", "value": round(t_hands, 3), "unit": "s", "target": "<= 5"},
        {"name": "audit 10,000 deals with dealing order", "value": round(t_full, 3), "unit": "s", "target": "<= 5"},
        {"name": "HTML + JSON report, 10,000 deals", "value": round(t_report, 3), "unit": "s", "target": "<= 5"},
    ]
    seeds = 40 if quick else 400
    for alpha in (0.01, 0.05):
        alarms = sum(
            not audit_dealset(DealSet.from_arrays(seats_from_orders(o), o), alpha).passed
            for o in (simulate("fair", 600, 50_000 + s) for s in range(seeds))
        )
        rows.append(
            {
                "name": f"false alarms, fair CSPRNG, 600 deals, alpha {alpha:g} ({seeds} runs)",
                "value": round(alarms / seeds, 4),
                "unit": "share of runs",
                "target": f"<= {stats.binom.ppf(0.99, seeds, alpha) / seeds:.3g}",
                "note": f"nominal {alpha:g}, family-wise (Holm); target = 99% binomial bound for {seeds} runs",
            }
        )
    runs = 20 if quick else 40
    for spec, with_order in POWER_CASES if not quick else POWER_CASES[:3]:
        needed = deals_needed(spec, with_order, target=0.95, runs=runs, alpha=0.01, limit=20_000)
        rows.append(
            {
                "name": f"deals to flag {spec} riffles ({'with dealing order' if with_order else 'hands alone'})",
                "value": needed if needed is not None else "> 20000",
                "unit": "deals",
                "target": "<= 600" if spec == "gsr:1" and not with_order else "",
                "note": f"flagged in >= 95% of {runs} runs at alpha 0.01 (family-wise)",
            }
        )
    del hands
    return rows
