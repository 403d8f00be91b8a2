"""The PBN reader's import path: only what an import keeps of each game (line, board, deal), at C speed.

``PBN.read`` builds a full ``BoardRecord`` (every tag, dealer, vulnerability) per game; an import of thousands
of championship files needs three things per game and the problems. ``scan`` gives exactly what ``PBN.read``
gives for those (same games, same lines, boards and deals, the same problems with the same reasons), faster:

* a file's bytes (``_scan_bytes``: once its comments are blanked, every ``[`` starting a line or on a line of
  whole tags, a backslash only in a ``%`` line or another tag's value, and the words "board" and "deal" in any
  case only in its ``[Board "…"]``, ``[Deal "…"]`` and ``[Dealer "…"]`` tags, one of each per block, each closed
  on its line; CRLF and lone CR line ends as the reader takes them) are read in a handful of C passes
  over the whole file: each kind of comment found by one search for its mark and blanked, the tags' values
  taken by one search, the blocks between empty lines made into the games' columns by ``map`` (no Python
  code per game, but for the unusual ones); UTF-8 or Latin-1, with or without a BOM, are read alike;
* a file whose bytes that path leaves (UTF-16, a comment mark that may be inside a tag or a ``%`` line, a
  value to read or name that is not ASCII) is decoded (``_scan_text``) and read by the same passes on its text's
  UTF-8, a doubtful comment mark settled by the reader's own tokens: as fast as the bytes path;
* any other text (or a check failing half-way) goes through the reader's own games (``pbn.games``), so the
  strict reader decides;
* a ``Deal`` value is parsed once per import (``DealCache``): the same deal of the open and closed room, or of
  the same board in many files, costs a dictionary look-up.

The deals are canonical 13-byte forms (``Deal.to_bytes``), the bank's key, so no ``Deal`` object is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat
from operator import add, ne
from typing import cast

from dealer.core.cards import RANK_CHARS
from dealer.core.errors import DealError

from .base import _LONG_LINE, MAX_LINE_CHARS, ReadProblem, may_hold_a_long_line
from .pbn import _BLANK, _SECTION, _TOKEN, _board_number, decode_text, games, parse_deal_value

# Canonical form as one 104-bit number: card i (suit * 13 + rank) holds its seat in bits 103-2i .. 102-2i.
_FULL = sum(1 << (102 - 2 * i) for i in range(52))
_HOLDINGS: list[dict[str, int]] = [{}, {}, {}, {}]  # per suit: holding text -> its cards' bits (seat 1)
_RANK = {ch: i for i, ch in enumerate(RANK_CHARS)}
_FIRST = {"N": 0, "E": 1, "S": 2, "W": 3}
LEARN_ALL = 512  # holdings of a suit learnt one by one before all are (each costs ~2 µs, all of them ~5 ms)


def _holding(suit: int, text: str) -> int:
    """The bits of a holding such as ``AKT2`` in ``suit`` (upper case ranks, each once), or -1."""
    bits = 0
    for ch in text:
        r = _RANK.get(ch)
        if r is None:
            return -1
        bit = 1 << (102 - 2 * (suit * 13 + r))
        if bits & bit:
            return -1
        bits |= bit
    return bits


def _learn(suit: int, text: str) -> int:
    """The bits of ``text`` in ``suit`` (``_holding``), kept for the next deal (up to a bound). Once a suit has
    learnt ``LEARN_ALL`` holdings one by one, every holding in the usual order is put in at once
    (``learn_every_holding``, a few milliseconds): an import of many new deals then finds nearly all of them."""
    known = _HOLDINGS[suit]
    bits = known.get(text)
    if bits is None:
        if len(known) == LEARN_ALL:
            learn_every_holding()
            bits = known.get(text)
            if bits is not None:
                return bits
        bits = _holding(suit, text)
        if len(known) < 65536:
            known[text] = bits
    return bits


def learn_every_holding() -> None:
    """Put every holding written in the usual order (``AKT2``, ``""`` for a void) in the table ``_learn`` fills:
    8,192 a suit, a few milliseconds. A large import calls it before it forks its readers, which then find
    them all (a collection of new deals would otherwise make each of them learn most of them: 32,768 calls to
    ``_holding``); a holding written in another order is still learnt when met."""
    texts, values = [""], [0]
    for r in range(len(RANK_CHARS) - 1, -1, -1):  # each rank before the lower ones already there: the usual order
        char, bit = RANK_CHARS[r], 1 << (102 - 2 * r)
        texts += [char + text for text in texts]
        values += [value | bit for value in values]
    for suit, known in enumerate(_HOLDINGS):
        known.update(zip(texts, [value >> (26 * suit) for value in values], strict=True))


def canonical_of(value: str) -> bytes | None:
    """``X:h h h h`` with four full hands as the canonical 13 bytes; None for anything else (then the
    reference parser decides and names the problem). Each card once and 13 per hand is checked exactly: the
    four hands' bits add up to one bit per card only when no card is missing or repeated."""
    if len(value) < 2 or value[1] != ":":
        return None
    first = _FIRST.get(value[0])
    hands = value[2:].split()
    if first is None or len(hands) != 4:
        return None
    total = 0
    canonical = 0
    spades, hearts, diamonds, clubs = _HOLDINGS
    for k, hand in enumerate(hands):
        if len(hand) != 16:  # 13 ranks and 3 dots
            return None
        suits = hand.split(".")
        if len(suits) != 4:
            return None
        s, h, d, c = suits  # a look-up a suit (a holding met before: nearly all of them after a few deals)
        b0, b1, b2, b3 = spades.get(s), hearts.get(h), diamonds.get(d), clubs.get(c)
        if b0 is None or b1 is None or b2 is None or b3 is None:
            b0, b1, b2, b3 = _learn(0, s), _learn(1, h), _learn(2, d), _learn(3, c)
        bits = b0 | b1 | b2 | b3
        if bits < 0:  # a holding that is not one (-1 | anything is -1)
            return None
        total += bits
        canonical += ((first + k) & 3) * bits
    if total != _FULL:
        return None
    return canonical.to_bytes(13, "big")


