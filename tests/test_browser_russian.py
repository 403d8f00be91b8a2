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
from _web_server import Running, press_start, regulation, running_service, service_config

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
