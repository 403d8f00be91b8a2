"""Every page in Russian, in Chromium, while the service deals: no English word left outside proper names,
device names and symbols; times in 24-hour form."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import Running, deal_to_target, press_start, regulation, running_service, service_config

pytestmark = [pytest.mark.browser, needs_chromium]

# Latin words a Russian page may show: the other language's name, device models and serials, formats, paths
ALLOWED = {
    "English",
    "OpenDealer",
    "Sim",
    "SHA",
    "PDF",
    "ID",
    "JSON",
    "sim",
    "pty",
    "simulator",  # the device id in the device list, as typed in the configuration (kind = "simulator")
    "in-process",
    "dev",
    # the file formats the director's download buttons name (the files are called so in every language)
    "PBN",
    "DLM",
    "HTML",
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp: Path = tmp_path_factory.mktemp("russian")
    cfg = service_config(
        tmp, language="ru", stations=[{"name": "A", "cards_per_second": 500.0, "auto_redeal": True, "fault_rate": 0.2}]
    )
    with running_service(cfg, regulation(2, 32, target=30)) as s:
        press_start(s)  # the technical judge starts the dealing
        yield s


def english_words(text: str) -> list[str]:
    text = re.sub(r"\b[0-9a-f]{8,}\b|\S*/\S*", " ", text)  # hashes and paths
    words = re.findall(r"[A-Za-z][A-Za-z-]+", text)
    return [w for w in words if w not in ALLOWED and not re.fullmatch(r"SIM-\w+|[A-F0-9-]+", w)]


@pytest.mark.parametrize("path", ["/", "/judge", "/director"])
def test_page_is_russian(browser: Any, server: Running, path: str) -> None:
    deadline = time.monotonic() + 60
    while server.service.stations["A"].committed < 3:  # some deals, and faults re-dealt, to show
        assert time.monotonic() < deadline
        time.sleep(0.05)
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    token = {"/judge": f"?token={server.judge}", "/director": f"?token={server.director}"}.get(path, "")
    page.goto(server.base + path + token)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    assert page.locator("html").get_attribute("lang") == "ru"
    text = page.locator("body").inner_text()
    assert english_words(text) == [], (english_words(text), text)
    assert not re.search(r"\d{1,2}:\d{2}:\d{2}\s?(AM|PM)", text)
    page.close()


def test_value_format_in_the_page_language(browser: Any, server: Running) -> None:
    """The hall banner's description of V (``I18N.valueFormat``) in Russian, and in English word for word what
    the draw commits to (``PublicValueSpec.format_text``, a second implementation)."""
    from dealer.draw.protocol import dice_spec, named_spec

    specs = [
        dice_spec(["Анна", "Борис", "Вера", "Глеб"], 8),
        dice_spec(["Анна", "Борис", "Вера", "Глеб", "Дина"], 2, faces=10),
        named_spec("Спортлото 6 из 49, тираж 12", 12, 1, 49, None, "as drawn", False, "-"),
        named_spec("ГСЧ", 5, 1, 10**9, None, "ascending", True, "/"),
    ]
    page = browser.new_page()
    page.goto(server.base + "/")
    page.wait_for_load_state("networkidle")
    shown: dict[str, list[str]] = {"ru": [], "en": []}
    for lang in ("ru", "en"):
        page.evaluate("lang => I18N.set(lang)", lang)
        for spec in specs:
            shown[lang].append(page.evaluate("spec => I18N.valueFormat(spec)", spec.to_dict()))
    page.close()
    assert shown["en"] == [spec.format_text() for spec in specs]
    assert (
        shown["ru"][0]
        == "4 свидетеля (Анна, Борис, Вера, Глеб) × 8 бросков кости d6 (1-6), цифры каждого свидетеля по порядку, "
        "через '/'"
    )
    assert shown["ru"][1].startswith("5 свидетелей (Анна, Борис, Вера, Глеб, Дина) × 2 броска кости d10 (0-9)")
    assert shown["ru"][2] == "12 чисел от 1 до 49, по 2 цифры (с ведущими нулями), в порядке выпадения, через '-'"
    assert (
        shown["ru"][3]
        == "5 чисел от 1 до 1000000000, по 10 цифр (с ведущими нулями), без повторов, по возрастанию, через '/'"
    )
    for text in shown["ru"]:
        assert english_words(text) == [], text


def _read_pages(browser: Any, server: Running, moment: str) -> dict[str, list[str]]:
    """The body text of the hall, the remote hall, the judge's and the director's consoles: the Latin words each
    shows (none expected)."""
    found: dict[str, list[str]] = {}
    tokens = {"/judge": f"?token={server.judge}", "/director": f"?token={server.director}"}
    for path in ("/", "/remote", "/judge", "/director"):
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(server.base + path + tokens.get(path, ""))
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
        assert page.locator("html").get_attribute("lang") == "ru", path
        text = page.evaluate("document.body.innerText")
        assert re.search("[а-яё]{4}", text, re.I), (path, text)  # a Russian page was read
        words = english_words(text)
        if words:
            found[f"{moment} {path}"] = sorted(set(words))
        page.close()
    return found


def test_the_pages_of_a_draw_day_are_russian(browser: Any, tmp_path: Path) -> None:
    """#28: the hall (/ and /remote), the judge's and the director's consoles read as document.body.innerText at
    each step of a day: dealing done and sealed, a dice draw before two witnesses committed and shown to the hall,
    run, revealed. No Latin word outside ALLOWED (each with its reason above)."""
    import httpx

    cfg = service_config(tmp_path, language="ru", stations=[{"name": "A", "cards_per_second": 5000.0}])
    found: dict[str, list[str]] = {}
    with running_service(cfg, regulation(3, None, target=40)) as server:
        deal_to_target(server)
        label = "Сессия 1"
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}) as chief:
            chief.post("/api/director/seal").raise_for_status()
            found |= _read_pages(browser, server, "sealed")
            body = {"label": label, "witnesses": ["Аня", "Борис"], "rolls": 8}
            chief.post("/api/director/draws", json=body, timeout=30).raise_for_status()
            chief.post(f"/api/director/draws/{label}/publish").raise_for_status()
            found |= _read_pages(browser, server, "published")
            chief.post(f"/api/director/draws/{label}/value", json={"dice": ["12345612", "65432165"]}).raise_for_status()
            chief.post(f"/api/director/draws/{label}/run").raise_for_status()
            found |= _read_pages(browser, server, "drawn")
            chief.post(f"/api/director/draws/{label}/reveal").raise_for_status()
            found |= _read_pages(browser, server, "revealed")
    assert found == {}
