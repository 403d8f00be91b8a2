"""Every page string comes from the catalogues, in both languages; templates and scripts hard-code none."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[1] / "dealer" / "web"
EN = json.loads((WEB / "i18n" / "en.json").read_text(encoding="utf-8"))
RU = json.loads((WEB / "i18n" / "ru.json").read_text(encoding="utf-8"))


def test_catalogues_have_the_same_keys_and_shapes() -> None:
    assert set(EN) == set(RU)
    for key in EN:
        assert type(EN[key]) is type(RU[key]), key
        # plural entries differ in how many forms they have (ru one/few/many/other, en one/other), not in names
        assert set(re.findall(r"\{(\w+)\}", str(EN[key]))) == set(re.findall(r"\{(\w+)\}", str(RU[key]))) or (
            key.startswith("guide.")
        ), key


def test_russian_seats_and_ranks() -> None:
    assert RU["seat.letters"] == ["С", "В", "Ю", "З"]
    assert RU["rank.chars"][:5] == ["Т", "К", "Д", "В", "10"]
    assert EN["rank.chars"][:5] == ["A", "K", "Q", "J", "10"]


def test_guidance_placeholders_agree_between_languages() -> None:
    for key in (k for k in EN if k.startswith("guide.")):
        assert set(re.findall(r"\{(\w+)\}", EN[key])) == set(re.findall(r"\{(\w+)\}", RU[key])), key


@pytest.mark.parametrize("template", sorted((WEB / "templates").glob("*.html")), ids=lambda p: p.name)
def test_templates_use_only_catalogue_keys_and_no_literal_text(template: Path) -> None:
    text = template.read_text(encoding="utf-8")
    keys = set(re.findall(r'data-i18n="([^"{]+)"', text)) | set(re.findall(r't\("([^"]+)"', text))
    keys |= set(re.findall(r"block title_key %\}([^{]+)\{%", text))
    assert keys <= set(EN), keys - set(EN)
    # one-line blocks hold names (page title key, body classes), not text
    stripped = re.sub(r"\{% block \w+ %\}[^{\n]*\{% endblock %\}", "", text)
    stripped = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", "", stripped, flags=re.S)

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.words: list[str] = []
            self.skip = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.skip = tag in ("script", "style", "code")

        def handle_endtag(self, tag: str) -> None:
            self.skip = False

        def handle_data(self, data: str) -> None:
            if not self.skip:
                self.words += re.findall(r"[A-Za-zА-Яа-яЁё]{2,}", data)

    parser = Text()
    parser.feed(stripped)
    assert parser.words == [], f"hard-coded text in {template.name}: {parser.words}"


@pytest.mark.parametrize("script", sorted((WEB / "static").glob("*.js")), ids=lambda p: p.name)
def test_scripts_ask_only_for_existing_keys(script: Path) -> None:
    text = script.read_text(encoding="utf-8")
    literal = set(re.findall(r'\bt\("([a-z_.0-9-]+)"', text)) | set(re.findall(r'I18N\.t\("([a-z_.0-9-]+)"', text))
    literal |= set(re.findall(r'(?:button|mk|said|badge)\("([a-z_.0-9-]+)"', text))
    prefixes = {k for k in literal if k.endswith(".")}  # t("status." + st.status) and the like
    literal -= prefixes
    assert literal <= set(EN), literal - set(EN)
    for prefix in prefixes:
        assert any(k.startswith(prefix) for k in EN), prefix
