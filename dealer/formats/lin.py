"""LIN, Bridge Base Online's record format: ``key|value|`` pairs (no public specification).

Reader: every ``md|`` pair is a deal (``<dealer digit><S>,<W>,<N>[,<E>]``, dealer 1=S 2=W 3=N 4=E, hands like
``SAJ9HK9542DQCAK93``, a missing East is filled in); the board number comes from ``qx|o<b>`` / ``qx|c<b>``
or ``ah|Board <b>`` of the same record, vulnerability from ``sv|`` (0/o none, n, e, b). Other keys (``pn``,
``mb``, ``pc``, ``nt``, ``an``, …) are skipped. Writer: one board a line, exactly as FORMATS.md shows:
``qx|o<b>|md|<d><S>,<W>,<N>|rh||ah|Board <b>|sv|<0,n,e,b>|pg||``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dealer.core import Card, Deal, Seat, Vulnerability, board_dealer, board_vulnerability
from dealer.core.cards import RANK_CHARS
from dealer.core.errors import DealError, Phrase

from .base import BoardRecord, ExportMeta, ReadProblem, ReadResult, register, small_int
from .pbn import decode_text

# LIN dealer digit -> seat, and the hand order of ``md`` (South first, clockwise)
_DEALER = {"1": Seat.S, "2": Seat.W, "3": Seat.N, "4": Seat.E}
_DIGIT = {seat: digit for digit, seat in _DEALER.items()}
_MD_ORDER = (Seat.S, Seat.W, Seat.N, Seat.E)
_VUL = {"0": Vulnerability.NONE, "o": Vulnerability.NONE, "n": Vulnerability.NS, "e": Vulnerability.EW}
_VUL["b"] = Vulnerability.ALL
_VUL_OUT = {Vulnerability.NONE: "0", Vulnerability.NS: "n", Vulnerability.EW: "e", Vulnerability.ALL: "b"}
_RANK = {ch: i for i, ch in enumerate(RANK_CHARS)}
_SUIT = {"S": 0, "H": 1, "D": 2, "C": 3}
_NUMBER = re.compile(r"\d+")


def parse_md(value: str) -> tuple[Deal, Seat | None]:
    """A LIN ``md`` value as a complete deal and its dealer (None when the digit is absent)."""
    text = value.strip()
    dealer = _DEALER.get(text[:1])
    if dealer is not None or text[:1].isdigit():
        if dealer is None:
            raise DealError("dealer digit {text!r} is not 1..4 (1=S 2=W 3=N 4=E)", text=text[0])
        text = text[1:]
    hands = text.split(",")
    if len(hands) < 3 or len(hands) > 4:
        raise DealError("md has {n_hands} hands separated by ',', expected 3 or 4", n_hands=len(hands))
    seats = bytearray([4] * 52)
    known = 0
    for seat, hand in zip(_MD_ORDER, hands, strict=False):
        hand = hand.strip()
        if not hand:
            continue
        suit = -1
        count = 0
        for ch in hand.upper().replace("10", "T"):
            if ch in _SUIT:
                suit = _SUIT[ch]
            elif ch in _RANK and suit >= 0:
                card = suit * 13 + _RANK[ch]
                if seats[card] != 4:
                    raise DealError("card {name} is in two hands", name=Card(card).name)
                seats[card] = seat
                count += 1
            else:
                raise DealError("unexpected {ch!r} in hand {hand!r}", ch=ch, hand=hand)
        if count != 13:
            raise DealError(
                "hand {letter} {hand!r} has {count} cards, expected 13", letter=seat.letter, hand=hand, count=count
            )
        known += 1
    if known < 3:
        raise DealError("md gives {known} hands; a complete deal needs at least three", known=known)
    if known == 3:
        missing = next(s for s in Seat if s not in seats)
        seats = bytearray(missing if s == 4 else s for s in seats)
    return Deal(bytes(seats)), dealer


def format_hand(deal: Deal, seat: Seat) -> str:
    hand = deal.hand(seat)
    return "".join(
        "SHDC"[suit] + "".join(RANK_CHARS[c % 13] for c in hand.cards if c // 13 == suit) for suit in range(4)
    )


class LinFormat:
    name = "lin"
    extensions: tuple[str, ...] = ("lin",)
    description = "Bridge Base Online LIN (deals; other BBO keys are skipped)"
    can_read = True
    can_write = True

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        text = decode_text(data, source)
        result = ReadResult()
        tokens = text.split("|")
        line = 1
        board: int | None = None
        vul: Vulnerability | None = None
        pending: list[tuple[str, int, int | None]] = []  # md values waiting for the record's sv/ah
        i = 0

        def flush() -> None:
            for md, md_line, md_board in pending:
                self._record(md, md_line, board if board is not None else md_board, vul, result)
            pending.clear()

        while i + 1 < len(tokens):
            key_raw, value = tokens[i], tokens[i + 1]
            key_line = line + key_raw.count("\n")
            line = key_line + value.count("\n")
            key = key_raw.strip().lower()
            i += 2
            if key == "qx":
                flush()
                board, vul = _number(value), None
            elif key == "md":
                if pending:  # a second deal in the same record: close the first
                    flush()
                    board, vul = None, None
                pending.append((value, key_line, board))
            elif key == "ah":
                number = _number(value)
                if number is not None and board is None:
                    board = number
            elif key == "sv":
                vul = _VUL.get(value.strip().lower()[:1])
        flush()
        return result

    def _record(self, md: str, line: int, board: int | None, vul: Vulnerability | None, result: ReadResult) -> None:
        try:
            deal, dealer = parse_md(md)
        except DealError as exc:
            result.problems.append(
                ReadProblem(
                    f"md {md[:60]!r}: {exc}", board, line, error=Phrase("md {md!r}: {exc}", md=md[:60], exc=exc)
                )
            )
            return
        result.records.append(BoardRecord(deal, board, dealer, vul, line, None, {}))

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        out = []
        for i, rec in enumerate(boards, start=1):
            number = rec.board if rec.board is not None else i
            dealer = rec.dealer if rec.dealer is not None else board_dealer(number)
            vul = rec.vulnerability if rec.vulnerability is not None else board_vulnerability(number)
            hands = ",".join(format_hand(rec.deal, seat) for seat in _MD_ORDER[:3])
            out.append(f"qx|o{number}|md|{_DIGIT[dealer]}{hands}|rh||ah|Board {number}|sv|{_VUL_OUT[vul]}|pg||\n")
        return "".join(out).encode("ascii")


def _number(value: str) -> int | None:
    m = _NUMBER.search(value)
    return small_int(m.group()) if m else None


LIN = register(LinFormat())
