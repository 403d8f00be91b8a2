"""The session's file names and the competition's PBN tags, one rule for the consoles and the command line (#28):
a name keeps its Cyrillic, the venue is PBN's Site, and Date is the day of play within the competition's dates."""

from __future__ import annotations

from datetime import date

from dealer.export.names import competition_meta, play_date, session_slug
from dealer.formats.base import ExportMeta
from dealer.regulation import regulation_from_dict

CLOSED = {"dealing": {"variant": 1}}
FIVE_DAYS = regulation_from_dict({**CLOSED, "venue": "Москва", "starts": date(2026, 12, 1), "ends": date(2026, 12, 5)})


def test_names_keep_cyrillic_and_fall_back_to_the_callers_word() -> None:
    assert session_slug("Чемпионат России, 1-й тур") == "Чемпионат_России_1-й_тур"
    assert session_slug("  ", fallback="сессия") == "сессия"
    assert session_slug("///", fallback="расклады") == "расклады"
    assert session_slug("") == "session"


def test_the_day_of_play_is_today_within_the_competition_else_its_first_day() -> None:
    assert play_date(FIVE_DAYS, date(2026, 12, 3)) == "2026.12.03"
    assert play_date(FIVE_DAYS, date(2026, 12, 5)) == "2026.12.05"
    assert play_date(FIVE_DAYS, date(2026, 12, 9)) == "2026.12.01"  # hand records printed after the event
    assert play_date(FIVE_DAYS, date(2026, 11, 30)) == "2026.12.01"
    one_day = regulation_from_dict({**CLOSED, "starts": date(2026, 12, 1)})
    assert play_date(one_day, date(2026, 12, 2)) == "2026.12.01"
    assert play_date(regulation_from_dict(CLOSED), date(2027, 2, 28)) == "2027.02.28"  # no dates: today


def test_the_regulation_fills_site_and_date_only_where_the_command_gave_none() -> None:
    filled = competition_meta(FIVE_DAYS, ExportMeta(event="Тур 1", copies=2), date(2026, 12, 2))
    assert (filled.event, filled.site, filled.date, filled.copies) == ("Тур 1", "Москва", "2026.12.02", 2)
    given = competition_meta(FIVE_DAYS, ExportMeta(site="Казань", date="2026.12.04"), date(2026, 12, 2))
    assert (given.site, given.date) == ("Казань", "2026.12.04")
    assert competition_meta(regulation_from_dict(CLOSED), ExportMeta(), date(2026, 12, 2)).site == ""
