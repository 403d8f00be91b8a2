"""Card art for the virtual camera: the project's own synthetic deck (drawn with OpenCV) and decks from image files.

A deck's art is a face image per card (BGR, portrait) with a mask of the card's outline (rounded corners), plus
a back and a joker. The synthetic deck draws corner indices (top-left and, turned half a turn, bottom-right)
and pips, in the 2-colour or the 4-colour scheme, with a choice of national index sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from dealer.core.cards import ALL_CARDS, Card, Rank, Suit
from dealer.core.errors import DealerError

Image = npt.NDArray[np.uint8]

# Index letters of the court cards and the ace, by national set (A K Q J order).
INDEX_SETS: dict[str, tuple[str, str, str, str]] = {
    "en": ("A", "K", "Q", "J"),
    "fr": ("A", "R", "D", "V"),
    "de": ("A", "K", "D", "B"),
    "nl": ("A", "H", "V", "B"),
}

# BGR ink colours per suit (S H D C).
TWO_COLOUR: tuple[tuple[int, int, int], ...] = ((25, 25, 25), (40, 30, 200), (40, 30, 200), (25, 25, 25))
FOUR_COLOUR: tuple[tuple[int, int, int], ...] = ((25, 25, 25), (40, 30, 200), (10, 120, 235), (40, 140, 30))

PAPER = (235, 242, 246)  # a slightly warm white, BGR


@dataclass(frozen=True, slots=True)
class CardArt:
    """One drawable object: the face image and its outline mask (255 inside the card)."""

    image: Image
    mask: Image


class DeckArt:
    """The art of one deck: 52 faces, a back and a joker, all the same size."""

    def __init__(self, name: str, faces: dict[Card, CardArt], back: CardArt, joker: CardArt) -> None:
        missing = [c.code for c in ALL_CARDS if c not in faces]
        if missing:
            raise DealerError("deck {name!r}: no face for {missing}", name=name, missing=", ".join(missing))
        self.name = name
        self.faces = faces
        self.back = back
        self.joker = joker

    def face(self, card: Card) -> CardArt:
        return self.faces[card]


def rounded_mask(width: int, height: int, radius: int) -> Image:
    """255 inside a rounded rectangle filling the image, 0 outside."""
    mask = np.zeros((height, width), np.uint8)
    r = max(1, radius)
    cv2.rectangle(mask, (r, 0), (width - 1 - r, height - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (width - 1, height - 1 - r), 255, -1)
    for cx, cy in ((r, r), (width - 1 - r, r), (r, height - 1 - r), (width - 1 - r, height - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def draw_pip(img: Image, suit: Suit, cx: float, cy: float, size: float, colour: tuple[int, int, int]) -> None:
    """Draw a suit symbol of height ``size`` centred on (cx, cy), upright."""
    s = size / 2.0
    aa = cv2.LINE_AA

    def pt(x: float, y: float) -> tuple[int, int]:
        return (round((cx + x * s) * 16), round((cy + y * s) * 16))

    def circle(x: float, y: float, r: float) -> None:
        cv2.circle(img, pt(x, y), round(r * s * 16), colour, -1, aa, 4)

    def poly(points: list[tuple[float, float]]) -> None:
        cv2.fillPoly(img, [np.array([pt(x, y) for x, y in points], np.int32)], colour, aa, 4)

    if suit is Suit.DIAMONDS:
        poly([(0, -1), (0.72, 0), (0, 1), (-0.72, 0)])
    elif suit is Suit.HEARTS:
        circle(-0.45, -0.42, 0.5)
        circle(0.45, -0.42, 0.5)
        poly([(-0.93, -0.25), (0.93, -0.25), (0, 1.0)])
    elif suit is Suit.SPADES:
        circle(-0.42, 0.22, 0.42)
        circle(0.42, 0.22, 0.42)
        poly([(-0.84, 0.12), (0.84, 0.12), (0, -1.05)])
        poly([(0, 0.2), (0.34, 1.0), (-0.34, 1.0)])
    else:
        circle(0, -0.55, 0.4)
        circle(-0.56, 0.12, 0.4)
        circle(0.56, 0.12, 0.4)
        poly([(0, -0.3), (0.14, 0.12), (-0.14, 0.12)])
        poly([(0, 0.0), (0.26, 1.0), (-0.26, 1.0)])


def _put_text_centered(
    img: Image, text: str, cx: float, top: float, height: float, colour: tuple[int, int, int]
) -> None:
    font = cv2.FONT_HERSHEY_DUPLEX
    (_, h1), _ = cv2.getTextSize(text, font, 1.0, 2)
    scale = height / h1
    thick = max(1, round(scale * 2.2))
    (w, h), _ = cv2.getTextSize(text, font, scale, thick)
    if len(text) > 1:  # "10": squeeze horizontally by drawing on a scratch image
        scratch = np.full((h + 2 * thick + 4, w + 2 * thick + 4, 3), 255, np.uint8)
        cv2.putText(scratch, text, (thick + 2, h + thick + 2), font, scale, (0, 0, 0), thick, cv2.LINE_AA)
        target_w = round(w * 0.72)
        scratch = np.asarray(cv2.resize(scratch, (target_w, scratch.shape[0]), interpolation=cv2.INTER_AREA), np.uint8)
        x0, y0 = round(cx - target_w / 2), round(top - thick - 2)
        roi = img[y0 : y0 + scratch.shape[0], x0 : x0 + target_w]
        alpha = (255 - scratch[..., :1].astype(np.float32)) / 255.0
        ink = np.array(colour, np.float32)
        roi[:] = (roi * (1 - alpha) + ink * alpha).astype(np.uint8)
        return
    cv2.putText(img, text, (round(cx - w / 2), round(top + h)), font, scale, colour, thick, cv2.LINE_AA)


# Pip layouts for 2..10 on a unit face (x in -1..1 across, y in -1..1 down).
_TOP = [(-0.5, -0.7), (0.5, -0.7)]
_LOW = [(-0.5, 0.7), (0.5, 0.7)]
_PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0, 0)],
    2: [(0, -0.7), (0, 0.7)],
    3: [(0, -0.7), (0, 0), (0, 0.7)],
    4: [*_TOP, *_LOW],
    5: [*_TOP, (0, 0), *_LOW],
    6: [*_TOP, (-0.5, 0), (0.5, 0), *_LOW],
    7: [*_TOP, (0, -0.35), (-0.5, 0), (0.5, 0), *_LOW],
    8: [*_TOP, (0, -0.35), (-0.5, 0), (0.5, 0), (0, 0.35), *_LOW],
    9: [*_TOP, (-0.5, -0.23), (0.5, -0.23), (0, 0), (-0.5, 0.23), (0.5, 0.23), *_LOW],
    10: [*_TOP, (0, -0.45), (-0.5, -0.23), (0.5, -0.23), (-0.5, 0.23), (0.5, 0.23), (0, 0.45), *_LOW],
}


def _rank_label(rank: Rank, index_set: str) -> str:
    if rank <= Rank.JACK:
        return INDEX_SETS[index_set][rank]
    return "10" if rank is Rank.TEN else rank.char


def synthetic_deck(colours: int = 2, index_set: str = "en", width: int = 250) -> DeckArt:
    """The project's own deck: corner indices in both corners, pips, court letters; 2 or 4 colours."""
    if colours not in (2, 4):
        raise DealerError("synthetic deck: colours must be 2 or 4, not {colours}", colours=colours)
    if index_set not in INDEX_SETS:
        raise DealerError(
            "synthetic deck: unknown index set {index_set!r}; known: {known}",
            index_set=index_set,
            known=", ".join(INDEX_SETS),
        )
    height = round(width * 88 / 63)
    inks = TWO_COLOUR if colours == 2 else FOUR_COLOUR
    mask = rounded_mask(width, height, round(width * 0.06))
    faces: dict[Card, CardArt] = {}
    for card in ALL_CARDS:
        faces[card] = CardArt(_face(card, inks[card.suit], index_set, width, height), mask)
    name = f"synthetic-{colours}c-{index_set}"
    return DeckArt(name, faces, CardArt(_back(width, height), mask), CardArt(_joker(width, height), mask))


