"""Variant 1 (closed dealing, Law 6): deals go face down straight into the boards, never into a bank or a draw.

Each board is also a ledger entry of the bank (kind ``closed-board``: number, copies, station, time and
SHA-256(salt ‖ deal), the salt kept here), so the boards file can be checked against the tamper-evident ledger
(the act of closed dealing does) without the ledger telling anyone a deal before it is played.

A closed station numbers what it deals as the session's boards — 1, 2, … up to ``boards_per_session``, dealer and
vulnerability by Law 2, the regulation's number of copies — and records each board here, in one append-only JSON
lines file under ``VAR/boards/``. That record is what the hand records and a fouled-board check are made from
(and what a duplicating machine makes the further copies from); it stays on the server, behind the director's
secret. The audience learns only "board n of m".
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import NotRequired, TypedDict

from dealer.core import Deal, board_dealer, board_vulnerability
from dealer.core.json_types import JsonObject
from dealer.documents.acts import ClosedRecord, closed_board_payload
from dealer.export.boards import SessionBoard

CLOSED_LABEL = "closed"  # the session label the director's console uses for the variant 1 boards


class ClosedBoardView(TypedDict):
    """A closed board as the director's console lists it (``pbn`` only where the deal may be shown)."""

    board: int
    dealer: str
    vulnerability: str
    copies: int
    station: str
    time: float
    pbn: NotRequired[str]


@dataclass(frozen=True, slots=True)
class ClosedBoard:
    number: int
    deal: Deal
    copies: int
    station: str
    time: float
    salt: str = ""  # hex; the ledger holds SHA-256(salt ‖ deal), so the hash tells nothing of the deal

    @property
    def deal_sha256(self) -> str:
        return sha256(bytes.fromhex(self.salt) + self.deal.to_bytes()).hexdigest()

    def record(self) -> ClosedRecord:
        when = datetime.fromtimestamp(self.time, UTC).isoformat(timespec="seconds")
        return ClosedRecord(self.number, self.copies, self.station, when, self.deal_sha256)

    def ledger_payload(self) -> JsonObject:
        return closed_board_payload(self.record())

    def view(self, with_deal: bool) -> ClosedBoardView:
        out: ClosedBoardView = {
            "board": self.number,
            "dealer": board_dealer(self.number).letter,
            "vulnerability": board_vulnerability(self.number).pbn,
            "copies": self.copies,
            "station": self.station,
            "time": self.time,
        }
        if with_deal:
            out["pbn"] = self.deal.to_pbn()
        return out


class ClosedBoards:
    """The boards the closed stations made, in one file; numbering is shared by every station of the service."""

    def __init__(self, path: Path, boards: int, copies: int) -> None:
        self.path = path
        self.total = boards
        self.copies = copies
        self._lock = threading.Lock()
        self.boards: list[ClosedBoard] = []
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    d = json.loads(line)
                    self.boards.append(
                        ClosedBoard(
                            d["board"],
                            Deal.from_pbn(d["deal"]),
                            d["copies"],
                            d["station"],
                            d["time"],
                            d.get("salt", ""),
                        )
                    )

    @property
    def made(self) -> int:
        return len(self.boards)

    @property
    def complete(self) -> bool:
        return self.made >= self.total

    def add(self, deal: Deal, station: str) -> ClosedBoard:
        """Record ``deal`` as the next board (on disk before anyone is told). Raises when the session is full."""
        with self._lock:
            if self.complete:
                raise ValueError(f"all {self.total} boards of the session are made")
            board = ClosedBoard(self.made + 1, deal, self.copies, station, time.time(), secrets.token_hex(16))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            line = {"board": board.number, "deal": deal.to_pbn(), "copies": board.copies, "station": station,
                    "time": board.time, "salt": board.salt}  # fmt: skip
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (json.dumps(line, separators=(",", ":")) + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            self.boards.append(board)
            return board

    def records(self) -> list[ClosedRecord]:
        return [b.record() for b in self.boards]

    def audit_deals(self) -> list[tuple[int, Deal, str]]:
        return [(b.number, b.deal, b.station) for b in self.boards]

    def session_boards(self) -> list[SessionBoard]:
        return [SessionBoard(b.number, b.deal, b.copies) for b in self.boards]
