"""Domain errors in Russian: every error template written in ``dealer/`` has a real Russian entry, built the
shared way (``DealerError(template, /, **params)``, English ``str(exc)``), and renders with plural forms."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import pytest
from _error_templates import DEALER, EXEMPT, sites

from dealer.core import Deal
from dealer.core.errors import BoardNumberError, DealerError, HandSizeError, Phrase
from dealer.export.files import read_deal_file
from dealer.formats.base import FormatError
from dealer.i18n import error_text
from dealer.regulation import RegulationError

CATALOGUE: dict[str, Any] = json.loads((DEALER / "core/i18n/ru.json").read_text(encoding="utf-8"))
RU_CATEGORIES = {"one", "few", "many", "other"}
# entries the same in both languages on purpose: nothing but fields, field names and punctuation around them
SAME_ALLOWED = {
    "{path}: {exc}",
    "{source}: {exc}",
    "{where}: {exc}",
    "{source}: relay.event: {exc}",
    "boards[{i}].vulnerable: {exc}",
    "commitment.public_value: {exc}",
    "md {md!r}: {exc}",  # md and Deal: the names of a LIN key and a PBN tag
    "Deal {value!r}: {exc}",
    "{exc}",
    "{first}; {then}",
    "{problems}",  # pydantic's own words for a judge command's bad fields
    "{reason}",  # a device's own words for a lost link or a refused session (firmware_protocol speaks English)
}


def fields(text: str) -> set[str]:
    return {f"{name}!{conv}:{spec}" for _, name, spec, conv in string.Formatter().parse(text) if name is not None}


def test_every_error_raise_site_has_a_literal_template_in_the_russian_catalogue() -> None:
    found = sites()
    assert len(found) > 250  # the walk really finds the raise sites (about 290 when written)
    assert all(not s.path.startswith(EXEMPT) for s in found)
    not_literal = [f"{s.path}:{s.line}: {s.source[:80]}" for s in found if not s.templates]
    assert not not_literal, "an error built from a non-literal template (an f-string?):\n" + "\n".join(not_literal)
    missing = sorted({t for s in found for t in s.templates if t not in CATALOGUE})
    assert not missing, "templates without a Russian entry:\n" + "\n".join(missing)


@pytest.mark.parametrize("template", sorted(CATALOGUE))
def test_catalogue_entry_is_a_translation_with_the_same_fields(template: str) -> None:
    entry = CATALOGUE[template]
    forms = list(entry.values()) if isinstance(entry, dict) else [entry]
    if isinstance(entry, dict):
        assert set(entry) == RU_CATEGORIES, f"{template}: plural forms must be {sorted(RU_CATEGORIES)}"
    for form in forms:
        assert isinstance(form, str) and form.strip()
        assert fields(form) == fields(template), f"{template!r} → {form!r}: other fields"
        if template not in SAME_ALLOWED:
            assert form != template, f"{template!r} is not translated"
            assert re.search("[а-яё]", form, re.IGNORECASE), f"{form!r} has no Russian word"
        else:
            assert form == template


def test_the_catalogue_holds_no_stale_entries() -> None:
    used = {t for s in sites() for t in s.templates}
    system = {key for key in CATALOGUE if key.startswith("os:")}  # the system's words (strerror), not templates
    assert set(CATALOGUE) - system <= used, sorted(set(CATALOGUE) - system - used)


def test_str_is_english_and_the_template_carries_the_params() -> None:
    exc = HandSizeError("N", 12)
    assert str(exc) == "hand N has 12 cards, expected 13"
    assert exc.template == "hand {seat} has {count} cards, expected {expected}"
    assert exc.params == {"seat": "N", "count": 12, "expected": 13}
    assert error_text(exc, "en") == str(exc)
    plain = DealerError("nothing {here}")  # no params: the text is taken as it is, braces and all
    assert str(plain) == "nothing {here}" and error_text(plain, "ru") == "nothing {here}"


def test_russian_plural_forms_agree_with_the_count() -> None:
    # by hand from the CLDR rule: 1 карта, 2-4 карты, 5-20 карт, 21 карта
    expected = {1: "в руке W 1 карта", 3: "в руке W 3 карты", 12: "в руке W 12 карт", 21: "в руке W 21 карта"}
    for count, start in expected.items():
        assert error_text(HandSizeError("W", count), "ru") == start + ", а нужно 13"


def test_nested_errors_and_phrases_are_rendered_in_the_same_language(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as caught:
        read_deal_file(tmp_path, "pbn")
    assert str(caught.value) == f"{tmp_path}: is a directory, not a regular file"
    assert error_text(caught.value, "ru") == f"{tmp_path}: это каталог, а не обычный файл"
    outer = DealerError("{path}: {exc}", path="x.pbn", exc=BoardNumberError(0))
    assert error_text(outer, "ru") == "x.pbn: номер коробки 0 вне диапазона: коробки нумеруются с 1"
    phrase = DealerError("The annex is printed only after draw '{label}' is revealed (now: {state}).",
                         label="S1", state=Phrase("drawn"))  # fmt: skip
    assert str(phrase).endswith("(now: drawn).")
    assert error_text(phrase, "ru").endswith("(сейчас: жеребьёвка проведена).")


def test_prefixed_and_card_token_errors_are_found_with_their_prefix() -> None:
    with pytest.raises(RegulationError) as caught:
        raise RegulationError("dealing.variant is required (1 closed, 2 partially open, 3 fully open)", "r.toml")
    assert caught.value.template in CATALOGUE
    assert error_text(caught.value, "ru").startswith("r.toml: нужно dealing.variant")
    with pytest.raises(DealerError) as bad:
        Deal.from_pbn("N:AKQ")
    assert bad.value.template in CATALOGUE
    assert error_text(bad.value, "ru") == "в руке N должно быть 4 масти через '.', получено 'AKQ' в позиции 2"


def test_russian_numbers_have_a_decimal_comma_and_phrases_inside() -> None:
    from dealer.draw.protocol import DrawError, dice_spec

    with pytest.raises(DrawError) as caught:
        dice_spec(["Анна"], 1)  # log2(6) = 2.58 bits: far too few
    assert str(caught.value).startswith("the public value carries 2.6 bits (1 witnesses (Анна) × 1 rolls of a d6")
    ru = error_text(caught.value, "ru")
    assert ru.startswith("публичное значение несёт 2,6 бит (1 свидетель (Анна) × бросков кости d6: 1 (1-6)"), ru


def test_russian_groups_thousands_with_a_no_break_space() -> None:
    """``{n:,}`` in a template: a comma in English, a no-break space in Russian (CLDR's ru group symbol)."""
    from dealer.formats.base import MAX_LINE_CHARS

    exc = DealerError(
        "{source}: line {line} is longer than {MAX_LINE_CHARS:,} characters", source="a.pbn", line=3,
        MAX_LINE_CHARS=1_048_576,
    )  # fmt: skip
    assert MAX_LINE_CHARS > 0 and str(exc) == "a.pbn: line 3 is longer than 1,048,576 characters"
    assert error_text(exc, "ru") == "a.pbn: строка 3 длиннее 1\u00a0048\u00a0576 знаков"
    small = DealerError("{source}: line {line} is longer than {MAX_LINE_CHARS:,} characters", source="b",
                        line=1234, MAX_LINE_CHARS=999)  # fmt: skip
    assert error_text(small, "ru") == "b: строка 1234 длиннее 999 знаков"  # no grouping where none is asked
    assert error_text(DealerError("{where}: probability {value} not in 0..1", where="x", value=1.5), "ru") == (
        "x: вероятность 1,5 вне диапазона 0..1"
    )
