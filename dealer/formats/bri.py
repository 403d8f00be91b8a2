"""BRI: 128 bytes a board (Duplimate and others).

78 ASCII digits, the card numbers 1..52 (two digits each, ascending) of North, then East, then South; West
holds the rest. Then 32 spaces and 18 NUL bytes. The file carries no board numbers: boards are 1, 2, ...
in file order. The reader checks the record size and every card number; the padding may vary.
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core import Deal, Seat
from dealer.core.errors import DealerError

from ._common import law2_record, numbered
from .base import BoardRecord, ExportMeta, FormatError, ReadProblem, ReadResult, register

RECORD = 128
CARDS_PART = 78
PADDING = b" " * 32 + b"\x00" * 18

_NUMBERS = [f"{c:02d}".encode() for c in range(1, 53)]


def encode_cards(deal: Deal) -> bytes:
    """The 78 digits: card numbers of N, E, S in ascending order."""
    seats = deal.seats
    return b"".join(_NUMBERS[c] for seat in (0, 1, 2) for c in range(52) if seats[c] == seat)


def decode_cards(raw: bytes, board: int, offset: int) -> Deal:
    """Inverse of ``encode_cards``; raises FormatError naming the board and byte offset."""
    seats = bytearray([Seat.W] * 52)
    seen = bytearray(52)
    for k in range(39):
        pair = raw[2 * k : 2 * k + 2]
        where = f"board {board}, byte {offset + 2 * k}"
        if not pair.isdigit():
            raise FormatError(
                "{where}: card number {decode!r} is not two digits", where=where, decode=pair.decode("latin-1")
            )
        number = int(pair)
        if not 1 <= number <= 52:
            raise FormatError("{where}: card number {number} is out of range 1..52", where=where, number=number)
        if seen[number - 1]:
            raise FormatError("{where}: card number {number} appears twice", where=where, number=number)
        seen[number - 1] = 1
        seats[number - 1] = k // 13
    return Deal(bytes(seats))


class BriFormat:
    name = "bri"
    extensions: tuple[str, ...] = ("bri",)
    description = "BRI: 128-byte records of card numbers of N, E, S (Duplimate)"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        return b"".join(encode_cards(nb.deal) + PADDING for nb in numbered(boards))

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        if len(data) % RECORD:
            raise FormatError(
                "{source}: {n_data} bytes is not a whole number of {RECORD}-byte BRI records ({len_data_record} "
                "records and {len_data_record2} bytes left over at byte {len_data_len_data_record})",
                source=source,
                n_data=len(data),
                RECORD=RECORD,
                len_data_record=len(data) // RECORD,
                len_data_record2=len(data) % RECORD,
                len_data_len_data_record=len(data) - len(data) % RECORD,
            )
        result = ReadResult()
        for i in range(len(data) // RECORD):
            offset = i * RECORD
            board = i + 1
            try:
                deal = decode_cards(data[offset : offset + CARDS_PART], board, offset)
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=board, offset=offset, error=exc))
                continue
            result.records.append(law2_record(deal, board, offset=offset))
        return result


register(BriFormat())
