"""Test decks with other index layouts, drawn here, for measuring the scanner on designs it was never tuned on.

The two decks the scanner was developed on (:mod:`.deckart`, :mod:`.printdeck`) both print a small corner index
with the rank above the suit, in two opposite corners. A federation may buy anything else:

- ``beside``: the rank and the suit side by side on one line (the "accessible" four-colour decks), in all four
  corners;
- ``jumbo``: a large index (rank about a sixth of the card's height), the suit below it, in all four corners;
- ``above``: the classic arrangement in a third font, for the low-contrast print (grey ink on grey-white stock).

Each layout comes in 2 or 4 colours and normal or ``low`` contrast (ink blended halfway towards the paper).
Names: ``layout-<beside|jumbo|above>-<2|4>c[-low]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from dealer.core.cards import ALL_CARDS, Card, Rank, Suit
from dealer.core.errors import DealerError

from .deckart import INDEX_SETS, CardArt, DeckArt, rounded_mask
from .printdeck import _symbol

Image = npt.NDArray[np.uint8]

# BGR, S H D C: black, red, blue, green (accessible four colours), or black and red.
FOUR: tuple[tuple[int, int, int], ...] = ((30, 30, 30), (30, 30, 200), (160, 70, 20), (30, 130, 40))
TWO: tuple[tuple[int, int, int], ...] = ((30, 30, 30), (30, 30, 200), (30, 30, 200), (30, 30, 30))
STOCK = (238, 240, 240)  # BGR: a cool white
LOW_STOCK = (205, 212, 214)  # a greyish stock under the low-contrast print
ARRANGEMENTS = ("beside", "jumbo", "above")


@dataclass(frozen=True, slots=True)
class IndexStyle:
    """Where one corner index goes, as shares of the card's width (x) and height (y)."""

    rank_cx: float
    rank_top: float
    rank_h: float
    suit_cx: float
    suit_cy: float
    suit_h: float
    corners: int  # 2: top-left and bottom-right; 4: every corner
    font: int


STYLES: dict[str, IndexStyle] = {
    "beside": IndexStyle(0.095, 0.035, 0.072, 0.235, 0.071, 0.07, 4, cv2.FONT_HERSHEY_SIMPLEX),
    "jumbo": IndexStyle(0.14, 0.03, 0.165, 0.14, 0.28, 0.11, 4, cv2.FONT_HERSHEY_DUPLEX),
    "above": IndexStyle(0.11, 0.04, 0.09, 0.11, 0.19, 0.08, 2, cv2.FONT_HERSHEY_TRIPLEX),
}


def _glyph(img: Image, text: str, cx: float, top: float, height: float, ink: tuple[int, int, int], font: int) -> None:
    """``text`` of cap height ``height``, centred on ``cx``, its top at ``top`` ("10" squeezed to fit)."""
    (_, h1), _ = cv2.getTextSize("A", font, 1.0, 1)
    scale = height / h1
    thick = max(1, round(scale * 1.8))
    (w, h), _ = cv2.getTextSize(text, font, scale, thick)
    pad = thick + 2
    scratch = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    cv2.putText(scratch, text, (pad, h + pad), font, scale, 255, thick, cv2.LINE_AA)
    width = max(1, round(scratch.shape[1] * (0.66 if len(text) > 1 else 1.0)))
    scratch = np.asarray(cv2.resize(scratch, (width, scratch.shape[0]), interpolation=cv2.INTER_AREA), np.uint8)
    x0, y0 = round(cx - width / 2), round(top - pad)
    roi = img[y0 : y0 + scratch.shape[0], x0 : x0 + width]
    alpha = scratch[: roi.shape[0], : roi.shape[1], None].astype(np.float32) / 255.0
    roi[:] = (roi * (1 - alpha) + np.array(ink, np.float32) * alpha).astype(np.uint8)


def _label(rank: Rank) -> str:
    if rank <= Rank.JACK:
        return INDEX_SETS["en"][rank]
    return "10" if rank is Rank.TEN else rank.char


def _index(img: Image, card: Card, style: IndexStyle, ink: tuple[int, int, int], right: bool = False) -> None:
    """The index in the top-left corner (or, ``right``, upright in the top-right corner)."""
    h, w = img.shape[:2]

    def x(share: float) -> float:
        return float((1.0 - share) * w if right else share * w)

    _glyph(img, _label(card.rank), x(style.rank_cx), style.rank_top * h, style.rank_h * h, ink, style.font)
    _symbol(img, card.suit, x(style.suit_cx), style.suit_cy * h, style.suit_h * h, ink)


