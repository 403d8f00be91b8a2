"""A second, independently drawn deck for testing the scanner on a design it was never tuned on.

Nothing here is shared with :mod:`.deckart`'s synthetic deck but the card outline: another font (a serif
Hershey face), index placed and sized differently, suit symbols traced from classic outlines (the heart curve,
its inverse with a flared foot for the spade, a curved-sided diamond, a trefoil with a thin foot) and the
accessible four-colour inks of bridge clubs (black spades, red hearts, blue diamonds, green clubs), whose
clubs and spades differ in shape only once the colour is taken away. A court card shows a large framed letter.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from dealer.core.cards import ALL_CARDS, Card, Rank, Suit
from dealer.core.errors import DealerError

from .deckart import INDEX_SETS, CardArt, DeckArt, rounded_mask

Image = npt.NDArray[np.uint8]
Outline = npt.NDArray[np.float64]

# BGR, S H D C
ACCESSIBLE_FOUR: tuple[tuple[int, int, int], ...] = ((20, 20, 20), (35, 25, 190), (170, 80, 10), (45, 125, 20))
CLASSIC_TWO: tuple[tuple[int, int, int], ...] = ((20, 20, 20), (35, 25, 190), (35, 25, 190), (20, 20, 20))
CREAM = (222, 236, 244)  # BGR: an ivory card stock


def _heart(n: int = 48) -> Outline:
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    pts = np.stack([x, y], axis=1)
    return _unit(pts)


def _unit(pts: Outline) -> Outline:
    """Fit an outline into the box -1..1 (keeping proportions), centred."""
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return np.asarray((pts - (lo + hi) / 2) / ((hi - lo).max() / 2), np.float64)


def _shapes(suit: Suit) -> list[Outline]:
    """Filled outlines of a suit symbol in a -1..1 box, upright."""
    if suit is Suit.HEARTS:
        return [_heart()]
    if suit is Suit.SPADES:
        body = _heart() * [1.0, -1.0] * 0.8 + [0.0, -0.18]
        foot = np.array([[-0.08, 0.25], [0.08, 0.25], [0.18, 0.8], [0.45, 0.98], [-0.45, 0.98], [-0.18, 0.8]])
        return [body, foot]
    if suit is Suit.DIAMONDS:
        t = np.linspace(0, 2 * math.pi, 40, endpoint=False)
        c, s = np.cos(t), np.sin(t)
        p = 1.25  # a slightly pinched rhombus: sides bow inwards
        x = 0.7 * np.sign(c) * np.abs(c) ** p
        y = np.sign(s) * np.abs(s) ** p
        return [np.stack([x, y], axis=1)]
    leaves = []
    for cx, cy in ((0.0, -0.5), (-0.5, 0.12), (0.5, 0.12)):
        t = np.linspace(0, 2 * math.pi, 24, endpoint=False)
        leaves.append(np.stack([cx + 0.38 * np.cos(t), cy + 0.38 * np.sin(t)], axis=1))
    foot = np.array([[-0.06, 0.0], [0.06, 0.0], [0.12, 0.75], [0.36, 0.98], [-0.36, 0.98], [-0.12, 0.75]])
    return [*leaves, foot, np.array([[0.0, -0.2], [0.28, 0.2], [-0.28, 0.2]])]


def _symbol(img: Image, suit: Suit, cx: float, cy: float, size: float, ink: tuple[int, int, int]) -> None:
    half = size / 2
    for outline in _shapes(suit):
        pts = np.round((outline * half + [cx, cy]) * 16).astype(np.int32)
        cv2.fillPoly(img, [pts], ink, cv2.LINE_AA, 4)


def _text(img: Image, text: str, cx: float, top: float, height: float, ink: tuple[int, int, int]) -> None:
    font = cv2.FONT_HERSHEY_COMPLEX
    (_, h1), _ = cv2.getTextSize("A", font, 1.0, 1)
    scale = height / h1
    thick = max(1, round(scale * 1.6))
    (w, h), _ = cv2.getTextSize(text, font, scale, thick)
    squeeze = 0.62 if len(text) > 1 else 1.0
    pad = thick + 2
    scratch = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    cv2.putText(scratch, text, (pad, h + pad), font, scale, 255, thick, cv2.LINE_AA)
    width = max(1, round(scratch.shape[1] * squeeze))
    scratch = np.asarray(cv2.resize(scratch, (width, scratch.shape[0]), interpolation=cv2.INTER_AREA), np.uint8)
    x0, y0 = round(cx - width / 2), round(top - pad)
    roi = img[y0 : y0 + scratch.shape[0], x0 : x0 + width]
    alpha = scratch[: roi.shape[0], : roi.shape[1], None].astype(np.float32) / 255.0
    roi[:] = (roi * (1 - alpha) + np.array(ink, np.float32) * alpha).astype(np.uint8)


# Pip spots by count (x across, y down, both -1..1), all pips upright.
_SIDES = {4: (-1.0, 1.0), 6: (-1.0, 0.0, 1.0), 8: (-1.0, -1 / 3, 1 / 3, 1.0)}
_SPOTS: dict[int, list[tuple[float, float]]] = {
    1: [(0.0, 0.0)],
    2: [(0.0, -1.0), (0.0, 1.0)],
    3: [(0.0, -1.0), (0.0, 0.0), (0.0, 1.0)],
    4: [(x, y) for y in _SIDES[4] for x in (-1.0, 1.0)],
    5: [*((x, y) for y in _SIDES[4] for x in (-1.0, 1.0)), (0.0, 0.0)],
    6: [(x, y) for y in _SIDES[6] for x in (-1.0, 1.0)],
    7: [*((x, y) for y in _SIDES[6] for x in (-1.0, 1.0)), (0.0, -0.5)],
    8: [*((x, y) for y in _SIDES[6] for x in (-1.0, 1.0)), (0.0, -0.5), (0.0, 0.5)],
    9: [*((x, y) for y in _SIDES[8] for x in (-1.0, 1.0)), (0.0, 0.0)],
    10: [*((x, y) for y in _SIDES[8] for x in (-1.0, 1.0)), (0.0, -2 / 3), (0.0, 2 / 3)],
}


def _label(rank: Rank, index_set: str) -> str:
    if rank <= Rank.JACK:
        return INDEX_SETS[index_set][rank]
    return "10" if rank is Rank.TEN else rank.char


def print_deck(colours: int = 4, index_set: str = "en", width: int = 240) -> DeckArt:
    """The independently drawn deck: serif index, classic suit outlines, 2 or accessible 4 colours."""
    if colours not in (2, 4):
        raise DealerError("print deck: colours must be 2 or 4, not {colours}", colours=colours)
    if index_set not in INDEX_SETS:
        raise DealerError(
            "print deck: unknown index set {index_set!r}; known: {known}",
            index_set=index_set,
            known=", ".join(INDEX_SETS),
        )
    height = round(width * 89 / 64)
    inks = ACCESSIBLE_FOUR if colours == 4 else CLASSIC_TWO
    mask = rounded_mask(width, height, round(width * 0.05))
    faces = {card: CardArt(_face(card, inks[card.suit], index_set, width, height), mask) for card in ALL_CARDS}
    back = np.empty((height, width, 3), np.uint8)
    back[:] = CREAM
    m = round(width * 0.07)
    cv2.rectangle(back, (m, m), (width - 1 - m, height - 1 - m), (40, 40, 150), -1)
    for k in range(m, height - m, 9):
        cv2.line(back, (m, k), (width - 1 - m, k), (90, 90, 200), 2)
    joker = np.empty((height, width, 3), np.uint8)
    joker[:] = CREAM
    cv2.circle(joker, (width // 2, height // 2), width // 4, (30, 30, 160), -1, cv2.LINE_AA)
    _text(joker, "JOKER", width / 2, height * 0.08, height * 0.06, (20, 20, 20))
    name = f"print-{colours}c-{index_set}"
    return DeckArt(name, faces, CardArt(back, mask), CardArt(joker, mask))


def _face(card: Card, ink: tuple[int, int, int], index_set: str, width: int, height: int) -> Image:
    img = np.empty((height, width, 3), np.uint8)
    img[:] = CREAM
    label = _label(card.rank, index_set)
    for _ in range(2):  # the index in the top-left corner, then (after half a turn) in the other one
        cx = width * 0.125
        _text(img, label, cx, height * 0.045, height * 0.085, ink)
        _symbol(img, card.suit, cx, height * 0.195, height * 0.075, ink)
        img = np.ascontiguousarray(img[::-1, ::-1])
    if card.rank <= Rank.JACK and card.rank is not Rank.ACE:
        x0, y0, x1, y1 = round(width * 0.27), round(height * 0.17), round(width * 0.73), round(height * 0.83)
        cv2.rectangle(img, (x0, y0), (x1, y1), ink, 3, cv2.LINE_AA)
        _text(img, label, width / 2, height * 0.36, height * 0.2, ink)
        _symbol(img, card.suit, width * 0.38, height * 0.24, height * 0.07, ink)
        return img
    count = 1 if card.rank is Rank.ACE else 14 - int(card.rank)
    size = height * (0.28 if count == 1 else 0.1)
    spots = _SPOTS[count]
    cx, cy, hx, hy = width / 2, height / 2, width * 0.2, height * 0.3
    for x, y in spots:
        _symbol(img, card.suit, cx + x * hx, cy + y * hy, size, ink)
    return img
