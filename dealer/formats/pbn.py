"""PBN (Portable Bridge Notation): a tolerant reader for real files and a strict PBN 2.1 export writer.

Reader (import format): tag pairs in any order, with or without a space (``[Event"x"]``); ``{…}`` and ``;``
comments and ``%`` lines skipped; UTF-8 or Latin-1; games separated by empty lines (a repeated ``Board`` or
``Deal`` tag also starts a new game); ``"#"`` inherits the previous game's value (PBN §4.8); any first seat in
``Deal``, ``-`` for one unknown hand, ``10`` for ``T``; ``Vulnerable`` also Love/-/Both. A game with a
``Board`` tag but no usable deal is reported with its line, never dropped silently. Sections of tags named
``…Table`` (e.g. ``OptimumResultTable``) are kept in the tag value after a newline.

Writer (export format): ``% PBN 2.1``, ``% EXPORT``, the 15 mandatory tags in order (``"?"`` when unknown,
``""`` when not applicable to a dealt board), the deal listed from the dealer, then the other tags of
``BoardRecord.tags`` sorted by name; CRLF line ends; an empty line between games. Latin-1 (the standard's
character set) when every character fits, otherwise UTF-8 with a byte-order mark. The reader takes a file as
UTF-8 when it decodes as UTF-8, else as Latin-1: Latin-1 text that happens to be valid UTF-8 (a capital
accented letter followed by a symbol in 0x80–0xBF, e.g. "Ã©") is read as UTF-8.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from dealer.core import Deal, Seat, Vulnerability, board_dealer, board_vulnerability, parse_pbn_deal
from dealer.core.deal import fast_pbn_deal
from dealer.core.errors import DealError, Phrase

from .base import BoardRecord, ExportMeta, FormatError, ReadProblem, ReadResult, check_line_length, register, small_int

MANDATORY_TAGS = (
    "Event",
    "Site",
    "Date",
    "Board",
    "West",
    "North",
    "East",
    "South",
    "Dealer",
    "Vulnerable",
    "Deal",
    "Scoring",
    "Declarer",
    "Contract",
    "Result",
)
_MANDATORY = frozenset(MANDATORY_TAGS)

# One pass over the text; the first alternative that matches at the leftmost position wins, so a "[" or ";"
# inside a tag value belongs to the tag and a "[" inside a comment belongs to the comment.
_TOKEN = re.compile(
    r'\[[ \t]*([A-Za-z0-9_]+)[ \t]*"([^"\\\n]*(?:\\.[^"\\\n]*)*)"[ \t]*\]'  # 1, 2: tag pair
    r"|(\n[ \t]*(?=\n))"  # 3: empty line = end of game
    r"|(\{[^}]*\}?)"  # 4: {comment}
    r"|(;[^\n]*)"  # 5: ; comment to end of line
    r"|(^%[^\n]*)"  # 6: % escape line
    r"|(\[[^\]\n]*\]?)",  # 7: a malformed tag
    re.MULTILINE,
)
_TAG = re.compile(r'\[[ \t]*([A-Za-z0-9_]+)[ \t]*"([^"\\\n]*)"[ \t]*\]')
_BLANK = re.compile(r"\n[ \t]*\n")
_SECTION = re.compile(r"(?:\n(?![ \t]*\n|[ \t]*\[|%)[^\n]*)*")
_ESCAPE = re.compile(r'\\([\\"])')  # PBN strings escape only \\ and \"; "\2R" in a table header stays
_NEEDS_ESCAPE = re.compile(r'\\(?=[\\"]|$)')  # a backslash the reader would otherwise take as an escape
_DIGITS = re.compile(r"\d+")


def decode_text(data: bytes, source: str = "<input>", normalise: bool = True) -> str:
    """UTF-8 when the bytes are valid UTF-8 (BOM dropped), UTF-16 after its byte-order mark, otherwise Latin-1;
    newlines normalised to LF (unless ``normalise`` is false). A line over ``MAX_LINE_CHARS`` is a FormatError."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise FormatError(
                "{source}: byte {start} is not UTF-16 text (the file starts with its mark)",
                source=source,
                start=exc.start,
            ) from exc
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    check_line_length(text, source)
    if normalise and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def parse_deal_value(value: str) -> Deal:
    """A PBN ``Deal`` tag value as a complete deal (one ``-`` hand is filled in); DealError says why not."""
    deal = fast_pbn_deal(value)
    if deal is not None:
        return deal
    return parse_pbn_deal(value, allow_partial=True).complete()


