"""A bench corpus that looks like the archives federations publish, made from the shared real PBN files.

The shared sample (``../shared/data/pbn``) is real but small and fairly uniform; real collections vary the same
games the way publishers do. ``make_varied`` writes ``files`` new files from the sample's games, seeded, so the
corpus is the same on every run and nothing of it is committed:

- files of 1 to 500 boards (log-uniform: many small files, a few large), each of one to four events (the games of
  several source files one after another), both rooms as the sources have them;
- commentary: ``{…}`` blocks after the deal, the contract, the result or the play, and between games (some over
  several lines, some holding an empty line, some mentioning the deal and the board, as commentary does), ``;``
  comments after tags, ``%`` header lines;
- auctions and play records (with ``=n=`` notes and ``[Note]`` tags) given to games that have none, from others;
- tag order shuffled within games, optional tags (``Room``, ``Annotator``, ``BidSystemNS``…) added;
- encodings: UTF-8, UTF-8 with its BOM, Latin-1 (accented names and comments), and in a few files UTF-16 with its
  BOM (a Windows editor's "Unicode": the import decodes those, the text path); CRLF line ends, and in a few files
  the lone CR of old Macintosh exports.
- what some publishers' programs write and a PBN reader must take as the standard says (each in a share of the
  files, as a program writes its files alike): a ``%`` line naming the file's DOS path (``C:\\PBN\\…``), a
  backslash in commentary, quotes escaped in a tag's value (``\\"``), brackets in an event's name, two tags on
  one line, tags indented.

``redeal=True`` also replaces every deal by a new one (the same new deal for both rooms of a game): most deals
are then new to a bank. A source file that holds ``{`` already is used whole (its comments may hold empty lines).

Run on its own: ``python -m bench.corpus OUT_DIR [FILES]`` writes a corpus to look at.
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_BLANK = re.compile(r"\n[ \t]*\n")
_TAG_LINE = re.compile(r'\[([A-Za-z0-9_]+) "([^"]*)"\]')
ROSTER = frozenset(
    ["Event", "Site", "Date", "Board", "West", "North", "East", "South", "Dealer", "Vulnerable", "Deal", "Scoring",
     "Room", "Annotator", "BidSystemNS", "BidSystemEW", "Stage", "Round", "Section", "Time", "HomeTeam", "VisitTeam"]
)  # fmt: skip
AFTER = ('[Deal "', '[Contract "', '[Result "')  # tags commentary follows in published files
SHARED_TAGS = ("Event", "Site", "Date", "HomeTeam", "VisitTeam", "Round", "Stage")
_DEAL_VALUE = re.compile(r'(\[Deal[ \t]*")([NESWnesw]):([^"]*)(")')

NAMES = ["Sørensen", "Müller", "Gaëlle Lévêque", "Jiří Nováček", "Zoë Ångström", "Łukasz Wróbel", "O'Brien",
         "Ñúñez", "Çelik", "Østergård", "Brandão", "Schäfer"]  # fmt: skip
COMMENTS = [
    "Both tables reached the same contract.",
    "A good deal for the declarer: the board was flat in the open room.",
    "Nice defence by {name} here: the lead of the CK beat the contract.",
    "Ce donne était difficile ; l'entame à pique a battu le contrat.",
    "Un board très disputé à la table fermée.",
    "Auf diesem Board spielte {name} 4S mit einem Überstich.",
    "Bei diesem Deal war die Reizung schwierig.",
    "North–South vul, the bidding went wild at the other table.",
    "Result: +620 and 11 IMPs to the home team.",
    "Board of the day? Not quite: see the deal in the next match.",
]
OPTIONAL_TAGS = [
    ("Room", ["Open", "Closed"]),
    ("Annotator", NAMES),
    ("BidSystemNS", ["SAYC", "2/1 GF", "Precision", "Acol"]),
    ("BidSystemEW", ["Polish Club", "Standard American", "Nightingale"]),
    ("Stage", ["Final", "Semifinal", "Round Robin"]),
    ("Round", ["1", "2", "3", "17"]),
    ("Section", ["A", "B", "C"]),
    ("Time", ["10:00:00", "14:30:00"]),
]
ENCODINGS = [("utf-8", 55), ("utf-8-bom", 5), ("latin-1", 40)]  # and UTF-16 in a few files (``make_varied``)


@dataclass(frozen=True, slots=True)
class Unit:
    """A source file's games (each a list of tag items: a tag line and the section lines after it), or, for a
    file that holds ``{``, the whole text as one unit (``whole``)."""

    games: list[list[str]]
    whole: str | None = None


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _items(block: str) -> list[str]:
    items: list[str] = []
    for line in block.split("\n"):
        if line.startswith("[") or not items:
            items.append(line)
        else:
            items[-1] += "\n" + line
    return items


def read_units(files: list[Path]) -> list[Unit]:
    units = []
    for path in files:
        text = _decode(path.read_bytes())
        if "{" in text:
            units.append(Unit([], text))
            continue
        games = [_items(b.strip("\n")) for b in _BLANK.split(text) if '[Deal "' in b or '[Board "' in b]
        if games:
            units.append(Unit(_inherited(games)))
    return units


def _tag(item: str) -> tuple[str, str] | None:
    m = _TAG_LINE.match(item)
    return None if m is None else (m.group(1), m.group(2))


def _inherited(games: list[list[str]]) -> list[list[str]]:
    """Each game with its ``"#"`` values spelt out (the previous game's), so that it stands on its own."""
    previous: dict[str, str] = {}
    out = []
    for game in games:
        items = []
        for item in game:
            tag = _tag(item)
            if tag is not None and tag[1] == "#":
                if tag[0] not in previous:
                    continue  # nothing to inherit from: left out
                item = item.replace('"#"', f'"{previous[tag[0]]}"', 1)
                tag = (tag[0], previous[tag[0]])
            if tag is not None:
                previous[tag[0]] = tag[1]
            items.append(item)
        out.append(items)
    return out


def _odd(game: list[str]) -> bool:
    """A game many readers refuse (``^`` escapes, a Result that is not a number of tricks): real files have them,
    in a few files only."""
    return any("^" in i or (i.startswith('[Result "') and not i[9:-2].isdigit()) for i in game)


_SIDE_RESULT = re.compile(r'\[Result "(?:NS|EW) (\d+)"\]')


def _usual(game: list[str]) -> list[str] | None:
    """The game as most publishers write it (``Result "NS 9"`` as ``"9"``), or None when it has ``^`` escapes."""
    if any("^" in i for i in game):
        return None
    return [_SIDE_RESULT.sub(r'[Result "\1"]', i) for i in game]


def _sharp(game: list[str], before: dict[str, str]) -> list[str]:
    """The game with the values it shares with the game before it as ``"#"``, as publishers write them."""
    out = []
    for item in game:
        tag = _tag(item)
        if tag is not None and tag[0] in SHARED_TAGS and before.get(tag[0]) == tag[1]:
            item = item.replace(f'"{tag[1]}"', '"#"', 1)
        out.append(item)
    return out


def _comment(rng: random.Random) -> str:
    lines = [rng.choice(COMMENTS).format(name=rng.choice(NAMES)) for _ in range(rng.choice((1, 1, 2, 3)))]
    if len(lines) > 1 and rng.random() < 0.02:
        lines.insert(1, "")  # a commentary of two paragraphs: an empty line inside the comment
    return "{" + "\n".join(lines) + "}"


def _vary_game(items: list[str], rng: random.Random, donors: list[list[str]]) -> list[str]:
    items = list(items)
    names = {tag[0] for tag in map(_tag, items) if tag is not None}
    if not names & {"Auction", "Play", "Contract", "Declarer", "Result"} and donors and rng.random() < 0.6:
        donor = rng.choice(donors)  # a whole auction and play record, with its contract
        items += [i for i in donor if i.startswith(("[Auction", "[Play", "[Note", "[Contract", "[Declarer", "[Result"))]
    for tag, values in rng.sample(OPTIONAL_TAGS, rng.randint(0, 3)):
        if tag not in names:
            items.append(f'[{tag} "{rng.choice(values)}"]')
    if rng.random() < 0.4:  # the roster's tags in another order; the contract, auction and play after them
        roster = [i for i in items if (_tag(i) or ("",))[0] in ROSTER]
        rng.shuffle(roster)
        items = roster + [i for i in items if (_tag(i) or ("",))[0] not in ROSTER]
    out: list[str] = []
    for item in items:
        if rng.random() < 0.04 and item.startswith("[") and "\n" not in item:
            item = f"{item} ; {rng.choice(('checked', 'from the scorer', 'corrected'))}"
        out.append(item)
        if item.startswith(AFTER) and "\n" not in item and rng.random() < 0.15:  # where publishers comment
            out.append(_comment(rng))
    if rng.random() < 0.15:
        out.append(_comment(rng))  # and after the play record
    return out


_EVENT = re.compile(r'^\[Event "([^"#][^"]*)"\]', re.MULTILINE)
_PAIRED = re.compile(r'^(\[(?:Dealer|Declarer) "[^"]*"\])\n(\[(?:Vulnerable|Contract) "[^"]*"\])$', re.MULTILINE)
_INDENTED = re.compile(r"^(\[(?:West|North|East|South) )", re.MULTILINE)
# (share of the files, what that program does to a file's text)
WRITERS: list[tuple[float, Callable[[str, int], str]]] = [
    (0.15, lambda text, k: text.replace("% EXPORT", f"% EXPORT\n% C:\\PBN\\ARCHIVE\\V{k:04d}.PBN", 1)),
    (0.05, lambda text, k: text.replace("}", " (score: NS 620 \\ EW -620)}", 3)),
    (0.06, lambda text, k: _EVENT.sub(r'[Event "\1 \\"Open\\""]', text)),
    (0.06, lambda text, k: _EVENT.sub(r'[Event "\1 [Open]"]', text)),
    (0.04, lambda text, k: _PAIRED.sub(r"\1 \2", text)),
    (0.03, lambda text, k: _INDENTED.sub(r"  \1", text)),
]


def _written(text: str, k: int, rng: random.Random) -> str:
    """The file's text as the program that wrote it spells it (``WRITERS``), for the programs ``rng`` picks."""
    for share, write in WRITERS:
        if rng.random() < share:
            text = write(text, k)
    return text


def _encode(text: str, encoding: str, crlf: bool, cr: bool = False) -> bytes:
    if crlf or cr:
        text = text.replace("\n", "\r\n" if crlf else "\r")
    if encoding == "utf-8-bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    if encoding == "latin-1":
        return text.encode("latin-1", errors="replace")
    if encoding == "utf-16":
        return text.encode("utf-16")  # with its byte-order mark
    return text.encode(encoding)


def _redeal(text: str, rng: random.Random, table: dict[str, str]) -> str:
    from dealer.core import Deal, Seat

    def swap(m: re.Match[str]) -> str:
        old = m.group(2).upper() + ":" + m.group(3)
        new = table.get(old)
        if new is None:
            seats = bytearray(52)
            for position, card in enumerate(rng.sample(range(52), 52)):
                seats[card] = position // 13
            new = table[old] = Deal(bytes(seats)).to_pbn(Seat.parse(m.group(2).upper()))
        return m.group(1) + new + m.group(4)

    return _DEAL_VALUE.sub(swap, text)


def make_varied(sources: list[Path], out: Path, files: int, seed: int = 33, redeal: bool = False) -> list[Path]:
    """Write ``files`` varied files into ``out`` from the games of ``sources``; returns their paths."""
    rng = random.Random(seed)
    units = read_units(sources)
    donors = [
        g
        for u in units
        for g in u.games
        if {t[0] for t in map(_tag, g) if t is not None} >= {"Auction", "Play", "Contract", "Declarer", "Result"}
        and not _odd(g)
        and not any("{" in i for i in g)
    ]  # donors of an auction and play: games any reader takes
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    cursor = 0
    for k in range(files):
        boards = max(1, min(500, round(math.exp(rng.uniform(0, math.log(500))))))
        events = rng.randint(1, 4)
        header = ["% PBN 2.1", "% EXPORT"] + ([f"% Creator: {rng.choice(NAMES)}"] if rng.random() < 0.5 else [])
        parts = ["\n".join(header)]
        games = 0
        for event in range(events):
            unit = units[cursor % len(units)]
            cursor += 1
            if unit.whole is not None:
                parts.append(unit.whole.strip("\n"))
                games += unit.whole.count('[Deal "')
                continue
            want = max(1, (boards - games) // (events - event))
            start = rng.randrange(len(unit.games))
            sharp = rng.random() < 0.5
            before: dict[str, str] = {}
            odd_here = k % 10 == 0  # the games many readers refuse: as published in one file of ten
            for g in range(want):
                game: list[str] | None = unit.games[(start + g) % len(unit.games)]
                if not odd_here:
                    game = _usual(game)  # type: ignore[arg-type]
                if game is None:
                    continue
                varied = _vary_game(game, rng, donors)
                parts.append("\n".join(_sharp(varied, before) if sharp and g else varied))
                before = dict(t for t in map(_tag, varied) if t is not None)
                if rng.random() < 0.05:
                    parts.append(_comment(rng))
            games += want
        text = "\n\n".join(parts) + "\n"
        if redeal:
            text = _redeal(text, rng, {})
        encoding = rng.choices([e for e, _ in ENCODINGS], [w for _, w in ENCODINGS])[0]
        writer = random.Random(seed * 100_003 + k)  # its own: the choices above are as they were without it
        text = _written(text, k, writer)
        path = out / f"v{k:04d}.pbn"
        crlf = rng.random() < 0.35
        cr = not crlf and writer.random() < 0.03
        if writer.random() < 0.03:
            encoding = "utf-16"
        path.write_bytes(_encode(text, encoding, crlf=crlf, cr=cr))
        written.append(path)
    return written


if __name__ == "__main__":
    from .bench_import import SAMPLE

    made = make_varied(sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn"), Path(sys.argv[1]),
                       int(sys.argv[2]) if len(sys.argv) > 2 else 200)  # fmt: skip
    print(f"{len(made)} files, {sum(p.stat().st_size for p in made):,} bytes in {sys.argv[1]}")
