"""An import over a corpus that repeats its deals (every board in every match file, copies of whole files, the
same deal spelt otherwise) gives exactly the bank and the report that the strict one-record-at-a-time reader
(``PBN.read``) implies: the same deal set, each record's outcome (new deal, duplicate of which deal first seen
where) and the same problems, ``verify`` passing, and no record lost silently.

Every test runs on SQLite and on PostgreSQL (skipped, saying why, where no PostgreSQL server answers).
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from bank_engines import bank_at, engine, open_test_bank  # noqa: F401 (fixtures)
from bank_support import random_deal, station_source

from dealer.bank.composed import Bank
from dealer.bank_import import file_reading
from dealer.bank_import.importer import FileReport, SkippedFile, import_parsed, read_files
from dealer.core import Deal, Seat
from dealer.draw.verify import verify_bank
from dealer.formats.base import BoardRecord, FormatError
from dealer.formats.lin import LIN
from dealer.formats.pbn import PBN
from dealer.formats.pbn_scan import ScannedDeals

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pbn"


@pytest.fixture
def bank(bank_at: str, tmp_path: Path) -> Iterator[Bank]:  # noqa: F811 (on SQLite and on PostgreSQL)
    b = open_test_bank(bank_at, tmp_path)
    yield b
    b.close()


def _match_file(deals: list[Deal], rng: random.Random, event: str, eol: str, extra: str = "") -> str:
    """A team match as championships export it: each board twice (open and closed room), the second time
    with "#" for the values it repeats, or spelt from another seat, in lower case, or with 10 for T."""
    games = []
    for board, deal in enumerate(deals, start=1):
        seat = Seat((board - 1) % 4)
        value = deal.to_pbn(seat)
        for room in ("Open", "Closed"):
            if room == "Closed":
                value = rng.choice(["#", deal.to_pbn(Seat((board + 1) % 4)), value.lower(), value.replace("T", "10")])
            games.append(
                "\n".join(
                    [
                        f'[Event "{event}"]',
                        f'[Board "{board if room == "Open" else rng.choice([str(board), "#"])}"]',
                        f'[Dealer "{seat.name}"]',
                        f'[Deal "{value}"]',
                        f'[Room "{room}"]',
                        '[Auction "N"]\nPass Pass 1S Pass\n2S Pass Pass Pass',
                    ]
                )
            )
    return ("% PBN 2.1\n% EXPORT\n%\n" + "\n\n".join(games) + "\n" + extra).replace("\n", eol)


def _corpus(tmp_path: Path, rng: random.Random) -> list[Path]:
    pool = [random_deal(rng) for _ in range(40)]
    files: list[Path] = []
    for k in range(8):  # matches of the same session share boards: most deals come back in every file
        deals = rng.sample(pool[:24], 8) if k % 2 else pool[k * 2 : k * 2 + 10]
        eol = "\r\n" if k % 3 == 0 else "\n"
        event = ["Cup", "Coupe d'Europe \u00e9t\u00e9", "\u041a\u0443\u0431\u043e\u043a", "Open"][k % 4]
        extra = ""
        if k == 3:  # records the reader refuses: reported with file, line and reason
            extra = '\n[Board "31"]\n[Deal "N:AKQ.. - - -"]\n\n[Board "32"]\n[Dealer "N"]\n'
        if k == 6:  # a game without a Board tag, repeating a deal of m0
            extra = f'\n[Event "x"]\n[Deal "{pool[0].to_pbn(Seat.E)}"]\n'
        if k == 5:  # a comment: the strict reader's own games read this file
            extra = f'\n{{a comment}}\n[Board "40"]\n[Deal "{pool[30].to_pbn(Seat.N)}"]\n'
        text = _match_file(deals, rng, event, eol, extra)
        path = tmp_path / f"m{k}.pbn"
        path.write_bytes(text.encode("latin-1" if k == 1 else "utf-8"))
        files.append(path)
    for k in (0, 3, 6):  # the same file again under other names (a collection holds copies)
        copy = tmp_path / f"copy-of-m{k}.pbn"
        shutil.copyfile(files[k], copy)
        files.append(copy)
    return files


def _expected(files: list[Path], held: dict[Deal, int]) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Each record's outcome and each problem, a record at a time through the strict reader."""
    outcomes: list[tuple[object, ...]] = []
    problems: list[tuple[object, ...]] = []
    first: dict[Deal, tuple[int, str]] = {deal: (deal_id, "bank") for deal, deal_id in held.items()}
    next_id = max(held.values(), default=0) + 1
    for path in files:
        result = PBN.read(path.read_bytes())
        problems += [(str(path), p.line, p.board, p.reason) for p in result.problems]
        for rec in result.records:
            seen = first.get(rec.deal)
            if seen is None:
                first[rec.deal] = (next_id, f"{path}:{rec.line}")
                outcomes.append((str(path), rec.line, rec.board, "new", next_id))
                next_id += 1
            else:
                outcomes.append((str(path), rec.line, rec.board, "duplicate", seen[0], seen[1]))
    return outcomes, problems


