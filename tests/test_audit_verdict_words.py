"""The audit's verdict agrees with its count in Russian (CLDR plural rules) and keeps the English wording.

Expected phrases written by hand: 1 проверка, 2-4 проверки, 5-20 проверок, 21 проверка; a decimal comma."""

from __future__ import annotations

import pytest

from dealer.audit.engine import all_passed_verdict


@pytest.mark.parametrize(
    ("n", "start"),
    [
        (1, "1 проверка из 1 согласуется"),
        (3, "Все 3 проверки согласуются"),
        (5, "Все 5 проверок согласуются"),
        (11, "Все 11 проверок согласуются"),
        (21, "21 проверка из 21 согласуется"),
        (22, "Все 22 проверки согласуются"),
    ],
)
def test_russian_verdict_agrees_with_the_count(n: int, start: str) -> None:
    text = all_passed_verdict(n, 0.05, "ru")
    assert text == f"{start} со случайной раздачей на уровне 0,05 (с поправкой Холма)."


def test_english_verdict_singular_and_plural() -> None:
    assert all_passed_verdict(1, 0.01, "en") == (
        "The 1 test is consistent with random dealing at the 0.01 level (family-wise, Holm)."
    )
    assert all_passed_verdict(7, 0.01, "en") == (
        "All 7 tests are consistent with random dealing at the 0.01 level (family-wise, Holm)."
    )
