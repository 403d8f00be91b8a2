"""Documents to print and sign: every act renders in Russian and English with its required fields, officials'
names and hashes (read back by poppler's pdftotext), and the ledger records exactly the issued file's SHA-256."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import date, datetime
from hashlib import sha256
from pathlib import Path

import pytest
from bank_support import fill
from custody_support import unlocked

from dealer.bank.ledger import canonical_json
from dealer.bank.store import SqliteBank
from dealer.documents.acts import CHECK_ENTRY, DocumentError, equipment_check
from dealer.documents.issue import issue_day, local_day, verify_file
from dealer.documents.issuers import (
    issue_bank_act,
    issue_boards_act,
    issue_draw_annex,
    issue_draw_protocol,
    issue_equipment_act,
)
from dealer.draw.director import Director
from dealer.draw.protocol import dice_spec
from dealer.regulation import Regulation, RegulationError, parse_regulation

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) not installed")

REGULATION = """
title = "Чемпионат России 2026, пары"
[dealing]
variant = 2
open_cards = 32
[draw]
share_percent = 5
[session]
boards = 4
copies = 2
[bank]
target = 80
[officials]
chief_judge = "Иванов Иван Иванович"
technical_judge = "Петров Пётр Петрович"
secretary = "Сидорова Светлана Сергеевна"
"""
LABEL = "Сессия 1"
DEVICE = {"model": "DM-4", "serial": "SN-0042", "firmware": "1.3.0"}
WITNESSES = ["Кузнецов К. К.", "Smith J."]


def pdf_text(path: Path) -> str:
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True, timeout=60)
    return " ".join(
        out.stdout.decode("utf-8").replace("\u00a0", " ").split()
    )  # one line: table cells and wrapped values joined


def has(text: str, value: str) -> bool:
    """``value`` as a whole phrase ("80 сдач" is not found in "80 сдачи"); hashes and ids may wrap in a cell."""
    if re.fullmatch(r"[0-9a-f-]{32,}", value):  # a hash wrapped in a table cell: its pieces, in order
        tokens = set(text.split())

        def pieces(rest: str) -> bool:
            return rest in tokens or any(rest[:k] in tokens and pieces(rest[k:]) for k in range(8, len(rest) - 3))

        return pieces(value)
    return re.search(r"(?<![\w])" + re.escape(value) + r"(?![\w])", text) is not None


@pytest.fixture(scope="module")
def reg() -> Regulation:
    return parse_regulation(REGULATION)


@pytest.fixture
def bank(tmp_path: Path) -> SqliteBank:
    b = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    fill(b, 80)
    for reason in ("duplicate_card", "jam", "duplicate_card"):
        b.void_deal(reason, "T1")
    health = {"cards_read": 4264, "deals": 82, "errors": 2, "error_rate": 2.44, "norm": 1.0}
    b.record_event(CHECK_ENTRY, equipment_check(LABEL, "before", "T1", "ok", DEVICE, {}, None, "перед началом"))
    calibration = {"file": "cam-A.json", "created": "2026-11-29T10:00:00+00:00"}
    b.record_event(CHECK_ENTRY, equipment_check(LABEL, "after", "T1", "faulty", DEVICE, health, calibration, "jams"))
    director = Director(b)
    b.seal()
    director.prepare(LABEL, dice_spec(["Орлов О. О.", "Белова Б. Б."], 7), parse_regulation(REGULATION))
    director.publish(LABEL)
    director.enter_public_value(LABEL, ["1234561", "6543216"], None)
    director.run(LABEL)
    return b


def reveal(bank: SqliteBank) -> None:
    Director(bank).reveal(LABEL)


def check_recorded(bank: SqliteBank, path: Path, ledger_index: int) -> None:
    """The ledger's hash is the file's own (computed here from the bytes on disk)."""
    data = path.read_bytes()
    entry = bank.entry(ledger_index)
    assert entry.kind == "document"
    assert entry.data["sha256"] == sha256(data).hexdigest()
    assert entry.data["file"] == path.name
    found = verify_file(bank, data)
    assert found is not None and found.index == ledger_index
    assert verify_file(bank, data[:-1] + bytes([data[-1] ^ 1])) is None


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_bank_act(bank: SqliteBank, reg: Regulation, tmp_path: Path, lang: str) -> None:
    issued = issue_bank_act(bank, reg, lang, tmp_path / "docs", WITNESSES, audit=False)
    check_recorded(bank, issued.path, issued.ledger_index)
    text = pdf_text(issued.path)
    seal = bank.seals()[0]
    must = [
        reg.title,
        reg.chief_judge,
        reg.technical_judge,
        *WITNESSES,
        bank.bank_id,
        seal.root,
        bank.entry(issued.ledger_index).prev,
    ]
    must += ["DM-4", "SN-0042", "1.3.0"]
    for value in must:
        assert has(text, value), value
    if lang == "ru":
        for phrase in (
            "Акт формирования банка сдач",
            "№ 1",
            "Вариант 2 — частичная открытая сдача",
            "32 открытые карты",
            "80 сдач",
            "повтор карты 2",  # void reason and its count, from the catalogue
            "замятие карты 1",
            "Главный судья",
            "Технический судья",
            "Свидетель",
            "Проверка не проводилась",
        ):
            assert has(text, phrase), phrase
    else:
        for phrase in ("Deal bank formation act", "No. 1", "32 open cards", "80 deals", "Chief judge", "Not run"):
            assert has(text, phrase), phrase


def test_bank_act_with_the_audit_verdict(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    issued = issue_bank_act(bank, reg, "ru", tmp_path / "docs")
    text = pdf_text(issued.path)
    # the test bank's deals all carry the same dealing order: the audit must say so
    assert "Проверка НЕ пройдена (80 сдач)" in text


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_draw_protocol_never_lists_the_drawn_deals(
    bank: SqliteBank, reg: Regulation, tmp_path: Path, lang: str
) -> None:
    issued = issue_draw_protocol(bank, reg, lang, tmp_path / "docs", LABEL)
    check_recorded(bank, issued.path, issued.ledger_index)
    text = pdf_text(issued.path)
    index = bank.get_draw(LABEL).commit_index
    commit = bank.entry(index).data["commitment"]
    digest = sha256(canonical_json(commit)).hexdigest()
    # the ledger head once the commitment was in: its entry's stored bytes hashed (hashlib, not the ledger code)
    head = sha256(bank.entry_bodies([index])[index]).hexdigest()
    assert f"{index + 1}:{head}" in text.replace(" ", "")  # a hash wraps in its table cell: read without spaces
    for value in (
        LABEL,
        digest,
        commit["k_hash"],
        commit["seal"]["root"],
        "1234561/6543216",
        "Орлов О. О.",
        "Белова Б. Б.",
    ):
        assert has(text, value), value
    for name in (reg.chief_judge, reg.secretary):
        assert has(text, name)
    drawn = Director(bank).drawn_deals(LABEL)
    for item in drawn:  # no hand of a drawn deal appears (the PBN of each hand's spades, say)
        assert item.deal.deal.to_pbn() not in text
    if lang == "ru":
        for phrase in (
            "Протокол жеребьёвки",
            "4 сдачи",
            "80 сдач",
            "2 свидетеля",
            "7 бросков",
            "5,00 %",
            "жеребьёвка проведена",
            "Доля всего банка",
        ):
            assert has(text, phrase), phrase
    else:
        for phrase in ("Deal draw protocol", "4 deals", "2 witnesses", "7 rolls", "drawn"):
            assert has(text, phrase), phrase


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_draw_annex_only_after_reveal(bank: SqliteBank, reg: Regulation, tmp_path: Path, lang: str) -> None:
    size = bank.ledger_size()
    with pytest.raises(DocumentError, match=LABEL):
        issue_draw_annex(bank, reg, lang, tmp_path / "docs", LABEL)
    assert bank.ledger_size() == size and not (tmp_path / "docs").exists()  # nothing issued, no number taken
    reveal(bank)
    issued = issue_draw_annex(bank, reg, lang, tmp_path / "docs", LABEL)
    check_recorded(bank, issued.path, issued.ledger_index)
    text = pdf_text(issued.path)
    drawn = bank.get_draw(LABEL).drawn or ()
    assert len(drawn) == 4
    ranks = "AKQJT98765432" if lang == "en" else "ТКДВT98765432"
    for board, deal_id in enumerate(drawn, start=1):
        deal = bank.get_deal(deal_id).deal
        north_spades = deal.to_pbn().split(":")[1].split()[0].split(".")[0]  # PBN "N:" first hand, spades
        shown = " ".join("10" if c == "T" else ranks["AKQJT98765432".index(c)] for c in north_spades) or "—"
        assert has(text, f"♠ {shown}"), (board, shown)
        assert has(text, str(deal_id))
    seat = "С" if lang == "ru" else "N"
    assert f"{seat}: ♠" in text


def test_boards_act(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    journal = tmp_path / "journal.json"
    done = [[b, c] for b in range(1, 5) for c in (1, 2)]
    fouls = [{"board": 2, "copy": 1, "attempt": 1, "reason": "jam", "card": "♠A", "pocket": "N", "expected": "E"}]
    journal.write_text(json.dumps({"version": 1, "boards_digest": "x", "done": done, "fouls": fouls}))
    with pytest.raises(DocumentError, match="Сессия 1"):  # neither a run in the ledger nor a journal
        issue_boards_act(bank, reg, "ru", tmp_path / "docs", LABEL, tmp_path / "absent.json")
    # a run of `dealer export boards` (not in the ledger): the journal alone, its hash computed here
    alone = issue_boards_act(bank, reg, "ru", tmp_path / "alone", LABEL, journal)
    text = pdf_text(alone.path)
    assert has(text, sha256(journal.read_bytes()).hexdigest()) and has(text, "4 коробки") and has(text, "не записана")
    jdigest = sha256(journal.read_bytes()).hexdigest()
    bank.record_event(
        "export", {"what": "boards", "label": LABEL, "files": {journal.name: jdigest}, "copies": 8, "machine": DEVICE}
    )
    for lang, phrases, pockets in (
        (
            "ru",
            ["Акт изготовления комплектов", "4 коробки", "2 комплекта", "8 экземпляров", "замятие карты", "да"],
            "С/В",
        ),
        ("en", ["Board-making act", "4 boards", "2 sets", "8 copies", "jam", "yes"], "N/E"),
    ):
        issued = issue_boards_act(bank, reg, lang, tmp_path / "docs", LABEL, journal)
        check_recorded(bank, issued.path, issued.ledger_index)
        text = pdf_text(issued.path)
        for value in [*phrases, "SN-0042", jdigest, "♠A", reg.technical_judge, reg.chief_judge]:
            assert has(text, value), (lang, value)
        assert pockets in text.replace(" ", "")  # the machine's pocket and the expected one, in the language


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_equipment_act(bank: SqliteBank, reg: Regulation, tmp_path: Path, lang: str) -> None:
    issued = issue_equipment_act(bank, reg, lang, tmp_path / "docs", LABEL)
    check_recorded(bank, issued.path, issued.ledger_index)
    text = pdf_text(issued.path)
    for value in ("SN-0042", "DM-4", "4264 / 82 / 2", "cam-A.json", reg.technical_judge):
        assert has(text, value), value
    if lang == "ru":
        for phrase in ("Акт проверки оборудования", "до начала", "после", "исправно", "неисправно", "2 проверки"):
            assert has(text, phrase), phrase
        assert "2,44 (выше нормы)" in text
    else:
        for phrase in ("Equipment check act", "before", "after", "in order", "faulty", "2 checks"):
            assert has(text, phrase), phrase
    with pytest.raises(DocumentError, match="Сессия 2|Session 2"):
        issue_equipment_act(bank, reg, lang, tmp_path / "docs", "Сессия 2" if lang == "ru" else "Session 2")


def test_equipment_check_refuses_bad_input() -> None:
    for args, word in (
        (("", "before", "A", "ok"), "session"),
        (("S", "halfway", "A", "ok"), "phase"),
        (("S", "before", "A", "good"), "outcome"),
    ):
        with pytest.raises(DocumentError, match=word):
            equipment_check(*args, None, {})


def test_numbers_run_on_and_the_day_bundles_them(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    first = issue_equipment_act(bank, reg, "ru", out, LABEL)
    second = issue_draw_protocol(bank, reg, "en", out, LABEL)
    assert (first.number, second.number) == (1, 2)
    day = local_day(bank_time(bank, first.ledger_index))
    issued = issue_day(bank, out, day, "ru")
    assert issued.number == 3
    check_recorded(bank, issued.path, issued.ledger_index)
    text = pdf_text(issued.path)
    assert "Содержание" in text
    for doc in (first, second):
        assert has(text, doc.sha256) and has(text, doc.title)
    assert "Акт проверки оборудования" in text and "Deal draw protocol" in text
    # a document's stored content changed after issue is refused, naming the file
    stored = out / first.path.with_suffix(".json").name
    stored.write_text(stored.read_text(encoding="utf-8").replace("SN-0042", "SN-9999"), encoding="utf-8")
    with pytest.raises(DocumentError, match=stored.name):
        issue_day(bank, out, day, "ru")
    with pytest.raises(DocumentError):
        issue_day(bank, out, date(2001, 1, 1), "ru")


def bank_time(bank: SqliteBank, index: int) -> datetime:
    return datetime.fromisoformat(bank.entry(index).ts)


def test_regulation_officials() -> None:
    reg = parse_regulation(REGULATION)
    assert (reg.chief_judge, reg.technical_judge, reg.secretary) == (
        "Иванов Иван Иванович",
        "Петров Пётр Петрович",
        "Сидорова Светлана Сергеевна",
    )
    with pytest.raises(RegulationError, match="officials.referee"):
        parse_regulation(REGULATION + 'referee = "X"\n')
    with pytest.raises(RegulationError, match="officials.secretary"):
        parse_regulation(REGULATION.replace('secretary = "Сидорова Светлана Сергеевна"', "secretary = 3"))


def test_cli_issues_and_verifies(bank: SqliteBank, tmp_path: Path) -> None:
    reveal(bank)
    bank.close()
    (tmp_path / "reg.toml").write_text(REGULATION, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "LANG": "C.UTF-8"}

    def dealer(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dealer", *args], capture_output=True, text=True, env=env, timeout=120,
            cwd=tmp_path, check=False,
        )  # fmt: skip

    common = ["--bank", "bank.sqlite", "--regulation", "reg.toml", "--dir", "docs"]
    r = dealer("docs", "annex", LABEL, *common)
    assert r.returncode == 0, r.stderr
    pdf = tmp_path / "docs" / "001-draw-annex-ru.pdf"  # Russian by default
    assert pdf.is_file() and sha256(pdf.read_bytes()).hexdigest() in r.stdout
    assert "Приложение к протоколу жеребьёвки" in pdf_text(pdf)
    r = dealer("docs", "equipment", LABEL, "--lang", "en", *common)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "docs" / "002-equipment-en.pdf").is_file()
    r = dealer("docs", "verify", "docs/001-draw-annex-ru.pdf", "--bank", "bank.sqlite")
    assert r.returncode == 0 and "№1" not in r.stderr and "документ №1" in r.stdout, r.stderr  # Russian by default
    other = tmp_path / "other.pdf"
    other.write_bytes(pdf.read_bytes() + b"\n")
    r = dealer("docs", "verify", str(other), "--bank", "bank.sqlite")
    assert r.returncode == 1 and "не записан в журнале" in r.stderr
    r = dealer("docs", "day", "--date", "2026-13-01", "--bank", "bank.sqlite")
    assert r.returncode == 1 and "ГГГГ-ММ-ДД" in r.stderr
    r = dealer("docs", "equipment", LABEL, "--lang", "de", *common)
    assert r.returncode == 1 and "--lang" in r.stderr
