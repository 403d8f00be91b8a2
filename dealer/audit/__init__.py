"""Fairness audit of the dealing: exact-probability tests of the deals, weak-shuffle models, reports.

Names are imported lazily: the statistics pull in scipy, which the CLI should load only when it audits.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checks import Check
    from .engine import DEFAULT_ALPHA, AuditResult, StationSummary, audit_dealset, run_audit
    from .records import AuditInputError, AuditRecord, DealSet
    from .shufflers import FairShuffler, GsrShuffler, deal_from_order, parse_shuffler, seats_from_orders

_EXPORTS = {
    "Check": "checks",
    "DEFAULT_ALPHA": "engine",
    "AuditResult": "engine",
    "StationSummary": "engine",
    "audit_dealset": "engine",
    "run_audit": "engine",
    "AuditInputError": "records",
    "AuditRecord": "records",
    "DealSet": "records",
    "FairShuffler": "shufflers",
    "GsrShuffler": "shufflers",
    "deal_from_order": "shufflers",
    "parse_shuffler": "shufflers",
    "seats_from_orders": "shufflers",
}


def __getattr__(name: str) -> Any:  # Any: a lazily imported function or class (typed under TYPE_CHECKING)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dealer.audit' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "DEFAULT_ALPHA",
    "AuditInputError",
    "AuditRecord",
    "AuditResult",
    "Check",
    "DealSet",
    "FairShuffler",
    "GsrShuffler",
    "StationSummary",
    "audit_dealset",
    "deal_from_order",
    "parse_shuffler",
    "run_audit",
    "seats_from_orders",
]