@dataclass(slots=True)
class DealCache:
    """Deal values already parsed in this import: value -> canonical bytes, or the parser's reason; ``raw``
    the same by the value's bytes as the file holds them (the bytes path never decodes a value it met)."""

    known: dict[str, bytes | str] = field(default_factory=dict)
    raw: dict[bytes, bytes | str] = field(default_factory=dict)

    def canonical(self, value: str) -> bytes | str:
        found = self.known.get(value)
        if found is None:
            fast = canonical_of(value)
            if fast is not None:
                found = fast
            else:
                try:
                    found = parse_deal_value(value).to_bytes()
                except DealError as exc:
                    found = str(exc)
            self.known[value] = found
        return found


@dataclass(slots=True)
class ScannedDeals:
    """The deals of one file in order, as columns; ``problems`` as ``PBN.read`` reports them."""

    lines: list[int | None] = field(default_factory=list)
    boards: list[int | None] = field(default_factory=list)
    deals: list[bytes] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.deals)


class _Collector:
    """Applies ``"#"`` inheritance to Board and Deal and turns each game into a deal or a problem."""

    def __init__(self, cache: DealCache) -> None:
        self.out = ScannedDeals()
        self.cache = cache
        self.board: str | None = None  # the previous game's Board and Deal (after inheritance)
        self.deal: str | None = None

    def game(self, line: int, board_text: str | None, value: str | None, bad: str | None) -> None:
        if board_text is not None:
            if board_text == "#" and self.board is not None:
                board_text = self.board
            self.board = board_text
        if value is not None:
            if value == "#" and self.deal is not None:
                value = self.deal
            self.deal = value
        board = _number(board_text) if board_text is not None else None
        out = self.out
        if value is None:
            if bad is not None:
                out.problems.append(ReadProblem(bad, board, line))
            elif board_text is not None:
                out.problems.append(ReadProblem("game has a Board tag but no Deal tag", board, line))
            return
        canonical = self.cache.canonical(value)
        if isinstance(canonical, str):
            out.problems.append(ReadProblem(f"Deal {value!r}: {canonical}", board, line))
            return
        out.lines.append(line)
        out.boards.append(board)
        out.deals.append(canonical)


