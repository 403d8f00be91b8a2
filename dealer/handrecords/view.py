"""The hand-record view model shared by the HTML and PDF renderers (plain strings, no formatting logic left)."""

from __future__ import annotations

from dataclasses import dataclass

from dealer.core import Seat, Suit

from .analysis import BoardAnalysis
from .labels import LABELS, STRAIN_SHOW, VULS, check_lang, ranks, seat_name

DD_DECLARERS = (Seat.N, Seat.S, Seat.E, Seat.W)
DD_STRAINS = (4, 0, 1, 2, 3)  # NT ♠ ♥ ♦ ♣


@dataclass(frozen=True, slots=True)
class HandView:
    seat: str
    hcp: int
    suits: tuple[tuple[str, str, bool], ...]  # (symbol, holding, red)


@dataclass(frozen=True, slots=True)
class BoardView:
    number: int
    dealer: str
    vulnerability: str
    hands: dict[str, HandView]  # keyed "N", "E", "S", "W"
    strains: tuple[str, ...]  # column heads of the DD table
    dd_rows: tuple[tuple[str, tuple[int, ...]], ...]  # (declarer, tricks per strain)
    par_score: str
    par_contracts: str


@dataclass(frozen=True, slots=True)
class DocumentView:
    title: str
    subtitle: str
    lang: str
    labels: dict[str, str]
    boards: tuple[BoardView, ...]


def board_view(a: BoardAnalysis, lang: str) -> BoardView:
    rank_text = ranks(lang)
    hcp = a.deal.hcp()
    hands: dict[str, HandView] = {}
    for seat in Seat:
        hand = a.deal.hand(seat)
        suits = []
        for suit in Suit:
            cards = hand.suit(suit)
            holding = " ".join(rank_text[c % 13] for c in cards) if cards else "—"
            suits.append((suit.symbol, holding, suit in (Suit.HEARTS, Suit.DIAMONDS)))
        hands[seat.letter] = HandView(seat_name(seat, lang), hcp[seat], tuple(suits))
    rows = tuple((seat_name(d, lang), tuple(a.table.get(s, d) for s in DD_STRAINS)) for d in DD_DECLARERS)
    symbols = STRAIN_SHOW[lang]
    contracts = []
    for c in a.par.contracts:
        text = c.text()
        if lang == "ru":
            text = text.replace("NT", symbols[4])
            for en, ru in zip("NESW", "СВЮЗ", strict=True):
                text = text.replace(en, ru)
        contracts.append(text)
    score = a.par.score_text()
    if lang == "ru":
        score = score.replace("NS", "С-Ю").replace("EW", "В-З")
    return BoardView(
        number=a.board,
        dealer=seat_name(a.dealer, lang),
        vulnerability=VULS[lang][a.vulnerability],
        hands=hands,
        strains=tuple(symbols[s] for s in DD_STRAINS),
        dd_rows=rows,
        par_score=score,
        par_contracts=", ".join(contracts) or "—",
    )


def document_view(analyses: list[BoardAnalysis], title: str = "", subtitle: str = "", lang: str = "en") -> DocumentView:
    lang = check_lang(lang)
    labels = LABELS[lang]
    return DocumentView(
        title=title or labels["title"],
        subtitle=subtitle,
        lang=lang,
        labels=labels,
        boards=tuple(board_view(a, lang) for a in analyses),
    )
