"""Every screen of a drawn day in both languages at the four screens officials have (a phone held upright, a
laptop, a 1080p and a 4K screen), in Chromium, measured rather than looked at: the page is the language the link
asked for, nothing is wider than the screen (a table may scroll inside its panel), no word is split across two
lines («100 с|дач»: each word's boxes lie on one line), and every field of a console is the console's size of type
(a browser's own 13 px select was a speck on a 4K screen)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _browser import launch_chromium, needs_chromium
from _web_server import Running, deal_to_target, regulation, running_service, service_config

pytestmark = [pytest.mark.browser, needs_chromium]
SIZES = [(390, 844), (1366, 768), (1920, 1080), (3840, 2160)]
LABEL = "Сессия 1"
WITNESSES = ["Кузнецов К. К.", "Орлова О. О.", "Ким К. К."]
# Russian an English page may show: the language switch's own name, the day's session, witnesses and a check's note
DATA_WORDS = {"Русский", "Сессия", "Кузнецов", "Орлова", "Ким", "К", "О", "перед", "началом"}

# One evaluation in the page: what sticks out of the screen, what is clipped, which words break across lines.
MEASURE = """() => {
  const doc = document.documentElement, W = doc.clientWidth;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\\s+/).join(".") : "");
  const shown = (e) => { const s = getComputedStyle(e);
    return s.display !== "none" && s.visibility !== "hidden" && e.getClientRects().length > 0; };
  // inside a box that scrolls sideways (a wide table on a phone): it may be wider than the screen, the page is not
  const scrolled = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX; if (o === "auto" || o === "scroll") return true; } return false; };
  const wide = [], broken = [], small = [];
  const body = parseFloat(getComputedStyle(document.body).fontSize);
  for (const e of document.querySelectorAll("body *")) {
    if (!shown(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > W + 1 && !scrolled(e)) wide.push(name(e) + " to " + Math.round(r.right));
    if (document.body.classList.contains("console") && e.matches("input:not([type=checkbox]), select, button")
        && parseFloat(getComputedStyle(e).fontSize) < 0.85 * body)
      small.push(name(e) + " " + getComputedStyle(e).fontSize);
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), range = document.createRange();
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.parentElement || !shown(n.parentElement)) continue;
    for (const m of n.textContent.matchAll(/[\\p{L}\\p{N}]+(?:[.,]\\p{N}+)*/gu)) {
      if (/^[0-9a-f]{12,}$/.test(m[0]) || m[0].length > 24) continue;  // a hash may break anywhere
      const text = n.textContent;  // and so may a path (a device's /tmp/…/ttyDEALER0): the word's whole token
      const from = text.lastIndexOf(" ", m.index) + 1, to = text.indexOf(" ", m.index);
      if (/[/\\\\]/.test(text.slice(from, to < 0 ? text.length : to)) && /\\p{L}/u.test(m[0])) continue;
      range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].filter((q) => q.width > 0).map((q) => Math.round(q.top)));
      if (lines.size > 1) broken.push("«" + m[0] + "» in " + name(n.parentElement));
    }
  }
  return { text: document.body.innerText, lang: doc.lang, scroll: doc.scrollWidth, width: W,
    wide: wide.slice(0, 6), broken: broken.slice(0, 6),
    small: small.slice(0, 6) };
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


@pytest.fixture(scope="module")
def drawn_day(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """A Russian service after a dice draw before three witnesses, revealed: the hall shows V, K, the commitment
    and the head; the chief judge's console the drawn deals' diagrams; the judge's an equipment check."""
    tmp = tmp_path_factory.mktemp("layout")
    cfg = service_config(tmp, language="ru", stations=[{"name": "A", "cards_per_second": 5000.0}])
    with running_service(cfg, regulation(3, None, target=40)) as server:
        judge = {"Authorization": f"Bearer {server.judge}"}
        check = {"station": "A", "session": LABEL, "phase": "before", "outcome": "ok", "note": "перед началом"}
        httpx.post(f"{server.base}/api/judge/checks", json=check, headers=judge, timeout=30).raise_for_status()
        deal_to_target(server)
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}) as chief:
            chief.post("/api/director/seal", timeout=30).raise_for_status()
            body = {"label": LABEL, "witnesses": WITNESSES, "rolls": 8}
            chief.post("/api/director/draws", json=body, timeout=30).raise_for_status()
            chief.post(f"/api/director/draws/{LABEL}/publish").raise_for_status()
            value = {"dice": ["12345612", "65432165", "11223344"]}
            chief.post(f"/api/director/draws/{LABEL}/value", json=value).raise_for_status()
            chief.post(f"/api/director/draws/{LABEL}/run", timeout=30).raise_for_status()
            chief.post(f"/api/director/draws/{LABEL}/reveal", timeout=30).raise_for_status()
        yield server


