"""Where a deck prints its corner index, learnt from the sorted calibration pass (#31).

The pass shows every card once, in a known order, so each pixel of the card's corner can be asked two questions:
does it tell the ranks apart (the four cards of a rank alike, the thirteen ranks different), and does it tell the
suits apart (the thirteen cards of a suit alike, the four suits different)? The rank glyph answers yes to the
first and no to the second, the suit symbol the other way round, and the pips of the card's body answer both
only weakly (whether a pip is there depends on the rank, its shape on the suit). The strongest, purest blob of
each answer is the rank part and the suit part of the index, wherever they are: the rank above the suit, beside
it, a small corner index or a jumbo one.

Everything here is arrays in, arrays out (no I/O): the calibration calls :func:`learn_layout` and saves the result,
the recogniser cuts the boxes, and :func:`layout_picture` draws what was learnt for the technical judge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from .detect import Geometry

Floats = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]

# The share of the card searched for the index: its top-left 48% across and 50% down (canonical 120 x 168 card),
# enough for a jumbo index and clear of the opposite corner's.
DISCOVERY = Geometry(x0=2, y0=2, region_w=58, region_h=84, search=3)
# The index region of the decks the reader was first built on (rank above suit, small corner index).
LEGACY = Geometry()
PAD = 2  # pixels added round each learnt part
# The other two corners hold the index too when, seen mirrored, a suit symbol as strong as the first pair's lies
# where theirs does (within this many canonical pixels, rank and suit alike). The decks drawn here give 0.03-0.3
# of the strength with two corners, about 1.0 with four.
MIRROR_STRENGTH = 0.5
MIRROR_TOLERANCE = 4.0


class LayoutError(ValueError):
    """The pass shows no index: nothing tells the ranks (or the suits) apart; ``what`` says which."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle of the index region, in canonical card pixels (x across, y down)."""

    x: int
    y: int
    w: int
    h: int

    def as_list(self) -> list[int]:
        return [self.x, self.y, self.w, self.h]

    def shifted(self, dx: int, dy: int) -> Box:
        return Box(self.x + dx, self.y + dy, self.w, self.h)

    @property
    def centre(self) -> tuple[float, float]:
        return self.x + self.w / 2, self.y + self.h / 2


@dataclass(frozen=True, slots=True)
class Layout:
    """The learnt index: its rank and suit parts within the reading region."""

    rank: Box
    suit: Box

    @property
    def arrangement(self) -> str:
        """``beside`` when the suit sits to the right of the rank on the same line, else ``above``."""
        rx, ry = self.rank.centre
        sx, sy = self.suit.centre
        return "beside" if sx - rx > abs(sy - ry) else "above"

    def jumbo(self, card_h: int) -> bool:
        """A rank glyph taller than an eighth of the card (the standard corner index is about a twelfth)."""
        return self.rank.h - 2 * PAD > card_h / 8

    def describe(self, card_h: int) -> dict[str, object]:
        return {
            "arrangement": self.arrangement,
            "size": "jumbo" if self.jumbo(card_h) else "standard",
            "rank_box": self.rank.as_list(),
            "suit_box": self.suit.as_list(),
        }


def legacy_layout(split: int, g: Geometry = LEGACY) -> Layout:
    """The fixed layout of version-1 calibration files: the region cut across at row ``split``."""
    return Layout(Box(0, 0, g.region_w, split), Box(0, split, g.region_w, g.region_h - split))


def discriminating_maps(ink: Floats) -> tuple[Floats, Floats]:
    """Per pixel of the corner, how strongly and purely it tells ranks apart, and suits apart.

    ``ink`` is (52, H, W), the cards in deck order (suit-major: ♠A ♠K … ♣2). For ranks: the variance of the 13
    rank means (between) times its share of the total (between / (between + within the ranks)); the same for
    suits. A pixel that differs between ranks but also between the suits of one rank (a pip) scores low.
    """
    cards = ink.reshape(4, 13, *ink.shape[1:]).astype(np.float64)
    rank_mean = cards.mean(axis=0)
    suit_mean = cards.mean(axis=1)
    out = []
    for between, within in (
        (rank_mean.var(axis=0), ((cards - rank_mean[None]) ** 2).mean(axis=(0, 1))),
        (suit_mean.var(axis=0), ((cards - suit_mean[:, None]) ** 2).mean(axis=(0, 1))),
    ):
        purity = between / (between + within + 1e-4)
        out.append((between * purity).astype(np.float32))
    return out[0], out[1]


