"""Debian's Chromium under Playwright, as every browser test launches it (never `playwright install`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
needs_chromium = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None, reason="needs Debian's chromium at /usr/bin/chromium"
)


def launch_chromium() -> Iterator[Any]:
    """A headless Chromium for the length of a fixture."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()
