"""The PBN reader's import path: only what an import keeps of each game (line, board, deal), at C speed.

``PBN.read`` builds a full ``BoardRecord`` (every tag, dealer, vulnerability) per game; an import of thousands
of championship files needs three things per game and the problems. ``scan`` gives exactly what ``PBN.read``
gives for those (same games, same lines, boards and deals, the same problems with the same reasons), faster:

* a *plain* text (no ``{`` or ``;`` comments, no escapes, every ``[`` starting a line, CR only in CRLF, and
  the words "board" and "deal" in any case only in its ``[Board "…"]``, ``[Deal "…"]`` and ``[Dealer "…"]``
  tags, one of each per block, each closed on its line) is split into blocks at empty lines and those tags
  are found by plain string search: a handful of C passes over the text, no regular expression per tag;
* any other text (or a check failing half-way) goes through the reader's own games (``pbn.games``), so the
  strict reader decides;
* a ``Deal`` value is parsed once per import (``DealCache``): the same deal of the open and closed room, or of
  the same board in many files, costs a dictionary look-up.

The deals are canonical 13-byte forms (``Deal.to_bytes``), the bank's key, so no ``Deal`` object is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dealer.core.cards import RANK_CHARS
from dealer.core.errors import DealError

from .base import _LONG_LINE, MAX_LINE_CHARS, ReadProblem, may_hold_a_long_line
from .pbn import _BLANK, _SECTION, _TAG, _TOKEN, _board_number, decode_text, games, parse_deal_value

# an empty line in CRLF text (the fast path reads CRLF text as it is; only the fall-back normalises it)
_BLANK_CRLF = re.compile(r"\r\n[ \t]*\r\n")

# Canonical form as one 104-bit number: card i (suit * 13 + rank) holds its seat in bits 103-2i .. 102-2i.
_FULL = sum(1 << (102 - 2 * i) for i in range(52))
_HOLDINGS: list[dict[str, int]] = [{}, {}, {}, {}]  # per suit: holding text -> its cards' bits (seat 1)
_RANK = {ch: i for i, ch in enumerate(RANK_CHARS)}
_FIRST = {"N": 0, "E": 1, "S": 2, "W": 3}


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
    """The bits of ``text`` in ``suit`` (``_holding``), kept for the next deal (up to a bound)."""
    known = _HOLDINGS[suit]
    bits = known.get(text)
    if bits is None:
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


def _plain(text: str, commented: bool = False) -> bool:
    """Whether the block-by-block fast path may read ``text``: no comments (unless ``commented``: they were
    blanked, ``_blank_comments``, and a ``{`` or ``;`` left is inside a tag) or escapes, every ``[`` at the
    start of a line, CR only in CRLF. Each check is one pass of a C search (the cost of this path is the number
    of passes over the text); ``_accounted`` is the last."""
    if "\\" in text or (not commented and ("{" in text or ";" in text)):
        return False
    if text.count("[") != text.count("\n[") + text.startswith("["):  # a "[" inside a line
        return False
    return not ("\r" in text and text.count("\r") != text.count("\r\n"))  # a lone CR ends a line too


def _accounted(text: str, found: int) -> bool:
    """Whether the ``found`` ``[Board "``, ``[Deal "`` and ``[Dealer "`` tags (once a block each, well formed) are
    every tag whose name holds "board" or "deal" in any case, so that the text holds no other (malformed,
    misspelt, spaced, repeated) tag the reader would see: at once when the words occur only that often in the
    whole text, else by counting those tags (at a line's start, where ``_plain`` has every ``[``)."""
    lower = text.lower()
    if lower.count("board") + lower.count("deal") == found:
        return True
    return len(_NAMED.findall(text)) == found


# a tag (at a line's start) whose name holds "board" or "deal" in any case: what the fast path must account for
_NAMED = re.compile(r"^\[[ \t]*[A-Za-z0-9_]*?(?:[Bb][Oo][Aa][Rr][Dd]|[Dd][Ee][Aa][Ll])", re.MULTILINE)
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
# whole tags (no escapes) and blanks: the reader's tokens there are these tags, each ending where it does here
_TAGS_ONLY = re.compile(r'(?:[ \t]*\[[ \t]*[A-Za-z0-9_]+[ \t]*"[^"\\\n]*"[ \t]*\])+[ \t]*')


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
    """``scan`` on the decoded text (any text ``_scan_bytes`` leaves to it)."""
    plain = text
    commented = "{" in text or ";" in text
    if commented:
        blanked = _blank_comments(text)
        if blanked is None:
            return _by_games(text, cache)
        plain = blanked
    if not _plain(plain, commented):
        return _by_games(text, cache)
    found = _scan_plain(plain, cache)
    return _by_games(text, cache) if found is None else found


def _scan_plain(text: str, cache: DealCache) -> ScannedDeals | None:
    """The blocks of a plain text (``_plain``); None where the reader must decide."""
    out = ScannedDeals()
    lines, boards, deals, problems = out.lines, out.boards, out.deals, out.problems
    known = cache.known
    line = 1
    prev_board: str | None = None
    prev_deal: str | None = None
    first_tag = _TAG.search
    crlf = "\r" in text
    n_boards = n_deals = 0  # tags naming a board or deal found as the tags they should be
    # blocks between empty lines (which may hold blanks): one regular expression split, as the bytes path's
    blocks = (_BLANK_CRLF if crlf else _BLANK).split(text)
    for chunk in blocks:
        b = chunk.find('[Board "')
        d = chunk.find('[Deal "')
        e = chunk.find('[Dealer "')
        if e >= 0:  # well formed (closed on its line), or the reader reports it as a malformed Deal tag
            q = chunk.find('"', e + 9)
            if not chunk.startswith('"]', q) or chunk.find("\n", e, q) >= 0:
                return None
            n_deals += 1
        if b >= 0 or d >= 0:
            first = first_tag(chunk)  # a game starts at its first well-formed tag (there is one: Board or Deal)
            start = first.start() if first is not None else 0
            at = line + chunk.count("\n", 0, start) if start else line
            board = None
            if b >= 0:
                q = chunk.find('"', b + 8)
                if not chunk.startswith('"]', q) or chunk.find("\n", b, q) >= 0:
                    return None
                n_boards += 1
                board_text = chunk[b + 8 : q]
                if board_text == "#" and prev_board is not None:
                    board_text = prev_board
                prev_board = board_text
                board = _number(board_text)
            if d < 0:
                problems.append(ReadProblem("game has a Board tag but no Deal tag", board, at))
            else:
                q = chunk.find('"', d + 7)
                if not chunk.startswith('"]', q) or chunk.find("\n", d, q) >= 0:
                    return None
                n_deals += 1
                value = chunk[d + 7 : q]
                if value == "#" and prev_deal is not None:
                    value = prev_deal
                prev_deal = value
                canonical = known.get(value)
                if canonical is None:
                    canonical = cache.canonical(value)
                if isinstance(canonical, str):
                    problems.append(ReadProblem(f"Deal {value!r}: {canonical}", board, at))
                else:
                    lines.append(at)
                    boards.append(board)
                    deals.append(canonical)
        line += chunk.count("\n") + 2
    if not _accounted(text, n_boards + n_deals):  # a tag the reader sees otherwise (or two games in a block)
        return None
    return out


# the bytes path: the text path's passes on the file's bytes, before (and mostly instead of) decoding them
_TAG_B = re.compile(_TAG.pattern.encode())
_BLANK_B = re.compile(_BLANK.pattern.encode())
_BLANK_CRLF_B = re.compile(_BLANK_CRLF.pattern.encode())
_LONG_LINE_B = re.compile(_LONG_LINE.pattern.encode())
_MARKS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")  # BOM, UTF-16: the text path decodes those


def _scan_bytes(data: bytes, cache: DealCache) -> ScannedDeals | None:
    """``_scan_text(decode_text(data))`` without decoding, for a plain file (``_plain``) whose every game is
    read without a problem; None for anything else (then the text path decides, problems and errors included).

    Exact on bytes because everything the text path looks at is ASCII (brackets, quotes, tag names, line
    ends, "board" and "deal" in any case), and both decodings it may use (UTF-8, else Latin-1) map ASCII bytes
    to the same characters and other bytes to non-ASCII characters, none of which lower-cases to an ASCII
    letter of "board" or "deal": the same games, lines and values. A line of more bytes than the text path's
    character limit, or a value that is not ASCII, goes to the text path."""
    if data.startswith(_MARKS) or b"{" in data or b";" in data or b"\\" in data:
        return None
    if len(data) > MAX_LINE_CHARS and may_hold_a_long_line(data) and _LONG_LINE_B.search(data) is not None:
        return None
    if data.count(b"[") != data.count(b"\n[") + data.startswith(b"["):
        return None
    crlf = b"\r" in data
    if crlf and data.count(b"\r") != data.count(b"\r\n"):
        return None
    lower = data.lower()
    board_words = lower.count(b"board")
    deal_words = lower.count(b"deal")
    del lower
    out = ScannedDeals()
    lines, boards, deals = out.lines, out.boards, out.deals
    raw = cache.raw
    line = 1
    prev_board: bytes | None = None
    prev_deal: bytes | None = None
    match_tag = _TAG_B.match
    search_tag = _TAG_B.search
    n_boards = n_deals = 0
    # an empty line may hold blanks: one regular expression split costs less than looking for indented lines
    # (two passes) before a plain split, and gives the same blocks where there are none
    blocks = (_BLANK_CRLF_B if crlf else _BLANK_B).split(data)
    for chunk in blocks:
        d = chunk.find(b'[Deal "')
        if d < 0:  # no game here (a header, or a game of a Board only: a problem, the text path names it)
            if chunk.find(b'[Board "') >= 0:
                return None
            e = chunk.find(b'[Dealer "')
            if e >= 0:
                q = chunk.find(b'"', e + 9)
                if not chunk.startswith(b'"]', q) or chunk.find(b"\n", e, q) >= 0:
                    return None
                n_deals += 1
            line += chunk.count(b"\n") + 2
            continue
        q = chunk.find(b'"', d + 7)
        if not chunk.startswith(b'"]', q) or chunk.find(b"\n", d, q) >= 0:
            return None
        value = chunk[d + 7 : q]
        e = chunk.find(b'[Dealer "')
        if e >= 0:
            q = chunk.find(b'"', e + 9)
            if not chunk.startswith(b'"]', q) or chunk.find(b"\n", e, q) >= 0:
                return None
            n_deals += 2
        else:
            n_deals += 1
        b = chunk.find(b'[Board "')
        board: int | None = None
        if b >= 0:
            q = chunk.find(b'"', b + 8)
            if not chunk.startswith(b'"]', q) or chunk.find(b"\n", b, q) >= 0:
                return None
            n_boards += 1
            board_text = chunk[b + 8 : q]
            if board_text == b"#" and prev_board is not None:
                board_text = prev_board
            prev_board = board_text
            board = _BOARDS_B.get(board_text, -1)
            if board == -1:
                if not board_text.isascii():
                    return None
                board = _number(board_text.decode("ascii"))
                if len(_BOARDS_B) < 4096:
                    _BOARDS_B[board_text] = board
        if value == b"#" and prev_deal is not None:
            value = prev_deal
        prev_deal = value
        canonical = raw.get(value)
        if canonical is None:
            if not value.isascii():
                return None
            canonical = raw[value] = cache.canonical(value.decode("ascii"))
        if isinstance(canonical, str):  # a problem: the text path reports it
            return None
        if chunk.startswith(b"[") and match_tag(chunk) is not None:
            lines.append(line)
        else:  # a game starts at its first well-formed tag (there is one: its Deal tag)
            first = search_tag(chunk)
            lines.append(line + chunk.count(b"\n", 0, first.start()) if first is not None else line)
        boards.append(board)
        deals.append(canonical)
        line += chunk.count(b"\n") + 2
    if (n_boards, n_deals) != (board_words, deal_words):  # a tag the reader sees otherwise: the text path decides
        return None
    return out


_BOARDS_B: dict[bytes, int | None] = {}


def _by_games(text: str, cache: DealCache) -> ScannedDeals:
    """The reader's own games (comments, escapes, sections, malformed or repeated tags)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    collect = _Collector(cache)
    for line, tags, bad in games(text):
        collect.game(line, tags.get("Board"), tags.get("Deal"), bad)
    return collect.out