def _face(card: Card, ink: tuple[int, int, int], index_set: str, width: int, height: int) -> Image:
    img = np.empty((height, width, 3), np.uint8)
    img[:] = PAPER
    label = _rank_label(card.rank, index_set)
    for _ in range(2):  # draw the top-left index, turn half a turn, draw it again: both corners
        cx = width * 0.115
        _put_text_centered(img, label, cx, height * 0.03, height * 0.095, ink)
        draw_pip(img, card.suit, cx, height * 0.2, height * 0.095, ink)
        img = np.ascontiguousarray(img[::-1, ::-1])
    fx0, fx1, fy0, fy1 = width * 0.24, width * 0.76, height * 0.14, height * 0.86
    if card.rank <= Rank.JACK and card.rank is not Rank.ACE:
        cv2.rectangle(img, (round(fx0), round(fy0)), (round(fx1), round(fy1)), ink, 2, cv2.LINE_AA)
        _put_text_centered(img, label, width / 2, height * 0.3, height * 0.22, ink)
        draw_pip(img, card.suit, width / 2, height * 0.66, height * 0.16, ink)
        return img
    count = 1 if card.rank is Rank.ACE else 14 - int(card.rank)
    pip = height * (0.3 if count == 1 else 0.12)
    cx, cy, hx, hy = width / 2, height / 2, (fx1 - fx0) / 2, (fy1 - fy0) / 2
    for x, y in _PIPS[count]:
        if y <= 0.01:
            draw_pip(img, card.suit, cx + x * hx, cy + y * hy, pip, ink)
    img = np.ascontiguousarray(img[::-1, ::-1])  # lower half pips are drawn upside down
    for x, y in _PIPS[count]:
        if y > 0.01:
            draw_pip(img, card.suit, width - 1 - (cx + x * hx), height - 1 - (cy + y * hy), pip, ink)
    return np.ascontiguousarray(img[::-1, ::-1])


