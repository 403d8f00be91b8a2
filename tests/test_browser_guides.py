"""The screenshots of the guides (docs/judge.md, docs/director.md, docs/audience.md), taken by driving the real
pages in a real browser through a whole small day: the judge connects a simulator, deals, handles a fault; the
audience display follows; the director seals, draws, publishes the commitment, runs the draw and reveals.

Screenshots go to ``test-artifacts/guides/``; with ``DEALER_UPDATE_SCREENSHOTS=1`` they go to ``docs/img/``
(commit them then). The day is photographed twice: in English for docs/*.md and in Russian (``ru/``) for
docs/ru/*.md; the buttons are found by their catalogue text in each language. Every page is also checked as it
is photographed, so the guides show what really happens.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import Running, regulation, running_service, service_config

from dealer.serving.i18n import translate

ROOT = Path(__file__).resolve().parents[1]
UPDATE = os.environ.get("DEALER_UPDATE_SCREENSHOTS") == "1"
OUT = ROOT / "docs" / "img" if UPDATE else ROOT / "test-artifacts" / "guides"
VIEW = {"width": 1280, "height": 720}
MAX_PNG = 200_000
pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    yield from launch_chromium()


@pytest.fixture(params=["en", "ru"])
def lang(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def day(tmp_path_factory: pytest.TempPathFactory, lang: str) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("guides")
    stations = [{"name": "A", "cards_per_second": 120.0}, {"name": "B", "cards_per_second": 90.0}]
    cfg = service_config(tmp, stations=stations, language=lang)
    with running_service(cfg, regulation(2, 32, target=40), autostart=False) as s:
        yield s


def shot(page: Any, name: str) -> Path:
    lang = page.evaluate("document.documentElement.dataset.lang")
    folder = OUT / "ru" if lang == "ru" and not name.startswith("audience-2") else OUT
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, **VIEW})
    size = path.stat().st_size
    assert 5_000 < size < MAX_PNG, f"{path.name}: {size} bytes"
    return path


def wait_until(predicate: Callable[[], object], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def errors_of(page: Any) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def test_the_day_in_pictures(browser: Any, day: Running, lang: str) -> None:
    def t(key: str) -> str:
        return translate(lang, key)

    ctx = browser.new_context(viewport=VIEW)
    judge = ctx.new_page()
    errors = errors_of(judge)
    # -- technical judge: open the link, connect the simulators, start ---------------------------------------
    judge.goto(f"{day.base}/judge?token={day.judge}")
    assert judge.url == day.base + "/judge"
    judge.wait_for_selector("#conn.live")
    shot(judge, "judge-1-console")
    for name in ("A", "B"):
        panel = judge.locator(f"section.stationpanel[data-station='{name}']")
        panel.get_by_role("button", name=t("judge.connect_sim")).click()
        judge.wait_for_selector(f"section.stationpanel[data-station='{name}'][data-status='ready']")
    shot(judge, "judge-2-connected")
    a = judge.locator("section.stationpanel[data-station='A']")
    a.get_by_role("button", name=t("judge.start")).click()
    judge.wait_for_selector("section.stationpanel[data-station='A'][data-status='dealing']")
    wait_until(lambda: day.service.stations["A"].committed >= 2)
    judge.wait_for_function("document.getElementById('formed').textContent !== '0'")
    assert t("judge.blind") in a.inner_text()
    shot(judge, "judge-3-dealing")
    # -- a fault: guidance, then Re-deal ----------------------------------------------------------------------
    a.locator("select").select_option("duplicate_card")
    a.get_by_role("button", name=t("judge.inject")).click()
    judge.wait_for_selector("section.stationpanel[data-station='A'][data-status='needs_redeal']", timeout=30000)
    assert t("judge.redeal") in a.locator(".faults .faultlist").inner_text()
    a.scroll_into_view_if_needed()
    shot(judge, "judge-4-fault")
    # -- the audience display, meanwhile ---------------------------------------------------------------------
    hall = ctx.new_page()
    errors += errors_of(hall)
    hall.goto(day.base + "/")
    judge.bring_to_front()
    judge.locator("section.stationpanel[data-station='A'] button.redeal").click()
    judge.wait_for_selector("section.stationpanel[data-station='A'][data-status='dealing']")
    judge.locator("section.stationpanel[data-station='B']").get_by_role("button", name=t("judge.start")).click()
    hall.bring_to_front()
    hall.wait_for_selector("section.station[data-station='A'] .back", timeout=30000)
    hall.wait_for_selector("section.station[data-station='B'] .card", timeout=30000)
    shot(hall, "audience-1-dealing")
    if lang == "en":  # the Russian day's hall is in Russian already: audience-2 is the same picture
        hall.click(".langswitch")
        hall.click("#contrast")
        assert hall.locator("h1").inner_text() == "Открытая сдача"
        shot(hall, "audience-2-ru-contrast")
        hall.click(".langswitch")
        hall.click("#contrast")
    # both stations stop at the target (a deal already under way at the other station may still land)
    wait_until(lambda: all(s.status == "target_reached" for s in day.service.stations.values()), 120)
    judge.bring_to_front()
    judge.wait_for_function("Number(document.getElementById('formed').textContent) >= 40", timeout=30000)
    shot(judge, "judge-5-target")
    # -- director: seal, prepare, publish, run, reveal -------------------------------------------------------
    boss = ctx.new_page()
    errors += errors_of(boss)
    asked: list[str] = []  # every irreversible step asks first; the director says yes

    def say_yes(dialog: Any) -> None:  # playwright's Dialog (the browser fixture is untyped)
        asked.append(dialog.message)
        dialog.accept()

    boss.on("dialog", say_yes)
    boss.goto(f"{day.base}/director?token={day.director}")
    boss.wait_for_function("document.getElementById('d-deals').textContent.startsWith('4')")
    formed = int(boss.locator("#d-deals").inner_text().split("/")[0])
    assert formed >= 40
    shot(boss, "director-1-status")
    boss.click("#seal")
    boss.wait_for_selector("#seals li")
    assert boss.locator("#d-eligible").inner_text() == str(formed)
    shot(boss, "director-2-sealed")
    boss.fill("#prepare input[name=label]", "Round 1")
    boss.fill("#prepare input[name=witnesses]", "Anna, Boris, Vera")  # n comes from the regulation
    boss.fill("#prepare input[name=rolls]", "6")
    boss.click("#prepare button[type=submit]")
    draw = boss.locator(".draw[data-label='Round 1']")
    draw.wait_for()
    draw.get_by_role("button", name=t("director.publish")).click()
    boss.wait_for_function(f"document.getElementById('message').textContent === {t('director.done')!r}")
    shot(boss, "director-3-committed")
    hall.bring_to_front()
    hall.wait_for_function("document.body.innerText.includes('Round 1')", timeout=10000)
    shot(hall, "audience-3-commitment")
    boss.bring_to_front()
    draw.locator("input[name=public_value]").fill("315264 526152 535163")
    draw.get_by_role("button", name=t("director.run")).click()
    boss.wait_for_selector(".draw[data-label='Round 1'] .drawn")
    assert boss.locator(".draw[data-label='Round 1'] .drawn").count() == day.service.regulation.deals_per_session
    shot(boss, "director-4-drawn")
    # the judge's console and the hall show nothing of the drawn deals
    drawn_ids = [int(x.inner_text().lstrip("#")) for x in boss.locator(".drawnlist tr.drawn td:nth-child(4)").all()]
    assert drawn_ids
    assert draw.get_by_text(t("director.bundle")).count() == 0  # no verification bundle before the reveal
    draw.get_by_role("button", name=t("director.reveal")).click()
    boss.wait_for_function(
        "document.querySelector(\".draw[data-label='Round 1'] h3\").textContent"
        f".includes({t('director.state.revealed')!r})"
    )
    assert draw.get_by_text(t("director.bundle")).count() == 1
    shot(boss, "director-5-revealed")
    assert len(asked) == 5, asked  # seal, commit, publish, run, reveal
    assert errors == []
    ctx.close()
