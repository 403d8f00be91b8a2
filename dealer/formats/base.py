"""What every deal-file format offers, and the registry by name and extension.

A format reads bytes into board records plus the problems it met (never silently dropping a deal), and
writes board records to bytes. Each format is one module in ``dealer/formats/`` that calls ``register``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import AnyStr, Protocol

from dealer.core import Deal, Seat, Vulnerability
from dealer.core.errors import DealerError, Phrase


class FormatError(DealerError, ValueError):
    """A file cannot be read at all (structure broken); names the file, board and line or byte offset."""


# Reader limits (documented in docs/formats.md): real deal files stay far below them; hostile ones are refused
# with a FormatError naming the place instead of being read for minutes or exhausting memory.
MAX_LINE_CHARS = 100_000  # a line of a text format (PBN, LIN, DLM, CSV, BHG)
MAX_FIELD_CHARS = 10_000  # a CSV field, a JSON string
MAX_JSON_DEPTH = 32  # nesting of JSON arrays and objects
MAX_INT_DIGITS = 20  # digits of a JSON integer


def small_int(digits: str) -> int | None:
    """A run of decimal digits as an int, or None past ``MAX_INT_DIGITS`` (no 4,300-digit conversion error)."""
    return int(digits) if len(digits) <= MAX_INT_DIGITS else None


# tried only where a line starts (after a line end or at the start), so the scan stays linear in the text
_LONG_LINE = re.compile(f"(?<![^\n\r])[^\n\r]{{{MAX_LINE_CHARS + 1}}}")


_HALF_LINE = MAX_LINE_CHARS // 2


def may_hold_a_long_line(text: AnyStr) -> bool:
    """False when no line of ``text`` can be over ``MAX_LINE_CHARS``, told from a line end in every aligned span
    of half that size (a find each, where the exact search tries a pattern at every line start): a line of
    ``MAX_LINE_CHARS`` or more covers one such span whole. True: the exact search decides (a line between half
    the limit and the limit is allowed)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    spans = range(0, len(text) - _HALF_LINE + 1, _HALF_LINE)  # whole spans only: a long line covers one whole
    return any(text.find(newline, start, start + _HALF_LINE) < 0 for start in spans)


def check_line_length(text: str, source: str = "<input>") -> None:
    """Refuse a text with a line over ``MAX_LINE_CHARS`` (one linear scan, no copy of the lines)."""
    if len(text) <= MAX_LINE_CHARS or not may_hold_a_long_line(text):  # most files: no search at all
        return
    m = _LONG_LINE.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        raise FormatError(
            "{source}: line {line} is longer than {MAX_LINE_CHARS:,} characters",
            source=source,
            line=line,
            MAX_LINE_CHARS=MAX_LINE_CHARS,
        )


_UTF16_32 = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def no_deals_reason(data: bytes, problems: Sequence[ReadProblem], fmt_name: str) -> Phrase:
    """Why a file gave no deal at all, for the error that refuses it: empty, encoding, binary or format."""
    if not data.strip():
        return Phrase("the file is empty") if not data else Phrase("the file holds only blank space")
    if not data.strip(b"\x00"):
        return Phrase("the file holds only NUL bytes ({n} of them)", n=len(data))
    if data.startswith(_UTF16_32) or data[:64].count(b"\x00") >= 8:
        return Phrase("encoding: the text is UTF-16 or UTF-32 (or binary); save it as UTF-8 or Latin-1")
    if problems:
        first = problems[0]
        return Phrase(
            "no deal could be read: {n} record(s) with problems, first at {where}: {reason}",
            n=len(problems),
            where=first.where_phrase(),
            reason=first.reason_phrase(),
        )
    head = data[:4096]
    controls = sum(1 for b in head if b < 32 and b not in b"\t\r\n\x0c\x1a")
    if controls > len(head) // 20:
        return Phrase("format: binary data, not a {format} deal file", format=fmt_name.upper())
    return Phrase("format: no {format} deal found in the file", format=fmt_name.upper())


@dataclass(frozen=True, slots=True)
class BoardRecord:
    deal: Deal
    board: int | None = None
    dealer: Seat | None = None
    vulnerability: Vulnerability | None = None
    line: int | None = None  # 1-based line where the record starts (text formats)
    offset: int | None = None  # byte offset of the record (binary formats)
    tags: Mapping[str, str] = field(default_factory=dict)  # e.g. Event, Site, DoubleDummyTricks


@dataclass(frozen=True, slots=True)
class ReadProblem:
    reason: str
    board: int | None = None
    line: int | None = None
    offset: int | None = None
    error: object = field(default=None, compare=False)  # the error (or Phrase) behind ``reason``, to translate it

    def where(self) -> str:
        return str(self.where_phrase())

    def where_phrase(self) -> Phrase:
        """Where the record is, as a phrase the catalogues translate: ``board 3, line 12``."""
        b, n, o = self.board, self.line, self.offset
        if b is not None and n is not None and o is not None:
            return Phrase("board {board}, line {line}, byte {offset}", board=b, line=n, offset=o)
        if b is not None and n is not None:
            return Phrase("board {board}, line {line}", board=b, line=n)
        if b is not None and o is not None:
            return Phrase("board {board}, byte {offset}", board=b, offset=o)
        if n is not None and o is not None:
            return Phrase("line {line}, byte {offset}", line=n, offset=o)
        if b is not None:
            return Phrase("board {board}", board=b)
        if n is not None:
            return Phrase("line {line}", line=n)
        if o is not None:
            return Phrase("byte {offset}", offset=o)
        return Phrase("file")

    def reason_phrase(self) -> object:
        return self.error if self.error is not None else self.reason


@dataclass(slots=True)
class ReadResult:
    records: list[BoardRecord] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ExportMeta:
    event: str = ""
    site: str = ""
    date: str = ""  # YYYY.MM.DD as PBN has it
    sealed: bool = False  # DLM: Status=Sealed
    copies: int = 1


class DealFormat(Protocol):
    name: str  # short name used on the command line: "pbn", "dlm", ...
    extensions: tuple[str, ...]  # without the dot, lower case
    description: str
    can_read: bool
    can_write: bool

    def read(self, data: bytes, source: str = "<input>") -> ReadResult: ...

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes: ...


_REGISTRY: dict[str, DealFormat] = {}


def register(fmt: DealFormat) -> DealFormat:
    _REGISTRY[fmt.name] = fmt
    return fmt


def formats() -> dict[str, DealFormat]:
    return dict(_REGISTRY)


def by_name(name: str) -> DealFormat:
    key = name.lower().lstrip(".")
    if key in _REGISTRY:
        return _REGISTRY[key]
    for fmt in _REGISTRY.values():
        if key in fmt.extensions:
            return fmt
    known = ", ".join(sorted(_REGISTRY))
    raise FormatError("unknown format {name!r}: known formats are {known}", name=name, known=known)


def by_path(path: str) -> DealFormat:
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    for fmt in _REGISTRY.values():
        if suffix in fmt.extensions:
            return fmt
    known = ", ".join(sorted({f".{ext}" for fmt in _REGISTRY.values() for ext in fmt.extensions}))
    raise FormatError("cannot tell the format of {path!r} from its extension (known: {known})", path=path, known=known)
