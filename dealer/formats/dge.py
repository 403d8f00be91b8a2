"""DGE: 128 bytes a board (older dealing software).

Per hand N, E, S, W: the byte 0x06 (♠ in code page 437) then the spade ranks, 0x03 (♥) hearts, 0x04 (♦)
diamonds, 0x05 (♣) clubs, ranks as ``AKQJT98765432`` from the highest; an empty suit is just its symbol.
Then NUL bytes up to 128. Boards are numbered by position. The reader accepts ranks in any order and case
and any padding after the four hands.
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core import Deal
from dealer.core.cards import RANK_CHARS
from dealer.core.errors import DealerError

from ._common import law2_record, numbered
from .base import BoardRecord, ExportMeta, FormatError, ReadProblem, ReadResult, register

RECORD = 128
HANDS_PART = 68  # 4 hands x (4 suit symbols + 13 ranks)
SUIT_BYTES = (0x06, 0x03, 0x04, 0x05)
_SUIT_OF_BYTE = {b: s for s, b in enumerate(SUIT_BYTES)}
_RANK_OF_BYTE = {ord(ch): r for r, ch in enumerate(RANK_CHARS)} | {
    ord(ch.lower()): r for r, ch in enumerate(RANK_CHARS)
}


def encode_hands(deal: Deal) -> bytes:
    """The 68 bytes of the four hands."""
    seats = deal.seats
    out = bytearray()
    for seat in range(4):
        for suit in range(4):
            out.append(SUIT_BYTES[suit])
            out += bytes(ord(RANK_CHARS[c % 13]) for c in range(suit * 13, suit * 13 + 13) if seats[c] == seat)
    return bytes(out)


def decode_hands(raw: bytes, board: int, offset: int) -> tuple[Deal, int]:
    """Parse four hands from the start of ``raw``; returns the deal and the bytes used."""
    seats = bytearray([4] * 52)
    pos = 0
    for seat in range(4):
        for suit in range(4):
            where = f"board {board}, byte {offset + pos}"
            if pos >= len(raw) or raw[pos] != SUIT_BYTES[suit]:
                got = f"0x{raw[pos]:02x}" if pos < len(raw) else "end of record"
                raise FormatError(
                    "{where}: expected suit byte 0x{SUIT_BYTES:02x} of hand {nesw}, got {got}",
                    where=where,
                    SUIT_BYTES=SUIT_BYTES[suit],
                    nesw="NESW"[seat],
                    got=got,
                )
            pos += 1
            while pos < len(raw) and raw[pos] in _RANK_OF_BYTE:
                card = suit * 13 + _RANK_OF_BYTE[raw[pos]]
                if seats[card] != 4:
                    raise FormatError(
                        "board {board}, byte {byte}: card {chr} of suit {suit} twice",
                        board=board,
                        byte=offset + pos,
                        chr=chr(raw[pos]),
                        suit=suit,
                    )
                seats[card] = seat
                pos += 1
    return Deal(bytes(seats)), pos


class DgeFormat:
    name = "dge"
    extensions: tuple[str, ...] = ("dge",)
    description = "DGE: 128-byte records of hands with suit symbol bytes (older dealing software)"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        return b"".join(encode_hands(nb.deal).ljust(RECORD, b"\x00") for nb in numbered(boards))

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        if len(data) % RECORD:
            raise FormatError(
                "{source}: {n_data} bytes is not a whole number of {RECORD}-byte DGE records ({len_data_record} "
                "bytes left over at byte {len_data_len_data_record})",
                source=source,
                n_data=len(data),
                RECORD=RECORD,
                len_data_record=len(data) % RECORD,
                len_data_len_data_record=len(data) - len(data) % RECORD,
            )
        result = ReadResult()
        for i in range(len(data) // RECORD):
            offset = i * RECORD
            board = i + 1
            try:
                deal, _ = decode_hands(data[offset : offset + RECORD], board, offset)
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=board, offset=offset, error=exc))
                continue
            result.records.append(law2_record(deal, board, offset=offset))
        return result


register(DgeFormat())