_BOARDS: dict[str, int | None] = {}


def _number(text: str) -> int | None:
    """``_board_number``, remembered (a file's board numbers repeat in every room and every file)."""
    try:
        return _BOARDS[text]
    except KeyError:
        number = _board_number(text)
        if len(_BOARDS) < 4096:
            _BOARDS[text] = number
        return number


# a tag whose name holds "board" or "deal" in any case, at a line's start or after another tag on its line (where
# the reader's tags start once each line holding a "[" inside is one of whole tags): what the fast path must count
_NAMED = re.compile(
    r"(?:^[ \t]*|\][ \t]*)\[[ \t]*[A-Za-z0-9_]*?(?:[Bb][Oo][Aa][Rr][Dd]|[Dd][Ee][Aa][Ll])", re.MULTILINE
)
# a ``…Table`` tag and the rows after it, which the reader takes as its value (comment marks and all)
_TABLE = re.compile(  # from the name's end: a search for a word, not an attempt at every "["
    r'Table[ \t]*"[^"\\\n]*(?:\\.[^"\\\n]*)*"[ \t]*\]' f"({_SECTION.pattern})", re.MULTILINE
)


def _rows_close_their_comments(text: str) -> bool:
    """Whether every comment that starts in a ``…Table`` tag's rows ends in them. The reader reads those rows
    raw, not as tokens; blanking the comments the tokens find there changes no tag, empty line or line only
    when none runs past the rows (the rows start where a token ends, so their tokens are the text's)."""
    for m in _TABLE.finditer(text):  # anywhere (a tag inside a line leaves the fast path anyway)
        rows = m.group(1)
        if rows and "{" in rows:
            for token in _TOKEN.finditer(rows):
                if token.lastindex == 4 and not token.group(4).endswith("}"):
                    return False
    return True


# a comment as the reader's tokens are (``pbn._TOKEN``'s 4 and 5), where nothing before it holds it; a "%" line
# (its 6) matters only where it holds one of these marks (a search for a mark is a search for one of two
# characters; a "^" in the pattern would make it try every position)
_COMMENT = re.compile(r"\{[^}]*\}?|;[^\n]*")
# whole tags (escapes in their values as the reader's, ``_TOKEN``'s 1 and 2) and blanks: the reader's tokens there
# are these tags, each ending where it does here (a blank starts no token inside a line)
_TAGS_ONLY = re.compile(r'(?:[ \t]*\[[ \t]*[A-Za-z0-9_]+[ \t]*"[^"\\\n]*(?:\\.[^"\\\n]*)*"[ \t]*\])+[ \t]*')


def _blank(comment: str) -> str:
    """A comment as the fast path sees it: a line of ``x`` for each of its lines (the same lines, no empty line,
    no tag, no word)."""
    return "x" if "\n" not in comment else "\n".join(["x"] * (comment.count("\n") + 1))