def _back(width: int, height: int) -> Image:
    img = np.empty((height, width, 3), np.uint8)
    img[:] = (235, 240, 245)
    m = round(width * 0.06)
    cv2.rectangle(img, (m, m), (width - 1 - m, height - 1 - m), (150, 60, 30), -1)
    for k in range(-height, width + height, 12):
        cv2.line(img, (k, m), (k + height, height + m), (230, 200, 170), 2, cv2.LINE_AA)
        cv2.line(img, (k, height - m), (k + height, -height - m), (230, 200, 170), 2, cv2.LINE_AA)
    cv2.rectangle(img, (0, 0), (width - 1, height - 1), (235, 240, 245), m)
    return img


def _joker(width: int, height: int) -> Image:
    img = np.empty((height, width, 3), np.uint8)
    img[:] = PAPER
    for _ in range(2):
        for i, ch in enumerate("JOKER"):
            _put_text_centered(img, ch, width * 0.1, height * (0.03 + 0.062 * i), height * 0.045, (40, 30, 200))
        img = np.ascontiguousarray(img[::-1, ::-1])
    star = [
        (width / 2 + height * 0.2 * r * np.sin(a), height / 2 - height * 0.2 * r * np.cos(a))
        for k in range(10)
        for a, r in [(k * np.pi / 5, 1.0 if k % 2 == 0 else 0.45)]
    ]
    cv2.fillPoly(img, [np.array(star, np.int32)], (30, 160, 200), cv2.LINE_AA)
    return img


_RANK_FILE = {"ace": Rank.ACE, "king": Rank.KING, "queen": Rank.QUEEN, "jack": Rank.JACK, "10": Rank.TEN}
_SUIT_FILE = {"spades": Suit.SPADES, "hearts": Suit.HEARTS, "diamonds": Suit.DIAMONDS, "clubs": Suit.CLUBS}


def image_deck(folder: Path, margin: float = 0.045) -> DeckArt:
    """A deck from face images named ``<rank>_of_<suit>.png`` (with ``back.png`` and a ``*joker*.png``).

    Each face (alpha honoured) is placed on a card-coloured rounded rectangle ``margin`` (share of the width)
    larger on every side, the way a printed card carries its art inside a white border.
    """
    faces: dict[Card, CardArt] = {}
    back: CardArt | None = None
    joker: CardArt | None = None
    for path in sorted(folder.glob("*.png")):
        stem = path.stem.lower()
        match = re.fullmatch(r"(\w+?)_of_(\w+)", stem)
        if match and match.group(2) in _SUIT_FILE:
            rank_text = match.group(1)
            if rank_text in _RANK_FILE:
                rank = _RANK_FILE[rank_text]
            elif rank_text.isdigit() and 2 <= int(rank_text) <= 9:
                rank = Rank.parse(rank_text)
            else:
                continue
            faces[Card.of(_SUIT_FILE[match.group(2)], rank)] = _placed(path, margin)
        elif stem == "back":
            back = _placed(path, margin)
        elif "joker" in stem and joker is None:
            joker = _placed(path, margin)
    if back is None or joker is None or not faces:
        raise DealerError("deck folder {folder}: needs 52 faces, back.png and a joker image", folder=folder)
    size = next(iter(faces.values())).mask.shape[::-1]
    back, joker = _resized(back, size), _resized(joker, size)
    return DeckArt(folder.name, faces, back, joker)


def _resized(art: CardArt, size: tuple[int, int]) -> CardArt:
    if art.mask.shape[::-1] == size:
        return art
    image = np.asarray(cv2.resize(art.image, size, interpolation=cv2.INTER_AREA), np.uint8)
    return CardArt(image, rounded_mask(size[0], size[1], round(size[0] * 0.06)))


def _placed(path: Path, margin: float) -> CardArt:
    raw = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if raw is None:
        raise DealerError("{path}: not a readable image", path=path)
    if raw.ndim == 2:
        raw = cv2.cvtColor(raw, cv2.COLOR_GRAY2BGRA)
    if raw.shape[2] == 3:
        raw = cv2.cvtColor(raw, cv2.COLOR_BGR2BGRA)
    art_h, art_w = raw.shape[:2]
    pad = round(art_w * margin)
    width, height = art_w + 2 * pad, art_h + 2 * pad
    img = np.empty((height, width, 3), np.uint8)
    img[:] = PAPER
    alpha = raw[..., 3:].astype(np.float32) / 255.0
    roi = img[pad : pad + art_h, pad : pad + art_w]
    roi[:] = (roi * (1 - alpha) + raw[..., :3] * alpha).astype(np.uint8)
    return CardArt(img, rounded_mask(width, height, round(width * 0.06)))
