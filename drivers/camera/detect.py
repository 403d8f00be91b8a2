"""Find the card in a frame and cut out its corner index regions.

Detection runs on a quarter-size grey image: the card is the largest bright, rectangular blob of card-like
proportions (Otsu threshold over a dark table). Its rotated bounding rectangle, scaled back to full size, maps
the card onto a canonical portrait card; only the two corner regions are warped (at twice the canonical
resolution, then area-averaged), never the whole frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Points = npt.NDArray[np.float32]

DETECT_WIDTH = 320  # pixels across the detection image


@dataclass(frozen=True, slots=True)
class Quad:
    """A card outline in frame pixels. ``corners``: TL, TR, BR, BL of the card held portrait (either way up)."""

    corners: Points
    center: tuple[float, float]
    width: float  # short side
    height: float  # long side
    partial: bool  # cut by the frame edge (sliding in or out): never read; a whole card lying against it is not
    edge: int = -1  # the frame edge a partial outline is cut by: 0 left, 1 right, 2 top, 3 bottom (-1 none)
    fill: float = 1.0  # the outline's area over its rotated bounding rectangle's (a card, even cut: near 1)

    @property
    def aspect(self) -> float:
        return self.width / self.height


@dataclass(frozen=True, slots=True)
class Geometry:
    """The canonical card and where its index region lies (all in canonical pixels)."""

    card_w: int = 120
    card_h: int = 168
    x0: int = 5  # index region, top-left corner of the canonical card
    y0: int = 5
    region_w: int = 30
    region_h: int = 52
    search: int = 3  # alignment search either way, pixels

    def as_array(self) -> npt.NDArray[np.int32]:
        values = (self.card_w, self.card_h, self.x0, self.y0, self.region_w, self.region_h, self.search)
        return np.array(values, np.int32)

    @classmethod
    def from_array(cls, values: npt.NDArray[np.int32]) -> Geometry:
        return cls(*(int(v) for v in values))


def find_card(frame: Image, min_height: float = 0.15, aspect: tuple[float, float] = (0.55, 0.85)) -> Quad | None:
    """The most card-like bright blob, or None. ``min_height``: least long side, share of the frame height."""
    h, w = frame.shape[:2]
    f = DETECT_WIDTH / w
    small = cv2.resize(frame, (DETECT_WIDTH, max(1, round(h * f))), interpolation=cv2.INTER_LINEAR)
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(grey, (3, 3), 0)
    t, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    above = mask > 0
    n_above = int(np.count_nonzero(above))
    if n_above == 0 or n_above == above.size:
        return None
    hi = float(grey[above].mean())
    lo = float(grey[~above].mean())
    if hi - lo < 40.0 or hi < 70.0:
        return None  # no bright object on a dark table: blank frame
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    sh, sw = mask.shape
    best: Quad | None = None
    best_area = 0.0
    best_box = (0, 0, 0, 0)
    for contour in contours:
        area = float(cv2.contourArea(contour))
        if area < (min_height * sh) ** 2 * 0.4:
            continue
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
        short, long_ = min(rw, rh), max(rw, rh)
        if long_ < min_height * sh or short <= 0:
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        sides = (x <= 1, x + bw >= sw - 1, y <= 1, y + bh >= sh - 1)  # left, right, top, bottom
        touches = any(sides)
        fill = area / (rw * rh)
        partial = touches and not _whole_at_edge(short / long_, fill, aspect)
        if not partial:
            if not aspect[0] <= short / long_ <= aspect[1]:
                continue
            if fill < 0.88:
                continue  # not a rectangle: a hand, two overlapping cards
        if area <= best_area:
            continue
        box = cv2.boxPoints(((cx, cy), (rw, rh), angle)).astype(np.float32)
        corners = _order((box + 0.5) / f - 0.5)
        edge = _cut_side(sides, (x, y, bw, bh), (sw, sh)) if partial else -1
        centre = ((cx + 0.5) / f - 0.5, (cy + 0.5) / f - 0.5)
        best = Quad(corners, centre, short / f, long_ / f, partial, edge, min(1.0, fill))
        best_area = area
        best_box = (x, y, bw, bh)
    if best is None or best.partial:
        return best
    return _refine(frame, best, best_box, f, t) or best


def _whole_at_edge(ratio: float, fill: float, aspect: tuple[float, float]) -> bool:
    """A blob reaching the frame's edge that is still the shape of a whole card: a card lying against the edge
    (a few pixels off it, or touching it with a corner), read like any other (#31), not one sliding in or out.

    The test is the card's own proportions, tighter than for a card in the open (the middle half of the allowed
    range) and a clean rectangle: a card the edge cuts by more than a few per cent of a side is too short one
    way. A card cut by less is read as it is; its index lies within the reader's alignment search.
    """
    middle, half = (aspect[0] + aspect[1]) / 2, (aspect[1] - aspect[0]) / 4
    return abs(ratio - middle) <= half and fill >= 0.9


def _cut_side(sides: tuple[bool, ...], box: tuple[int, int, int, int], size: tuple[int, int]) -> int:
    """The edge a partial outline is cut by: of the edges its box touches, the one it reaches along the most."""
    bw, bh = box[2:]
    sw, sh = size
    along = (bh / sh, bh / sh, bw / sw, bw / sw)  # how much of each edge the box runs along
    touched = [k for k, side in enumerate(sides) if side]
    return max(touched, key=lambda k: along[k]) if touched else -1


def _refine(frame: Image, quad: Quad, box: tuple[int, int, int, int], f: float, level: float) -> Quad | None:
    """The same card outlined again at full resolution, inside its box only (sub-pixel corners)."""
    x, y, bw, bh = box
    pad = 3
    h, w = frame.shape[:2]
    x0, y0 = max(0, int((x - pad) / f)), max(0, int((y - pad) / f))
    x1, y1 = min(w, int((x + bw + pad) / f) + 1), min(h, int((y + bh + pad) / f) + 1)
    grey = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(grey, (5, 5), 0)
    _, mask = cv2.threshold(grey, level, 255, cv2.THRESH_BINARY)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
    short, long_ = min(rw, rh), max(rw, rh)
    if abs(long_ - quad.height) > 0.1 * quad.height or abs(short - quad.width) > 0.1 * quad.width:
        return None
    box_pts = cv2.boxPoints(((cx + x0, cy + y0), (rw, rh), angle)).astype(np.float32)
    return Quad(_order(box_pts), (cx + x0, cy + y0), short, long_, False)


def _order(box: Points) -> Points:
    """Order four rectangle corners TL, TR, BR, BL of the card held portrait (top edge the higher short edge)."""
    center = box.mean(axis=0)
    angles = np.arctan2(box[:, 1] - center[1], box[:, 0] - center[0])
    pts = box[np.argsort(angles)]  # clockwise on screen (y down)
    edge0 = float(np.linalg.norm(pts[1] - pts[0]))
    edge1 = float(np.linalg.norm(pts[2] - pts[1]))
    start = 0 if edge0 <= edge1 else 1  # pts[start] -> pts[start+1] is a short edge
    other = start + 2
    mid_a = (pts[start] + pts[(start + 1) % 4]) / 2
    mid_b = (pts[other % 4] + pts[(other + 1) % 4]) / 2
    if mid_b[1] < mid_a[1]:
        start = other % 4
    return np.roll(pts, -start, axis=0).astype(np.float32)


def corner_patches(frame: Image, quad: Quad, g: Geometry) -> tuple[Image, Image]:
    """The two index regions (with the search margin) as grey patches, each seen upright.

    Grey is the darkest of the three colour channels, not luminance: black, red, blue, green or orange ink on
    white paper are all about equally dark in it, so a four-colour deck's suits differ from each other (and
    from a two-colour deck's) by the symbol's shape alone, with the full contrast of black ink.

    The second is the bottom-right corner turned half a turn, so on a card with indices in opposite corners
    both patches show the index the same way up, whichever way the card lies.
    """
    c = quad.corners
    return _patch(frame, c, g), _patch(frame, np.roll(c, -2, axis=0), g)


def corner_views(frame: Image, quad: Quad, g: Geometry) -> tuple[tuple[Image, Image], tuple[Image, Image]]:
    """The two index regions of :func:`corner_patches`, each as (grey patch, colour view at twice its size, to
    :func:`shrink` when used): the colour tells the suits of a deck printed in more than one ink apart
    (:mod:`.inkcolour`)."""
    c = quad.corners
    return _warp(frame, c, g), _warp(frame, np.roll(c, -2, axis=0), g)


def mirror_patches(frame: Image, quad: Quad, g: Geometry) -> tuple[Image, Image]:
    """The other two corners' regions, each seen mirrored left to right: the top-right corner, then the
    bottom-left turned half a turn. A deck printing its index in all four corners puts the second pair as the
    mirror image of the first (the rank toward the card's corner): mirrored, they lie where the first pair's do,
    their glyphs mirrored, which the templates learnt from them are too."""
    c = quad.corners
    return _patch(frame, c[[1, 0, 3, 2]], g), _patch(frame, c[[3, 2, 1, 0]], g)


def _patch(frame: Image, corners: Points, g: Geometry) -> Image:
    return _warp(frame, corners, g)[0]


def _warp(frame: Image, corners: Points, g: Geometry) -> tuple[Image, Image]:
    """The region's grey patch, and the frame warped onto it at twice its size (colour, as the frame is)."""
    ss = 2  # supersampling
    pw = (g.region_w + 2 * g.search) * ss
    ph = (g.region_h + 2 * g.search) * ss
    ox, oy = (g.x0 - g.search) * ss, (g.y0 - g.search) * ss
    dst = np.array(
        [[-ox, -oy], [g.card_w * ss - ox, -oy], [g.card_w * ss - ox, g.card_h * ss - oy], [-ox, g.card_h * ss - oy]],
        np.float32,
    )
    m = cv2.getPerspectiveTransform(corners, dst)
    warped = cv2.warpPerspective(frame, m, (pw, ph), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    grey = warped.min(axis=2) if warped.ndim == 3 else warped  # ink of any hue is dark in its darkest channel
    small = np.asarray(cv2.resize(grey, (pw // ss, ph // ss), interpolation=cv2.INTER_AREA), np.uint8)
    return small, np.asarray(warped, np.uint8)


def shrink(colour: Image, grey: Image) -> Image:
    """A colour view of :func:`corner_views` brought to its grey patch's size (only when its colour is used)."""
    if colour.ndim != 3:
        colour = np.repeat(colour[..., None], 3, axis=2)
    h, w = grey.shape[:2]
    return np.asarray(cv2.resize(colour, (w, h), interpolation=cv2.INTER_AREA), np.uint8)
