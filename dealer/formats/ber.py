"""BER: Bernasconi dealing machines. 52 ASCII digits a board, ``'1' + seat`` of each card in card order.

Big Deal writes the records back to back with no separators; the reader also accepts a line break
between records. Boards are numbered by position.
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core import Deal
from dealer.core.errors import DealerError, Phrase

from ._common import law2_record, numbered
from .base import BoardRecord, ExportMeta, FormatError, ReadProblem, ReadResult, register

RECORD = 52
_ENCODE = bytes.maketrans(b"\x00\x01\x02\x03", b"1234")
_DECODE = bytes.maketrans(b"1234", b"\x00\x01\x02\x03")


class BerFormat:
    name = "ber"
    extensions: tuple[str, ...] = ("ber",)
    description = "BER: 52 digits a board, the seat of every card (Bernasconi)"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        return b"".join(nb.deal.seats.translate(_ENCODE) for nb in numbered(boards))

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        result = ReadResult()
        pos = 0
        board = 0
        n = len(data)
        while True:
            while pos < n and data[pos] in b"\r\n\x1a":  # line breaks between records, a DOS end-of-file mark
                pos += 1
            if pos >= n:
                break
            board += 1
            raw = data[pos : pos + RECORD]
            if len(raw) < RECORD or not raw.isdigit():
                cut = next((k for k, ch in enumerate(raw) if not 48 <= ch <= 57), len(raw))
                what = "the file ends" if cut == len(raw) else f"byte {raw[cut : cut + 1]!r}"
                raise FormatError(
                    "{source}: board {board}, byte {byte}: {what} inside a {RECORD}-digit BER record",
                    source=source,
                    board=board,
                    byte=pos + cut,
                    what=what,
                    RECORD=RECORD,
                )
            bad = next((k for k, ch in enumerate(raw) if ch not in b"1234"), -1)
            if bad >= 0:
                result.problems.append(
                    ReadProblem(
                        f"seat digit {chr(raw[bad])!r} is not 1..4",
                        board=board,
                        offset=pos + bad,
                        error=Phrase("seat digit {digit!r} is not 1..4", digit=chr(raw[bad])),
                    )
                )
            else:
                try:
                    result.records.append(law2_record(Deal(raw.translate(_DECODE)), board, offset=pos))
                except DealerError as exc:
                    result.problems.append(ReadProblem(str(exc), board=board, offset=pos, error=exc))
            pos += RECORD
        return result


register(BerFormat())
