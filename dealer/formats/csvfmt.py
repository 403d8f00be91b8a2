"""CSV for spreadsheets: a line a board.

16 quoted suit holdings (North ♠ ♥ ♦ ♣, then East, South, West), then the board number and ``Dealer/Vul``
with Vul one of ``-``, ``NS``, ``EW``, ``All``, e.g. ``"AJ9","K9542","Q","AK93",…,"1","N/-"``. A void is
an empty field. The writer quotes every field and ends lines with CRLF (RFC 4180). The reader accepts ``,``
``;`` or tab as separator, a header line, ``10`` for ten, ``-`` for a void, and an absent Dealer/Vul
column (Law 2 then).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

from dealer.core import Deal, Seat, Vulnerability, board_dealer, board_vulnerability
from dealer.core.cards import RANK_CHARS
from dealer.core.errors import DealerError

from ._common import numbered
from .base import (
    MAX_FIELD_CHARS,
    BoardRecord,
    ExportMeta,
    FormatError,
    ReadProblem,
    ReadResult,
    check_line_length,
    register,
    small_int,
)

_VUL_TEXT = {Vulnerability.NONE: "-", Vulnerability.NS: "NS", Vulnerability.EW: "EW", Vulnerability.ALL: "All"}
_RANK = {ch: r for r, ch in enumerate(RANK_CHARS)} | {ch.lower(): r for r, ch in enumerate(RANK_CHARS)}


def _holdings(deal: Deal) -> list[str]:
    cells = [[""] * 4 for _ in range(4)]
    for card, seat in enumerate(deal.seats):
        cells[seat][card // 13] += RANK_CHARS[card % 13]
    return [cells[seat][suit] for seat in range(4) for suit in range(4)]


def _parse_holding(text: str, suit: int, seat: int, seats: bytearray, column: int) -> None:
    body = text.strip().replace("10", "T")
    if body in ("-", "—", "–"):
        return
    for ch in body:
        if ch == " ":
            continue
        rank = _RANK.get(ch)
        if rank is None:
            raise FormatError(
                "column {column}: {ch!r} in {text!r} is not a rank (AKQJT98765432)", column=column, ch=ch, text=text
            )
        card = suit * 13 + rank
        if seats[card] != 4:
            raise FormatError("column {column}: {shdc}{ch} appears twice", column=column, shdc="SHDC"[suit], ch=ch)
        seats[card] = seat


def _rows(reader: Iterator[list[str]], source: str) -> Iterator[list[str]]:
    """The reader's rows; a broken quote or an over-long field is a FormatError naming its line."""
    import csv  # here and in read/write: ``dealer formats`` lists the formats without the CSV module

    line_num = getattr(reader, "line_num", 0)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            line_num = getattr(reader, "line_num", line_num)
            raise FormatError(
                "{source}: line {line_num}: not valid CSV: {exc}", source=source, line_num=line_num, exc=exc
            ) from exc
        for k, cell in enumerate(row):
            if len(cell) > MAX_FIELD_CHARS:
                line_num = getattr(reader, "line_num", line_num)
                raise FormatError(
                    "{source}: line {line_num}, column {column}: field over {MAX_FIELD_CHARS:,} characters",
                    source=source,
                    line_num=line_num,
                    column=k + 1,
                    MAX_FIELD_CHARS=MAX_FIELD_CHARS,
                )
        yield row


class CsvFormat:
    name = "csv"
    extensions: tuple[str, ...] = ("csv",)
    description = "CSV: 16 suit holdings, board, Dealer/Vul (spreadsheets)"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        import csv

        buf = io.StringIO()
        writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
        for nb in numbered(boards):
            writer.writerow([*_holdings(nb.deal), str(nb.board), f"{nb.dealer.letter}/{_VUL_TEXT[nb.vulnerability]}"])
        return buf.getvalue().encode("utf-8")

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        import csv

        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        check_line_length(text, source)
        first = next((line for line in text.splitlines() if line.strip()), "")
        delimiter = max(",;\t", key=first.count)
        result = ReadResult()
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        position = 0
        for row in _rows(reader, source):
            lineno = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) < 16:
                raise FormatError(
                    "{source}: line {lineno} has {n_row} fields, a CSV board has 16 holdings and more",
                    source=source,
                    lineno=lineno,
                    n_row=len(row),
                )
            board_text = row[16].strip() if len(row) > 16 else ""
            if position == 0 and board_text and not board_text.isdecimal():
                continue  # a header line
            position += 1
            number = small_int(board_text) if board_text.isdecimal() else None
            board = number if number is not None and number >= 1 else position
            try:
                seats = bytearray([4] * 52)
                for k in range(16):
                    _parse_holding(row[k], k % 4, k // 4, seats, k + 1)
                deal = Deal(bytes(seats))
                dealer: Seat = board_dealer(board)
                vul = board_vulnerability(board)
                if len(row) > 17 and row[17].strip():
                    dv = row[17].strip()
                    left, _, right = dv.partition("/")
                    try:
                        dealer = Seat("NESW".index(left.strip().upper()[:1])) if left.strip() else dealer
                    except ValueError as exc:
                        raise FormatError("column 18: dealer {left!r} is not N, E, S or W", left=left) from exc
                    if right.strip():
                        try:
                            vul = Vulnerability.parse(right)
                        except ValueError as exc:
                            raise FormatError("column 18: {exc}", exc=exc) from exc
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=board, line=lineno, error=exc))
                continue
            result.records.append(BoardRecord(deal, board, dealer, vul, line=lineno))
        return result


register(CsvFormat())
