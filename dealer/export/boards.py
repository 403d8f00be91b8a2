"""A session's drawn deals become numbered boards (Law 2 dealer and vulnerability), seats never rotated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dealer.core import Deal, Seat, Vulnerability, board_dealer, board_vulnerability
from dealer.core.errors import BoardNumberError, DealerError
from dealer.formats.base import BoardRecord
from dealer.regulation import COPIES_RANGE, Regulation


class BoardsError(DealerError, ValueError):
    """Deals cannot be turned into boards (duplicate numbers, bad copies, ...)."""


@dataclass(frozen=True, slots=True)
class SessionBoard:
    """One board of a session: its number, Law 2 dealer and vulnerability, the deal as drawn, and copies."""

    number: int
    deal: Deal
    copies: int

    @property
    def dealer(self) -> Seat:
        return board_dealer(self.number)

    @property
    def vulnerability(self) -> Vulnerability:
        return board_vulnerability(self.number)

    def record(self, tags: Mapping[str, str] | None = None) -> BoardRecord:
        return BoardRecord(self.deal, self.number, self.dealer, self.vulnerability, tags=dict(tags or {}))


def _copies(copies: int) -> int:
    lo, hi = COPIES_RANGE
    if isinstance(copies, bool) or not isinstance(copies, int) or not lo <= copies <= hi:
        raise BoardsError("copies = {copies!r} is out of range: allowed {lo}..{hi}", copies=copies, lo=lo, hi=hi)
    return copies


def number_deals(deals: Sequence[Deal], *, first: int = 1, copies: int = 1) -> list[SessionBoard]:
    """Boards ``first``, ``first + 1``, ... for the deals in draw order (a session continuing from ``first``)."""
    if isinstance(first, bool) or not isinstance(first, int) or first < 1:
        raise BoardNumberError(first)
    n = _copies(copies)
    return [SessionBoard(first + i, deal, n) for i, deal in enumerate(deals)]


def boards_from_pairs(pairs: Iterable[tuple[int, Deal]], *, copies: int = 1) -> list[SessionBoard]:
    """Boards from (board number, deal) pairs, e.g. the drawn deals of a session as the bank hands them out."""
    n = _copies(copies)
    out: list[SessionBoard] = []
    seen: dict[int, int] = {}
    for i, (number, deal) in enumerate(pairs):
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise BoardNumberError(number)
        if number in seen:
            raise BoardsError(
                "board {number} is given twice (items {first} and {second})",
                number=number,
                first=seen[number] + 1,
                second=i + 1,
            )
        seen[number] = i
        out.append(SessionBoard(number, deal, n))
    return sorted(out, key=lambda b: b.number)


def boards_from_records(
    records: Iterable[BoardRecord], *, copies: int = 1, first: int | None = None
) -> list[SessionBoard]:
    """Boards from a deal file's records: their own board numbers, or renumbered from ``first`` when given."""
    recs = list(records)
    if first is not None:
        return number_deals([r.deal for r in recs], first=first, copies=copies)
    pairs: list[tuple[int, Deal]] = []
    previous = 0
    for r in recs:
        number = r.board if r.board is not None else previous + 1
        pairs.append((number, r.deal))
        previous = number
    return boards_from_pairs(pairs, copies=copies)


def copies_for(regulation: Regulation) -> int:
    return regulation.copies


def records_of(boards: Sequence[SessionBoard]) -> list[BoardRecord]:
    return [b.record() for b in boards]
