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
from dealer.i18n import error_text
from dealer.integrity.ledger import canonical_json
from dealer.regulation import Regulation, RegulationError, parse_regulation

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) not installed")

REGULATION = """
title = "Чемпионат России 2026, пары"
venue = "Москва, Центральный дом шахматиста"
starts = 2026-12-01
ends = 2026-12-05
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


def pdf_pages(path: Path) -> list[str]:
    """Each page's text (pdftotext ends every page with a form feed), whitespace collapsed."""
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True, timeout=60)
    pages = out.stdout.decode("utf-8").replace("\u00a0", " ").split("\f")
    return [" ".join(p.split()) for p in pages[:-1]]


def words_inside_the_page(path: Path) -> None:
    """Every word of every page inside the page's margins (15 mm ≈ 42.5 pt; 5 pt of slack): nothing drawn past the
    edge of the paper or into the margin a printer cuts."""
    out = subprocess.run(["pdftotext", "-bbox", str(path), "-"], capture_output=True, check=True, timeout=60)
    html = out.stdout.decode("utf-8")
    pages = re.split(r"<page ", html)[1:]
    assert pages, path.name
    for number, page in enumerate(pages, start=1):
        size = re.match(r'width="([\d.]+)" height="([\d.]+)"', page)
        assert size is not None
        width, height = float(size.group(1)), float(size.group(2))
        for m in re.finditer(r'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<', page):
            x0, y0, x1, y1 = (float(v) for v in m.groups()[:4])
            inside = x0 >= 37 and x1 <= width - 37 and y0 >= 20 and y1 <= height - 10
            assert inside, (path.name, number, m.group(5))


FOOTER = re.compile(r"(Стр\.|Page) \d+/\d+")


def signatures_have_company(path: Path, heading: str = "Подписи") -> None:
    """The page that holds the signature lines holds some of the document's content above them, beyond the
    page's footer and the title block of page 1 (a signature block alone on a page is not signed)."""
    words_inside_the_page(path)
    pages = pdf_pages(path)
    found = [k for k, text in enumerate(pages) if heading in text]
    assert len(found) == 1, (path.name, found)
    page = pages[found[0]]
    before = page.split(heading)[0].strip()
    if found[0] > 0:
        assert before, f"{path.name}: the signatures stand alone on page {found[0] + 1}"
    assert all(FOOTER.search(text) for text in pages)


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
    calibration = {"file": "cam-A.json", "created": "2026-11-29T10:00:00+00:00", "predicted_error_rate": 0.00075}
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
        reg.secretary,  # the secretary signs the bank's act too
        *WITNESSES,
        bank.bank_id,
        seal.root,
    ]
    # the head as the act was issued (SIZE:HASH): the hash its own ledger entry chains onto
    assert f"{issued.ledger_index}:{bank.entry(issued.ledger_index).prev}" in text.replace(" ", "")
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
            "Секретарь",
            "Проверка не проводилась",
            "Москва, Центральный дом шахматиста · 1–5 декабря 2026 г.",  # the venue and the dates (written out)
        ):
            assert has(text, phrase), phrase
        signatures_have_company(issued.path)
    else:
        for phrase in ("Deal bank formation act", "No. 1", "32 open cards", "80 deals", "Chief judge", "Not run"):
            assert has(text, phrase), phrase
        assert has(text, "December 1 – 5, 2026") and has(text, "Secretary")
        signatures_have_company(issued.path, "Signatures")


