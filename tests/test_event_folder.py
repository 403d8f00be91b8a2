"""One event folder: run from the event's folder (a Cyrillic name), the command line acts by the event's
regulation (config/regulation.toml) and finds its bank and documents in var/, as the service does — never the
built-in default silently; a difference between what a command did and the regulation is flagged."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from bank_support import fill
from custody_support import passphrase_file, write_custody

from dealer.bank.store import SqliteBank
from dealer.core import DEAL_COUNT, Deal
from dealer.documents.acts import CHECK_ENTRY, equipment_check
from dealer.documents.issue import local_day
from dealer.documents.issuers import issue_equipment_act
from dealer.export.boards import number_deals
from dealer.formats import by_name, load_all
from dealer.regulation import parse_regulation

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) not installed")

REGULATION = """
title = "Кубок клуба"
venue = "Казань"
starts = 2026-12-01
[dealing]
variant = 2
open_cards = 32
[draw]
share_percent = 10
[session]
boards = 2
copies = 3
[bank]
target = 100
[officials]
chief_judge = "Иванов И. И."
"""


def pdf_text(path: Path) -> str:
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True, timeout=60)
    return " ".join(out.stdout.decode("utf-8").replace("\u00a0", " ").split())


@pytest.fixture
def event(tmp_path: Path) -> Path:
    folder = tmp_path / "Чемпионат"
    (folder / "config").mkdir(parents=True)
    (folder / "config" / "regulation.toml").write_text(REGULATION, encoding="utf-8")
    (folder / "var").mkdir()
    bank = SqliteBank(folder / "var" / "bank.sqlite")
    fill(bank, 20)
    bank.close()
    load_all()
    rng = random.Random(5)
    boards = number_deals([Deal.from_rank(rng.randrange(DEAL_COUNT)) for _ in range(2)])
    (folder / "drawn.json").write_bytes(by_name("json").write([b.record() for b in boards]))
    return folder


def dealer(*args: str, cwd: Path, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "LANG": "ru_RU.UTF-8"}
    env.pop("DEALER_EVENT", None)
    env["DEALER_PASSPHRASE_FILE"] = str(passphrase_file(cwd))  # the chief judge's own file, for signing steps
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_export_boards_from_the_event_folder_uses_its_regulation(event: Path) -> None:
    run = dealer("export", "boards", "drawn.json", "--simulate", "-o", "boxes", "--name", "s1", cwd=event)
    assert run.returncode == 0, run.stderr
    assert "Положение: config/regulation.toml («Кубок клуба»)" in run.stderr  # said which one
    assert "экземпляров каждой коробки: 3" in run.stderr
    assert run.stdout.startswith("изготовлено 6 экземпляров,"), run.stdout  # 2 boards × 3 copies (not the default 2)
    run = dealer("docs", "boards", "s1", "--journal", "boxes/s1.journal.json", cwd=event)
    assert run.returncode == 0, run.stderr
    act = next((event / "var" / "documents").glob("*-boards-ru.pdf"))  # issued where the consoles issue them
    text = pdf_text(act)
    assert "3 комплекта" in text and "2 коробки" in text and "6 экземпляров" in text
    assert "SIM-BOARDS" in text and "не записана" not in text  # the machine, from the journal
    assert "Казань · 1 декабря 2026 г." in text
    assert "РАСХОЖДЕНИЕ" not in text


def test_a_difference_from_the_regulation_is_flagged_on_the_act(event: Path) -> None:
    run = dealer(
        "export", "boards", "drawn.json", "--simulate", "--copies", "2", "-o", "boxes", "--name", "s2", cwd=event
    )
    assert run.returncode == 0, run.stderr
    assert "--copies 2 расходится с Положением" in run.stderr
    run = dealer("docs", "boards", "s2", "--journal", "boxes/s2.journal.json", cwd=event)
    assert run.returncode == 0, run.stderr
    text = pdf_text(next((event / "var" / "documents").glob("*-boards-ru.pdf")))
    assert "РАСХОЖДЕНИЕ С ПОЛОЖЕНИЕМ" in text and "изготовлено 2 комплекта, а по Положению — 3" in text


def test_docs_day_finds_the_documents_the_consoles_issued(event: Path, tmp_path: Path) -> None:
    bank = SqliteBank(event / "var" / "bank.sqlite")
    device = {"model": "DM-4", "serial": "SN-7", "firmware": "1.0"}
    bank.record_event(CHECK_ENTRY, equipment_check("Сессия 1", "before", "A", "ok", device, {}, None, ""))
    issued = issue_equipment_act(bank, parse_regulation(REGULATION), "ru", event / "var" / "documents", "Сессия 1")
    day = local_day(datetime.fromisoformat(bank.entry(issued.ledger_index).ts))
    bank.close()
    run = dealer("docs", "day", "--date", day.isoformat(), cwd=event)
    assert run.returncode == 0, run.stderr
    assert len(list((event / "var" / "documents").glob("*-day-ru.pdf"))) == 1
    # from elsewhere, with --event (and a Cyrillic home folder)
    home = tmp_path / "Иванов"
    home.mkdir()
    run = dealer("docs", "day", "--date", day.isoformat(), "--event", str(event), cwd=tmp_path, home=home)
    assert run.returncode == 0, run.stderr
    assert len(list((event / "var" / "documents").glob("*-day-ru.pdf"))) == 2


def test_bank_seal_warns_against_the_events_target(event: Path, tmp_path: Path) -> None:
    write_custody(event / "var")  # the chief judge's custody of the bank's key
    run = dealer("bank", "seal", cwd=event)
    assert run.returncode == 0, run.stderr
    assert "запечатано 20 сдач, меньше цели Положения 100" in run.stderr, run.stderr  # not the default's target
    # outside any event folder the embedded default is named, never used silently
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = dealer("bank", "seal", "--bank", str(event / "var" / "bank.sqlite"), cwd=elsewhere)
    assert run.returncode == 0, run.stderr
    assert "Положение: встроенное по умолчанию" in run.stderr


def test_docs_closed_checks_the_events_boards_file_against_the_ledger(event: Path) -> None:
    from dealer.app.closed import ClosedBoards
    from dealer.documents.acts import CLOSED_BOARD_ENTRY

    boards = ClosedBoards(event / "var" / "boards" / "closed.jsonl", 2, 3)
    bank = SqliteBank(event / "var" / "bank.sqlite")
    rng = random.Random(9)
    for _ in range(2):
        board = boards.add(Deal.from_rank(rng.randrange(DEAL_COUNT)), "A")
        bank.record_event(CLOSED_BOARD_ENTRY, board.ledger_payload())
    bank.close()
    run = dealer("docs", "closed", "Сессия 1", cwd=event)
    assert run.returncode == 0, run.stderr
    text = pdf_text(next((event / "var" / "documents").glob("*-closed-ru.pdf")))
    assert "Акт закрытой сдачи" in text and "2 коробки из 2 по Положению" in text
    assert "каждая коробка записана в журнал, хэши сдач совпадают" in text
    # a board changed in the file after the fact no longer matches its ledger entry: flagged on the act
    path = event / "var" / "boards" / "closed.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    other = Deal.from_rank(rng.randrange(DEAL_COUNT)).to_pbn()
    lines[1] = re.sub(r'"deal":"[^"]+"', f'"deal":"{other}"', lines[1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = dealer("docs", "closed", "Сессия 1", "--no-audit", cwd=event)
    assert run.returncode == 0, run.stderr
    latest = sorted((event / "var" / "documents").glob("*-closed-ru.pdf"))[-1]
    assert "РАСХОЖДЕНИЕ: 1 коробка не сходится с журналом" in pdf_text(latest)


def test_docs_boards_finds_the_consoles_journal_and_export_names_by_the_event(event: Path) -> None:
    """Without --journal, docs boards reads the journal where the consoles keep it (var/export/<session>-<id>/,
    the id the first 12 hex digits of the label's SHA-256); without --name, export boards names the journal by the
    regulation's title, Cyrillic kept (#28)."""
    from hashlib import sha256

    folder = Path("var") / "export" / ("Тур_1-" + sha256("Тур 1".encode()).hexdigest()[:12])  # by hand
    run = dealer("export", "boards", "drawn.json", "--simulate", "-o", str(folder), "--name", "Тур_1", cwd=event)
    assert run.returncode == 0, run.stderr
    run = dealer("docs", "boards", "Тур 1", cwd=event)
    assert run.returncode == 0, run.stderr
    assert "6 экземпляров" in pdf_text(next((event / "var" / "documents").glob("*-boards-ru.pdf")))
    run = dealer("export", "boards", "drawn.json", "--simulate", "-o", "boxes", cwd=event)
    assert run.returncode == 0, run.stderr
    assert [p.name for p in (event / "boxes").iterdir()] == ["Кубок_клуба.journal.json"]
