"""An in-memory index of canonical deals (13 bytes) to their ids, for the duplicate check of batches' deals. Pure.

The batches of a bank of format 3 keep their deals packed, with no index in the database (an index would cost
the storage a deal the packed form saves). An open bank keeps this index of them instead: loaded once, then
extended by the batches written since (batches are append-only, ``BatchesTable.ids_of``), so a look-up costs
a few binary searches whatever the bank's size.

A deal is two unsigned 64-bit numbers: its first 8 bytes (the prefix, sorted and searched) and its last 5 (the
rest, compared on a prefix hit, so a hit is confirmed against the whole canonical form), and its id: 24 bytes a
deal. The index is a few sorted segments: a new run of deals is a segment of its own, merged with the last one
while that one is at most twice its size, so there are about log2(deals / batch) segments and each deal is
re-sorted about that many times.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from .packed import CARDS

PREFIX = 8  # bytes of a deal searched; the rest (CARDS - PREFIX) confirm a hit

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class Segment(NamedTuple):
    prefix: U64  # sorted
    rest: U64  # of the same deals
    ids: I64


def split(run: bytes) -> tuple[U64, U64]:
    """The prefixes and rests of a run of canonical deals (13 bytes each), as big-endian numbers (so the
    numbers' order is the bytes')."""
    if len(run) % CARDS:
        raise ValueError(f"a run of deals is a multiple of {CARDS} bytes, not {len(run)}")
    cards = np.frombuffer(run, dtype=np.uint8).reshape(-1, CARDS)
    prefix = np.ascontiguousarray(cards[:, :PREFIX]).view(">u8").ravel().astype(np.uint64)
    padded = np.zeros((len(cards), 8), dtype=np.uint8)
    padded[:, 8 - (CARDS - PREFIX) :] = cards[:, PREFIX:]
    rest = padded.view(">u8").ravel().astype(np.uint64)
    return prefix, rest


def _sorted(prefix: U64, rest: U64, ids: I64) -> Segment:
    order = np.lexsort((rest, prefix))
    return Segment(prefix[order], rest[order], ids[order])


class DealIndex:
    """Canonical deals → ids. ``add`` a run of deals with consecutive ids; ``find`` those of some deals held."""

    def __init__(self) -> None:
        self._segments: list[Segment] = []
        self.size = 0

    @property
    def nbytes(self) -> int:
        """The memory its arrays hold."""
        return sum(a.nbytes for s in self._segments for a in s)

    def add(self, runs: Sequence[tuple[bytes, int]]) -> None:
        """The deals of each run (13 bytes each) with its first id: ids ``first_id``, ``first_id + 1``, … (one
        segment for them all: a first load sorts once)."""
        parts = [(*split(run), np.arange(first, first + len(run) // CARDS, dtype=np.int64)) for run, first in runs]
        parts = [p for p in parts if len(p[2])]
        if not parts:
            return
        prefix, rest, ids = (np.concatenate([p[k] for p in parts]) for k in range(3))
        self._segments.append(_sorted(prefix, rest, ids))
        self.size += len(ids)
        while len(self._segments) >= 2 and len(self._segments[-2].ids) <= 2 * len(self._segments[-1].ids):
            top, below = self._segments.pop(), self._segments.pop()
            self._segments.append(
                _sorted(
                    np.concatenate((below.prefix, top.prefix)),
                    np.concatenate((below.rest, top.rest)),
                    np.concatenate((below.ids, top.ids)),
                )
            )

    def find(self, canonicals: Sequence[bytes]) -> dict[bytes, int]:
        """The ids of those of ``canonicals`` (13 bytes each) the index holds."""
        found: dict[bytes, int] = {}
        if not canonicals or not self._segments:
            return found
        prefix, rest = split(b"".join(canonicals))
        for segment in self._segments:
            low = np.searchsorted(segment.prefix, prefix, side="left")
            high = np.searchsorted(segment.prefix, prefix, side="right")
            for k in np.flatnonzero(high > low).tolist():  # a prefix hit: the rest says whether it is the deal
                for at in range(int(low[k]), int(high[k])):
                    if segment.rest[at] == rest[k]:
                        found[canonicals[k]] = int(segment.ids[at])
                        break
        return found