def test_an_import_of_many_files_is_listed_a_file_a_row_across_pages(reg: Regulation, tmp_path: Path) -> None:
    """One import of 70 files: each file's name, format, records and SHA-256 (computed here from the bytes) on a
    row of its own, the rows running over pages; the import's own row says 70 files and the deals it took."""
    import random

    from bank_support import random_deal

    from dealer.bank_import.importer import import_files
    from dealer.formats import formats
    from dealer.formats.base import BoardRecord, ExportMeta

    rng = random.Random(70)
    files = []
    for k in range(70):
        records = [BoardRecord(random_deal(rng), board=b) for b in range(1, 4)]
        path = tmp_path / f"round{k:02d}.pbn"
        path.write_bytes(formats()["pbn"].write(records, ExportMeta(event=f"round {k}")))
        files.append(path)
    bank = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    import_files(bank, files)
    issued = issue_bank_act(bank, reg, "ru", tmp_path / "docs", audit=False)
    pages = pdf_pages(issued.path)
    assert len(pages) >= 3
    text = " ".join(pages)
    for path in files:
        assert has(text, path.name), path.name
        assert has(text, sha256(path.read_bytes()).hexdigest()), path.name
    index = bank.entries_of_kind("import")[0].index
    assert has(text, f"{index} 70 210 0")  # the import's row: its ledger entry, 70 files, 210 deals, no repeats
    words_inside_the_page(issued.path)


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
        signatures_have_company(issued.path)
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