def measure(browser: Any, server: Running, path: str, lang: str, size: tuple[int, int], ready: str) -> dict[str, Any]:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.goto(server.base + path + ("&" if "?" in path else "?") + f"lang={lang}")
    page.wait_for_function(ready, timeout=30000)
    found: dict[str, Any] = page.evaluate(MEASURE)
    ctx.close()
    return found


def faults(found: dict[str, Any]) -> list[str]:
    out = [f"wider than the screen: {found['scroll']} > {found['width']}"] if found["scroll"] > found["width"] else []
    return out + [str(x) for key in ("wide", "broken", "small") for x in found[key]]


def test_the_word_check_sees_a_word_split_across_lines(browser: Any) -> None:
    """The measurement itself: a word forced to break (as «с|дач» did) is found, the same words whole are not."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.set_content(
        '<html lang="ru"><body><p style="width:3em;word-break:break-all">100 сдач</p>'
        '<p style="width:3em">100 сдач</p></body></html>'
    )
    found = page.evaluate(MEASURE)
    page.close()
    assert found["broken"] == ["«сдач» in p"], found


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_screen_of_a_drawn_day_fits(browser: Any, drawn_day: Running, lang: str, size: tuple[int, int]) -> None:
    server = drawn_day
    screens = {
        "/": "document.querySelector('#commitment[data-state=revealed]') !== null",
        "/remote": "document.querySelector('section.station') !== null",
        f"/judge?token={server.judge}": "document.querySelector('#conn.live') !== null",
        f"/director?token={server.director}": "document.querySelectorAll('tr.drawn').length > 0",
    }
    bad = {}
    for path, ready in screens.items():
        found = measure(browser, server, path, lang, size, ready)
        assert found["lang"] == lang, (path.split("?")[0], found["lang"])  # the link's language, kept past sign-in
        assert not re.search(r"(Попытка|Attempt) 0\b", found["text"]), path  # the formed bank's stations: no attempt 0
        if path == "/":  # a revealed draw is headed as revealed, not as a commitment just published
            said = {"ru": ("Жеребьёвка раскрыта", "опубликовано"), "en": ("Draw revealed", "published")}[lang]
            assert said[0] in found["text"] and said[1] not in found["text"], found["text"]
        if lang == "en":  # no Russian left on an English page but the day's own names (its session, its witnesses)
            cyrillic = set(re.findall(r"[А-Яа-яЁё]+", found["text"])) - DATA_WORDS
            assert cyrillic == set(), (path.split("?")[0], sorted(cyrillic))
        if faults(found):
            bad[path.split("?")[0]] = faults(found)
    assert bad == {}, bad


@pytest.mark.parametrize("size", [(390, 844), (3840, 2160)], ids=["phone", "4k"])
def test_variant_1_screens_fit(browser: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Variant 1: the boards' table (six columns) on the chief judge's console, the hall and the judge's."""
    cfg = service_config(tmp_path, language="ru", stations=[{"name": "A", "cards_per_second": 3000.0}])
    reg = dataclasses.replace(regulation(2, 32, target=50), boards_per_session=6, copies=2)
    reg = dataclasses.replace(reg, variant=type(reg.variant)(1), open_cards=None)
    with running_service(cfg, reg) as server:
        deal_to_target(server)
        screens = {
            "/": "document.querySelector('.closedboard') !== null",
            f"/judge?token={server.judge}": "document.querySelector('section.stationpanel') !== null",
            f"/director?token={server.director}": "document.querySelectorAll('table.closedboards tr').length === 7",
        }
        bad = {}
        for lang in ("ru", "en"):
            for path, ready in screens.items():
                found = measure(browser, server, path, lang, size, ready)
                assert found["lang"] == lang, path
                if faults(found):
                    bad[f"{lang} {path.split('?')[0]}"] = faults(found)
        assert bad == {}, bad
