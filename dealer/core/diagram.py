"""Text compass diagrams of a deal (N top, S bottom, W and E at the sides), in English or Russian."""

from __future__ import annotations

from .cards import Seat, Suit
from .deal import Deal, Hand

SEAT_NAMES = {
    "en": ("North", "East", "South", "West"),
    "ru": ("Север", "Восток", "Юг", "Запад"),
}
RANK_DISPLAY = {
    "en": ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2"),
    "ru": ("Т", "К", "Д", "В", "10", "9", "8", "7", "6", "5", "4", "3", "2"),
}
SEAT_LETTERS = {"en": ("N", "E", "S", "W"), "ru": ("С", "В", "Ю", "З")}
HCP_LABEL = {"en": "HCP", "ru": "очки"}  # high-card points
SUIT_DISPLAY = {"unicode": "♠♥♦♣", "ascii": "SHDC"}
VOID = "—"


def holding_text(hand: Hand, suit: Suit, lang: str = "en") -> str:
    ranks = RANK_DISPLAY[lang]
    cards = hand.suit(suit)
    return " ".join(ranks[c % 13] for c in cards) if cards else VOID


def hand_lines(hand: Hand, lang: str = "en", suits: str = "unicode") -> list[str]:
    symbols = SUIT_DISPLAY[suits]
    return [f"{symbols[s]} {holding_text(hand, s, lang)}" for s in Suit]


def seat_hand_line(deal: Deal, seat: Seat, lang: str = "en") -> str:
    """One seat's hand on one line, as the draw annex and ``dealer draw show`` print it: «С: ♠ Т К 5  ♥ …»."""
    return f"{SEAT_LETTERS[lang][seat]}: " + "  ".join(hand_lines(deal.hand(seat), lang))


def compass_diagram(deal: Deal, lang: str = "en", suits: str = "unicode", hcp: bool = True) -> str:
    names = SEAT_NAMES[lang]
    points = deal.hcp()
    blocks: dict[Seat, list[str]] = {}
    for seat in Seat:
        title = names[seat] + (f"  {HCP_LABEL[lang]} {points[seat]}" if hcp else "")
        blocks[seat] = [title, *hand_lines(deal.hand(seat), lang, suits)]
    width = max(len(line) for seat in (Seat.W,) for line in blocks[seat]) + 4
    width = max(width, 22)
    lines: list[str] = []
    pad = " " * width
    lines += [pad + line for line in blocks[Seat.N]]
    lines.append("")
    for west, east in zip(blocks[Seat.W], blocks[Seat.E], strict=True):
        lines.append(west.ljust(width) + " " * max(len(max(blocks[Seat.N], key=len)), 14) + "  " + east)
    lines.append("")
    lines += [pad + line for line in blocks[Seat.S]]
    return "\n".join(line.rstrip() for line in lines)
