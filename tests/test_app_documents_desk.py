"""The day's documents and the board-making views in ``dealer.app``, without HTTP (#29): which director documents
exist, what variant 1 (closed dealing) refuses, the day's date, the session label, variant 1's names; the judge's
blind view of board making hides every card. Expected values are written out by hand from the rules (docs and
the catalogue's English templates), not computed by the code under test."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from dealer.app.board_views import boards_view, card_free, foul_view
from dealer.app.documents_desk import (
    DirectorOrder,
    DocumentDesk,
    DocumentFieldError,
    DocumentKindUnknown,
    WrongVariant,
    director_order,
)
from dealer.app.exports import BoardProgress, shown_label
from dealer.app.jobs import JobState
from dealer.app.operator_messages import FoulShown
from dealer.app.service import Service
from dealer.core.errors import DealerError, Phrase
from dealer.export.journal import FoulCopy

NAME = "Закрытая сдача"  # variant 1's name as the pages say it in Russian (dealer/web/i18n/ru.json)
TODAY = date(2026, 12, 3)


def order(kind: str, closed: bool = False, label: str | None = None, day: str | None = None) -> DirectorOrder:
    return director_order(kind, closed=closed, label=label, day=day, variant_name=NAME, today=TODAY)


# -- the chief judge's documents ---------------------------------------------------------------------------------
def test_an_unknown_kind_is_refused_naming_the_six_kinds() -> None:
    with pytest.raises(DocumentKindUnknown) as caught:
        order("minutes")
    assert str(caught.value) == "no document kind 'minutes' (available: bank, draw, draw-annex, boards, day, closed)"


@pytest.mark.parametrize("kind", ["bank", "draw", "draw-annex"])
def test_variant_1_has_no_bank_and_no_draw_documents(kind: str) -> None:
    with pytest.raises(WrongVariant) as caught:
        order(kind, closed=True, label="Round 1")
    assert str(caught.value) == f"variant 1 (closed dealing) has no bank and no draw: no {kind} document"
    assert order(kind, label="Round 1").kind == kind  # variant 2 has them


def test_the_closed_act_is_variant_1s_only_and_named_by_the_variant_without_a_label() -> None:
    with pytest.raises(WrongVariant) as caught:
        order("closed", label="Round 1")
    assert str(caught.value) == "the closed dealing act is for variant 1 only"
    assert order("closed", closed=True) == DirectorOrder("closed", label=NAME)  # never «closed»
    assert order("closed", closed=True, label="Тур 1") == DirectorOrder("closed", label="Тур 1")


@pytest.mark.parametrize("day", ["2026-02-30", "2026-13-01", "2026-00-10", "03.12.2026", "yesterday"])
def test_a_day_that_is_no_real_date_is_refused(day: str) -> None:
    with pytest.raises(DocumentFieldError) as caught:
        order("day", day=day)
    assert str(caught.value) == f"date = {day!r}: expected a real date YYYY-MM-DD"


def test_the_days_record_is_of_the_given_day_else_of_today() -> None:
    assert order("day", day="2024-02-29") == DirectorOrder("day", day=date(2024, 2, 29))  # a leap day is real
    assert order("day") == DirectorOrder("day", day=TODAY)
    assert order("day", closed=True) == DirectorOrder("day", day=TODAY)  # variant 1 has the day's record too


@pytest.mark.parametrize(
    ("kind", "closed"), [("draw", False), ("draw-annex", False), ("boards", False), ("boards", True)]
)
def test_a_session_document_needs_the_session_label(kind: str, closed: bool) -> None:
    with pytest.raises(DocumentFieldError) as caught:
        order(kind, closed=closed)
    assert str(caught.value) == f"label: the {kind} document needs the session label"


def test_the_boards_act_of_variant_1_is_of_the_closed_boards_named_by_the_variant() -> None:
    assert order("boards", label="Round 1") == DirectorOrder("boards", label="Round 1")
    assert order("boards", closed=True, label="Round 1") == DirectorOrder("boards", label="closed", shown=NAME)
    assert order("bank") == DirectorOrder("bank")  # no label, no day


def test_the_refusals_are_dealer_errors_with_russian_entries() -> None:
    """The console answers them in the request's language: each template has a Russian entry."""
    from dealer.i18n import error_text

    refusals: list[DealerError] = []
    for kind, closed, day in [("x", False, None), ("bank", True, None), ("closed", False, None), ("day", False, "1")]:
        with pytest.raises(DealerError) as caught:
            order(kind, closed=closed, day=day)
        refusals.append(caught.value)
    with pytest.raises(DealerError) as missing:
        order("draw")
    refusals.append(missing.value)
    assert [error_text(e, "ru") for e in refusals] == [
        "нет документа вида 'x' (есть: bank, draw, draw-annex, boards, day, closed)",
        "при варианте 1 (закрытая сдача) нет ни банка, ни жеребьёвки: документа «bank» нет",
        "акт закрытой сдачи — только для варианта 1",
        "date = '1': ожидается настоящая дата ГГГГ-ММ-ДД",
        "label: для документа «draw» нужно название сессии",
    ]


