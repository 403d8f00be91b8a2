"""DLM: the "new Duplimate" format of Jannersten's Windows software.

A ``[Document]`` header (Headline, Status ``Show`` or ``Sealed``, Duplicates, From board, To board, Next
board to duplimate, PrintOuts, Crypto key, Checksum) and then, for nn = 01..99 always, ``Duplicates nn=0``
and ``Board nn=`` with 26 letters and a 3-digit checksum. Letter i is ``a`` + 4·seat(card 2i+1) +
seat(card 2i+2) (card numbers 1..52); the board checksum is nn XOR the 26 letter bytes; the header checksum
is Duplicates XOR From XOR To XOR (1 if Show else 0). Boards outside From..To hold a filler deal.

The writer uses CRLF line ends (Windows software). The reader accepts any line end, any key order, extra
keys and sections, and checks every checksum (a wrong one is a problem naming the board and line).
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core import Deal
from dealer.core.errors import DealerError

from ._common import law2_record, numbered
from .base import (
    MAX_INT_DIGITS,
    BoardRecord,
    ExportMeta,
    FormatError,
    ReadProblem,
    ReadResult,
    check_line_length,
    register,
)

FILLER = "aaaaaabffffffkkkkkklpppppp"
MAX_BOARD = 99


# Cyrillic in the Headline: the file is Latin-1, so Russian is written in Latin letters by the rule of Russian
# passports (ICAO Doc 9303, the 2013 order of the Ministry of Internal Affairs): «Кубок Москвы» → "Kubok Moskvy".
_TRANSLIT = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z", "и": "i", "й": "i",
    "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f",
    "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "ie", "ы": "y", "ь": "", "э": "e", "ю": "iu",
    "я": "ia",
}  # fmt: skip
_MARKS = {"—": "-", "–": "-", "«": '"', "»": '"', "№": "No.", "„": '"', "“": '"'}


def latin(text: str) -> str:
    """``text`` with Cyrillic letters transliterated (capitals kept), other characters as they are."""
    out = []
    for ch in text:
        low = ch.lower()
        if ch in _MARKS:
            out.append(_MARKS[ch])
        elif low in _TRANSLIT:
            sub = _TRANSLIT[low]
            out.append(sub.capitalize() if ch != low else sub)
        else:
            out.append(ch)
    return "".join(out)


def encode_letters(deal: Deal) -> str:
    s = deal.seats
    return "".join(chr(97 + 4 * s[2 * i] + s[2 * i + 1]) for i in range(26))


def board_checksum(nn: int, letters: str) -> int:
    value = nn
    for ch in letters:
        value ^= ord(ch)
    return value


def header_checksum(duplicates: int, first: int, last: int, show: bool) -> int:
    return duplicates ^ first ^ last ^ (1 if show else 0)


def decode_letters(letters: str) -> Deal:
    seats = bytearray(52)
    for i, ch in enumerate(letters):
        v = ord(ch) - 97
        if not 0 <= v < 16:
            raise FormatError("letter {ch!r} at position {position} is not one of a..p", ch=ch, position=i + 1)
        seats[2 * i] = v >> 2
        seats[2 * i + 1] = v & 3
    return Deal(bytes(seats))


class DlmFormat:
    name = "dlm"
    extensions: tuple[str, ...] = ("dlm",)
    description = "DLM: Duplimate (Jannersten) Windows deal file, Show or Sealed"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        nbs = numbered(boards)
        by_number: dict[int, Deal] = {}
        for nb in nbs:
            if not 1 <= nb.board <= MAX_BOARD:
                raise FormatError(
                    "DLM holds boards 1..{MAX_BOARD}; board {board} does not fit", MAX_BOARD=MAX_BOARD, board=nb.board
                )
            if nb.board in by_number:
                raise FormatError("board {board} appears twice; a DLM file holds each board once", board=nb.board)
            by_number[nb.board] = nb.deal
        first = min(by_number, default=1)
        last = max(by_number, default=0)
        copies = meta.copies
        show = not meta.sealed
        headline = latin(meta.event or "bridge-dealer").replace("\r", " ").replace("\n", " ")
        lines = [
            "[Document]",
            f"Headline={headline}",
            f"Status={'Show' if show else 'Sealed'}",
            f"Duplicates={copies}",
            f"From board={first}",
            f"To board={last}",
            "Next board to duplimate=0",
            "PrintOuts=0",
            "Crypto key=0",
            f"Checksum={header_checksum(copies, first, last, show)}",
        ]
        for nn in range(1, MAX_BOARD + 1):
            deal = by_number.get(nn)
            letters = encode_letters(deal) if deal is not None else FILLER
            lines.append(f"Duplicates {nn:02d}=0")
            lines.append(f"Board {nn:02d}={letters}{board_checksum(nn, letters):03d}")
        return ("\r\n".join(lines) + "\r\n").encode("latin-1", errors="replace")

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        text = data.decode("latin-1")
        check_line_length(text, source)
        result = ReadResult()
        header: dict[str, tuple[str, int]] = {}
        board_lines: dict[int, tuple[str, int]] = {}
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith(("[", ";")) or "=" not in line:
                continue
            key, value = (part.strip() for part in line.split("=", 1))
            low = key.lower()
            if low.startswith("board ") and low[6:].strip().isdecimal():
                if len(low[6:].strip()) > MAX_INT_DIGITS:
                    raise FormatError(
                        "{source}: line {lineno}: {key!r}… is not a board number",
                        source=source,
                        lineno=lineno,
                        key=key[:40],
                    )
                nn = int(low[6:])
                if nn in board_lines:
                    raise FormatError(
                        "{source}: line {lineno}: board {nn} appears twice (first at line {board_lines})",
                        source=source,
                        lineno=lineno,
                        nn=nn,
                        board_lines=board_lines[nn][1],
                    )
                board_lines[nn] = (value, lineno)
            else:
                header[low] = (value, lineno)

        def number(key: str) -> tuple[int, int]:
            if key not in header:
                raise FormatError("{source}: the [Document] header has no {key!r} line", source=source, key=key)
            value, lineno = header[key]
            if not value.lstrip("-").isdecimal() or len(value) > MAX_INT_DIGITS:
                raise FormatError(
                    "{source}: line {lineno}: {key} = {value!r} is not a number",
                    source=source,
                    lineno=lineno,
                    key=key,
                    value=value[:40],
                )
            return int(value), lineno

        first, _ = number("from board")
        last, last_line = number("to board")
        duplicates = number("duplicates")[0] if "duplicates" in header else 1
        status = header.get("status", ("Show", 0))[0].lower()
        if status not in ("show", "sealed"):
            raise FormatError(
                "{source}: line {header}: Status={status!r}, expected Show or Sealed",
                source=source,
                header=header["status"][1],
                status=status,
            )
        if not 1 <= first <= last <= MAX_BOARD and not (first == 1 and last == 0):
            raise FormatError(
                "{source}: line {last_line}: boards {first}..{last} are not a range within 1..{MAX_BOARD}",
                source=source,
                last_line=last_line,
                first=first,
                last=last,
                MAX_BOARD=MAX_BOARD,
            )
        if "checksum" in header:
            given, lineno = number("checksum")
            want = header_checksum(duplicates, first, last, status == "show")
            if given != want:
                result.problems.append(
                    ReadProblem(
                        f"header checksum is {given}, expected {want} (Duplicates XOR From XOR To XOR Show)",
                        line=lineno,
                    )
                )
        for nn in range(first, last + 1):
            if nn not in board_lines:
                result.problems.append(
                    ReadProblem(f"no 'Board {nn:02d}=' line though From..To is {first}..{last}", board=nn)
                )
                continue
            value, lineno = board_lines[nn]
            letters, digits = value[:26], value[26:]
            try:
                if len(letters) != 26 or not digits.isdecimal() or len(digits) > 3:
                    raise FormatError("'{value}' is not 26 letters and a checksum", value=value)
                want = board_checksum(nn, letters)
                if int(digits) != want:
                    raise FormatError(
                        "checksum {digits} does not match the letters (expected {want:03d})", digits=digits, want=want
                    )
                deal = decode_letters(letters)
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=nn, line=lineno, error=exc))
                continue
            result.records.append(law2_record(deal, nn, line=lineno))
        return result


register(DlmFormat())
