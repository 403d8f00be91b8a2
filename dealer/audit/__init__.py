"""Fairness audit of the dealing: exact-probability tests of the deals, weak-shuffle models, reports."""

from .checks import Check
from .engine import DEFAULT_ALPHA, AuditResult, StationSummary, audit_dealset, run_audit
from .records import AuditInputError, AuditRecord, DealSet
from .shufflers import FairShuffler, GsrShuffler, deal_from_order, parse_shuffler, seats_from_orders

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
