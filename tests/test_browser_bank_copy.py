"""The judge's console shows the bank's second copy (#32 item 7) beside the ledger head: the same as the bank while
it follows, in red once the stick is pulled out (the deals committed then are on the laptop's disk only)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import press_start, regulation, running_service, service_config

pytestmark = [pytest.mark.browser, needs_chromium]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    yield from launch_chromium()


def _copy_text(page: Any, words: str) -> None:
    page.wait_for_function(f"() => document.getElementById('bankcopy').textContent.includes({words!r})", timeout=30000)


def test_the_console_shows_the_second_copy_and_turns_red_when_it_cannot_be_written(
    browser: Any, tmp_path: Path
) -> None:
    usb = tmp_path / "usb"
    usb.mkdir()  # the stick is mounted
    cfg = service_config(tmp_path, bank={"path": str(tmp_path / "var" / "bank.sqlite"),
                                         "copy": str(usb / "bank-copy.sqlite"), "seal_every_deals": 0},
                         stations=[{"name": "A", "cards_per_second": 2000.0}])  # fmt: skip
    with running_service(cfg, regulation(2, 32, target=3), autostart=True) as server:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server.base}/judge?token={server.judge}&lang=en")
        _copy_text(page, "same as the bank")  # the copy made at start-up
        assert "warn" not in (page.get_attribute("#bankcopy", "class") or "")
        shutil.rmtree(usb)  # the stick is pulled out
        press_start(server)
        _copy_text(page, "Second copy FAILED")
        assert "warn" in (page.get_attribute("#bankcopy", "class") or "")
        assert "no such folder" in page.inner_text("#bankcopy")
        page.screenshot(path=str(ARTIFACTS / "judge-bank-copy-failed.png"))
        page.close()
        russian = browser.new_page(viewport={"width": 1366, "height": 768})  # a console opened now: in its state
        russian.on("pageerror", lambda e: errors.append(str(e)))
        russian.goto(f"{server.base}/judge?token={server.judge}")  # signs in (the link leads on to /judge)
        russian.goto(f"{server.base}/judge?lang=ru")
        _copy_text(russian, "Вторая копия НЕ ЗАПИСАНА")
        russian.close()
    assert not errors, errors
