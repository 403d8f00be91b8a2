"""Nothing is lost on the import's path: every Deal tag of a file is imported, a duplicate, or a reported problem.

The files are generated with what publishers write around their games (commentary, auctions and play, ``%``
lines with DOS paths, escaped quotes, brackets in names, two tags on a line, indented tags, CRLF, lone CR,
Latin-1, BOMs), and the number of Deal tags is the generator's own count (one per game it writes), not the
reader's.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from bank_engines import bank_at, engine, open_test_bank  # noqa: F401 (fixtures)
from bank_support import random_deal
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dealer.bank.composed import Bank
from dealer.bank_import.importer import import_files
from dealer.core import Seat
from dealer.formats.base import ReadProblem
from dealer.formats.pbn import PBN
from dealer.formats.pbn_scan import scan

_DEALS = [random_deal(random.Random(700 + k)) for k in range(8)]
# around a game, none of it a Deal or a Board tag (outside a comment), none an unclosed comment
NOISE = [
    '[Event "European Championships"]',
    '[Event "Euro [Open]"]',
    '[Event "the \\"Open\\""]',
    '[Event "the \\"Open\\""] ; checked',
    '  [West "Sørensen"]',
    '[North "Zoë"] [South "Müller"]',
    '[Dealer "N"] [Vulnerable "None"]',
    '[Contract "4S"]\n[Declarer "N"]\n[Result "10"]',
    '[Auction "N"]\n1S Pass 2S =1= Pass\n4S Pass Pass Pass\n[Note "1:constructive"]',
    '[Play "E"]\nCK C2 C5 C3\n*',
    '{A good deal for the declarer: see [Deal "N:- - - -"].}',
    "{Two paragraphs\n\nof commentary}",
    "{NS 620 \\ EW -620}",
    "% C:\\PBN\\EURO97.PBN",
    '; a comment [Board "9"]',
    '[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]\nN NT 9\nS S 10',
]


@st.composite
def _game(draw: st.DrawFn, first: bool) -> str:
    deal = draw(st.sampled_from(_DEALS)).to_pbn(draw(st.sampled_from(list(Seat))))
    kind = "plain" if first else draw(st.sampled_from(["plain", "plain", "ten", "lower", "hash", "bad"]))
    value = {
        "plain": deal,
        "ten": deal.replace("T", "10"),
        "lower": deal.lower(),
        "hash": "#",
        "bad": deal[:-1] + deal[2],  # a card twice, one missing: a reported problem
    }[kind]
    lines = [f'[Board "{draw(st.integers(1, 36))}"]'] if draw(st.booleans()) else []
    lines.append(f'[Deal "{value}"]')
    for item in draw(st.lists(st.sampled_from(NOISE), max_size=4)):
        lines.insert(draw(st.integers(0, len(lines))), item)
    return "\n".join(lines)


@st.composite
def pbn_files(draw: st.DrawFn) -> tuple[bytes, int]:
    """A file's bytes and the number of Deal tags written into it."""
    games = [draw(_game(True)), *draw(st.lists(_game(False), max_size=10))]
    gaps = draw(st.lists(st.sampled_from(["\n\n", "\n \n", "\n\n\n"]), min_size=len(games), max_size=len(games)))
    text = "% PBN 2.1\n% EXPORT\n\n" + "".join(g + gap for g, gap in zip(games, gaps, strict=True))
    text = text.replace("\n", draw(st.sampled_from(["\n", "\r\n", "\r"])))
    encoding = draw(st.sampled_from(["utf-8", "utf-8-bom", "latin-1"]))
    data = text.encode("latin-1") if encoding == "latin-1" else text.encode()
    return (b"\xef\xbb\xbf" if encoding == "utf-8-bom" else b"") + data, len(games)


# a problem that accounts for no Deal tag: a Board tag left alone. A comment with an empty line in it right after a
# table's rows (OptimumResultTable) ends the game there, in the reader as in the scan: the game's Board tag is
# reported alone, and its Deal tag makes a game of its own, still imported
NO_DEAL = "game has a Board tag but no Deal tag"


def _deal_problems(problems: Sequence[ReadProblem]) -> int:
    return sum(1 for p in problems if p.reason != NO_DEAL)


_SPLIT_GAME = (
    '% PBN 2.1\n\n[Board "1"]\n[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]\nN NT 9\nS S 10\n'
    f'{{Two paragraphs\n\nof commentary}}\n[Deal "{_DEALS[0].to_pbn(Seat.N)}"]\n\n'
)


@given(pbn_files())
@example((_SPLIT_GAME.encode(), 1))  # found by hypothesis in a full run: one Deal tag, a record and a problem
@settings(max_examples=400, deadline=None)
def test_every_deal_tag_is_a_record_or_a_problem_in_the_scan_and_the_reader(file: tuple[bytes, int]) -> None:
    data, tags = file
    scanned = scan(data)
    assert len(scanned.deals) + _deal_problems(scanned.problems) == tags
    read = PBN.read(data)
    assert len(read.records) + _deal_problems(read.problems) == tags


@pytest.fixture
def bank(bank_at: str, tmp_path: Path) -> Iterator[Bank]:  # noqa: F811 (on SQLite and on PostgreSQL)
    b = open_test_bank(bank_at, tmp_path)
    yield b
    b.close()


@given(st.lists(pbn_files(), min_size=1, max_size=4))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_deal_tag_is_imported_a_duplicate_or_a_problem(bank: Bank, files: list[tuple[bytes, int]]) -> None:
    """Whatever the bank held before (earlier examples' deals: duplicates then), each Deal tag is counted once."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, (data, _) in enumerate(files):
            path = Path(tmp) / f"f{k}.pbn"
            path.write_bytes(data)
            paths.append(path)
        report = import_files(bank, paths)
    tags = sum(n for _, n in files)
    problems = sum(_deal_problems(f.problems) for f in report.files)
    assert report.records + problems == tags
    assert report.imported + report.duplicates + problems == tags