def test_the_annex_cites_its_protocol_by_number(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    reveal(bank)
    early = issue_draw_annex(bank, reg, "ru", tmp_path / "docs", LABEL)
    assert has(pdf_text(early.path), "протокол жеребьёвки этой сессии не оформлен")  # flagged, not silent
    protocol = issue_draw_protocol(bank, reg, "ru", tmp_path / "docs", LABEL)
    annex = issue_draw_annex(bank, reg, "ru", tmp_path / "docs", LABEL)
    text = pdf_text(annex.path)
    assert (early.number, protocol.number, annex.number) == (1, 1, 2)  # each type numbered on its own
    assert has(text, "К протоколу жеребьёвки") and has(text, "№ 1, составлен")  # label and value: two columns
    # and the commitment and V the deals were drawn with, as the protocol prints them (SHA-256 of the
    # commitment's canonical JSON, computed here)
    digest = sha256(canonical_json(bank.entry(bank.get_draw(LABEL).commit_index).data["commitment"])).hexdigest()
    assert has(text, digest) and has(pdf_text(protocol.path), digest)
    assert has(text, "SHA-256 обязательства") and has(text, "Публичное значение V") and has(text, "1234561/6543216")
    signatures_have_company(annex.path)


@pytest.mark.parametrize("rows", range(1, 41))
def test_signatures_never_stand_alone_on_a_page(tmp_path: Path, rows: int) -> None:
    """Tables of 1..40 rows end at every height of a page: the signature lines always share theirs with content."""
    from dealer.documents.model import Document, Fields, Signature, Table
    from dealer.documents.pdf import render_document

    doc = Document(
        "equipment",
        "ru",
        "Акт проверки оборудования",
        1,
        "№ 1",
        "2026-12-01T10:00:00+00:00",
        "1 дек. 2026 г.",
        "Чемпионат",
        (
            Fields("Проверки", (("Сессия", "Сессия 1"),)),
            Table("Проверки", ("Этап", "Примечание"), tuple((f"строка {k}", "после") for k in range(rows))),
        ),
        tuple(Signature(r, "Иванов И. И.") for r in ("Технический судья", "Свидетель", "Свидетель")),
        {"signatures": "Подписи", "page": "Стр.", "hash_note": "SHA-256 этого файла записан в журнал банка сдач."},
    )
    path = tmp_path / "doc.pdf"
    path.write_bytes(render_document(doc))
    signatures_have_company(path)
    text = pdf_text(path)
    assert all(has(text, f"строка {k}") for k in range(rows))  # no row lost in the move


def test_boards_act(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    journal = tmp_path / "journal.json"
    done = [[b, c] for b in range(1, 5) for c in (1, 2)]
    fouls = [
        {"board": 2, "copy": 1, "attempt": 1, "reason": "jam", "card": "♠A", "pocket": "N", "expected": "E",
         "kind": "fault:jam", "position": 17},
        {"board": 3, "copy": 2, "attempt": 1, "reason": "♥5 went to pocket W, belongs in N", "card": "♥5",
         "pocket": "W", "expected": "N", "kind": "wrong_pocket", "position": 29},
    ]  # fmt: skip
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
    for lang, note in (("ru", "не по самой карте"), ("en", "never by the card")):  # before the reveal: blind
        issued = issue_boards_act(bank, reg, lang, tmp_path / "blind", LABEL, journal)
        text = pdf_text(issued.path)
        for suit in "♠♥♦♣":  # no card is named: the fouls' cards are cards of drawn deals
            assert suit not in text, (lang, suit)
        assert "belongs" not in text and "С/В" not in text.replace(" ", "") and "N/E" not in text.replace(" ", "")
        for value in ("17", "29", note, "SN-0042"):
            assert has(text, value), (lang, value)
    reveal(bank)
    for lang, phrases, pockets in (
        (
            "ru",
            ["Акт изготовления комплектов", "4 коробки", "2 комплекта", "8 экземпляров", "замятие карты", "да", "♠Т"],
            "С/В",
        ),
        ("en", ["Board-making act", "4 boards", "2 sets", "8 copies", "jam", "yes", "♠A"], "N/E"),
    ):
        issued = issue_boards_act(bank, reg, lang, tmp_path / "docs", LABEL, journal)
        check_recorded(bank, issued.path, issued.ledger_index)
        text = pdf_text(issued.path)
        for value in [*phrases, "SN-0042", jdigest, reg.technical_judge, reg.chief_judge]:
            assert has(text, value), (lang, value)
        assert pockets in text.replace(" ", "")  # the machine's pocket and the expected one, in the language
        signatures_have_company(issued.path, "Подписи" if lang == "ru" else "Signatures")


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
        assert has(text, "не более 0,075 %")  # the camera calibration's predicted misreads per card (#31)
        assert has(text, "Итоги проверок")  # the summary block and the table «Проверки», not two «Проверки»
        for word in ("Примечание", "Результат", "Калибровка", "неисправно", "Устройство"):  # no word cut in a cell
            assert re.search(rf"(?<!\w){word}(?!\w)", text), word
        signatures_have_company(issued.path)
    else:
        for phrase in ("Equipment check act", "before", "after", "in order", "faulty", "2 checks"):
            assert has(text, phrase), phrase
        assert has(text, "at most 0.075 %")
    with pytest.raises(DocumentError, match="Сессия 2|Session 2"):
        issue_equipment_act(bank, reg, lang, tmp_path / "docs", "Сессия 2" if lang == "ru" else "Session 2")


def test_in_order_is_refused_above_the_error_norm() -> None:
    over = {"cards_read": 624, "deals": 12, "errors": 80, "error_rate": 12.82, "norm": 1.0}
    with pytest.raises(DocumentError, match="12.82 errors per 100 deals is above the norm of 1.0") as caught:
        equipment_check(LABEL, "during", "T1", "ok", DEVICE, over)
    assert "выше нормы" in error_text(caught.value, "ru")
    assert equipment_check(LABEL, "during", "T1", "faulty", DEVICE, over)["outcome"] == "faulty"
    at_norm = {**over, "error_rate": 1.0}
    assert equipment_check(LABEL, "during", "T1", "ok", DEVICE, at_norm)["outcome"] == "ok"


def test_missing_check_stages_are_flagged_on_the_act(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    text = pdf_text(issue_equipment_act(bank, reg, "ru", tmp_path / "docs", LABEL).path)
    assert "НЕ ЗАПИСАНЫ ЭТАПЫ ПРОВЕРКИ" in text and "T1: в ходе" in text  # before and after are there
    bank.record_event(CHECK_ENTRY, equipment_check(LABEL, "during", "T1", "ok", DEVICE, {}))
    text = pdf_text(issue_equipment_act(bank, reg, "ru", tmp_path / "docs", LABEL).path)
    assert "НЕ ЗАПИСАНЫ" not in text


def test_equipment_check_refuses_bad_input() -> None:
    for args, word in (
        (("", "before", "A", "ok"), "session"),
        (("S", "halfway", "A", "ok"), "phase"),
        (("S", "before", "A", "good"), "outcome"),
    ):
        with pytest.raises(DocumentError, match=word):
            equipment_check(*args, None, {})


def test_each_type_numbered_on_its_own(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    """Протокол жеребьёвки № 1, № 2 and Акт проверки оборудования № 1, № 2 beside each other, each title
    with its number on the page; a bank whose documents were numbered in one run (before) goes on past the
    highest of each type, so no file name is taken twice."""
    out = tmp_path / "docs"
    got = []
    for kind, lang in (("equipment", "ru"), ("draw", "ru"), ("equipment", "ru"), ("draw", "ru"), ("draw", "en")):
        if kind == "draw":
            got.append(issue_draw_protocol(bank, reg, lang, out, LABEL))
        else:
            got.append(issue_equipment_act(bank, reg, lang, out, LABEL))
    assert [(i.kind, i.number) for i in got] == [
        ("equipment", 1), ("draw", 1), ("equipment", 2), ("draw", 2), ("draw", 3)
    ]  # fmt: skip
    assert [i.path.name for i in got] == [
        "001-equipment-ru.pdf", "001-draw-ru.pdf", "002-equipment-ru.pdf", "002-draw-ru.pdf", "003-draw-en.pdf"
    ]  # fmt: skip
    assert has(pdf_text(got[3].path), "№ 2") and has(pdf_text(got[2].path), "№ 2")
    # a bank numbered in one run: document 7 was a draw protocol, 8 an equipment act (files of that time kept)
    for number, kind in ((7, "draw"), (8, "equipment")):
        name = f"{number:03d}-{kind}-ru.pdf"
        (out / name).write_bytes(b"%PDF old")
        bank.record_event("document", {"doc": kind, "number": number, "lang": "ru", "file": name, "sha256": "0" * 64})
    assert issue_draw_protocol(bank, reg, "ru", out, LABEL).path.name == "008-draw-ru.pdf"
    assert issue_equipment_act(bank, reg, "ru", out, LABEL).path.name == "009-equipment-ru.pdf"


def test_the_day_bundles_the_documents(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    first = issue_equipment_act(bank, reg, "ru", out, LABEL)
    second = issue_draw_protocol(bank, reg, "en", out, LABEL)
    assert (first.number, second.number) == (1, 1)
    day = local_day(bank_time(bank, first.ledger_index))
    issued = issue_day(bank, out, day, "ru")
    assert issued.number == 1
    check_recorded(bank, issued.path, issued.ledger_index)
    text = pdf_text(issued.path)
    assert "Содержание" in text
    for doc in (first, second):
        assert has(text, doc.sha256) and has(text, doc.title)
    assert "Акт проверки оборудования" in text and "Deal draw protocol" in text
    # the contents' page numbers are where each document starts; no page is blank; each page's footer names
    # the document on it
    words_inside_the_page(issued.path)
    pages = pdf_pages(issued.path)
    assert all(FOOTER.search(p) and len(p) > 80 for p in pages), [p[:80] for p in pages]
    starts = {
        title: next(k + 1 for k, p in enumerate(pages) if k > 0 and p.startswith(reg.title) and title in p)
        for title in ("Акт проверки оборудования", "Deal draw protocol")
    }
    layout = subprocess.run(["pdftotext", "-layout", "-l", "1", str(issued.path), "-"], capture_output=True, check=True)
    lines = layout.stdout.decode("utf-8").splitlines()
    numbers = [(k, m.group(1)) for k, line in enumerate(lines) if (m := re.search(r"\s{4}(\d+)\s*$", line))]
    for title, page in starts.items():  # the page column's number nearest to the title's line
        at = next(k for k, line in enumerate(lines) if title in line)
        assert min(numbers, key=lambda n: abs(n[0] - at))[1] == str(page), (title, page)
        assert f"{title} № " in pages[page - 1].split("·")[-2] or title in pages[page - 1][-120:]
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
    assert (tmp_path / "docs" / "001-equipment-en.pdf").is_file()
    r = dealer("docs", "verify", "docs/001-draw-annex-ru.pdf", "--bank", "bank.sqlite")
    assert r.returncode == 0, r.stderr
    # Russian by default, the document named by its title (not «(draw-annex, ru)»)
    assert "Приложение к протоколу жеребьёвки: сдачи сессии № 1 (на русском) выдан" in r.stdout, r.stdout
    other = tmp_path / "other.pdf"
    other.write_bytes(pdf.read_bytes() + b"\n")
    r = dealer("docs", "verify", str(other), "--bank", "bank.sqlite")
    assert r.returncode == 1 and "не записан в журнале" in r.stderr
    r = dealer("docs", "day", "--date", "2026-13-01", "--bank", "bank.sqlite")
    assert r.returncode == 1 and "ГГГГ-ММ-ДД" in r.stderr
    r = dealer("docs", "equipment", LABEL, "--lang", "de", *common)
    assert r.returncode == 1 and "--lang" in r.stderr


def test_regulation_venue_and_dates() -> None:
    reg = parse_regulation(REGULATION)
    assert (reg.venue, reg.starts, reg.ends) == (
        "Москва, Центральный дом шахматиста",
        date(2026, 12, 1),
        date(2026, 12, 5),
    )
    one_day = parse_regulation(REGULATION.replace("ends = 2026-12-05\n", ""))
    assert one_day.ends == date(2026, 12, 1)
    with pytest.raises(RegulationError, match="ends = 2026-11-30 is before starts = 2026-12-01"):
        parse_regulation(REGULATION.replace("ends = 2026-12-05", "ends = 2026-11-30"))
    with pytest.raises(RegulationError, match="starts = '2026-12-01' must be a date"):
        parse_regulation(REGULATION.replace("starts = 2026-12-01", 'starts = "2026-12-01"'))
    with pytest.raises(RegulationError, match="starts = .* must be a date"):
        parse_regulation(REGULATION.replace("starts = 2026-12-01", "starts = 2026-12-01T10:00:00"))


def _printed_head(path: Path) -> str:
    """The one SIZE:HASH printed in the document (a hash may wrap in its cell: its pieces are joined)."""
    tokens = pdf_text(path).split()
    found = []
    for k, token in enumerate(tokens):
        start = re.fullmatch(r"(\d+):([0-9a-f]+)", token)
        if start is None:
            continue
        digits = start.group(2)
        for more in tokens[k + 1 :]:  # the rest of a hash wrapped in its cell
            if len(digits) >= 64 or not re.fullmatch(r"[0-9a-f]+", more):
                break
            digits += more
        found.append(f"{start.group(1)}:{digits}")
    assert len(found) == 1 and re.fullmatch(r"\d+:[0-9a-f]{64}", found[0]), found  # one head printed
    return found[0]


def test_heads_printed_in_the_acts_pin_the_bundle(reg: Regulation, tmp_path: Path) -> None:
    """#27: the bank act issued right after the seal and the draw protocol print heads that `dealer draw verify
    --head` accepts for the draw's bundle, naming which; a head noted at another moment is refused, naming both heads
    the bundle proves."""
    b = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    fill(b, 80)
    director = Director(b)
    seal = b.seal()
    act = issue_bank_act(b, reg, "en", tmp_path / "docs", WITNESSES, audit=False)
    director.prepare(LABEL, dice_spec(["Орлов О. О.", "Белова Б. Б."], 7), reg)
    commit_index = b.get_draw(LABEL).commit_index
    director.publish(LABEL)
    later = f"{b.ledger_size()}:{b.ledger_head()}"  # noted after the publish: neither the seal nor the commitment
    director.enter_public_value(LABEL, ["1234561", "6543216"], None)
    director.run(LABEL)
    protocol = issue_draw_protocol(b, reg, "en", tmp_path / "docs", LABEL)
    director.reveal(LABEL)
    (tmp_path / "b.json").write_text(json.dumps(director.bundle(LABEL)), encoding="utf-8")
    bodies = b.entry_bodies([seal.ledger_index, commit_index])  # the heads by hand: the entries' bytes hashed
    seal_head = f"{seal.ledger_index + 1}:{sha256(bodies[seal.ledger_index]).hexdigest()}"
    commit_head = f"{commit_index + 1}:{sha256(bodies[commit_index]).hexdigest()}"
    assert _printed_head(act.path) == seal_head and _printed_head(protocol.path) == commit_head
    b.close()

    def verify(head: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
        command = [sys.executable, "-m", "dealer", "--lang", "en", "draw", "verify", "b.json", "--head", head]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    for head, moment in ((seal_head, "after the seal"), (commit_head, "after the commitment")):
        r = verify(head)
        assert r.returncode == 0 and f"noted is the one right {moment}" in r.stdout, r.stdout + r.stderr
        assert "all 16 checks passed" in r.stdout
    short = commit_head[: commit_head.index(":") + 17]  # as the hall shows it: 16 hex digits
    assert verify(short).returncode == 0
    r = verify(later)
    assert r.returncode == 1 and "verification failed at 'ledger head as printed'" in r.stderr, r.stderr
    assert seal_head in r.stderr and commit_head in r.stderr and "dealer bank verify --head" in r.stderr
    r = verify(f"{seal.ledger_index}:{seal_head.split(':')[1]}")  # the right hash with the wrong size
    assert r.returncode == 1


def _ink_rows(pdf: Path, page: int) -> tuple[int, int, int]:
    """The page rendered by poppler (pdftoppm, 30 dpi, grey): its height in pixels and the first and last rows
    holding ink above the footer (a row with a pixel darker than 160)."""
    out = subprocess.run(
        ["pdftoppm", "-r", "30", "-gray", "-f", str(page), "-l", str(page), str(pdf)],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    header = out.split(b"\n", 3)  # P5, width height, maxval, pixels
    width, height = (int(v) for v in header[1].split())
    pixels = header[3]
    footer = height - round(20 / 297 * height)  # the footer's line: 11 mm from the bottom, leave 20 mm
    inked = [y for y in range(footer) if min(pixels[y * width : (y + 1) * width]) < 160]
    return height, inked[0], inked[-1]


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="poppler-utils (pdftoppm) not installed")
@pytest.mark.parametrize("revealed", [False, True])
def test_a_typical_draw_protocol_fits_one_page_with_its_signatures(
    reg: Regulation, tmp_path: Path, revealed: bool
) -> None:
    """A dice draw before three witnesses (the chief judge, the secretary and the three sign: five lines), before
    and after the reveal (two rows more): one page, the signatures under the content, the page filled (rendered
    to pixels: the last ink below 80% of its height) rather than a third left empty with the signatures overleaf."""
    b = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    fill(b, 80)
    b.seal()
    director = Director(b)
    director.prepare(LABEL, dice_spec(["Орлов О. О.", "Белова Б. Б.", "Ким К. К."], 8), reg)
    director.publish(LABEL)
    director.enter_public_value(LABEL, ["12345612", "65432163", "11223344"], None)
    director.run(LABEL)
    if revealed:
        director.reveal(LABEL)
    issued = issue_draw_protocol(b, reg, "ru", tmp_path / "docs", LABEL)
    pages = pdf_pages(issued.path)
    assert len(pages) == 1, [p[:80] for p in pages]
    signatures_have_company(issued.path)
    for name in (reg.chief_judge, reg.secretary, "Орлов О. О.", "Белова Б. Б.", "Ким К. К.", "Список выбранных"):
        assert has(pages[0], name), name
    height, first, last = _ink_rows(issued.path, 1)
    print(f"revealed={revealed}: ink from {100 * first / height:.1f}% to {100 * last / height:.1f}% of the page")
    assert last > 0.8 * height


def test_card_views_are_named_on_the_bank_and_boards_acts(bank: SqliteBank, reg: Regulation, tmp_path: Path) -> None:
    """#28: «Показать карты» on the technical judge's console is on the act it concerns: a station's view during
    the bank's formation on the bank act, a view of board making on the boards act (each with its time)."""
    quiet = pdf_text(issue_bank_act(bank, reg, "ru", tmp_path / "before", audit=False).path)
    assert has(quiet, "Показ карт на консоли технического судьи") and has(quiet, "не было")
    assert len(pdf_pages(issue_bank_act(bank, reg, "ru", tmp_path / "typical", WITNESSES, audit=False).path)) == 1
    station = bank.record_event("cards_shown", {"station": "T1", "by": "judge", "attempt": 17, "time": 0})
    making = bank.record_event("cards_shown", {"what": "board making", "by": "judge", "time": 0})
    text = pdf_text(issue_bank_act(bank, reg, "ru", tmp_path / "docs", audit=False).path)
    assert has(text, "стол T1, с попытки 17") and has(text, "Технический судья")
    assert not has(text, "изготовления комплектов")
    when = datetime.fromisoformat(bank.entry(station).ts).astimezone()  # the act prints local time
    assert has(text, f"{when.year} г., {when:%H:%M:%S}"), text
    english = pdf_text(issue_bank_act(bank, reg, "en", tmp_path / "docs", audit=False).path)
    assert has(english, "Cards shown on the technical judge's console") and has(english, "station T1, from attempt 17")
    journal = tmp_path / "journal.json"
    journal.write_text(json.dumps({"version": 1, "done": [[1, 1]], "fouls": []}))
    boards = pdf_text(issue_boards_act(bank, reg, "ru", tmp_path / "docs", LABEL, journal).path)
    assert has(boards, "карты изготовления комплектов") and not has(boards, "стол T1")
    when = datetime.fromisoformat(bank.entry(making).ts).astimezone()
    assert has(boards, f"{when:%H:%M:%S}")


@pytest.mark.parametrize("boards", [8, 24])
def test_the_closed_act_holds_its_facts_on_pages_signed_with_content(tmp_path: Path, boards: int) -> None:
    """Акт закрытой сдачи (variant 1), golden facts: the venue and dates, the session, the boards against the
    regulation, the sets, each board's salted hash and its ledger entry, the ledger head (hashed here from the
    stored entry), the audit and every official; a board whose hash differs from its entry is flagged. 8 boards
    fit one page, 24 take two, the signatures never alone on the last."""
    import random

    from bank_support import random_deal

    from dealer.documents.acts import CLOSED_BOARD_ENTRY, ClosedRecord, closed_board_payload
    from dealer.documents.issuers import issue_closed_act

    reg = parse_regulation(
        REGULATION.replace("variant = 2\nopen_cards = 32", "variant = 1").replace("boards = 4", f"boards = {boards}")
    )
    bank = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    rng = random.Random(boards)
    records, deals = [], []
    for board in range(1, boards + 1):
        deal = random_deal(rng)
        salted = sha256(b"salt" + deal.to_bytes()).hexdigest()
        record = ClosedRecord(board, 2, "A", "2026-12-02T10:00:00+00:00", salted)
        bank.record_event(CLOSED_BOARD_ENTRY, closed_board_payload(record))
        records.append(record if board != 3 else ClosedRecord(3, 2, "A", record.time, "0" * 64))  # board 3 altered
        deals.append((board, deal, "A"))
    size = bank.ledger_size()
    head = f"{size}:{sha256(bank.entry_bodies([size - 1])[size - 1]).hexdigest()}"
    issued = issue_closed_act(bank, reg, "ru", tmp_path / "docs", "Сессия 1", records, deals, ("Кузнецов К. К.",))
    text = pdf_text(issued.path)
    for fact in (
        "Акт закрытой сдачи",
        "№ 1",
        "Москва, Центральный дом шахматиста · 1–5 декабря 2026 г.",
        "Сессия 1",
        "Вариант 1 — закрытая сдача",
        {8: "8 коробок из 8 по Положению", 24: "24 коробки из 24 по Положению"}[boards],
        "2 комплекта",
        "РАСХОЖДЕНИЕ: 1 коробка не сходится с журналом",
        "Проверка случайности сдач",
        reg.chief_judge,
        reg.technical_judge,
        reg.secretary,
        "Кузнецов К. К.",
    ):
        assert has(text, fact), fact
    assert head in text.replace(" ", "")  # a hash wraps in its cell: read without spaces
    for record in records:
        assert has(text, record.deal_sha256[:16]), record.board
    index = [e.index for e in bank.entries_of_kind(CLOSED_BOARD_ENTRY)]
    assert has(text, f"да, запись {index[1]}") and has(text, "0000000000000000")
    assert not has(text, f"да, запись {index[2]}"), "board 3's altered hash is not «in the ledger»"
    pages = pdf_pages(issued.path)
    assert len(pages) == (1 if boards == 8 else 2), [p[:60] for p in pages]
    signatures_have_company(issued.path)