def _blank_comments(text: str) -> str | None:
    """``text`` (newlines normalised as the reader does) with its comments blanked (``_blank``) where the reader's
    tokens (``pbn._TOKEN``) find them: the same tags on the same lines, in the same blocks. None when a comment
    starting in a ``…Table`` tag's rows runs past them (``_rows_close_their_comments``): the reader decides then.

    Only the places where a comment may start are looked at, not every token: a line starts at a token's
    boundary (only comments span lines, and those are skipped whole), so the reader's tokens from the start of
    a mark's line tell whether the mark starts a comment or is inside a tag."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "Table" in text and not _rows_close_their_comments(text):
        return None
    parts: list[str] = []
    done = 0  # the text before this is copied (or blanked)
    search = _TOKEN.search
    find = text.find
    comment = _COMMENT.search
    tags_only = _TAGS_ONLY.fullmatch
    while (m := comment(text, done)) is not None:
        at, end = m.span()
        start = text.rfind("\n", 0, at) + 1
        if start >= done and text.startswith("%", start):  # a "%" line: the reader's comment up to its end
            end = find("\n", at)
            end = len(text) if end < 0 else end
            parts.append(text[done:start])
            parts.append("x")
            done = end
            continue
        line = done if done > start else start  # a token boundary
        if find("[", line, at) >= 0 and tags_only(text, line, at) is None:  # a tag before it may hold it
            token = search(text, line)  # the reader's tokens from the boundary tell
            while token is not None and token.end() <= at:
                token = search(text, token.end())
            if token is None or token.start() != at or token.lastindex not in (4, 5):
                parts.append(text[done : at + 1])  # inside a tag (or a malformed one): not a comment
                done = at + 1
                continue
        parts.append(text[done:at])
        parts.append(_blank(m.group()))
        done = end
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


def scan(data: bytes, source: str = "<input>", cache: DealCache | None = None) -> ScannedDeals:
    """The deals of a PBN file as ``PBN.read`` reads them (FormatError as it raises them)."""
    cache = cache if cache is not None else DealCache()
    fast = _scan_bytes(data, cache)
    if fast is not None:
        return fast
    return _scan_text(decode_text(data, source, normalise=False), cache)


def _scan_text(text: str, cache: DealCache) -> ScannedDeals:
    """``scan`` on the decoded text (any file ``_scan_bytes`` leaves to it): the same passes on the text's UTF-8
    bytes (everything they look at is ASCII, and UTF-8 spells every other character in bytes that are not), the
    values the columns need decoded back; a comment mark that may be inside a tag is settled by the reader's own
    tokens (``_blank_comments``). Anything else unusual (a Deal, Board or Dealer value with an escape, a line
    holding a ``[`` inside that is not one of whole tags) goes through the reader's games (``_by_games``)."""
    plain = text
    if "\r" in text:  # line ends as the reader's (a lone CR ends a line too)
        plain = text.replace("\r\n", "\n").replace("\r", "\n")
    data = plain.encode("utf-8")
    if "{" in plain or ";" in plain:
        blanked = _blank_comments_b(data)
        if blanked is None:
            careful = _blank_comments(plain)
            if careful is None:
                return _by_games(text, cache)
            blanked = careful.encode("utf-8")
        data = blanked
    found = _columns(data, cache, utf8=True)
    return _by_games(text, cache) if found is None else found


# the bytes path: the text path's passes on the file's bytes, before (and mostly instead of) decoding them
# a well-formed tag as the reader's tokens take it (``_TOKEN``'s 1 and 2: escapes in its value): a game's line
_TAG_LINE_B = re.compile(rb'\[[ \t]*([A-Za-z0-9_]+)[ \t]*"([^"\\\n]*(?:\\.[^"\\\n]*)*)"[ \t]*\]')
_BLANK_B = re.compile(_BLANK.pattern.encode())
_BLANK_CRLF_B = re.compile(rb"\r\n[ \t]*\r\n")  # an empty line of CRLF text (its blocks need no copy in LF)
_LONG_LINE_B = re.compile(_LONG_LINE.pattern.encode())
_NAMED_B = re.compile(_NAMED.pattern.encode(), re.MULTILINE)
_TOKEN_B = re.compile(_TOKEN.pattern.encode(), re.MULTILINE)
_TABLE_B = re.compile(_TABLE.pattern.encode(), re.MULTILINE)
# split: the text between comments of one kind, and them (a search for one mark is a memchr, for either of two
# a test of every byte: one pass for each kind costs less than one for both)
_BRACES_B = re.compile(rb"(\{[^}]*\}?)")
_SEMICOLONS_B = re.compile(rb"(;[^\n]*)")
# the well-formed tags the bytes path takes its values from (closed on their line, no quote or backslash in the
# value: one the reader would unescape is not one of these, so it leaves the counts of ``_columns`` unequal)
_VALUES_B = re.compile(rb'\[(Deal|Board|Dealer) "([^"\n\\]*)"\]')
_INSIDE_B = re.compile(rb"\[(?<=[^\n]\[)")  # a "[" inside a line (the search looks for "[" only)
_BEFORE_MARK = re.compile(rb"(?:[^\[%\n;][^\[\n;]*)?|" + _TAGS_ONLY.pattern.encode())
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16 = (b"\xff\xfe", b"\xfe\xff")  # the text path decodes those
_XS = [b"x" + b"\nx" * k for k in range(64)]  # a comment of k + 1 lines, blanked (``_blank``)


def _scan_bytes(data: bytes, cache: DealCache) -> ScannedDeals | None:
    """``_scan_text(decode_text(data))`` without decoding, for a file whose comments are plainly comments and
    whose every game is read without a problem; None for anything else (then the text path decides, problems
    and errors included).

    Exact on bytes because everything the text path looks at is ASCII (brackets, quotes, comment marks, tag
    names, line ends, "board" and "deal" in any case), and both decodings it may use (UTF-8, else Latin-1) map
    ASCII bytes to the same characters and other bytes to non-ASCII characters, none of which lower-cases to an
    ASCII letter of "board" or "deal": the same games, lines, comments and values. A UTF-8 byte-order mark is
    dropped when the rest is UTF-8 (as decoding drops it), else kept as the three Latin-1 characters it is. A
    line of more bytes than the text path's character limit, or a value that is not ASCII, goes to the text path.
    A backslash changes nothing but in a tag's value (the reader's escapes): in a comment it is blanked with it, in
    a ``%`` line it is that line's (``_columns`` sees to the rest).
    """
    if data.startswith(_UTF16):
        return None
    if data.startswith(_UTF8_BOM):
        try:
            data[3:].decode("utf-8")
        except UnicodeDecodeError:
            pass  # read as Latin-1: the mark is three characters of the text
        else:
            data = data[3:]
    if len(data) > MAX_LINE_CHARS and may_hold_a_long_line(data) and _LONG_LINE_B.search(data) is not None:
        return None
    crlf = b"\r" in data
    if crlf and data.count(b"\r") != data.count(b"\r\n"):  # a lone CR ends a line too: LF, as the reader's
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        crlf = False
    if b"{" in data or b";" in data:
        if crlf:  # comments are blanked in LF text (a ";" comment runs to the line's end, its CR included)
            data = data.replace(b"\r\n", b"\n")
            crlf = False
        blanked = _blank_comments_b(data)
        if blanked is None:
            return None
        data = blanked
    return _columns(data, cache, utf8=False, crlf=crlf)


def _blank_comments_b(data: bytes) -> bytes | None:
    """``_blank_comments`` on LF bytes in a few C passes: first the ``{…}`` comments, then the ``;`` ones, each
    kind found by a plain search for its mark (a mark inside a comment found before belongs to it) and blanked;
    None (the text path decides) unless what stands before each mark on its line shows it starts a comment
    (``_BEFORE_MARK``: not inside a tag, a "%" line or a ``;`` comment), or when a comment starting in a
    ``…Table`` tag's rows runs past them."""
    if b"Table" in data and not _rows_close_their_comments_b(data):
        return None
    for kind, mark in ((_BRACES_B, b"{"), (_SEMICOLONS_B, b";")):
        if mark not in data:
            continue
        parts = kind.split(data)  # text, comment, text, …, comment, text
        before = parts[0:-1:2]
        starts = map(add, map(bytes.rfind, before, repeat(b"\n")), repeat(1))  # its last line's start, or 0
        if None in map(_BEFORE_MARK.fullmatch, before, starts):
            return None
        lines = list(map(bytes.count, parts[1::2], repeat(b"\n")))
        if max(lines) < len(_XS):
            parts[1::2] = list(map(_XS.__getitem__, lines))
        else:
            parts[1::2] = [b"x" + b"\nx" * k for k in lines]
        data = b"".join(parts)
    return data


def _rows_close_their_comments_b(data: bytes) -> bool:
    """``_rows_close_their_comments`` on bytes."""
    for rows in _TABLE_B.findall(data):
        if b"{" in rows:
            for token in _TOKEN_B.finditer(rows):
                if token.lastindex == 4 and not token.group(4).endswith(b"}"):
                    return False
    return True


def _columns(data: bytes, cache: DealCache, utf8: bool, crlf: bool = False) -> ScannedDeals | None:
    """The games of LF (or, ``crlf``, CRLF) bytes without comments or escapes, as columns made a few C passes at a
    time over all the blocks (no Python code per game, but for games with a problem); None where the reader must
    decide. ``utf8``: the bytes are a decoded text's UTF-8 (a value that is not ASCII is decoded from it), else a
    file's bytes (UTF-8 or Latin-1: such a value is left to the text path).

    The text is split into blocks at empty lines; each ``[Deal "…"]``, ``[Board "…"]`` and ``[Dealer "…"]`` tag
    must be closed on its line and hold no backslash, every ``[`` start a line or be on a line of whole tags
    (``_whole_tags``), no block hold two Deal or two Board tags, and those tags be every one whose name holds
    "board" or "deal" in any case (other tags, misspelt, spaced or malformed, the reader would see otherwise): then
    the n-th Deal value is the n-th game's, the n-th Board value the n-th block's with one."""
    inside = _INSIDE_B.search(data)
    if inside is not None and not _whole_tags(data, inside.start()):  # a "[" inside a line not one of tags
        return None
    tags = _VALUES_B.findall(data)
    lower = data.lower()  # ASCII letters only: no other character lower-cases to a letter of "board" or "deal"
    if lower.count(b"board") + lower.count(b"deal") != len(tags) and len(_NAMED_B.findall(data)) != len(tags):
        return None  # a tag naming a board or a deal that is not one of these (or not closed on its line)
    del lower
    names = [name for name, _ in tags]
    n_board = names.count(b"Board")
    n_deal = names.count(b"Deal")
    values = [value for name, value in tags if name == b"Deal"]
    blocks = (_BLANK_CRLF_B if crlf else _BLANK_B).split(data)
    deal_at = list(map(bytes.find, blocks, repeat(b'[Deal "')))
    if len(blocks) - deal_at.count(-1) != n_deal:  # two Deal tags in a block: two games for the reader
        return None
    # the first line of each block: blocks are separated by an empty line (two line ends)
    firsts = list(accumulate(map(add, map(bytes.count, blocks, repeat(b"\n")), repeat(2)), initial=1))
    games = list(compress(count(), map(ne, deal_at, repeat(-1))))
    boarded: list[int] = []  # the blocks with a Board tag
    numbers: list[int | None] = []  # and their boards ("#" inherited)
    if n_board:
        board_at = list(map(bytes.find, blocks, repeat(b'[Board "')))
        if len(blocks) - board_at.count(-1) != n_board:  # two Board tags in a block: two games for the reader
            return None
        boarded = list(compress(count(), map(ne, board_at, repeat(-1))))
        found = _board_numbers([value for name, value in tags if name == b"Board"], utf8)
        if found is None:
            return None
        numbers = found
    if b"#" in values:
        _inherit(values)
    raw = cache.raw
    deals: list[bytes | str | None] = list(map(raw.get, values))
    if None in deals:
        for k, canonical in enumerate(deals):
            if canonical is None:
                value = values[k]
                met = raw.get(value)  # met earlier in this file (the other room's game)
                if met is not None:
                    deals[k] = met
                elif value.isascii():
                    deals[k] = raw[value] = cache.canonical(value.decode("ascii"))
                elif utf8:  # not kept by its bytes: a file's bytes (Latin-1) may spell another text alike
                    deals[k] = cache.canonical(value.decode("utf-8"))
                else:
                    return None
    if str in set(map(type, deals)) or (n_board and boarded != games):  # problems, or games without a board
        return _with_problems(blocks, firsts, games, boarded, numbers, values, deals, utf8)
    boards: list[int | None] = numbers if n_board else [None] * len(games)
    return ScannedDeals(_game_lines(blocks, firsts, games), boards, cast("list[bytes]", deals))


# a line of whole tags (``_TAGS_ONLY``), then text without a "[" (a blanked comment, a CR of CRLF)
_TAGS_LINE_B = re.compile(_TAGS_ONLY.pattern.encode() + rb"[^\[\n]*")


def _whole_tags(data: bytes, first: int) -> bool:
    """Whether every line holding a ``[`` inside it (the first at ``first``) is one of whole tags, then text
    without a ``[`` (``_TAGS_LINE_B``): indented tags, two tags on a line, brackets in a value. The reader's tokens
    on such a line (a token boundary, in text whose comments are blanked) are those tags and nothing after them,
    so a tag starts either at a line's start or after another tag's ``]`` (``_NAMED`` counts both)."""
    find, fullmatch, search = data.find, _TAGS_LINE_B.fullmatch, _INSIDE_B.search
    inside: re.Match[bytes] | None
    at = first
    while True:
        start = data.rfind(b"\n", 0, at) + 1
        end = find(b"\n", at)
        end = len(data) if end < 0 else end
        if fullmatch(data, start, end) is None:
            return False
        inside = search(data, end)
        if inside is None:
            return True
        at = inside.start()


def _game_lines(blocks: list[bytes], firsts: list[int], at: list[int]) -> list[int | None]:
    """The line of each of the blocks ``at``: that of its first well-formed tag (a block holding a game has one)."""
    chunks = list(map(blocks.__getitem__, at))
    lines: list[int | None] = list(map(firsts.__getitem__, at))
    starts = list(map(_TAG_LINE_B.match, chunks))
    if None in starts:
        for k, first in enumerate(starts):
            if first is None:
                tag = _TAG_LINE_B.search(chunks[k])
                if tag is not None:
                    lines[k] = firsts[at[k]] + chunks[k].count(b"\n", 0, tag.start())
    return lines


def _with_problems(
    blocks: list[bytes],
    firsts: list[int],
    games: list[int],
    boarded: list[int],
    numbers: list[int | None],
    values: list[bytes],
    deals: list[bytes | str | None],
    utf8: bool,
) -> ScannedDeals | None:
    """The columns block by block, where a game has a Board tag but no Deal tag, a Deal value is not a deal, or
    some games have a Board tag and others not; the problems as the reader reports them (None: a value to
    name in a problem is not ASCII in a file's bytes, the text path names it)."""
    board_of = dict(zip(boarded, numbers, strict=True))
    deal_of = dict(zip(games, zip(values, deals, strict=True), strict=True))
    at = sorted(board_of.keys() | deal_of.keys())
    out = ScannedDeals()
    for k, line in zip(at, _game_lines(blocks, firsts, at), strict=True):
        board = board_of.get(k)
        found = deal_of.get(k)
        if found is None:
            out.problems.append(ReadProblem("game has a Board tag but no Deal tag", board, line))
            continue
        value, canonical = found
        if isinstance(canonical, str):
            if not (utf8 or value.isascii()):
                return None
            out.problems.append(ReadProblem(f"Deal {value.decode('utf-8')!r}: {canonical}", board, line))
            continue
        out.lines.append(line)
        out.boards.append(board)
        out.deals.append(cast(bytes, canonical))
    return out


def _inherit(values: list[bytes]) -> None:
    """``"#"`` values replaced by the previous value (itself after inheritance), in place."""
    prev: bytes | None = None
    for k, value in enumerate(values):
        if value == b"#" and prev is not None:
            values[k] = value = prev
        prev = value


def _board_numbers(texts: list[bytes], utf8: bool) -> list[int | None] | None:
    """The Board values' numbers (``"#"`` inherited); None where one is not ASCII in a file's bytes (the text
    path decides)."""
    if b"#" in texts:
        _inherit(texts)
    numbers: list[int | None] = list(map(_BOARDS_B.get, texts, repeat(-1)))
    if -1 in numbers:
        for k, number in enumerate(numbers):
            if number == -1:
                text = texts[k]
                if text.isascii():
                    numbers[k] = number = _number(text.decode("ascii"))
                    if len(_BOARDS_B) < 4096:
                        _BOARDS_B[text] = number
                elif utf8:  # not kept by its bytes (see ``_columns``)
                    numbers[k] = _number(text.decode("utf-8"))
                else:
                    return None
    return numbers


_BOARDS_B: dict[bytes, int | None] = {}


def _by_games(text: str, cache: DealCache) -> ScannedDeals:
    """The reader's own games (comments, escapes, sections, malformed or repeated tags)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    collect = _Collector(cache)
    for line, tags, bad in games(text):
        collect.game(line, tags.get("Board"), tags.get("Deal"), bad)
    return collect.out
