"""Words and card symbols of hand records in English and Russian (DESIGN.md §7)."""

from __future__ import annotations

from dealer.core import Seat, Vulnerability
from dealer.core.diagram import RANK_DISPLAY, SEAT_LETTERS

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Hand records",
        "board": "Board",
        "dealer": "Dealer",
        "vul": "Vul",
        "par": "Par",
        "dd": "Double dummy",
        "hcp": "HCP",
        "made": "made by",
        "page": "Page",
    },
    "ru": {
        "title": "Расклады",
        "board": "Сдача",
        "dealer": "Сдающий",
        "vul": "Зона",
        "par": "Пар",
        "dd": "Дабл-дамми",
        "hcp": "Очки",
        "made": "Сделано",
        "page": "Стр.",
    },
}
SEATS = SEAT_LETTERS
VULS = {
    "en": {Vulnerability.NONE: "None", Vulnerability.NS: "NS", Vulnerability.EW: "EW", Vulnerability.ALL: "All"},
    "ru": {Vulnerability.NONE: "Никто", Vulnerability.NS: "С-Ю", Vulnerability.EW: "В-З", Vulnerability.ALL: "Все"},
}
STRAIN_SHOW = {"en": ("♠", "♥", "♦", "♣", "NT"), "ru": ("♠", "♥", "♦", "♣", "БК")}


def check_lang(lang: str) -> str:
    if lang not in LABELS:
        raise ValueError(f"language {lang!r} is not supported: expected en or ru")
    return lang


def seat_name(seat: Seat, lang: str) -> str:
    return SEATS[lang][seat]


def ranks(lang: str) -> tuple[str, ...]:
    return RANK_DISPLAY[lang]