def fake_service(tmp_path: Path, closed: bool) -> Service:
    """What the desk reads before it issues: the configuration and variant 1's boards (no bank: a refusal comes
    first, and the test fails if anything reaches for the bank)."""
    config = SimpleNamespace(var_dir=tmp_path, language="ru")
    return cast(Service, SimpleNamespace(config=config, closed=object() if closed else None))


def test_the_desk_refuses_before_issuing_and_names_the_variant_in_the_documents_language(tmp_path: Path) -> None:
    asked: list[str] = []

    def variant_name(lang: str) -> str:
        asked.append(lang)
        return {"ru": NAME, "en": "Closed dealing"}[lang]

    desk = DocumentDesk(fake_service(tmp_path, closed=True), variant_name)
    assert desk.folder == tmp_path / "documents"
    with pytest.raises(WrongVariant):
        asyncio.run(desk.director("draw", label="Round 1", lang="en"))
    with pytest.raises(DocumentFieldError):
        asyncio.run(desk.director("day", day="2026-02-30"))
    assert asked == ["en", "ru"]  # the asked language, else the service's
    assert not (tmp_path / "documents").exists()  # nothing issued


# -- session names -------------------------------------------------------------------------------------------
def test_variant_1s_boards_are_shown_by_the_variants_name_other_sessions_by_their_label(tmp_path: Path) -> None:
    closed, open_ = fake_service(tmp_path, closed=True), fake_service(tmp_path, closed=False)
    assert shown_label(closed, "closed", NAME) == NAME
    assert shown_label(closed, "Round 1", NAME) == "Round 1"
    assert shown_label(open_, "closed", NAME) == "closed"  # variant 2: a session that happens to be called so


# -- board making without Show cards -----------------------------------------------------------------------------
FOUL = FoulCopy(
    board=7,
    copy=2,
    attempt=1,
    reason="♠A went to pocket E, belongs in S",
    card="♠A",
    pocket="E",
    expected="S",
    kind="wrong_pocket",
    position=12,
    reason_template="{card} went to pocket {pocket}, belongs in {expected}",
    reason_params={"card": "♠A", "pocket": "E", "expected": "S"},
)


def said(phrase: Phrase) -> str:
    return "said: " + str(phrase)


def test_the_blind_view_of_a_foul_names_no_card() -> None:
    blind = foul_view(FOUL, cards=False, reason_text=said).model_dump()
    assert blind == {"board": 7, "copy": 2, "attempt": 1, "kind": "wrong_pocket", "pocket": "E", "position": 12}
    shown = foul_view(FOUL, cards=True, reason_text=said)
    assert isinstance(shown, FoulShown)
    assert (shown.card, shown.expected, shown.reason) == ("♠A", "S", "said: ♠A went to pocket E, belongs in S")


@pytest.mark.parametrize(
    ("text", "blanked"),
    [
        ("board 7: ♠A in pocket E", "board 7: … in pocket E"),
        ("cards ♥T, ♦2 and ♣K", "cards …, … and …"),
        ("card SA read twice, then HQ", "card … read twice, then …"),
        ("CHAIR S 9 SOUTH", "CHAIR S 9 SOUTH"),  # no card there: letters inside words, a suit without a rank
    ],
)
def test_card_names_are_blanked_out(text: str, blanked: str) -> None:
    assert card_free(text) == blanked


def test_the_boards_view_hides_the_cards_of_fouls_and_errors_unless_shown() -> None:
    progress = BoardProgress(boards=8, total_copies=16, copies_done=5, current="board 3", fouls=[FOUL])
    error = "board 7 copy 2: ♠A in pocket E"
    blind = boards_view("Round 1", JobState.FAILED, progress, said, error, cards=False)
    assert blind.error == "board 7 copy 2: … in pocket E"
    assert [f.model_dump() for f in blind.fouls] == [
        {"board": 7, "copy": 2, "attempt": 1, "kind": "wrong_pocket", "pocket": "E", "position": 12}
    ]
    shown = boards_view("Round 1", JobState.FAILED, progress, said, error, cards=True)
    assert shown.error == error
    assert [getattr(f, "card", None) for f in shown.fouls] == ["♠A"]
    assert (shown.boards, shown.copies_total, shown.copies_done) == (8, 16, 5)
