"""A variant 1 (closed) day in Russian holds no Latin word (#28), as its officials see it: the equipment-check
pages (the technical judge's list, the chief judge's view), the hall and the consoles while boards are dealt (and
no word there of a bank or a draw it does not have, nor a fraction with a point), the equipment act and the «Акт
закрытой сдачи» issued from the consoles (read back by pdftotext), and the command line run in the event folder
afterwards (regulation check, bank status, docs equipment/closed/day/verify).

The checks and their allowlists are the variant 3 day's: tests/test_browser_russian.py (pages),
tests/test_documents_latin.py (acts), tests/test_cli_latin.py (command line); each allowed word has its reason
there. Added here: the simulator's own model, serial and firmware as it reports them (data, as on the act)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import Running, running_service, service_config
from custody_support import cli_env
from test_browser_russian import english_words
from test_cli_latin import dealer
from test_cli_latin import latin_words as cli_latin_words
from test_documents_latin import latin_words as act_latin_words

from dealer.regulation import parse_regulation

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) not installed"),
]

REGULATION = """title = "Кубок города, пары"
venue = "Казань"
starts = 2026-12-01
ends = 2026-12-03
[dealing]
variant = 1
[session]
boards = 4
copies = 2
[officials]
chief_judge = "Иванов И. И."
technical_judge = "Петров П. П."
secretary = "Сидорова С. С."
"""
SESSION = "Сессия 1"
STATION = "Стол 1"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


def pdf_words(data: bytes, where: Path, device: set[str]) -> list[str]:
    import subprocess

    where.write_bytes(data)
    out = subprocess.run(["pdftotext", str(where), "-"], capture_output=True, check=True, timeout=60)
    text = " ".join(out.stdout.decode("utf-8").replace("\u00a0", " ").split())
    assert re.search("[а-яё]{4}", text, re.I), where.name  # a Russian document was read
    return [w for w in act_latin_words(text) if w not in device]


def read_page(browser: Any, url: str, label: str | None = None) -> str:
    """A page's text as its reader sees it (``document.body.innerText``); ``label``: the session typed into the
    documents panel first, so that its equipment checks are listed (as an official does)."""
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url)
    page.wait_for_load_state("networkidle")
    if label is not None:
        field = page.locator("#documents [name=session], #documents [name=label]").first
        field.fill(label)
        field.dispatch_event("change")
        page.wait_for_function("document.querySelectorAll('#checks li').length >= 1")
    page.wait_for_timeout(300)
    assert page.locator("html").get_attribute("lang") == "ru", url
    text = str(page.evaluate("document.body.innerText"))
    assert re.search("[а-яё]{4}", text, re.I), (url, text)
    page.close()
    return text


def _pages(browser: Any, server: Running, moment: str, device: set[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    reads = {
        "/": read_page(browser, server.base + "/"),
        "/remote": read_page(browser, server.base + "/remote"),
        "/judge": read_page(browser, f"{server.base}/judge?token={server.judge}", SESSION),
        "/director": read_page(browser, f"{server.base}/director?token={server.director}", SESSION),
    }
    for path in ("/judge", "/director"):  # the equipment checks were on screen (the phase in the list)
        assert "до начала" in reads[path], (moment, path, reads[path])
    for path, text in reads.items():
        words = [w for w in english_words(text) if w not in device]
        words += slips(text)
        if words:
            found[f"{moment} {path}"] = sorted(set(words))
    return found


def slips(text: str) -> list[str]:
    """What a variant 1 page or command must not say in Russian besides Latin: the bank and the draw it does not
    have (the ledger's own name «журнал банка сдач» aside), and a fraction written with a point («0.0 с»)."""
    words = re.findall(r"\w*(?:банк|жеребь)\w*", text.replace("журнал банка сдач", ""), re.I)
    return words + re.findall(r"(?<![\d.])\d+\.\d+(?![\d.])", text)


def _wait_boards(judge: httpx.Client) -> None:
    deadline = time.monotonic() + 60
    while (state := judge.get("/api/judge/state").json()["stations"][0])["status"] != "target_reached":
        assert time.monotonic() < deadline, state["status"]
        time.sleep(0.05)


def test_a_closed_day_in_russian_has_no_latin_word(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "regulation.toml").write_text(REGULATION, encoding="utf-8")
    reg = parse_regulation(REGULATION)
    cfg = service_config(
        tmp_path,
        language="ru",
        require_equipment_check=True,
        stations=[{"name": STATION, "cards_per_second": 3000.0}],
    )
    found: dict[str, list[str]] = {}
    with running_service(cfg, reg, autostart=False) as server:
        judge = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.judge}"}, timeout=30)
        chief = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}, timeout=60)
        with judge, chief:
            judge.post(f"/api/judge/stations/{STATION}/connect", json={"device": "simulator"}).raise_for_status()
            device_info = judge.get("/api/judge/state").json()["stations"][0].get("device") or {}
            device = {  # as each check splits words: the model, the serial («SIM-Стол 1» gives «SIM-») and firmware
                w
                for v in device_info.values()
                for pattern in (r"[A-Za-z][A-Za-z0-9]*", r"[A-Za-z][A-Za-z-]+")
                for w in re.findall(pattern, str(v))
            }
            check = {"station": STATION, "session": SESSION, "phase": "before", "outcome": "ok", "note": "исправно"}
            judge.post("/api/judge/checks", json=check).raise_for_status()
            found |= _pages(browser, server, "checked", device)  # the equipment-check pages, before Start
            judge.post(f"/api/judge/stations/{STATION}/start").raise_for_status()
            _wait_boards(judge)
            found |= _pages(browser, server, "dealt", device)
            after = {**check, "phase": "after", "note": "замечаний нет"}
            judge.post("/api/judge/checks", json=after).raise_for_status()
            equipment = judge.post("/api/judge/documents/equipment", json={"session": SESSION, "lang": "ru"})
            equipment.raise_for_status()
            words = pdf_words(judge.get(equipment.json()["url"]).content, tmp_path / "equipment.pdf", device)
            if words:
                found["equipment act (console)"] = sorted(set(words))
            # the director's files: named by the variant in Russian (not «closed»), PBN tags from the regulation
            files = chief.post("/api/director/draws/closed/files", json={"formats": ["pbn"]})
            assert files.status_code == 200 and files.json()["files"] == ["Закрытая_сдача.pbn"], files.text
            records = chief.post("/api/director/draws/closed/handrecords", json={"formats": ["pbn"]})
            assert records.status_code == 200 and records.json()["files"] == ["Закрытая_сдача.расклады.pbn"], (
                records.text
            )
            today = date.today()  # the day of play: today within 1-3 December 2026, else the first day (by hand)
            day = today if date(2026, 12, 1) <= today <= date(2026, 12, 3) else date(2026, 12, 1)
            for name in ("Закрытая_сдача.pbn", "Закрытая_сдача.расклады.pbn"):
                pbn = chief.get(f"/api/director/draws/closed/files/{name}").content.decode("utf-8")
                tags = dict(re.findall(r'^\[(Event|Site|Date) "([^"]*)"\]', pbn, flags=re.M))
                assert tags == {"Event": "Закрытая сдача", "Site": "Казань", "Date": day.strftime("%Y.%m.%d")}, tags
            act = chief.post("/api/director/documents/closed", json={"label": SESSION, "lang": "ru"})
            act.raise_for_status()
            words = pdf_words(chief.get(act.json()["url"]).content, tmp_path / "closed.pdf", device)
            if words:
                found["closed act (console)"] = sorted(set(words))
    # the command line in the event folder (config/regulation.toml, var/) after the day, in the default language
    cli_env(tmp_path)
    runs = [
        ("regulation", "check", "config/regulation.toml"),
        ("bank", "status"),
        ("docs", "equipment", SESSION),
        ("docs", "closed", SESSION),
        ("docs", "day", "--date", date.today().isoformat()),
    ]
    said = ""
    for args in runs:
        text = dealer(tmp_path, *args)
        said += text
        words = [w for w in cli_latin_words(text) if w not in device]
        if args[0] == "regulation" or args[:2] == ("docs", "closed"):  # (bank status speaks of the bank: it is asked)
            words += slips(text)
        if words:
            found[" ".join(args[:2])] = sorted(set(words))
    issued = sorted((tmp_path / "var" / "documents").glob("*.pdf"))
    kinds = {re.sub(r"^\d+-|-ru\.pdf$", "", p.name) for p in issued}
    assert {"equipment", "closed", "day"} <= kinds, kinds
    for pdf in issued:  # the CLI's acts and the day's bundle, as printed
        words = pdf_words(pdf.read_bytes(), tmp_path / f"read-{pdf.name}", device)
        if words:
            found[pdf.name] = sorted(set(words))
    verified = dealer(tmp_path, "docs", "verify", str(issued[-1].relative_to(tmp_path)))
    if words := [w for w in cli_latin_words(verified) if w not in device]:
        found["docs verify"] = sorted(set(words))
    assert len(re.findall("[а-яё]", said, re.I)) > 300  # the commands spoke Russian
    assert found == {}, found
