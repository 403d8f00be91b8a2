"""The pages in a real browser (Debian's chromium via Playwright): cards appear live, hidden ones as backs;
the judge's console connects a simulator and starts dealing. Screenshots go to test-artifacts/."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import Running, deal_to_target, press_start, regulation, running_service, service_config

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
pytestmark = [
    pytest.mark.browser,
    needs_chromium,
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    yield from launch_chromium()


@pytest.fixture(scope="module")
def dealing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("browser")
    stations = [{"name": "A", "cards_per_second": 60.0}, {"name": "B", "cards_per_second": 45.0}]
    with running_service(service_config(tmp, stations=stations), regulation(2, 32, target=200)) as server:
        press_start(server)
        yield server


def page_errors(page: Any) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def test_audience_page_shows_cards_live_and_hidden_ones_as_backs(browser: Any, dealing: Running) -> None:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors = page_errors(page)
    page.goto(dealing.base + "/")
    page.wait_for_selector("section.station[data-station='A'] .card")
    station = page.locator("section.station[data-station='A']")
    seen = "s => s.dataset.attempt + '/' + s.querySelectorAll('.card').length"
    first = station.evaluate(seen)
    page.wait_for_function(
        f"(() => {{ const s = document.querySelector(\"section.station[data-station='A']\");"
        f" return ({seen})(s) !== {first!r}; }})()",
        timeout=20000,
    )  # more cards arrived while we watched
    # a moment past the 32nd card of a deal: the 32 open cards show, the rest are backs only
    counts = page.wait_for_function(
        """() => {
            const s = document.querySelector("section.station[data-station='A']");
            const faces = s.querySelectorAll('.card').length;
            const hidden = [...s.querySelectorAll('.backs')].reduce((n, e) => n + Number(e.dataset.hidden), 0);
            return hidden > 0 ? [faces, hidden] : null;
        }""",
        timeout=30000,
    ).json_value()
    assert counts[0] == 32 and 1 <= counts[1] <= 20
    for _ in range(20):  # and never more than 32 faces, whenever we look
        assert station.locator(".card").count() <= 32
        page.wait_for_timeout(25)
    assert page.locator("section.station").count() == 2
    assert page.locator("#conn.live").count() == 1
    assert int(page.locator("#target").inner_text()) == 200
    page.screenshot(path=str(ARTIFACTS / "audience-1080p.png"))
    # suits sorted: within a suit row, card numbers ascend (A first)
    for row in station.locator(".suitrow").all():
        numbers = [int(x) for x in row.locator(".card").evaluate_all("els => els.map(e => e.dataset.card)")]
        assert numbers == sorted(numbers)
    # Russian, 2 colours, high contrast
    page.click(".langswitch")
    # two tables: a line a hand, the seat by its letter (the rules' С В Ю З), its name on hover
    north = page.locator("section.station[data-station='A'] .seat-N .seatname")
    assert north.locator(".seatletter").inner_text() == "С" and north.get_attribute("title") == "Север"
    assert not north.locator(".seatfull").is_visible()
    assert page.locator("h1").inner_text() == "Открытая сдача"
    page.click("#colours")
    page.click("#contrast")
    assert "colours2" in page.locator("body").get_attribute("class") and "contrast" in page.locator(
        "body"
    ).get_attribute("class")
    page.screenshot(path=str(ARTIFACTS / "audience-ru-2colour-contrast.png"))
    assert errors == []
    page.close()


def test_audience_page_on_4k_and_phone(browser: Any, dealing: Running) -> None:
    screens: list[tuple[str, dict[str, Any]]] = [  # keyword arguments of playwright's new_context
        ("4k", {"viewport": {"width": 1920, "height": 1080}, "device_scale_factor": 2}),
        ("phone", {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True}),
    ]
    for name, kw in screens:
        ctx = browser.new_context(**kw)
        page = ctx.new_page()
        page.goto(dealing.base + "/?lang=ru")
        page.wait_for_selector("section.station .card")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= kw["viewport"]["width"] + 1  # nothing runs off the side
        page.screenshot(path=str(ARTIFACTS / f"audience-{name}.png"), full_page=name == "phone")
        ctx.close()


def test_judge_console_connects_a_simulator_and_starts_dealing(browser: Any, tmp_path: Path) -> None:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 100.0}])
    with running_service(cfg, regulation(2, 32, target=50), autostart=False) as server:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        errors = page_errors(page)
        page.goto(f"{server.base}/judge?token={server.judge}")
        assert page.url == server.base + "/judge"  # the token left the address bar for a cookie
        page.wait_for_selector("#conn.live")
        panel = page.locator("section.stationpanel[data-station='A']")
        panel.get_by_role("button", name="Connect simulator").click()
        page.wait_for_selector("section.stationpanel[data-station='A'][data-status='ready']")
        assert "SIM-A" in panel.inner_text()
        panel.get_by_role("button", name="Start").click()
        page.wait_for_selector("section.stationpanel[data-station='A'][data-status='dealing']")
        deadline = time.monotonic() + 30
        while server.service.stations["A"].committed < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        page.wait_for_function("document.getElementById('formed').textContent !== '0'", timeout=10000)
        assert "Blind" in panel.inner_text()
        # nothing waits for the bank: its retry/void buttons are not shown (a flex row once overrode hidden)
        assert not panel.locator(".bankwait").is_visible()
        assert not panel.get_by_role("button", name="Retry the bank now").is_visible()
        page.screenshot(path=str(ARTIFACTS / "judge-console.png"), full_page=True)
        # a simulated fault shows its guidance and waits for Re-deal
        panel.locator("select").select_option("duplicate_card")
        panel.get_by_role("button", name="Simulate a fault").click()
        page.wait_for_selector("section.stationpanel[data-station='A'][data-status='needs_redeal']", timeout=30000)
        assert "press Re-deal" in panel.locator(".faults .faultlist").inner_text()
        page.screenshot(path=str(ARTIFACTS / "judge-fault.png"), full_page=True)
        page.click(".langswitch")
        assert "Пересдать" in panel.inner_text()
        page.locator("section.stationpanel[data-station='A'] button.redeal").click()
        page.wait_for_selector("section.stationpanel[data-station='A'][data-status='dealing']")
        assert errors == []
        # the director's page opens with its own link
        page.goto(f"{server.base}/director?token={server.director}")
        page.wait_for_function("document.getElementById('d-deals').textContent !== '—'")
        page.screenshot(path=str(ARTIFACTS / "director.png"), full_page=True)
        page.close()


def test_director_seals_draws_and_reveals_in_the_browser(browser: Any, tmp_path: Path) -> None:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 5000.0}])
    with running_service(cfg, regulation(3, None, target=40)) as server:
        deal_to_target(server)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        errors = page_errors(page)
        dialogs: list[str] = []
        answer = {"accept": True}

        def on_dialog(d: Any) -> None:
            dialogs.append(d.message)
            if answer["accept"]:
                d.accept()
            else:
                d.dismiss()

        page.on("dialog", on_dialog)
        page.goto(f"{server.base}/director?token={server.director}&lang=en")
        page.wait_for_function("document.getElementById('d-deals').textContent.startsWith('40')")
        answer["accept"] = False  # Seal asks first; saying no changes nothing
        page.get_by_role("button", name="Seal the bank").click()
        page.wait_for_function("document.getElementById('message').textContent === ''")
        assert len(dialogs) == 1 and "Seal the bank now?" in dialogs[0]
        assert page.locator("#seals li").count() == 0
        answer["accept"] = True
        page.get_by_role("button", name="Seal the bank").click()
        page.wait_for_function("document.getElementById('d-eligible').textContent === '40'")
        seal_line = page.locator("#seals li").first.inner_text()
        assert "T" not in seal_line.split("·")[0] and "2026" in seal_line  # a human date, no raw ISO
        page.fill("input[name=label]", "round-1")
        page.fill("input[name=witnesses]", "Ann, Boris")
        page.fill("input[name=rolls]", "8")
        page.get_by_role("button", name="Prepare the draw (commit)").click()
        draw = page.locator(".draw[data-label='round-1']")
        draw.wait_for()
        assert "round-1" in dialogs[-1] and "cannot be changed" in dialogs[-1]
        draw.get_by_role("button", name="Show the commitment on the audience display").click()
        page.wait_for_function("document.getElementById('message').textContent === 'Done'")
        audience = browser.new_page()
        audience.goto(server.base + "/")
        audience.wait_for_selector("#commitment:not([hidden])")
        banner = audience.locator("#commitment").inner_text()
        assert "round-1" in banner and "Deals to draw:" in banner and "Session:" in banner  # labelled, not a bare "1"
        head_before = audience.locator("#ledgerhead").inner_text()
        draw.locator("input[name=public_value]").fill("1234 5612 / 6543 2165")
        n = len(dialogs)
        draw.get_by_role("button", name="Run the draw").click()
        page.wait_for_selector(".draw[data-label='round-1'][data-state='drawn'] .drawnlist .drawn")
        assert len(dialogs) == n + 1 and "cannot be undone" in dialogs[-1]
        rows = page.locator(".drawnlist tr.drawn")
        assert rows.count() == 1  # 5 % of 40 sealed deals: the schedule's one board
        # the drawn deal as board 1: dealer N, vulnerability None (Law 2)
        assert rows.nth(0).locator("td").all_inner_texts()[:3] == ["1", "N", "None"]
        assert page.locator(".drawnlist .card").count() == 52  # the director has the deal (folded)
        assert page.locator(".drawnlist details[open]").count() == 0
        assert "12345612/65432165" in audience.locator("#commitment").inner_text()  # V on the hall at once
        # the audience's ledger head follows the draw, live (no reload)
        audience.wait_for_function(f"document.getElementById('ledgerhead').textContent !== {head_before!r}")
        audience.reload()
        audience.wait_for_selector("#commitment:not([hidden])")
        assert audience.locator(".drawn, .drawnlist").count() == 0  # the audience never gets the deals
        # deal files, then the boards made on the simulated machine with progress
        draw.locator("button[data-action=files]").click()
        draw.locator("ul.files a", has_text="round-1.pbn").wait_for()
        draw.locator("button[data-action=boards]").click()
        assert "round-1" in dialogs[-1]
        page.wait_for_selector(".draw[data-label='round-1'] .boardsprogress[data-state='done']", timeout=60000)
        assert "2 of 2" in draw.locator(".boardsprogress").inner_text()  # 1 board x 2 copies
        assert draw.locator("button[data-action=handrecords]").is_disabled()  # hand records wait for the reveal
        page.screenshot(path=str(ARTIFACTS / "director-drawn.png"), full_page=True)
        answer["accept"] = False
        page.locator(".draw[data-label='round-1']").get_by_role("button", name="Reveal after play").click()
        assert "Reveal" in dialogs[-1] and "cannot be undone" in dialogs[-1]
        bank = server.service.bank.bank
        assert bank.get_draw("round-1").state == "drawn"  # "no" keeps K secret
        answer["accept"] = True
        page.locator(".draw[data-label='round-1']").get_by_role("button", name="Reveal after play").click()
        page.wait_for_selector(".draw[data-label='round-1'][data-state='revealed'] a[download]")
        assert page.locator(".drawnlist details[open]").count() == 1  # after the reveal the deal is shown
        page.locator(".draw[data-label='round-1'] button[data-action=handrecords]").click()
        page.locator(".draw[data-label='round-1'] ul.files a", has_text=".pdf").wait_for()
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.screenshot(path=str(ARTIFACTS / "director-revealed.png"), full_page=True)
        assert errors == []
        page.close()
        audience.close()


def test_a_browser_with_only_the_directors_link_sees_the_key_open_elsewhere(browser: Any, tmp_path: Path) -> None:
    """#27: the account that runs the service opens the director's page with the link from ``var/`` while the chief
    judge is signed in elsewhere: «Открыт для другого браузера», no drawn card on the page; the passphrase typed
    there takes the key over, and only then the drawn deal appears."""
    import httpx
    from custody_support import TEST_PASSPHRASE

    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 5000.0}])
    with running_service(cfg, regulation(3, None, target=40)) as server:
        deal_to_target(server)
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}) as chief:
            chief.post("/api/director/seal").raise_for_status()
            body = {"label": "Сессия 1", "witnesses": ["Аня", "Борис"], "rolls": 8}
            chief.post("/api/director/draws", json=body, timeout=30).raise_for_status()
            chief.post("/api/director/draws/Сессия 1/publish").raise_for_status()
            chief.post("/api/director/draws/Сессия 1/value", json={"dice": ["12345612", "65432165"]}).raise_for_status()
            chief.post("/api/director/draws/Сессия 1/run").raise_for_status()
        secret = (tmp_path / "var" / "director.secret").read_text().strip()
        context = browser.new_context(viewport={"width": 1366, "height": 768})  # its own cookies: another browser
        page = context.new_page()
        errors = page_errors(page)
        page.goto(f"{server.base}/director?token={secret}")  # the link sets the cookie and drops the query
        page.goto(f"{server.base}/director?lang=ru")
        state = page.locator("#custody-state")
        page.wait_for_function("document.getElementById('custody-state').textContent.includes('другого браузера')")
        page.wait_for_selector(".draw[data-state='drawn']")
        assert page.locator(".drawnlist .card").count() == 0 and page.locator("#custody-form").is_visible()
        page.screenshot(path=str(ARTIFACTS / "director-key-elsewhere.png"), full_page=True)
        page.fill("#custody-form input[name=passphrase]", TEST_PASSPHRASE)
        page.locator("#custody-open").click()
        page.wait_for_function("document.getElementById('custody-state').textContent.startsWith('Открыт (')")
        page.wait_for_function("document.querySelectorAll('.drawnlist .card').length === 52")
        assert "другого браузера" not in state.inner_text()
        page.screenshot(path=str(ARTIFACTS / "director-key-taken-over.png"), full_page=True)
        assert errors == []
        context.close()
