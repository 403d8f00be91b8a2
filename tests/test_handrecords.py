"""Hand records: DD tables equal endplay's own single-deal solver, par agrees, HTML/PDF/PBN are complete."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from endplay import dds
from endplay.parsers import pbn as ep_pbn
from endplay.types import Deal as EpDeal
from endplay.types import Player, Vul

from dealer.core import DEAL_COUNT, Deal, Seat, Vulnerability, board_dealer, board_vulnerability
from dealer.formats import BoardRecord, ExportMeta
from dealer.handrecords import analyse
from dealer.handrecords.analysis import BoardAnalysis
from dealer.handrecords.html import render_html
from dealer.handrecords.pbn import double_dummy_tricks, handrecords_pbn
from dealer.handrecords.pdf import render_pdf
from dealer.handrecords.publish import NotRevealedError, publish, publish_session
from dealer.handrecords.view import document_view

EP_VUL = {Vulnerability.NONE: Vul.none, Vulnerability.NS: Vul.ns, Vulnerability.EW: Vul.ew, Vulnerability.ALL: Vul.both}


@pytest.fixture(scope="module")
def records() -> list[BoardRecord]:
    rng = random.Random(2026)
    return [BoardRecord(Deal.from_rank(rng.randrange(DEAL_COUNT)), 14 + i) for i in range(4)]


@pytest.fixture(scope="module")
def analyses(records: list[BoardRecord]) -> list[BoardAnalysis]:
    seen: list[tuple[int, int]] = []
    result = analyse(records, batch=3, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(3, 4), (4, 4)]
    return result


def test_dd_tables_equal_endplay_single_solver(records: list[BoardRecord], analyses: list[BoardAnalysis]) -> None:
    for rec, a in zip(records, analyses, strict=True):
        ref = dds.calc_dd_table(EpDeal(rec.deal.to_pbn())).to_list()
        assert [list(row) for row in a.table.tricks] == [list(row) for row in ref]
        assert rec.board is not None
        assert a.board == rec.board and a.dealer == board_dealer(rec.board)
        assert a.vulnerability == board_vulnerability(rec.board)


def test_par_agrees_with_endplay_from_the_deal(records: list[BoardRecord], analyses: list[BoardAnalysis]) -> None:
    for rec, a in zip(records, analyses, strict=True):
        assert rec.board is not None
        ref = dds.par(
            EpDeal(rec.deal.to_pbn()), EP_VUL[board_vulnerability(rec.board)], Player(int(board_dealer(rec.board)))
        )
        assert a.par.score == ref.score
        ref_contracts = {(c.level, int(c.denom), "NESW"[int(c.declarer)], int(c.result)) for c in ref}
        ours = {(c.level, c.strain, d, c.result) for c in a.par.contracts for d in c.declarers}
        assert ours == ref_contracts


def test_pbn_read_back_by_endplay(analyses: list[BoardAnalysis]) -> None:
    text = handrecords_pbn(analyses, ExportMeta(event="Cup")).decode("latin-1")
    assert text.startswith("% PBN 2.1\r\n% EXPORT\r\n")
    boards = ep_pbn.loads(text)
    assert len(boards) == len(analyses)
    for board, a in zip(boards, analyses, strict=True):
        assert board.board_num == a.board
        assert board.dealer == Player(int(a.dealer))
        assert board.vul == EP_VUL[a.vulnerability]
        assert board.deal.to_pbn() == EpDeal(a.deal.to_pbn()).to_pbn()
        assert board.info["DoubleDummyTricks"] == double_dummy_tricks(a)
    first = analyses[0]
    dd = first.table
    # DoubleDummyTricks: declarers N, S, E, W; strains NT, S, H, D, C
    expect = "".join(f"{dd.get(s, d):x}" for d in (Seat.N, Seat.S, Seat.E, Seat.W) for s in (4, 0, 1, 2, 3))
    assert double_dummy_tricks(first) == expect
    lines = text.split("\r\n")
    i = lines.index('[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]')
    assert lines[i + 1] == f"N NT {dd.get(4, Seat.N)}" and lines[i + 20] == f"W C {dd.get(3, Seat.W)}"


def test_html_is_self_contained_and_complete(analyses: list[BoardAnalysis]) -> None:
    html = render_html(document_view(analyses, title="Cup <1>", lang="ru"))
    assert "Cup &lt;1&gt;" in html
    assert "http://" not in html and "https://" not in html and "<link" not in html and "<script" not in html
    for a in analyses:
        assert f'id="board-{a.board}"' in html
        assert f"Сдача {a.board}" in html


def test_pdf_opens_and_lists_every_board(analyses: list[BoardAnalysis], tmp_path: Path) -> None:
    data = render_pdf(document_view(analyses * 2, title="Кубок ♠♥♦♣"))
    assert data.startswith(b"%PDF-")
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path = tmp_path / "hr.pdf"
    path.write_bytes(data)
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True).stdout
    assert "Кубок" in text and "♠" in text and "♥" in text
    for a in analyses:
        assert f"Board {a.board}" in text
    pages = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    assert re.search(r"^Pages:\s+2$", pages, re.M)


class _Gate:
    def __init__(self, revealed: bool) -> None:
        self.revealed = revealed
        self.asked: list[str] = []

    def ensure_revealed(self, session: str) -> None:
        self.asked.append(session)
        if not self.revealed:
            raise NotRevealedError(f"session {session} is not revealed")


def test_publish_is_gated_on_reveal(records: list[BoardRecord], tmp_path: Path) -> None:
    gate = _Gate(False)
    with pytest.raises(NotRevealedError):
        publish(records[:1], tmp_path, "hr", gate=gate, session="S1")
    assert gate.asked == ["S1"] and not list(tmp_path.iterdir())
    paths = publish(records[:1], tmp_path, "hr", gate=_Gate(True), session="S1", kinds=["html", "pbn"])
    assert sorted(p.name for p in paths) == ["hr.html", "hr.pbn"]
    closed = _Gate(False)
    with pytest.raises(NotRevealedError):
        publish_session([(7, records[0].deal)], tmp_path, "s", gate=closed, session="S2")
    assert closed.asked == ["S2"]
    (path,) = publish_session([(7, records[0].deal)], tmp_path, "s", gate=_Gate(True), session="S2", kinds=["pbn"])
    assert '[Board "7"]' in path.read_text() and '[Dealer "S"]' in path.read_text()


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_pdf_centre_shows_every_seat_letter_as_the_html_does(
    analyses: list[BoardAnalysis], tmp_path: Path, lang: str
) -> None:
    import html as htmlmod
    import itertools

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    doc = document_view(analyses[:1], title="T", lang=lang)
    page = render_html(doc)
    compass = page[page.index('<div class="compass"') :]
    compass = compass[: compass.index("</div>")]
    spans = [htmlmod.unescape(x).strip() for x in re.findall(r"<span[^>]*>([^<]+)</span>", compass)]
    shown = [x for x in spans if re.fullmatch(r"\S+ \d+", x)]
    assert len(shown) == 4, spans  # the HTML: "N 10", "W 8", "E 13", "S 9" (letter and HCP for every seat)
    path = tmp_path / "one.pdf"
    path.write_bytes(render_pdf(doc))
    out = subprocess.run(["pdftotext", "-bbox", str(path), "-"], check=True, capture_output=True, text=True).stdout
    words = [
        (htmlmod.unescape(w), float(x), float(y))
        for x, y, w in re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)</word>', out)
    ]
    pairs = {f"{a[0]} {b[0]}" for a, b in itertools.pairwise(words) if abs(a[2] - b[2]) < 0.5 and 0 < b[1] - a[1] < 20}
    for label in shown:
        assert label in pairs, (label, sorted(pairs))
    found = {label: [a[2] for a, b in itertools.pairwise(words) if f"{a[0]} {b[0]}" == label] for label in shown}
    top, bottom = found[shown[0]][0], found[shown[-1]][-1]  # N above, S below: W and E between, in the centre box
    for label in shown[1:3]:
        assert any(top < y < bottom for y in found[label]), found
