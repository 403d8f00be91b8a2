"""The PBN reader's import path: only what an import keeps of each game (line, board, deal), at C speed.

``PBN.read`` builds a full ``BoardRecord`` (every tag, dealer, vulnerability) per game; an import of thousands
of championship files needs three things per game and the problems. ``scan`` gives exactly what ``PBN.read``
gives for those (same games, same lines, boards and deals, the same problems with the same reasons), faster:

* a *plain* text (no ``{`` or ``;`` comments, no escapes, every ``[`` starting a line, every tag whose name
  starts with ``deal`` in any case well formed) is split into blocks at empty lines and only the ``Board``
  and ``Deal…`` tags of each block are matched; a block with a repeated ``Board`` or ``Deal`` tag (two games
  without an empty line) goes through the reader's own token scan;
* any other text goes through the reader's own games (``pbn.games``), so the strict reader decides;
* a ``Deal`` value is parsed once per import (``DealCache``): the same deal of the open and closed room, or of
  the same board in many files, costs a dictionary look-up.

The deals are canonical 13-byte forms (``Deal.to_bytes``), the bank's key, so no ``Deal`` object is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dealer.core.cards import RANK_CHARS
from dealer.core.errors import DealError

from .base import ReadProblem
from .pbn import _BLANK, _board_number, _scan, decode_text, games, parse_deal_value

# Board and every tag whose name starts with "Deal" (Deal, Dealer, …), well formed as the reader's tag pair is
_WANTED = re.compile(r'\[(Board|Deal[A-Za-z0-9_]*)[ \t]*"([^"\\\n]*)"[ \t]*\]')
_DEALISH = re.compile(r"\[[ \t]*[Dd][Ee][Aa][Ll]")  # what the reader would report as a malformed Deal tag

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
    holdings = _HOLDINGS
    for k, hand in enumerate(hands):
        suits = hand.split(".")
        if len(suits) != 4 or len(hand) != 16:  # 13 ranks and 3 dots
            return None
        bits = 0
        for suit in range(4):
            text = suits[suit]
            b = holdings[suit].get(text)
            if b is None:
                b = _holding(suit, text)
                if len(holdings[suit]) < 65536:
                    holdings[suit][text] = b
            if b < 0:
                return None
            bits |= b
        total += bits
        canonical += ((first + k) & 3) * bits
    if total != _FULL:
        return None
    return canonical.to_bytes(13, "big")


@dataclass(slots=True)
class DealCache:
    """Deal values already parsed in this import: value -> canonical bytes, or the parser's reason."""

    known: dict[str, bytes | str] = field(default_factory=dict)

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
        board = _board_number(board_text) if board_text is not None else None
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


def _plain(text: str) -> bool:
    """Whether the block-by-block fast path reads ``text`` exactly as the reader's games do."""
    if "{" in text or ";" in text or "\\" in text or "[ " in text or "[\t" in text:
        return False
    if text.count("[") != text.count("\n[") + text.startswith("["):  # a "[" inside a line
        return False
    deal_tags = text.count("[Deal")
    return len(_DEALISH.findall(text)) == deal_tags  # no "[deal", "[DEAL", …: counted in ``scan``


def scan(data: bytes, source: str = "<input>", cache: DealCache | None = None) -> ScannedDeals:
    """The deals of a PBN file as ``PBN.read`` reads them (FormatError as it raises them)."""
    text = decode_text(data, source)
    collect = _Collector(cache if cache is not None else DealCache())
    if not _plain(text):
        for line, tags, bad in games(text):
            collect.game(line, tags.get("Board"), tags.get("Deal"), bad)
        return collect.out
    well_formed = 0
    line = 1
    game = collect.game
    find = _WANTED.findall
    for chunk in _BLANK.split(text):
        start = chunk.find("[")
        if start >= 0:
            board_text = value = None
            boards = deals = 0
            for name, tag_value in find(chunk):
                if name == "Board":
                    board_text = tag_value
                    boards += 1
                else:
                    well_formed += 1
                    if name == "Deal":
                        value = tag_value
                        deals += 1
            if boards > 1 or deals > 1:  # games without an empty line between them: the reader's own scan
                for game_line, tags, bad in _scan(chunk, line):
                    game(game_line, tags.get("Board"), tags.get("Deal"), bad)
            elif board_text is not None or value is not None:
                game(line + chunk.count("\n", 0, start), board_text, value, None)
        line += chunk.count("\n") + 2
    if well_formed != text.count("[Deal"):  # a malformed Deal… tag: the reader reports it, so it decides
        collect = _Collector(collect.cache)
        for game_line, tags, bad in games(text):
            collect.game(game_line, tags.get("Board"), tags.get("Deal"), bad)
    return collect.out
