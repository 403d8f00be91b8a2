"""Russian first: plural rules, dates in the locale, the language choice, and every catalogue complete and
really translated in both languages (pages and documents)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer.app.config import config_from_dict
from dealer.i18n import PLAIN_PATTERNS, LanguageError, Messages, format_number, plural_category, resolve_language
from dealer.serving.i18n import translate

ROOT = Path(__file__).resolve().parents[1]
CATALOGUES = {
    "web": ROOT / "dealer" / "web" / "i18n",
    "documents": ROOT / "dealer" / "documents" / "i18n",
}
# CLDR categories each language needs (ru: one/few/many/other; en: one/other)
NEEDED = {"ru": {"one", "few", "many", "other"}, "en": {"one", "other"}}
# entries that are the same in both languages on purpose: symbols, digits, units, proper names
SAME_ALLOWED = re.compile(r"^[\d\s—–·/%:.,()\-{}a-z_#№]*$|^SHA-256|^DM-|^[A-Z]{1,4}$")


def load(domain: str, lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CATALOGUES[domain] / f"{lang}.json").read_text(encoding="utf-8"))
    return data


# Russian plural categories by hand from the CLDR rule (one: n%10=1 and n%100!=11; few: n%10=2..4 and
# n%100!=12..14; many: other integers); English: one for 1 only.
RU_TABLE = {1: "one", 21: "one", 101: "one", 2: "few", 3: "few", 4: "few", 22: "few", 34: "few", 0: "many",
            5: "many", 11: "many", 12: "many", 14: "many", 19: "many", 25: "many", 111: "many"}  # fmt: skip


@pytest.mark.parametrize(("n", "category"), sorted(RU_TABLE.items()))
def test_russian_plural_categories(n: int, category: str) -> None:
    assert plural_category("ru", n) == category
    assert plural_category("en", n) == ("one" if n == 1 else "other")


def test_counted_words() -> None:
    docs = Messages("ru", load("documents", "ru"))
    assert [docs.plural("count.deals", n) for n in (1, 2, 5, 21, 11, 480)] == [
        "1 сдача",
        "2 сдачи",
        "5 сдач",
        "21 сдача",
        "11 сдач",
        "480 сдач",
    ]
    assert docs.plural("count.open_cards", 32) == "32 открытые карты"
    assert docs.plural("count.open_cards", 28) == "28 открытых карт"
    assert docs.plural("count.open_cards", 31) == "31 открытая карта"
    assert [docs.plural("count.boards", n) for n in (1, 3, 24)] == ["1 коробка", "3 коробки", "24 коробки"]
    assert [docs.plural("count.sets", n) for n in (1, 2, 5)] == ["1 комплект", "2 комплекта", "5 комплектов"]
    assert translate("ru", "audience.open_cards_n", n=32) == "32 открытые карты"
    assert translate("ru", "audience.open_cards_n", n=40) == "40 открытых карт"
    assert translate("en", "audience.open_cards_n", n=1) == "1 open card"
    with pytest.raises(KeyError):
        translate("ru", "audience.open_cards_n")  # plural forms need n


def test_dates_in_the_locale() -> None:
    moment = datetime(2026, 11, 30, 13, 12, 33)  # naive: printed as given
    ru = Messages("ru", {}).when(moment)
    en = Messages("en", {}).when(moment)
    assert "13:12:33" in ru and "PM" not in ru and "нояб" in ru
    assert "1:12:33" in en and "PM" in en and "Nov" in en
    assert Messages("ru", {}).number(2.44) == "2,44" and Messages("en", {}).number(2.44) == "2.44"


def test_language_choice() -> None:
    assert resolve_language(env={}) == "ru"
    assert resolve_language(env={"LANG": "en_GB.UTF-8"}) == "en"
    assert resolve_language(env={"LANG": "de_DE.UTF-8"}) == "ru"
    assert resolve_language(env={"LANG": "C.UTF-8"}) == "ru"
    assert resolve_language(configured="en", env={"LANG": "ru_RU.UTF-8"}) == "en"
    assert resolve_language("ru", "en", {"LANG": "en_US.UTF-8"}) == "ru"
    with pytest.raises(LanguageError, match="--lang"):
        resolve_language("de")


def test_service_speaks_russian_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    assert config_from_dict({}).language == "ru"
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert config_from_dict({}).language == "en"
    assert config_from_dict({"language": "ru"}).language == "ru"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(v) for v in value.values()]


@pytest.mark.parametrize("domain", sorted(CATALOGUES))
def test_catalogues_are_complete_and_translated(domain: str) -> None:
    ru, en = load(domain, "ru"), load(domain, "en")
    assert set(ru) == set(en), set(ru) ^ set(en)
    same = []
    for key in ru:
        r, e = ru[key], en[key]
        assert type(r) is type(e), key
        if isinstance(r, dict):  # plural forms: every category the language needs
            assert NEEDED["ru"] <= set(r), key
            assert NEEDED["en"] <= set(e), key
            for form in (*r.values(), *e.values()):
                assert "{n}" in form, key
        params_ru = {p for s in _strings(r) for p in re.findall(r"\{(\w+)\}", s)}
        params_en = {p for s in _strings(e) for p in re.findall(r"\{(\w+)\}", s)}
        assert params_ru == params_en or key.startswith("guide."), key
        if isinstance(r, list):
            assert len(r) == len(e), key
            same += [
                f"{key}[{i}]={a}"
                for i, (a, b) in enumerate(zip(r, e, strict=True))
                if a == b and not SAME_ALLOWED.match(a)
            ]
        elif r == e and not SAME_ALLOWED.match(str(r)):
            same.append(key)
        for text in _strings(r):
            assert text.strip(), key
    assert same == [], f"entries identical in Russian and English: {same}"


def test_russian_uses_the_rules_terms() -> None:
    web, docs = load("web", "ru"), load("documents", "ru")
    assert web["director.title"] == "Главный судья"
    assert web["judge.title"] == "Технический судья"
    assert web["variant.2"] == "частичная открытая сдача"
    assert docs["variant.2"] == "Вариант 2 — частичная открытая сдача"
    words = " ".join(s for cat in (web, docs) for v in cat.values() for s in _strings(v)).lower()
    for slip in ("коробочк", "раздача", "частично открытая", "директор", 'открытых карт"', "доск", "опечат"):
        assert slip not in words, slip


def _cli(*args: str, lang: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "LC_ALL": "", "LANG": "C.UTF-8"}
    if lang:
        env["LANG"] = lang
    return subprocess.run(
        [sys.executable, "-m", "dealer", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_cli_help_in_russian_by_default() -> None:
    r = _cli("docs", "--help")
    assert r.returncode == 0 and "Использование:" in r.stdout and "Параметры" in r.stdout
    assert "Акт формирования банка сдач" in r.stdout and "Показать эту справку и выйти." in r.stdout
    r = _cli("--lang", "en", "docs", "--help")
    assert "Usage:" in r.stdout and "Documents to print and sign" in r.stdout
    r = _cli("docs", "--help", lang="en_GB.UTF-8")
    assert "Usage:" in r.stdout and "Использование" not in r.stdout
    r = _cli("docs", "draw")
    assert r.returncode == 2 and "Не хватает аргумента 'СЕССИЯ'." in r.stderr and "Ошибка" in r.stderr
    r = _cli("docs", "verify", "/nonexistent.pdf", "--bank", "/nonexistent.sqlite")
    assert r.returncode == 1 and r.stderr.startswith("ошибка:")


def test_every_cli_help_text_has_a_russian_entry() -> None:
    import importlib

    from dealer.cli import app as cli_app
    from dealer.cli.i18n import catalogue, help_texts

    for module in cli_app.COMMAND_MODULES:
        importlib.import_module(module)
    texts = help_texts(cli_app.app)
    russian = catalogue()["help"]
    missing = sorted({t for t in texts if t not in russian})
    assert missing == [], f"help texts without a Russian entry in dealer/cli/i18n/ru.json: {missing}"
    same = sorted(t for t in texts if russian[t] == t and re.search(r"[a-z]{3}", t))
    assert same == [], same


@settings(max_examples=400)
@given(
    value=st.one_of(
        st.floats(min_value=0, max_value=1e15, exclude_max=True, allow_nan=False),
        st.integers(min_value=0, max_value=10**15 - 1),
        st.decimals(min_value=0, max_value=10**6, places=3).map(float),
    ),
    lang=st.sampled_from(["ru", "en"]),
    pattern=st.sampled_from(sorted(PLAIN_PATTERNS)),
)
def test_numbers_without_grouping_are_written_as_babel_writes_them(value: float, lang: str, pattern: str) -> None:
    """``format_number`` writes the patterns without grouping itself (the command line's start goes without
    Babel): the same text as Babel's, which is the independent source here."""
    from babel.numbers import format_decimal

    assert format_number(value, lang, pattern) == format_decimal(value, pattern, locale=lang)


@pytest.mark.parametrize(
    ("value", "lang", "pattern", "expected"),
    [(2.675, "ru", "0.##", "2,68"), (0.125, "en", "0.##", "0.12"), (5.0, "ru", "0.00", "5,00"), (5, "en", "0.##", "5")],
)
def test_numbers_round_half_to_even_on_the_decimal_text(value: float, lang: str, pattern: str, expected: str) -> None:
    assert format_number(value, lang, pattern) == expected
