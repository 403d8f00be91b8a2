"""Law 2: dealer and vulnerability by board number, in a cycle of 16."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .cards import Seat
from .errors import BoardNumberError, DealError


class Vulnerability(Enum):
    NONE = "None"
    NS = "NS"
    EW = "EW"
    ALL = "All"

    @property
    def pbn(self) -> str:
        return self.value

    def is_vulnerable(self, seat: Seat) -> bool:
        if self is Vulnerability.ALL:
            return True
        if self is Vulnerability.NONE:
            return False
        return (seat in (Seat.N, Seat.S)) == (self is Vulnerability.NS)

    @classmethod
    def parse(cls, text: str) -> Vulnerability:
        key = text.strip().lower()
        aliases = {
            "none": cls.NONE, "love": cls.NONE, "-": cls.NONE, "0": cls.NONE, "o": cls.NONE,
            "ns": cls.NS, "n-s": cls.NS, "n/s": cls.NS,
            "ew": cls.EW, "e-w": cls.EW, "e/w": cls.EW,
            "all": cls.ALL, "both": cls.ALL, "b": cls.ALL,
        }  # fmt: skip
        if key in aliases:
            return aliases[key]
        raise DealError("unknown vulnerability {text!r}: expected None, NS, EW or All", text=text)


_VULNERABILITY_CYCLE = (Vulnerability.NONE, Vulnerability.NS, Vulnerability.EW, Vulnerability.ALL)


def _check(board: int) -> int:
    if isinstance(board, bool) or not isinstance(board, int) or board < 1:
        raise BoardNumberError(board)
    return board - 1


def board_dealer(board: int) -> Seat:
    return Seat(_check(board) % 4)


def board_vulnerability(board: int) -> Vulnerability:
    i = _check(board)
    return _VULNERABILITY_CYCLE[(i + i // 4) % 4]


@dataclass(frozen=True, slots=True)
class Board:
    number: int
    dealer: Seat
    vulnerability: Vulnerability

    @classmethod
    def numbered(cls, number: int) -> Board:
        return cls(number, board_dealer(number), board_vulnerability(number))
