"""The audit as JSON for tools: a stable, documented schema (docs/audit.md), version ``SCHEMA_VERSION``."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from dealer.core.json_types import JsonObject

from .checks import Check
from .engine import TITLES, AuditResult

SCHEMA = "bridge-dealer.audit"
SCHEMA_VERSION = 1

TOP_LEVEL_KEYS = (
    "schema",
    "version",
    "generated_at",
    "scope",
    "alpha",
    "correction",
    "deals",
    "deals_with_order",
    "pairs_of_deals",
    "passed",
    "verdict",
    "tests",
    "duplicates",
    "stations",
)
TEST_KEYS = (
    "id",
    "title",
    "status",
    "statistic",
    "statistic_name",
    "df",
    "p_value",
    "p_holm",
    "method",
    "sample",
    "verdict",
    "details",
)


def _clean(value: object) -> object:
    """Plain JSON values: numpy scalars to Python, non-finite floats to None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def check_to_json(check: Check) -> JsonObject:
    en, ru = TITLES[check.id]
    return {
        "id": check.id,
        "title": {"en": en, "ru": ru},
        "status": check.status,
        "statistic": check.statistic,
        "statistic_name": check.statistic_name,
        "df": check.df,
        "p_value": check.p_value,
        "p_holm": check.p_holm,
        "method": check.method,
        "sample": check.sample,
        "verdict": {"en": check.verdict_en, "ru": check.verdict_ru},
        "details": check.details,
    }


def to_json(result: AuditResult, generated_at: datetime | None = None) -> JsonObject:
    when = (generated_at or datetime.now(UTC)).isoformat(timespec="seconds")
    doc = {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "generated_at": when,
        "scope": result.scope,
        "alpha": result.alpha,
        "correction": "holm",
        "deals": result.deals,
        "deals_with_order": result.with_order,
        "pairs_of_deals": result.pairs,
        "passed": result.passed,
        "verdict": {"en": result.verdict_en, "ru": result.verdict_ru},
        "tests": [check_to_json(c) for c in result.checks],
        "duplicates": result.check("duplicates").details.get("groups", []),
        "stations": [
            {
                "station": s.station,
                "deals": s.deals,
                "passed": s.passed,
                "failed": s.failed,
                "min_p_holm": s.min_p_holm,
                "alpha": s.alpha,
            }
            for s in result.stations
        ],
    }
    cleaned = _clean(doc)
    assert isinstance(cleaned, dict)  # _clean keeps an object an object
    return cleaned