def _outcomes(bank: Bank, files: list[Path], batch_size: int) -> tuple[list[tuple[object, ...]], ...]:
    report = import_parsed(bank, read_files(files), batch_size=batch_size)
    new = {}
    for deal_id in range(report.first_deal or 1, (report.last_deal or 0) + 1):
        source = bank.get_deal(deal_id).source  # it references its batch's entry, which names its file
        file = bank.entry(source["batch"]).data["files"][source["file_index"]]["file"]
        new[(file, source["line"])] = deal_id
    got: list[tuple[object, ...]] = []
    for f, (_, scanned) in zip(report.files, read_files(files), strict=True):
        dups = {(d.line, d.board): d for d in f.duplicates}
        assert len(dups) == len(f.duplicates)
        for line, board in zip(scanned.lines, scanned.boards, strict=True):
            d = dups.get((line, board))
            if d is not None:
                got.append((f.path, line, board, "duplicate", d.repeats, d.first_seen))
            else:
                got.append((f.path, line, board, "new", new.pop((Path(f.path).name, line))))
    problems: list[tuple[object, ...]] = [(f.path, p.line, p.board, p.reason) for f in report.files for p in f.problems]
    assert not new  # every new deal in the bank is one record's
    return got, problems


def test_a_corpus_of_repeated_deals_imports_as_the_strict_reader_reads_it(bank: Bank, tmp_path: Path) -> None:
    rng = random.Random(23)
    files = _corpus(tmp_path, rng)
    before = PBN.read(files[4].read_bytes()).records[3].deal  # the bank holds one of the deals already
    held = {before: bank.commit_deal(before, station_source()).deal_id}
    expected, expected_problems = _expected(files, held)
    got, problems = _outcomes(bank, files, batch_size=7)
    assert got == expected
    no_board = [o for o in got if o[2] is None]  # the game without a Board tag, in m6 and in its copy
    assert [(o[0], o[3]) for o in no_board] == [(str(files[6]), "duplicate"), (str(files[-1]), "duplicate")]
    assert problems == expected_problems and len(problems) == 4  # two in m3, two in its copy
    # no silent loss: every Deal tag is a new deal, a duplicate or a problem; the bank holds each deal once
    tags = sum(p.read_bytes().count(b"[Deal ") for p in files)
    assert len(got) + sum(1 for p in problems if str(p[3]).startswith("Deal ")) == tags
    stored = {bank.get_deal(i).deal for i in range(1, bank.deal_count() + 1)}
    assert stored == {r.deal for p in files for r in PBN.read(p.read_bytes()).records} | {before}
    assert bank.deal_count() == len(stored)
    assert verify_bank(bank).ok


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is not beside this checkout")
def test_the_shared_sample_twice_imports_as_the_strict_reader_reads_it(bank: Bank, tmp_path: Path) -> None:
    originals = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn")
    files = []
    for k in range(2):  # each championship file twice, under another name: a collection's copies
        for i, src in enumerate(originals):
            dst = tmp_path / f"{k}-{i:03d}-{src.name}"
            shutil.copyfile(src, dst)
            files.append(dst)
    expected, expected_problems = _expected(files, {})
    got, problems = _outcomes(bank, files, batch_size=300)
    assert got == expected and problems == expected_problems
    assert bank.deal_count() == len({r.deal for p in originals for r in PBN.read(p.read_bytes()).records})
    assert verify_bank(bank).ok


def _columns(parsed: list[tuple[FileReport, ScannedDeals]]) -> list[tuple[object, ...]]:
    return [
        (r.path, r.format, r.sha256, r.records, r.problems, s.lines, s.boards, s.deals, s.problems) for r, s in parsed
    ]


def test_two_processes_read_the_files_as_one_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(29)
    files = _corpus(tmp_path, rng)
    lin = tmp_path / "other.lin"  # another format, with an unreadable record (its problem carries an error)
    lin.write_bytes(LIN.write([BoardRecord(random_deal(rng), 1)]) + b"\nqx|o1|md|3SAKQ|pg||\n")
    empty = tmp_path / "empty.pbn"
    empty.write_bytes(b"")
    paths = [*files[:5], lin, empty, *files[5:], tmp_path / "missing.pbn"]
    monkeypatch.setattr(file_reading, "PARALLEL_BYTES", 0)  # the sample is small: split it anyway
    one: list[SkippedFile] = []
    two: list[SkippedFile] = []
    sequential = read_files(paths, skip_bad=True, skipped=one, workers=1)
    done: list[int] = []
    parallel = read_files(paths, skip_bad=True, skipped=two, workers=2, progress=done.append)
    assert _columns(parallel) == _columns(sequential)
    assert [(s.path, s.reason) for s in two] == [(s.path, s.reason) for s in one]
    assert [s.path for s in one] == [str(empty), str(tmp_path / "missing.pbn")]
    assert done == sorted(done) and done[-1] == len(paths)
    assert any(p.error is not None for r, _ in sequential for p in r.problems)  # the LIN file's problem
    with pytest.raises(FormatError) as first:
        read_files(paths, workers=2)
    with pytest.raises(FormatError) as second:
        read_files(paths, workers=1)
    assert str(first.value) == str(second.value) and "2 files cannot be imported" in str(first.value)


@pytest.mark.parametrize(
    ("loadavg", "idle"),
    [
        ("2.61 1.90 1.20 1/300 999", True),  # a long job just ended: nothing else runs now
        ("0.20 0.30 0.30 4/300 999", True),  # three others run now, but only since a moment: the average decides
        ("2.10 2.00 1.90 3/300 999", False),  # two others run, and have for a while: no core to spare
        ("1.60 1.00 1.00 2/300 999", True),  # one other runs: one core is free
        ("garbled", False),
    ],
)
def test_a_second_reader_only_where_a_core_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loadavg: str, idle: bool
) -> None:
    fake = tmp_path / "loadavg"
    fake.write_text(loadavg + "\n")
    monkeypatch.setattr(file_reading, "LOADAVG", str(fake))
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("threading.active_count", lambda: 1)  # pytest-xdist's worker runs threads of its own
    assert file_reading.second_core_idle() is idle
