"""Audit input from bytes (no file I/O here): the audit JSON, any registered deal-file format; and filters.

Audit JSON is either a list of PBN deal strings, or a list of objects (or ``{"deals": [...]}``) with fields
``deal`` (PBN, required), ``id``, ``station``, ``timestamp`` (ISO 8601) and ``order`` (the 52 card indices
0..51 in the order dealt). docs/audit.md describes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from dealer.core import Deal
from dealer.core.errors import DealError
from dealer.formats.base import MAX_JSON_DEPTH, ReadResult

from .records import AuditInputError, AuditRecord

_FIELDS = {"deal", "id", "station", "timestamp", "order"}


def looks_like_audit_json(data: bytes) -> bool:
    """True when ``data`` is JSON in the audit's own shape (a list of strings or of objects with ``deal``)."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    items = doc.get("deals") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        return False
    return all(isinstance(i, str) or (isinstance(i, dict) and "deal" in i) for i in items)


def parse_timestamp(text: str, where: str = "timestamp") -> datetime:
    """ISO 8601 date or date-time; a time without zone is taken as UTC."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise AuditInputError(
            "{where}: {text!r} is not an ISO 8601 date or time (e.g. 2026-11-29T14:00)", where=where, text=text
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def parse_audit_json(data: bytes, source: str = "<input>") -> list[AuditRecord]:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise AuditInputError("{source}: not valid JSON: {exc}", source=source, exc=exc) from None
    except RecursionError:  # deeper than the interpreter's stack; audit JSON is at most three levels deep
        raise AuditInputError(
            "{source}: JSON nested deeper than {MAX_JSON_DEPTH} levels", source=source, MAX_JSON_DEPTH=MAX_JSON_DEPTH
        ) from None
    items = doc.get("deals") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        raise AuditInputError(
            "{source}: expected a JSON list of deals (or an object with a 'deals' list)", source=source
        )
    return [_record(item, i, source) for i, item in enumerate(items)]


def _record(item: object, index: int, source: str) -> AuditRecord:
    where = f"{source}: deal #{index + 1}"
    if isinstance(item, str):
        return AuditRecord(_deal(item, where), index + 1)
    if not isinstance(item, dict):
        raise AuditInputError(
            "{where}: expected a PBN string or an object, got {kind}", where=where, kind=type(item).__name__
        )
    unknown = sorted(set(item) - _FIELDS)
    if unknown:
        raise AuditInputError(
            "{where}: unknown field(s) {unknown}; allowed: {FIELDS}",
            where=where,
            unknown=", ".join(unknown),
            FIELDS=", ".join(sorted(_FIELDS)),
        )
    if not isinstance(item.get("deal"), str):
        raise AuditInputError("{where}: field 'deal' must be a PBN deal string", where=where)
    deal = _deal(item["deal"], where)
    deal_id = item.get("id", index + 1)
    if not isinstance(deal_id, int | str) or isinstance(deal_id, bool):
        raise AuditInputError(
            "{where}: field 'id' must be a number or a string, got {deal_id!r}", where=where, deal_id=deal_id
        )
    station = item.get("station")
    if station is not None and not isinstance(station, str):
        raise AuditInputError(
            "{where}: field 'station' must be a string, got {station!r}", where=where, station=station
        )
    stamp = item.get("timestamp")
    when = parse_timestamp(stamp, f"{where}, field 'timestamp'") if isinstance(stamp, str) else None
    if stamp is not None and when is None:
        raise AuditInputError(
            "{where}: field 'timestamp' must be an ISO 8601 string, got {stamp!r}", where=where, stamp=stamp
        )
    order = item.get("order")
    if order is not None:
        order = _order(order, deal, where)
    return AuditRecord(deal, deal_id, station, when, order)


def _deal(text: str, where: str) -> Deal:
    try:
        return Deal.from_pbn(text)
    except DealError as exc:
        raise AuditInputError("{where}: {exc}", where=where, exc=exc) from None


def _order(value: object, deal: Deal, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) != 52:
        raise AuditInputError(
            "{where}: field 'order' must list 52 card indices, got {value!r:.60}", where=where, value=value
        )
    for pos, card in enumerate(value):
        if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card <= 51:
            raise AuditInputError(
                "{where}: order[{pos}] = {card!r} is not a card index in 0..51", where=where, pos=pos, card=card
            )
    if len(set(value)) != 52:
        dup = next(c for i, c in enumerate(value) if c in value[:i])
        raise AuditInputError("{where}: field 'order' lists card index {dup} twice", where=where, dup=dup)
    return tuple(value)


def records_to_json(records: Iterable[AuditRecord]) -> bytes:
    """The audit JSON of ``records`` (what ``parse_audit_json`` reads)."""
    out = []
    for r in records:
        item: dict[str, object] = {"id": r.deal_id, "deal": r.deal.to_pbn()}
        if r.station is not None:
            item["station"] = r.station
        if r.timestamp is not None:
            item["timestamp"] = r.timestamp.isoformat()
        if r.order is not None:
            item["order"] = list(r.order)
        out.append(item)
    return json.dumps({"deals": out}, ensure_ascii=False, indent=1).encode()


def records_from_boards(result: ReadResult) -> list[AuditRecord]:
    """Records from a deal file read by the formats registry; the id is the board number (or the position)."""
    return [
        AuditRecord(rec.deal, rec.board if rec.board is not None else i + 1) for i, rec in enumerate(result.records)
    ]


def filter_records(
    records: Sequence[AuditRecord],
    station: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[AuditRecord]:
    """Keep one station's deals and those inside [since, until); a time filter drops deals without a time."""
    out = []
    for r in records:
        if station is not None and r.station != station:
            continue
        if since is not None or until is not None:
            if r.timestamp is None:
                continue
            when = r.timestamp if r.timestamp.tzinfo else r.timestamp.replace(tzinfo=UTC)
            if since is not None and when < since:
                continue
            if until is not None and when >= until:
                continue
        out.append(r)
    return out
