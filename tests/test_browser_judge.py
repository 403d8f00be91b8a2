"""The technical judge's console in Chromium: the buttons follow the station's state, Disconnect during a deal asks
first (and "no" changes nothing), the void is the operator's and never counted against the device, the ETA appears
once the pace is measured, the ledger head follows the bank."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import Running, regulation, running_service, service_config

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
pytestmark = [pytest.mark.browser, needs_chromium]
ACTIONS = ["connect", "disconnect", "reset", "start", "pause", "resume", "stop", "redeal"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    yield from launch_chromium()


def enabled(page: Any) -> set[str]:
    found: list[str] = page.evaluate(
        """() => [...document.querySelectorAll("section.stationpanel[data-station='A'] button[data-action]")]
              .filter((b) => !b.disabled).map((b) => b.dataset.action)"""
    )
    return {a for a in found if a in ACTIONS}


def status(page: Any, value: str) -> None:
    page.wait_for_selector(f"section.stationpanel[data-station='A'][data-status='{value}']", timeout=30000)


def until(check: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_buttons_follow_the_state_and_disconnect_during_a_deal_asks_first(browser: Any, tmp_path: Path) -> None:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 25.0}])  # ~2 s a deal
    with running_service(cfg, regulation(2, 32, target=4), autostart=False) as server:
        run(browser, server)


def run(browser: Any, server: Running) -> None:
    station = server.service.stations["A"]
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    dialogs: list[str] = []
    answer = {"accept": False}

    def on_dialog(d: Any) -> None:
        dialogs.append(d.message)
        d.accept() if answer["accept"] else d.dismiss()

    page.on("dialog", on_dialog)
    page.goto(f"{server.base}/judge?token={server.judge}&lang=en")
    page.wait_for_selector("#conn.live")
    page.wait_for_selector("section.stationpanel[data-station='A']")
    assert enabled(page) == {"connect"}  # nothing to start, stop or disconnect without a device
    page.click("section.stationpanel[data-station='A'] button[data-action=connect]")
    status(page, "ready")
    assert enabled(page) == {"connect", "disconnect", "start"}
    assert dialogs == []  # connecting with no deal in progress asks nothing
    page.click("section.stationpanel[data-station='A'] button[data-action=start]")
    status(page, "dealing")
    until(lambda: station.session.dealing, "a deal in progress")
    page.wait_for_function(
        "document.querySelector(\"section.stationpanel[data-station='A'] button[data-action=start]\").disabled"
    )
    assert {"pause", "stop", "disconnect"} <= enabled(page) and not {"start", "resume", "redeal"} & enabled(page)
    # Disconnect in the middle of a deal: asked first; "no" leaves the deal alone
    page.click("section.stationpanel[data-station='A'] button[data-action=disconnect]")
    assert len(dialogs) == 1 and "voids it" in dialogs[0] and "operator" in dialogs[0]
    assert station.link is not None and not station.voided
    until(lambda: station.session.dealing, "a deal in progress")
    answer["accept"] = True
    page.click("section.stationpanel[data-station='A'] button[data-action=disconnect]")
    status(page, "disconnected")
    assert len(dialogs) == 2
    panel = page.locator("section.stationpanel[data-station='A']")
    assert "voided by the technical judge" in panel.locator(".voided").inner_text()
    faults = panel.locator(".faults .faultlist").inner_text()
    assert faults.strip() == "No faults"  # the judge's click is no fault
    health = station.health()
    assert health["errors"] == 0 and health["faults"] == {}
    assert enabled(page) == {"connect"}
    # again, to the target: the ETA appears once two deals measured the pace; the ledger head follows
    page.click("section.stationpanel[data-station='A'] button[data-action=connect]")
    status(page, "ready")
    page.click("section.stationpanel[data-station='A'] button[data-action=start]")
    page.wait_for_function("document.getElementById('eta').textContent.includes('Deals to go')", timeout=30000)
    page.wait_for_function("document.getElementById('ledgerhead').textContent !== '—'")
    page.screenshot(path=str(ARTIFACTS / "judge-dealing-1080p.png"), full_page=True)
    status(page, "target_reached")
    assert enabled(page) == {"disconnect"}  # the target is there: nothing more to deal
    page.wait_for_function("document.getElementById('eta').textContent === 'Target reached'")
    bank = server.service.hub.state.bank  # the anchor SIZE:HEAD, as the hall shows it
    page.wait_for_function(f"document.getElementById('ledgerhead').textContent.endsWith({bank['ledger_head'][:16]!r})")
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    phone.goto(f"{server.base}/judge?token={server.judge}&lang=ru")
    phone.wait_for_selector("section.stationpanel[data-station='A'][data-status='target_reached']")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 391
    phone.screenshot(path=str(ARTIFACTS / "judge-phone.png"), full_page=True)
    phone.close()
    assert errors == []
    page.close()
