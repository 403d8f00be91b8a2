"""The audit's input: a sequence of deals, each with where and when it was dealt and, if known, in what order.

``DealSet`` turns the records into numpy arrays once; every check reads those arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from dealer.core import Deal
from dealer.core.errors import DealerError


class AuditInputError(DealerError, ValueError):
    """The audit input is malformed; the message names the record and the field."""


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One deal to audit.

    ``order`` is the dealing order when the device reports it: the 52 card indices in the order they were dealt.
    ``deal_id`` is the bank's id (or the position in the input file); duplicates are reported by it.
    """

    deal: Deal
    deal_id: int | str
    station: str | None = None
    timestamp: datetime | None = None
    order: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.order is not None and sorted(self.order) != list(range(52)):
            raise AuditInputError(
                "deal {deal_id}: dealing order must list each of the 52 card indices 0..51 once, got {n_order} values",
                deal_id=self.deal_id,
                n_order=len(self.order),
            )


@dataclass(frozen=True)
class DealSet:
    """The records as arrays, in audit order (by station stream, then time or input order)."""

    ids: tuple[int | str, ...]
    stations: tuple[str | None, ...]
    seats: NDArray[np.uint8]  # (n, 52) seat of each card
    order: NDArray[np.int8]  # (n, 52) card dealt at each position, -1 rows where unknown
    has_order: NDArray[np.bool_]  # (n,)
    pairs: NDArray[np.int64]  # (m, 2) indices (k, k') of consecutive deals of the same station
    # arrays several checks share
    cache: dict[str, NDArray[np.int64]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n(self) -> int:
        return len(self.ids)

    @classmethod
    def from_arrays(
        cls, seats: NDArray[np.int64], order: NDArray[np.int64] | None = None, station: str | None = None
    ) -> DealSet:
        """One station's deals straight from arrays (simulations, benchmarks); ids are 1..n."""
        n = seats.shape[0]
        has = np.full(n, order is not None, dtype=np.bool_)
        order_arr = order.astype(np.int8) if order is not None else np.full((n, 52), -1, dtype=np.int8)
        pairs = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1) if n > 1 else np.zeros((0, 2), np.int64)
        return cls(tuple(range(1, n + 1)), (station,) * n, seats.astype(np.uint8), order_arr, has, pairs)

    @classmethod
    def build(cls, records: Sequence[AuditRecord]) -> DealSet:
        ordered = _audit_order(records)
        n = len(ordered)
        if not n:
            return cls(
                (), (), np.zeros((0, 52), np.uint8), np.zeros((0, 52), np.int8), np.zeros(0, np.bool_),
                np.zeros((0, 2), np.int64),
            )  # fmt: skip
        seats = np.frombuffer(b"".join(r.deal.seats for r in ordered), dtype=np.uint8).reshape(n, 52).copy()
        order = np.full((n, 52), -1, dtype=np.int8)
        has = np.zeros(n, dtype=np.bool_)
        for i, r in enumerate(ordered):
            if r.order is not None:
                order[i] = r.order
                has[i] = True
        pairs = [(i, i + 1) for i in range(n - 1) if ordered[i].station == ordered[i + 1].station]
        return cls(
            tuple(r.deal_id for r in ordered),
            tuple(r.station for r in ordered),
            seats,
            order,
            has,
            np.array(pairs, dtype=np.int64).reshape(-1, 2),
        )


def _audit_order(records: Sequence[AuditRecord]) -> list[AuditRecord]:
    """Group by station (first appearance), keep time order inside a station when every record has a time."""
    streams: dict[str | None, list[AuditRecord]] = {}
    for r in records:
        streams.setdefault(r.station, []).append(r)
    out: list[AuditRecord] = []
    for stream in streams.values():
        if all(r.timestamp is not None for r in stream):
            stream = sorted(stream, key=_when)
        out.extend(stream)
    return out


def _when(record: AuditRecord) -> datetime:
    """The record's time, a time without zone taken as UTC (so naive and aware times sort together)."""
    assert record.timestamp is not None
    t = record.timestamp
    return t if t.tzinfo else t.replace(tzinfo=UTC)
