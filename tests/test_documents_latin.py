"""A whole day's Russian documents hold no Latin word (#28): the equipment act, the bank act with its audit, the
draw protocol and its annex, the board-making act and the day's bundle of them, issued in Russian as the chief
judge issues them, read back by poppler's pdftotext. What may stay Latin is listed, each with its reason."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime
from hashlib import sha256
from pathlib import Path

import pytest
from bank_support import fill
from custody_support import unlocked
from test_documents import DEVICE, LABEL, REGULATION, pdf_text

from dealer.bank.store import SqliteBank
from dealer.documents.acts import CHECK_ENTRY, equipment_check
from dealer.documents.issue import issue_day, local_day
from dealer.documents.issuers import (
    issue_bank_act,
    issue_boards_act,
    issue_draw_annex,
    issue_draw_protocol,
    issue_equipment_act,
)
from dealer.draw.director import Director
from dealer.draw.protocol import dice_spec
from dealer.regulation import parse_regulation

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) not installed")

# Latin a Russian act may print, and why: the hash's name (SHA-256, as the standard spells it), the file type,
# the secret's and the public value's letters of the rules and docs/bundle.md (K, V), a die's name (d6, d10), the
# command that verifies a printed copy, and the device's own model, serial and firmware as it reports them.
ALLOWED = {"SHA", "PDF", "K", "V", "d6", "d10", "dealer", "docs", "verify"}
STATIONS = {"T1"}  # the stations' names as the service's configuration gives them (bank_support's station)
DEVICE_WORDS = {w for v in DEVICE.values() for w in re.findall(r"[A-Za-z]+", v)}


def _hash_run(m: re.Match[str]) -> str:
    return " " if len(re.sub(r"[\s-]", "", m.group())) >= 16 else m.group()


def latin_words(text: str) -> list[str]:
    text = re.sub(r"\b[0-9a-f]+(?:[\s-]+[0-9a-f]+)*\b", _hash_run, text)  # hashes and the bank's id, even wrapped
    text = re.sub(r"\b(?=[0-9a-f]*\d)[0-9a-f]{5,}\b", " ", text)  # a piece of a hash cut by the line's end
    text = re.sub(r"\S+\.(pdf|json|sqlite)\b", " ", text)  # file names the acts cite
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", text)
    return [w for w in words if w not in ALLOWED | STATIONS and w not in DEVICE_WORDS and not re.fullmatch(r"d\d+", w)]


def test_a_whole_day_of_russian_documents_has_no_latin_word(tmp_path: Path) -> None:
    reg = parse_regulation(REGULATION)
    bank = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    fill(bank, 80)
    bank.void_deal("duplicate_card", "T1")
    health = {"cards_read": 4264, "deals": 82, "errors": 2, "error_rate": 2.44, "norm": 1.0}
    bank.record_event(CHECK_ENTRY, equipment_check(LABEL, "before", "T1", "ok", DEVICE, {}, None, "перед началом"))
    calibration = {"file": "cam-A.json", "created": "2026-11-29T10:00:00+00:00", "predicted_error_rate": 0.00075}
    bank.record_event(
        CHECK_ENTRY, equipment_check(LABEL, "after", "T1", "faulty", DEVICE, health, calibration, "замятие")
    )
    bank.seal()
    director = Director(bank)
    director.prepare(LABEL, dice_spec(["Орлов О. О.", "Белова Б. Б."], 8), reg)
    director.publish(LABEL)
    director.enter_public_value(LABEL, ["12345612", "65432163"], None)
    director.run(LABEL)
    out = tmp_path / "docs"
    witnesses = ("Кузнецов К. К.",)
    issued = [
        issue_equipment_act(bank, reg, "ru", out, LABEL, witnesses),
        issue_bank_act(bank, reg, "ru", out, witnesses),
        issue_draw_protocol(bank, reg, "ru", out, LABEL, witnesses),
    ]
    journal = tmp_path / "journal.json"
    done = [[b, c] for b in range(1, 5) for c in (1, 2)]
    fouls = [{"board": 2, "copy": 1, "attempt": 1, "reason": "jam", "card": "♠A", "pocket": "N", "expected": "E",
              "kind": "fault:jam", "position": 17}]  # fmt: skip
    journal.write_text(json.dumps({"version": 1, "boards_digest": "x", "done": done, "fouls": fouls}))
    bank.record_event(
        "export",
        {"what": "boards", "label": LABEL, "files": {journal.name: sha256(journal.read_bytes()).hexdigest()},
         "copies": 8, "machine": DEVICE},
    )  # fmt: skip
    director.reveal(LABEL)
    issued += [
        issue_boards_act(bank, reg, "ru", out, LABEL, journal, witnesses),
        issue_draw_annex(bank, reg, "ru", out, LABEL, witnesses),
        issue_draw_protocol(bank, reg, "ru", out, LABEL, witnesses),  # after the reveal: K and its time
    ]
    day = local_day(datetime.fromisoformat(bank.entry(issued[0].ledger_index).ts))
    issued.append(issue_day(bank, out, day, "ru"))  # the day's bundle: contents and every act again
    found: dict[str, list[str]] = {}
    for doc in issued:
        text = pdf_text(doc.path)
        assert "Подписи" in text or "Содержание" in text, doc.path.name  # a Russian document was read
        words = latin_words(text)
        if words:
            found[doc.path.name] = sorted(set(words))
    assert found == {}
    assert len(issued) == 7


def test_the_variant_1_act_has_no_latin_word(tmp_path: Path) -> None:
    """Акт закрытой сдачи of a variant 1 day (boards dealt closed, in the ledger as salted hashes, their audit)."""
    import random
    from hashlib import sha256 as digest

    from bank_support import random_deal

    from dealer.documents.acts import CLOSED_BOARD_ENTRY, ClosedRecord, closed_board_payload
    from dealer.documents.issuers import issue_closed_act

    reg = parse_regulation(REGULATION.replace("variant = 2\nopen_cards = 32", "variant = 1"))
    bank = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    rng = random.Random(28)
    records, deals = [], []
    for board in range(1, 9):
        deal = random_deal(rng)
        record = ClosedRecord(
            board, 2, "Стол 1", "2026-12-02T10:00:00+00:00", digest(b"salt" + deal.to_bytes()).hexdigest()
        )
        bank.record_event(CLOSED_BOARD_ENTRY, closed_board_payload(record))
        records.append(record)
        deals.append((board, deal, "Стол 1"))
    issued = issue_closed_act(bank, reg, "ru", tmp_path / "docs", LABEL, records, deals, ("Кузнецов К. К.",))
    text = pdf_text(issued.path)
    assert "Подписи" in text and "Стол 1" in text
    assert latin_words(text) == []