def _board_number(value: str) -> int | None:
    if value.isascii() and value.isdigit():
        return small_int(value)
    m = _DIGITS.search(value)
    return small_int(m.group()) if m else None


class PbnFormat:
    name = "pbn"
    extensions: tuple[str, ...] = ("pbn",)
    description = "Portable Bridge Notation 2.1 (tistis.nl/pbn): tolerant import, strict export"
    can_read = True
    can_write = True

    # -- reading -----------------------------------------------------------------------------------
    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        reader = _Reader()
        for game in games(decode_text(data, source)):
            reader.finish(*game)
        return reader.result

    # -- writing -----------------------------------------------------------------------------------
    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        lines = ["% PBN 2.1", "% EXPORT"]
        for rec in boards:
            lines.append("")
            lines.extend(self._game(rec, meta))
        text = "\r\n".join(lines) + "\r\n"
        try:
            return text.encode("latin-1")  # the standard's character set
        except UnicodeEncodeError:  # e.g. a Russian event name: UTF-8, marked by a BOM so readers can tell
            return b"\xef\xbb\xbf" + text.encode("utf-8")

    def _game(self, rec: BoardRecord, meta: ExportMeta) -> list[str]:
        tags = rec.tags
        dealer = rec.dealer
        if dealer is None and rec.board is not None:
            dealer = board_dealer(rec.board)
        vul = rec.vulnerability
        if vul is None and rec.board is not None:
            vul = board_vulnerability(rec.board)
        values = {
            "Event": tags.get("Event") or meta.event or "?",
            "Site": tags.get("Site") or meta.site or "?",
            "Date": tags.get("Date") or meta.date or "?",
            "Board": str(rec.board) if rec.board is not None else "?",
            "West": tags.get("West") or "?",
            "North": tags.get("North") or "?",
            "East": tags.get("East") or "?",
            "South": tags.get("South") or "?",
            "Dealer": dealer.letter if dealer is not None else "?",
            "Vulnerable": vul.pbn if vul is not None else "?",
            "Deal": rec.deal.to_pbn(dealer if dealer is not None else Seat.N),
            "Scoring": tags.get("Scoring", ""),
            "Declarer": tags.get("Declarer", ""),
            "Contract": tags.get("Contract", ""),
            "Result": tags.get("Result", ""),
        }
        out = [_tag(name, values[name]) for name in MANDATORY_TAGS]
        for name in sorted(k for k in tags if k not in _MANDATORY):
            value, *section = tags[name].split("\n")
            out.append(_tag(name, value))
            out.extend(section)
        return out


def games(text: str) -> Iterator[tuple[int, dict[str, str], str | None]]:
    """The games of a decoded PBN text in file order: (line of their first tag, tags, problem with a malformed
    Deal tag), before ``"#"`` inheritance. Clean blocks between empty lines take a fast path; a block with
    comments, escapes, sections, repeated or malformed tags is scanned token by token."""
    if "{" in text:  # a comment may hold empty lines: scan the whole text token by token
        yield from _scan(text, 1)
        return
    line = 1
    for chunk in _BLANK.split(text):
        pairs = _TAG.findall(chunk)
        if pairs:
            tags = dict(pairs)
            if (
                len(tags) != len(pairs)
                or chunk.count("[") != len(pairs)
                or any(ch in chunk for ch in ";%\\")
                or chunk.count("Table") > chunk.count("[Table ")  # a …Table section, not the Table tag
            ):
                yield from _scan(chunk, line)
            else:
                yield line + chunk.count("\n", 0, chunk.index("[")), tags, None
        line += chunk.count("\n") + 2


