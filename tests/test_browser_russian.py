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
