"""Session boards and deal files: numbering, files for closed machines, PBN read back by endplay, the CLI."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest
from endplay.parsers import pbn as ep_pbn
from endplay.types import Deal as EpDeal
from endplay.types import Player, Vul
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer.core import DEAL_COUNT, BoardNumberError, Deal, Vulnerability, board_dealer, board_vulnerability
from dealer.export.boards import BoardsError, boards_from_pairs, copies_for, number_deals
from dealer.export.files import read_deal_file, write_session_files
from dealer.formats import ExportMeta, by_name, load_all
from dealer.regulation import load_regulation

load_all()
ROOT = Path(__file__).resolve().parents[1]
EP_VUL = {Vulnerability.NONE: Vul.none, Vulnerability.NS: Vul.ns, Vulnerability.EW: Vul.ew, Vulnerability.ALL: Vul.both}


def _deals(n: int, seed: int = 1) -> list[Deal]:
    rng = random.Random(seed)
    return [Deal.from_rank(rng.randrange(DEAL_COUNT)) for _ in range(n)]


def test_numbering_continues_without_rotating_seats() -> None:
    deals = _deals(5)
    boards = number_deals(deals, first=15, copies=3)
    assert [b.number for b in boards] == [15, 16, 17, 18, 19]
    assert [b.deal for b in boards] == deals  # the seats as drawn
    assert [b.dealer for b in boards] == [board_dealer(n) for n in range(15, 20)]
    assert [b.vulnerability for b in boards] == [board_vulnerability(n) for n in range(15, 20)]
    assert {b.copies for b in boards} == {3}
    with pytest.raises(BoardNumberError):
        number_deals(deals, first=0)
    with pytest.raises(BoardsError, match="copies = 0"):
        number_deals(deals, copies=0)


def test_pairs_and_regulation_copies() -> None:
    d1, d2 = _deals(2)
    boards = boards_from_pairs([(2, d2), (1, d1)], copies=copies_for(load_regulation()))
    assert [(b.number, b.deal, b.copies) for b in boards] == [(1, d1, 2), (2, d2, 2)]
    with pytest.raises(BoardsError, match="board 1 is given twice"):
        boards_from_pairs([(1, d1), (1, d2)])


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, DEAL_COUNT - 1), min_size=1, max_size=10), st.integers(1, 80))
def test_pbn_export_read_back_by_endplay(ranks: list[int], first: int) -> None:
    boards = number_deals([Deal.from_rank(r) for r in ranks], first=first)
    text = by_name("pbn").write([b.record() for b in boards], ExportMeta(event="Cup")).decode("latin-1")
    games = ep_pbn.loads(text)
    assert len(games) == len(boards)
    for game, b in zip(games, boards, strict=True):
        assert game.board_num == b.number
        assert game.dealer == Player(int(b.dealer))
        assert game.vul == EP_VUL[b.vulnerability]
        assert game.deal.to_pbn() == EpDeal(b.deal.to_pbn()).to_pbn()


def test_session_files_for_closed_machines(tmp_path: Path) -> None:
    boards = number_deals(_deals(8), first=9, copies=4)
    paths = write_session_files(boards, tmp_path, "s2", ["dlm", "dup", "pbn"], ExportMeta(sealed=True, copies=4))
    assert [p.name for p in paths] == ["s2.dlm", "s2.dup", "s2.pbn"]
    dlm = (tmp_path / "s2.dlm").read_text()
    assert "Status=Sealed" in dlm and "From board=9" in dlm and "To board=16" in dlm and "Duplicates=4" in dlm
    for path in paths:
        result = read_deal_file(path)
        assert not result.problems
        assert [(r.board, r.deal) for r in result.records] == [(b.number, b.deal) for b in boards]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_bad_format_writes_nothing(tmp_path: Path) -> None:
    boards = number_deals(_deals(2), first=3)
    with pytest.raises(Exception, match="consecutively from 1"):
        write_session_files(boards, tmp_path, "x", ["dlm", "bhg"], ExportMeta())
    assert list(tmp_path.iterdir()) == []


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200", "LANG": "en_US.UTF-8"}
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_cli_convert_chain_and_errors(tmp_path: Path) -> None:
    boards = number_deals(_deals(6, seed=9))
    (tmp_path / "in.pbn").write_bytes(by_name("pbn").write([b.record() for b in boards]))
    chain = ["in.pbn", "a.dlm", "b.dup", "c.bri", "d.dge", "e.ber", "f.bhg", "g.csv", "h.json", "i.lin", "j.pbn"]
    from dealer.cli.app import run as run_cli

    for src, dst in itertools.pairwise(chain):  # in-process; the error paths below run the real command
        assert run_cli(["convert", str(tmp_path / src), str(tmp_path / dst)]) == 0
    back = read_deal_file(tmp_path / "j.pbn").records
    assert [(r.board, r.deal, r.dealer, r.vulnerability) for r in back] == [
        (b.number, b.deal, b.dealer, b.vulnerability) for b in boards
    ]
    data = bytearray((tmp_path / "c.bri").read_bytes())
    data[130:132] = b"99"
    (tmp_path / "bad.bri").write_bytes(bytes(data))
    run = _cli("convert", "bad.bri", "x.pbn", cwd=tmp_path)
    assert run.returncode == 1 and "board 2" in run.stderr and "byte 130" in run.stderr and "--skip-bad" in run.stderr
    assert not (tmp_path / "x.pbn").exists()
    run = _cli("convert", "bad.bri", "x.pbn", "--skip-bad", cwd=tmp_path)
    assert run.returncode == 0 and len(read_deal_file(tmp_path / "x.pbn").records) == 5
    run = _cli("convert", "in.pbn", "out.txt", cwd=tmp_path)
    assert run.returncode == 1 and "cannot tell the format of 'out.txt'" in run.stderr
    assert "known: .ber, .bhg, .bri, .csv, .dge, .dlm, .dup, .json, .lin, .pbn" in run.stderr  # dealer formats' list
    run = _cli("convert", "in.pbn", "out.txt", "--to", "ber", cwd=tmp_path)
    assert run.returncode == 0 and len((tmp_path / "out.txt").read_bytes()) == 6 * 52


def test_cli_export_files_and_handrecords(tmp_path: Path) -> None:
    boards = number_deals(_deals(3, seed=4))
    (tmp_path / "drawn.json").write_bytes(by_name("json").write([b.record() for b in boards]))
    run = _cli(
        "export",
        "files",
        "drawn.json",
        "-o",
        "out",
        "--first",
        "25",
        "--copies",
        "2",
        "--name",
        "session",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["session.dlm", "session.dup", "session.pbn"]
    dup = (tmp_path / "out" / "session.dup").read_bytes()
    assert dup[146:156] == b"YN25 2 27 "
    run = _cli(
        "export",
        "handrecords",
        "drawn.json",
        "-o",
        "hr",
        "--formats",
        "html,pbn",
        "--lang",
        "ru",
        "--name",
        "handrecords",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    html = (tmp_path / "hr" / "handrecords.html").read_text()
    assert all(f"Сдача {n}" in html for n in (1, 2, 3))
    assert "DoubleDummyTricks" in (tmp_path / "hr" / "handrecords.pbn").read_text()


def test_cli_export_boards_on_the_simulator_resumes(tmp_path: Path) -> None:
    boards = number_deals(_deals(2, seed=8))
    (tmp_path / "drawn.json").write_bytes(by_name("json").write([b.record() for b in boards]))
    args = ["export", "boards", "drawn.json", "--simulate", "--copies", "1", "-o", "out"]
    run = _cli(*args, "--faults", "wrong_pocket@1:7", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "foul board 1 copy 1 try 1" in run.stderr and "belongs in" in run.stderr
    assert "2 copies made, 0 already made earlier, 1 foul" in run.stdout
    run = _cli(*args, cwd=tmp_path)
    assert run.returncode == 0 and "0 copies made, 2 already made earlier" in run.stdout
    run = _cli("export", "boards", "drawn.json", cwd=tmp_path)
    assert run.returncode == 2 and "--device or --simulate" in run.stderr
