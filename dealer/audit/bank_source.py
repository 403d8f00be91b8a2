"""Audit records from the bank's stored deals: station, time of commit and the dealing order, when recorded."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from dealer.bank.repository import StoredDeal

from .records import AuditRecord


def records_from_stored(deals: Iterable[StoredDeal]) -> tuple[list[AuditRecord], list[str]]:
    """One record per stored deal (in bank order); warnings for dealing orders that cannot be used."""
    records: list[AuditRecord] = []
    warnings: list[str] = []
    for d in deals:
        station = d.source.get("station")
        order: tuple[int, ...] | None = None
        if d.dealing_order is not None:
            raw = tuple(d.dealing_order)
            if sorted(raw) == list(range(52)):
                order = raw
            else:
                warnings.append(f"deal {d.deal_id}: stored dealing order is not the 52 cards once each; ignored")
        records.append(
            AuditRecord(d.deal, d.deal_id, None if station is None else str(station), _time(d.created), order)
        )
    return records, warnings


def _time(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