def _scan(text: str, first_line: int) -> list[tuple[int, dict[str, str], str | None]]:
    """Token-by-token scan: games as (line of their first tag, tags, problem with a malformed Deal tag)."""
    games: list[tuple[int, dict[str, str], str | None]] = []
    tags: dict[str, str] = {}
    bad: str | None = None
    start_line = line = first_line
    counted = 0  # text position up to which newlines are counted into ``line``
    pos = 0
    while (m := _TOKEN.search(text, pos)) is not None:
        pos = m.end()
        kind = m.lastindex
        if kind in (2, 7):
            line += text.count("\n", counted, m.start())
            counted = m.start()
        if kind == 2:
            name, value = m.group(1), m.group(2)
            if "\\" in value:
                value = _ESCAPE.sub(r"\1", value)
            if name in tags:
                if name != "Deal" and name != "Board":
                    continue  # PBN: a repeated tag in a game is ignored
                games.append((start_line, tags, bad))  # tolerate a missing empty line between games
                tags, bad = {}, None
            if not tags:
                start_line = line
            if name.endswith("Table"):
                section = _SECTION.match(text, pos)
                if section is not None and section.end() > pos:
                    rows = [r.strip() for r in section.group().split("\n") if r.strip()]
                    value = "\n".join([value, *rows])
                    pos = section.end()
            tags[name] = value
        elif kind == 3:
            if tags or bad:
                games.append((start_line, tags, bad))
                tags, bad = {}, None
        elif kind == 7:
            if not tags:
                start_line = line
            if m.group(7).lstrip("[ \t").lower().startswith("deal"):
                bad = f"malformed Deal tag {m.group(7)[:80]!r}"
    if tags or bad:
        games.append((start_line, tags, bad))
    return games


class _Reader:
    """Turns scanned games into board records and problems, applying ``"#"`` inheritance in file order."""

    def __init__(self) -> None:
        self.result = ReadResult()
        self.previous: dict[str, str] = {}
        self.deals: dict[str, Deal] = {}  # the same Deal value (open and closed room) is parsed once

    def finish(self, line: int, tags: dict[str, str], bad: str | None) -> None:
        previous = self.previous
        if "#" in tags.values():
            tags = {k: previous.get(k, v) if v == "#" else v for k, v in tags.items()}
        previous.update(tags)
        board_text = tags.get("Board")
        board = _board_number(board_text) if board_text is not None else None
        value = tags.get("Deal")
        if value is None:
            if bad is not None:
                self.result.problems.append(ReadProblem(bad, board, line))
            elif board_text is not None:
                self.result.problems.append(
                    ReadProblem(
                        "game has a Board tag but no Deal tag",
                        board,
                        line,
                        error=Phrase("game has a Board tag but no Deal tag"),
                    )
                )
            return
        deal = self.deals.get(value)
        if deal is None:
            try:
                deal = parse_deal_value(value)
            except DealError as exc:
                self.result.problems.append(
                    ReadProblem(
                        f"Deal {value!r}: {exc}",
                        board,
                        line,
                        error=Phrase("Deal {value!r}: {exc}", value=value, exc=exc),
                    )
                )
                return
            self.deals[value] = deal
        dealer = _parsed(Seat.parse, tags.get("Dealer"))
        vul = _parsed(Vulnerability.parse, tags.get("Vulnerable"))
        self.result.records.append(BoardRecord(deal, board, dealer, vul, line, None, tags))


_T = TypeVar("_T")


@functools.cache
def _parsed(parse: Callable[[str], _T], value: str | None) -> _T | None:
    """``parse(value)``, or None when the value is absent or not understood (the deal is kept)."""
    if value is None:
        return None
    try:
        return parse(value)
    except ValueError:
        return None


def _tag(name: str, value: str) -> str:
    escaped = _NEEDS_ESCAPE.sub(r"\\\\", value).replace('"', '\\"')
    return f'[{name} "{escaped}"]'


PBN = register(PbnFormat())