def _blob(score: Floats, what: str) -> Box:
    """Bounding box of the strongest connected blob of ``score``."""
    peak = float(score.max())
    if peak <= 1e-4:
        raise LayoutError(what)
    mask = np.asarray(
        cv2.morphologyEx((score > 0.12 * peak).astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    )
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    weights = [float(score[labels == k].sum()) for k in range(1, count)]
    best = 1 + int(np.argmax(weights))
    x, y, w, h = (int(v) for v in stats[best, :4])
    height, width = score.shape
    x0, y0 = max(0, x - PAD), max(0, y - PAD)
    x1, y1 = min(width, x + w + PAD), min(height, y + h + PAD)
    return Box(x0, y0, x1 - x0, y1 - y0)


def learn_layout(ink: Floats) -> tuple[Layout, Box]:
    """The rank and suit parts in ``ink``'s coordinates (52 x H x W, deck order), and the region holding both.

    Returns the layout relative to that region, and the region within ``ink``.
    """
    rank_score, suit_score = discriminating_maps(_smooth(ink))
    suit = _blob(suit_score, "suits")
    # The suit symbol of the index is found first: it is the only mark the 13 cards of a suit share. The pips of
    # the body tell ranks apart as well as the rank glyph does (whether a pip is printed depends on the rank), so
    # the rank glyph is looked for where an index puts it: above the suit symbol or before it on its line, toward
    # the card's corner, never on the body's side of it.
    allowed = np.zeros_like(rank_score)
    right, low = suit.x + suit.w, suit.y + suit.h
    allowed[:low, :right] = 1.0
    allowed[suit.y + PAD : low - PAD, suit.x + PAD : right - PAD] = 0.0
    rank = _blob(rank_score * allowed, "ranks")
    x0, y0 = min(rank.x, suit.x), min(rank.y, suit.y)
    x1, y1 = max(rank.x + rank.w, suit.x + suit.w), max(rank.y + rank.h, suit.y + suit.h)
    region = Box(x0, y0, x1 - x0, y1 - y0)
    return Layout(rank.shifted(-x0, -y0), suit.shifted(-x0, -y0)), region


def _smooth(ink: Floats) -> Floats:
    return np.stack([np.asarray(cv2.GaussianBlur(np.asarray(i, np.float32), (3, 3), 0.8), np.float32) for i in ink])


def four_corners(first: Floats, mirrored: Floats) -> bool:
    """Whether the deck prints its index in all four corners: ``first`` is the ink of the top-left and
    bottom-right corners (as :func:`learn_layout` takes it), ``mirrored`` that of the other two seen mirrored.

    A second index is a suit symbol the 13 cards of a suit share, as strong as the first's, with a rank glyph,
    both where the first index has them; a two-index deck shows there at most the body's pips (weak, elsewhere).
    """
    try:
        a, region_a = learn_layout(first)
        b, region_b = learn_layout(mirrored)
    except LayoutError:
        return False
    if float(discriminating_maps(_smooth(mirrored))[1].max()) < MIRROR_STRENGTH * float(
        discriminating_maps(_smooth(first))[1].max()
    ):
        return False
    for box_a, box_b in ((a.rank, b.rank), (a.suit, b.suit)):
        (xa, ya), (xb, yb) = box_a.shifted(region_a.x, region_a.y).centre, box_b.shifted(region_b.x, region_b.y).centre
        if math.hypot(xa - xb, ya - yb) > MIRROR_TOLERANCE:
            return False
    return True


def layout_picture(corner: npt.NDArray[np.uint8], layout: Layout, region: Box, samples: list[Floats]) -> Image:
    """What calibration learnt, for the judge: the deck's mean corner (four times enlarged) with the rank part
    framed in red and the suit part in blue, and beside it the learnt templates of a few cards."""
    scale = 4
    grey = cv2.resize(corner, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
    canvas = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    for box, colour in ((layout.rank, (40, 40, 220)), (layout.suit, (220, 90, 30))):
        b = box.shifted(region.x, region.y)
        cv2.rectangle(canvas, (b.x * scale, b.y * scale), ((b.x + b.w) * scale - 1, (b.y + b.h) * scale - 1), colour, 2)
    tiles = []
    for sample in samples:
        tile = np.clip(sample * 255.0, 0, 255).astype(np.uint8)
        tile = cv2.resize(tile, None, fx=scale, fy=scale, interpolation=cv2.INTER_NEAREST)
        pad = np.full((canvas.shape[0], tile.shape[1] + 8), 255, np.uint8)
        pad[: min(tile.shape[0], pad.shape[0]), 4 : 4 + tile.shape[1]] = tile[: pad.shape[0]]
        tiles.append(cv2.cvtColor(pad, cv2.COLOR_GRAY2BGR))
    out: Image = np.ascontiguousarray(np.hstack([canvas, *tiles]))
    return out
