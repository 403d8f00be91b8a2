"""Helpers the format modules share: board numbering of records and record framing checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dealer.core import Deal, Seat, Vulnerability, board_dealer, board_vulnerability

from .base import BoardRecord, FormatError


@dataclass(frozen=True, slots=True)
class NumberedBoard:
    board: int
    dealer: Seat
    vulnerability: Vulnerability
    deal: Deal
    record: BoardRecord


def numbered(records: Sequence[BoardRecord]) -> list[NumberedBoard]:
    """Every record with a board number (its own, else one more than the previous, from 1) and Law 2 defaults."""
    out: list[NumberedBoard] = []
    previous = 0
    for rec in records:
        board = rec.board if rec.board is not None else previous + 1
        if board < 1:
            raise FormatError("board number {board} is out of range: boards are numbered from 1", board=board)
        dealer = rec.dealer if rec.dealer is not None else board_dealer(board)
        vul = rec.vulnerability if rec.vulnerability is not None else board_vulnerability(board)
        out.append(NumberedBoard(board, dealer, vul, rec.deal, rec))
        previous = board
    return out


def law2_record(deal: Deal, board: int, *, line: int | None = None, offset: int | None = None) -> BoardRecord:
    """A record whose dealer and vulnerability follow from its board number (files that carry neither)."""
    return BoardRecord(deal, board, board_dealer(board), board_vulnerability(board), line=line, offset=offset)


def require_consecutive(boards: Sequence[NumberedBoard], fmt: str, *, law2_aligned: bool = False) -> None:
    """Positional formats carry no board numbers: refuse records a reader would number differently."""
    for i, nb in enumerate(boards):
        expected = (boards[0].board if not law2_aligned else 1) + i
        if nb.board != expected:
            raise FormatError(
                "{fmt} files carry no board numbers, so boards must run consecutively from {first}: record "
                "{record} is board {board}, expected {expected}",
                fmt=fmt,
                first="1" if law2_aligned else str(boards[0].board),
                record=i + 1,
                board=nb.board,
                expected=expected,
            )


def ascii_text(data: bytes, source: str) -> str:
    try:
        return data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise FormatError(
            "{source}: byte {start} is 0x{data:02x}, not ASCII text",
            source=source,
            start=exc.start,
            data=data[exc.start],
        ) from exc


def split_lines(text: str) -> list[str]:
    """Lines without their endings (CRLF, LF or CR all accepted)."""
    return text.splitlines()
