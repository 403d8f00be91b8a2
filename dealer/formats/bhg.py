"""BHG: Borel dealing machines.

The first line is empty; then one line a board of 52 letters, card numbers 1..26 as ``A``..``Z`` and
27..52 as ``a``..``z``: four hands of 13 cards in ascending order, starting with the board's dealer and
going clockwise. The file carries no board numbers, so the reader numbers boards 1, 2, ... and takes the
dealer from Law 2; the writer therefore refuses boards that do not run 1, 2, 3, ...
Lines end with CRLF as DOS software writes them; the reader accepts any line ending and blank lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core import Deal, board_dealer
from dealer.core.errors import DealerError

from ._common import ascii_text, law2_record, numbered, require_consecutive
from .base import BoardRecord, ExportMeta, FormatError, ReadProblem, ReadResult, check_line_length, register

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CARD_OF = {ch: i for i, ch in enumerate(LETTERS)}


def encode_line(deal: Deal, dealer: int) -> str:
    seats = deal.seats
    return "".join(LETTERS[c] for k in range(4) for c in range(52) if seats[c] == (dealer + k) % 4)


class BhgFormat:
    name = "bhg"
    extensions: tuple[str, ...] = ("bhg",)
    description = "BHG: a line of 52 letters a board, hands from the dealer (Borel)"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        nbs = numbered(boards)
        require_consecutive(nbs, "BHG", law2_aligned=True)
        lines = ["", *(encode_line(nb.deal, board_dealer(nb.board)) for nb in nbs)]
        return ("\r\n".join(lines) + "\r\n").encode("ascii")

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        text = ascii_text(data, source)
        check_line_length(text, source)
        result = ReadResult()
        board = 0
        offset = 0
        for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
            start = offset
            offset += len(line)
            body = line.rstrip("\r\n").strip()
            if not body or body == "\x1a":
                continue
            board += 1
            if len(body) != 52:
                raise FormatError(
                    "{source}: line {lineno} (board {board}, byte {start}) has {n_body} characters, a BHG board "
                    "has 52 letters",
                    source=source,
                    lineno=lineno,
                    board=board,
                    start=start,
                    n_body=len(body),
                )
            dealer = board_dealer(board)
            seats = bytearray([4] * 52)
            try:
                for k, ch in enumerate(body):
                    card = _CARD_OF.get(ch)
                    if card is None:
                        raise FormatError(
                            "character {ch!r} at column {column} is not a card letter A..Z a..z", ch=ch, column=k + 1
                        )
                    if seats[card] != 4:
                        raise FormatError("card letter {ch!r} at column {column} appears twice", ch=ch, column=k + 1)
                    seats[card] = (dealer + k // 13) % 4
                deal = Deal(bytes(seats))
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=board, line=lineno, offset=start, error=exc))
                continue
            rec = law2_record(deal, board, line=lineno, offset=start)
            result.records.append(rec)
        return result


register(BhgFormat())
