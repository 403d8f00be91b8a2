"""DUP: 156 bytes a board (Duplimate's DOS software).

A board is the 78-digit BRI part, the 68-byte DGE part and a 10-byte trailer: ``Y``/``N`` random hands,
``Y``/``N`` count backwards, the lowest board (3 bytes), copies (2 bytes) and the highest board (3 bytes),
each left-aligned and space-padded. Big Deal writes ``YN1  0 dd `` with dd the number of boards; we write
the lowest and highest board of the file and the copies when more than one is asked for (else 0 as Big
Deal). The reader checks that the BRI and DGE parts hold the same deal and numbers boards from the lowest.
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core.errors import DealerError

from ._common import law2_record, numbered, require_consecutive
from .base import BoardRecord, ExportMeta, FormatError, ReadProblem, ReadResult, register
from .bri import CARDS_PART, decode_cards, encode_cards
from .dge import HANDS_PART, decode_hands, encode_hands

RECORD = 156
TRAILER = 10


def _field(value: int, width: int, what: str) -> bytes:
    text = str(value)
    if len(text) > width:
        raise FormatError("DUP {what} {value} does not fit in {width} characters", what=what, value=value, width=width)
    return text.ljust(width).encode("ascii")


def trailer(lowest: int, highest: int, copies: int) -> bytes:
    return b"YN" + _field(lowest, 3, "lowest board") + _field(copies, 2, "copies") + _field(highest, 3, "highest board")


class DupFormat:
    name = "dup"
    extensions: tuple[str, ...] = ("dup",)
    description = "DUP: 156-byte records, BRI + DGE + trailer (Duplimate DOS)"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        nbs = numbered(boards)
        if not nbs:
            return b""
        require_consecutive(nbs, "DUP")
        tail = trailer(nbs[0].board, nbs[-1].board, meta.copies if meta.copies > 1 else 0)
        return b"".join(encode_cards(nb.deal) + encode_hands(nb.deal) + tail for nb in nbs)

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        if len(data) % RECORD:
            raise FormatError(
                "{source}: {n_data} bytes is not a whole number of {RECORD}-byte DUP records ({len_data_record} "
                "bytes left over at byte {len_data_len_data_record})",
                source=source,
                n_data=len(data),
                RECORD=RECORD,
                len_data_record=len(data) % RECORD,
                len_data_len_data_record=len(data) - len(data) % RECORD,
            )
        result = ReadResult()
        lowest = 1
        if data:
            field = data[RECORD - TRAILER + 2 : RECORD - TRAILER + 5].strip()
            if field.isdigit() and int(field) >= 1:
                lowest = int(field)
            else:
                result.problems.append(
                    ReadProblem(
                        f"lowest board {field!r} in the trailer is not a number; numbering from 1", offset=RECORD - 8
                    )
                )
        for i in range(len(data) // RECORD):
            offset = i * RECORD
            board = lowest + i
            rec = data[offset : offset + RECORD]
            try:
                deal = decode_cards(rec[:CARDS_PART], board, offset)
                other, used = decode_hands(rec[CARDS_PART : CARDS_PART + HANDS_PART], board, offset + CARDS_PART)
                if used != HANDS_PART:
                    raise FormatError(
                        "board {board}, byte {byte}: DGE part ends early",
                        board=board,
                        byte=offset + CARDS_PART + used,
                    )
                if other != deal:
                    raise FormatError(
                        "board {board}, byte {offset}: the BRI part ({deal}) and the DGE part ({other}) hold "
                        "different deals",
                        board=board,
                        offset=offset,
                        deal=deal.to_pbn(),
                        other=other.to_pbn(),
                    )
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=board, offset=offset, error=exc))
                continue
            result.records.append(law2_record(deal, board, offset=offset))
        return result


register(DupFormat())