def _face(
    card: Card, style: IndexStyle, ink: tuple[int, int, int], stock: tuple[int, int, int], w: int, h: int
) -> Image:
    img = np.empty((h, w, 3), np.uint8)
    img[:] = stock
    for _ in range(2):  # top-left (and top-right), then half a turn for the opposite corners
        _index(img, card, style, ink)
        if style.corners == 4:
            _index(img, card, style, ink, right=True)
        img = np.ascontiguousarray(img[::-1, ::-1])
    if card.rank <= Rank.JACK and card.rank is not Rank.ACE:
        x0, y0, x1, y1 = round(w * 0.3), round(h * 0.22), round(w * 0.7), round(h * 0.78)
        cv2.rectangle(img, (x0, y0), (x1, y1), ink, 2, cv2.LINE_AA)
        _glyph(img, _label(card.rank), w / 2, h * 0.38, h * 0.18, ink, style.font)
        return img
    count = 1 if card.rank is Rank.ACE else 14 - int(card.rank)
    size = h * (0.25 if count == 1 else 0.09)
    cols = 1 if count <= 3 else 2
    per_col = -(-count // cols)
    placed = 0
    for col in range(cols):
        n = min(per_col, count - placed)
        x = w / 2 if cols == 1 else w * (0.4 + 0.2 * col)
        for k in range(n):
            y = h / 2 if n == 1 else h * (0.27 + 0.46 * k / (n - 1))
            _symbol(img, card.suit, x, y, size, ink)
        placed += n
    return img


def layout_deck(arrangement: str = "beside", colours: int = 4, low_contrast: bool = False, width: int = 240) -> DeckArt:
    """A deck with the index ``arrangement`` (``beside``, ``jumbo``, ``above``), 2 or 4 colours."""
    if arrangement not in STYLES:
        raise DealerError(
            "layout deck: arrangement {arrangement!r} must be one of {known}",
            arrangement=arrangement,
            known=", ".join(ARRANGEMENTS),
        )
    if colours not in (2, 4):
        raise DealerError("layout deck: colours must be 2 or 4, not {colours}", colours=colours)
    style = STYLES[arrangement]
    height = round(width * 88 / 63)
    stock = LOW_STOCK if low_contrast else STOCK
    inks = FOUR if colours == 4 else TWO
    if low_contrast:  # halfway from the ink to the stock
        inks = tuple(tuple(round(0.5 * i + 0.5 * s) for i, s in zip(ink, stock, strict=True)) for ink in inks)  # type: ignore[misc]
    mask = rounded_mask(width, height, round(width * 0.055))
    faces = {c: CardArt(_face(c, style, inks[c.suit], stock, width, height), mask) for c in ALL_CARDS}
    back = np.empty((height, width, 3), np.uint8)
    back[:] = stock
    m = round(width * 0.06)
    cv2.rectangle(back, (m, m), (width - 1 - m, height - 1 - m), (60, 110, 40), -1)
    for k in range(m, width - m, 10):
        cv2.line(back, (k, m), (k, height - 1 - m), (120, 170, 90), 3)
    joker = np.empty((height, width, 3), np.uint8)
    joker[:] = stock
    _symbol(joker, Suit.SPADES, width / 2, height / 2, height * 0.3, (30, 30, 200))
    _glyph(joker, "JOKER", width / 2, height * 0.08, height * 0.05, (30, 30, 30), style.font)
    name = f"layout-{arrangement}-{colours}c" + ("-low" if low_contrast else "")
    return DeckArt(name, faces, CardArt(back, mask), CardArt(joker, mask))


def parse_layout_name(name: str) -> DeckArt:
    """``layout-beside-4c``, ``layout-jumbo-2c``, ``layout-above-4c-low`` …"""
    parts = name.split("-")[1:]
    arrangement = parts[0] if parts else "beside"
    colours = 4
    if len(parts) > 1:
        if not (parts[1].endswith("c") and parts[1][:-1].isdigit()):
            raise DealerError("deck {name!r}: expected layout-<arrangement>-<2|4>c[-low]", name=name)
        colours = int(parts[1][:-1])
    extra = parts[2:]
    if extra not in ([], ["low"]):
        raise DealerError("deck {name!r}: expected layout-<arrangement>-<2|4>c[-low]", name=name)
    return layout_deck(arrangement, colours, low_contrast=bool(extra))
