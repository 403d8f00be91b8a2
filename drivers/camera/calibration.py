"""Calibration for the deck in use: one pass of the sorted deck (♠A ♠K … ♣2) becomes the templates recognition
compares with, saved as a versioned NPZ file.

The pass is cut into stable views (a card outlined in the same place over ``stable_frames`` frames, with the
same index); consecutive views of one card are merged. Anything but exactly 52 distinct views, or views out of
the sorted order, is refused with the position that failed.

Each view gives two templates per card: the rank part of the corner index and its suit part, each aligned on
its own at reading time (a small misalignment of the rank glyph must not drown the suit symbol). Where these
parts lie is learnt from the pass itself (:mod:`.layout`): the rank above or beside the suit, a small or a jumbo
index. The file keeps the learnt boxes and the deck's mean corner, from which :meth:`Calibration.picture` draws
what was learnt for the technical judge.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from dealer.core.cards import ALL_CARDS
from dealer.core.errors import DealerError, Phrase

from . import inkcolour
from .blas import single_thread_blas
from .detect import Geometry, Quad, corner_views, find_card, mirror_patches, shrink
from .heldout import Confidence, estimate, region_flat
from .layout import (
    DISCOVERY,
    LEGACY,
    Box,
    Layout,
    LayoutError,
    four_corners,
    layout_picture,
    learn_layout,
    legacy_layout,
)
from .match import Vectors, flatten_light, unit_rows
from .sources import Frame

FORMAT = "bridge-dealer camera calibration"
DUPLICATE_SIMILARITY = 0.99
VERSION = 2  # 1: a fixed index region cut across at ``split``; 2: learnt rank and suit boxes


class CalibrationError(DealerError):
    """The calibration pass or file is not usable; the message says where."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    face: float = 0.7  # best similarity below this: not a face of this deck (a back, a joker, a hand): ignored
    accept: float = 0.8  # best similarity below this: unreadable
    margin: float = 0.15  # normalised margin to every other card below this: unreadable
    corner: float = -0.1  # one corner's own margin below this (it clearly prefers another card): unreadable
    agree: float = 1.0  # the margin needed instead, when every corner read picks the card (the lower one counts)

    def as_dict(self) -> dict[str, float]:
        return {
            "face": self.face,
            "accept": self.accept,
            "margin": self.margin,
            "corner": self.corner,
            "agree": self.agree,
        }


@dataclass(slots=True)
class Calibration:
    geometry: Geometry  # the index region read on every card
    layout: Layout  # the rank and suit parts within that region
    rank_templates: Vectors  # (52, rank box area), unit rows
    suit_templates: Vectors  # (52, suit box area), unit rows
    aspect: float  # short / long side of the card
    card_height: float  # long side, share of the frame height, in the calibration pass
    deck: str = ""
    created: str = ""
    source: str = ""
    thresholds: Thresholds = field(default_factory=Thresholds)
    corner: npt.NDArray[np.uint8] | None = None  # the deck's mean top-left corner (grey), for the picture
    corner_region: Box | None = None  # where the index region lies in ``corner``
    confidence: Confidence | None = None  # the margin threshold and error rate measured on held-out views
    # a deck with its index in all four corners: the templates of the other two corners, seen mirrored
    # (detect.mirror_patches), over the same rank and suit boxes; None for a deck indexed in two corners
    mirror_rank_templates: Vectors | None = None
    mirror_suit_templates: Vectors | None = None
    # each suit's ink (absorbance chromaticity, 4 x 3, suits in deck order) and its spread (4), learnt from the
    # pass (:mod:`.inkcolour`); None in files from before, or when the pass showed too little ink
    suit_colours: Vectors | None = None
    colour_spread: Vectors | None = None

    @property
    def corners(self) -> int:
        """How many corners of a card the deck prints its index in, as calibration learnt: 2 or 4."""
        return 4 if self.mirror_rank_templates is not None and self.mirror_suit_templates is not None else 2

    def describe(self) -> dict[str, object]:
        """The learnt layout in words and numbers (the judge's console, the equipment act)."""
        return {**self.layout.describe(self.geometry.card_h), "corners": self.corners}

    def picture(self) -> npt.NDArray[np.uint8]:
        """What was learnt, drawn (BGR): the mean corner, the rank part framed red, the suit part blue, and the
        templates of ♠A, ♥10, ♦Q and ♣7 as the reader will compare them."""
        g = self.geometry
        corner = self.corner
        region = self.corner_region or Box(0, 0, g.region_w, g.region_h)
        if corner is None:
            corner = np.full((g.region_h, g.region_w), 255, np.uint8)
        samples = []
        for index in (0, 13 + 4, 26 + 2, 39 + 7):
            for box, templates in ((self.layout.rank, self.rank_templates), (self.layout.suit, self.suit_templates)):
                t = templates[index].reshape(box.h, box.w)
                samples.append(((t - t.min()) / max(1e-6, float(t.max() - t.min()))).astype(np.float32))
        return layout_picture(corner, self.layout, region, samples)

    def similarity(self) -> Vectors:
        """Mean template similarity of every pair of cards over both parts (52 x 52)."""
        r, s = self.rank_templates, self.suit_templates
        return ((r @ r.T + s @ s.T) / 2).astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the file atomically (a temporary file renamed over the target)."""
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "deck": self.deck,
            "created": self.created,
            "source": self.source,
            "thresholds": self.thresholds.as_dict(),
            "layout": self.describe(),
            "confidence": self.confidence.as_dict() if self.confidence is not None else None,
        }
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp.npz", dir=path.parent or ".")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(
                    fh,
                    meta=np.array(json.dumps(meta)),
                    geometry=self.geometry.as_array(),
                    rank_box=np.array(self.layout.rank.as_list(), np.int32),
                    suit_box=np.array(self.layout.suit.as_list(), np.int32),
                    corner=self.corner if self.corner is not None else np.zeros((0, 0), np.uint8),
                    corner_region=np.array((self.corner_region or Box(0, 0, 0, 0)).as_list(), np.int32),
                    rank_templates=self.rank_templates,
                    suit_templates=self.suit_templates,
                    mirror_rank_templates=_or_empty(self.mirror_rank_templates),
                    mirror_suit_templates=_or_empty(self.mirror_suit_templates),
                    suit_colours=_or_empty(self.suit_colours),
                    colour_spread=_or_empty(self.colour_spread),
                    aspect=np.array(self.aspect, np.float64),
                    card_height=np.array(self.card_height, np.float64),
                )
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> Calibration:
        path = Path(path)
        try:
            data = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise CalibrationError("calibration file {path}: not found", path=path) from None
        except (OSError, ValueError) as exc:
            raise CalibrationError(
                "calibration file {path}: not an NPZ calibration file ({exc})", path=path, exc=exc
            ) from None
        with data:
            if "meta" not in data.files:
                raise CalibrationError("calibration file {path}: field 'meta' is missing", path=path)
            try:
                meta = json.loads(str(data["meta"]))
            except json.JSONDecodeError as exc:
                raise CalibrationError(
                    "calibration file {path}: field 'meta' is not JSON ({exc})", path=path, exc=exc
                ) from None
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise CalibrationError(
                    "calibration file {path}: field 'meta.format' is not {format!r}", path=path, format=FORMAT
                )
            if meta.get("version") not in (1, VERSION):
                raise CalibrationError(
                    "calibration file {path}: field 'meta.version' is {found!r}; this reader knows "
                    "version {version} (calibrate again)",
                    path=path,
                    found=meta.get("version"),
                    version=VERSION,
                )
            boxes = ("split",) if meta["version"] == 1 else ("rank_box", "suit_box")
            needed = ("geometry", *boxes, "rank_templates", "suit_templates", "aspect", "card_height")
            for key in needed:
                if key not in data.files:
                    raise CalibrationError("calibration file {path}: field {key!r} is missing", path=path, key=key)
            geometry = Geometry.from_array(data["geometry"])
            layout = _load_layout(data, geometry, path)
            rank = np.asarray(data["rank_templates"], np.float32)
            suit = np.asarray(data["suit_templates"], np.float32)
            parts = [("rank_templates", rank, layout.rank), ("suit_templates", suit, layout.suit)]
            mirror_rank, mirror_suit = None, None
            if "mirror_rank_templates" in data.files and data["mirror_rank_templates"].size:
                if "mirror_suit_templates" not in data.files:
                    raise CalibrationError(
                        "calibration file {path}: field {key!r} is missing", path=path, key="mirror_suit_templates"
                    )
                mirror_rank = np.asarray(data["mirror_rank_templates"], np.float32)
                mirror_suit = np.asarray(data["mirror_suit_templates"], np.float32)
                parts += [
                    ("mirror_rank_templates", mirror_rank, layout.rank),
                    ("mirror_suit_templates", mirror_suit, layout.suit),
                ]
            for key, arr, box in parts:
                want = (52, box.h * box.w)
                if arr.shape != want:
                    raise CalibrationError(
                        "calibration file {path}: field {key!r} has shape {shape}, expected {want}",
                        path=path,
                        key=key,
                        shape=arr.shape,
                        want=want,
                    )
                if not np.all(np.isfinite(arr)):
                    raise CalibrationError(
                        "calibration file {path}: field {key!r} holds non-finite values", path=path, key=key
                    )
            th = meta.get("thresholds", {})
            try:
                thresholds = Thresholds(
                    float(th["face"]),
                    float(th["accept"]),
                    float(th["margin"]),
                    float(th.get("corner", -0.1)),
                    float(th.get("agree", 1.0)),
                )
            except (KeyError, TypeError, ValueError):
                raise CalibrationError(
                    "calibration file {path}: field 'meta.thresholds' is incomplete", path=path
                ) from None
            confidence = None
            if isinstance(meta.get("confidence"), dict):
                try:
                    confidence = Confidence.from_dict(meta["confidence"])
                except (KeyError, TypeError, ValueError):
                    raise CalibrationError(
                        "calibration file {path}: field 'meta.confidence' is incomplete", path=path
                    ) from None
            colours, spread = None, None
            if "suit_colours" in data.files and data["suit_colours"].size:
                colours = np.asarray(data["suit_colours"], np.float32)
                spread = np.asarray(data["colour_spread"], np.float32) if "colour_spread" in data.files else None
                if colours.shape != (4, 3) or spread is None or spread.shape != (4,):
                    raise CalibrationError(
                        "calibration file {path}: field {key!r} has shape {shape}, expected {want}",
                        path=path,
                        key="suit_colours",
                        shape=colours.shape,
                        want=(4, 3),
                    )
            corner, corner_region = None, None
            if "corner" in data.files and data["corner"].size and "corner_region" in data.files:
                corner = np.asarray(data["corner"], np.uint8)
                corner_region = Box(*(int(v) for v in data["corner_region"]))
            return cls(
                geometry,
                layout,
                rank,
                suit,
                float(data["aspect"]),
                float(data["card_height"]),
                str(meta.get("deck", "")),
                str(meta.get("created", "")),
                str(meta.get("source", "")),
                thresholds,
                corner,
                corner_region,
                confidence,
                mirror_rank,
                mirror_suit,
                colours,
                spread,
            )


def _or_empty(templates: Vectors | None) -> Vectors:
    return templates if templates is not None else np.zeros((0, 0), np.float32)


def _load_layout(data: Any, geometry: Geometry, path: Path) -> Layout:
    """The file's rank and suit boxes (version 2), or its split row (version 1), checked against the region."""
    if "split" in data.files and "rank_box" not in data.files:
        split = int(data["split"])
        if not 1 <= split < geometry.region_h:
            raise CalibrationError(
                "calibration file {path}: field 'split' = {split} not in 1..{high}",
                path=path,
                split=split,
                high=geometry.region_h - 1,
            )
        return legacy_layout(split, geometry)
    boxes = []
    for key in ("rank_box", "suit_box"):
        values = [int(v) for v in np.asarray(data[key]).ravel()]
        box = Box(*values) if len(values) == 4 else None
        if box is None or box.w < 1 or box.h < 1 or box.x < 0 or box.y < 0:
            raise CalibrationError("calibration file {path}: field {key!r} is not a box x, y, w, h", path=path, key=key)
        if box.x + box.w > geometry.region_w or box.y + box.h > geometry.region_h:
            raise CalibrationError(
                "calibration file {path}: field {key!r} reaches outside the index region", path=path, key=key
            )
        boxes.append(box)
    return Layout(boxes[0], boxes[1])


def box_windows(flat: npt.NDArray[np.float32], box: Box, search: int) -> Vectors:
    """All alignment windows of one part (``box`` of the index region), as unit rows."""
    sub = flat[box.y : box.y + box.h + 2 * search, box.x : box.x + box.w + 2 * search]
    view = sliding_window_view(sub, (box.h, box.w))
    return unit_rows(view.reshape(-1, box.h * box.w))


def part_windows(flat: npt.NDArray[np.float32], g: Geometry, top: int, bottom: int) -> Vectors:
    """All alignment windows of rows ``top..bottom`` of the index region, as unit rows."""
    return box_windows(flat, Box(0, top, g.region_w, bottom - top), g.search)


@dataclass(slots=True)
class _View:
    """One stable view of a card in the pass: its flattened corner patches, frame after frame."""

    first_frame: int
    last_frame: int
    flats: list[npt.NDArray[np.float32]]
    quads: list[Quad]
    reference: Vectors  # full-region unit vector of its first frame, to compare views
    mirrors: list[npt.NDArray[np.float32]] = field(default_factory=list)  # the other two corners, mirrored
    colours: list[npt.NDArray[np.uint8]] = field(default_factory=list)  # the first two corners in colour

    def similar(self, flat: npt.NDArray[np.float32], g: Geometry) -> float:
        return float((part_windows(flat, g, 0, g.region_h) @ self.reference).max())


def _stable_geometry(a: Quad, b: Quad) -> bool:
    dx, dy = a.center[0] - b.center[0], a.center[1] - b.center[1]
    return (dx * dx + dy * dy) ** 0.5 < 0.03 * a.height and abs(a.height - b.height) < 0.04 * a.height


def collect_views(
    frames: Iterable[Frame], g: Geometry, *, still: bool = False, stable_frames: int = 3
) -> tuple[list[_View], int]:
    """Cut a pass into stable views; returns them and the frame height."""
    views: list[_View] = []
    current: _View | None = None
    frame_h = 0

    def close() -> None:
        nonlocal current
        if current is not None and len(current.flats) >= 2 * stable_frames:
            views.append(current)
        current = None

    for frame in frames:
        frame_h = frame.image.shape[0]
        quad = find_card(frame.image)
        if quad is None or quad.partial:
            close()
            continue
        (tl, tl_colour), (br, br_colour) = corner_views(frame.image, quad, g)
        flats = [flatten_light(tl), flatten_light(br)]
        mirrors = [flatten_light(p) for p in mirror_patches(frame.image, quad, g)]
        if current is not None and not still:
            same = _stable_geometry(current.quads[-1], quad) and current.similar(flats[0], g) >= 0.95
            if not same:
                close()
        elif current is not None:
            close()
        if current is None:
            ref = part_windows(flats[0], g, 0, g.region_h)
            side = 2 * g.search + 1
            current = _View(frame.number, frame.number, [], [], ref[g.search * side + g.search])
        current.flats.extend(flats)
        current.colours.extend((shrink(tl_colour, tl), shrink(br_colour, br)))
        current.mirrors.extend(mirrors)
        current.quads.append(quad)
        current.last_frame = frame.number
    close()
    return views, frame_h


def _template(view: _View, g: Geometry, box: Box) -> Vectors:
    """Average of the view's windows for one part, each aligned on the first."""
    side = 2 * g.search + 1
    ref: Vectors | None = None
    total: Vectors | None = None
    for flat in view.flats:
        win = box_windows(flat, box, g.search)
        pick = win[g.search * side + g.search] if ref is None else win[int((win @ ref).argmax())]
        if ref is None:
            ref = pick
        total = pick.copy() if total is None else total + pick
    assert total is not None
    out: Vectors = unit_rows(total[None, :])[0]
    return out


def find_split(views: list[_View], g: Geometry, at: Box | None = None) -> int:
    """The emptiest row between the rank glyph and the suit symbol, from the ink profile of all views (within
    the part ``at`` of the region, the whole region by default)."""
    s = g.search
    box = at or Box(0, 0, g.region_w, g.region_h)
    ink = np.mean(
        [1.0 - v.flats[0][s + box.y : s + box.y + box.h, s + box.x : s + box.x + box.w] for v in views], axis=0
    ).mean(axis=1)
    lo, hi = round(box.h * 0.22), round(box.h * 0.62)
    return lo + int(np.argmin(ink[lo:hi]))


def _view_inks(views: list[_View], g: Geometry, mirrored: bool = False) -> npt.NDArray[np.float32]:
    """Each view's mean ink (1 - flattened light) over the unshifted region, both corners (or, ``mirrored``,
    both other corners): (views, H, W)."""
    s = g.search
    return np.array(
        [
            np.mean([1.0 - f[s : s + g.region_h, s : s + g.region_w] for f in (v.mirrors if mirrored else v.flats)], 0)
            for v in views
        ],
        np.float32,
    )


def calibrate(
    frames: Iterable[Frame],
    *,
    still: bool = False,
    stable_frames: int | None = None,
    deck: str = "",
    source: str = "",
) -> Calibration:
    """Calibrate on one pass of the sorted deck. Raises :class:`CalibrationError` naming the failing position."""
    single_thread_blas()
    d = DISCOVERY
    views, frame_h = collect_views(frames, d, still=still, stable_frames=stable_frames or (1 if still else 3))
    if not views:
        raise CalibrationError("calibration pass: no stable card view found (is the camera on the cards?)")
    # first the views are told apart and checked against the sorted order with the classic index region (rank
    # above suit in the corner): enough to see a card missing, doubled or out of place in any deck
    legacy = Box(LEGACY.x0 - d.x0, LEGACY.y0 - d.y0, LEGACY.region_w, LEGACY.region_h)
    split = find_split(views, d, legacy)
    top = Box(legacy.x, legacy.y, legacy.w, split)
    bottom = Box(legacy.x, legacy.y + split, legacy.w, legacy.h - split)
    rank = np.array([_template(v, d, top) for v in views], np.float32)
    suit = np.array([_template(v, d, bottom) for v in views], np.float32)
    views, rank, suit = _merge_repeats(views, rank, suit, d, top, bottom)
    _check_pass(views, rank, suit)
    # then, the 52 views known, where this deck prints its index
    inks = _view_inks(views, d)
    try:
        layout, region = learn_layout(inks)
    except LayoutError as exc:
        if exc.what == "ranks":
            raise CalibrationError(
                "calibration pass: nothing in the cards' corner tells the ranks apart (the sorted deck, faces up?)"
            ) from None
        raise CalibrationError(
            "calibration pass: nothing in the cards' corner tells the suits apart (the sorted deck, faces up?)"
        ) from None
    g = Geometry(d.card_w, d.card_h, d.x0 + region.x, d.y0 + region.y, region.w, region.h, d.search)
    rank_box, suit_box = layout.rank.shifted(region.x, region.y), layout.suit.shifted(region.x, region.y)
    rank = np.array([_template(v, d, rank_box) for v in views], np.float32)
    suit = np.array([_template(v, d, suit_box) for v in views], np.float32)
    mirror_rank, mirror_suit = None, None
    if all(v.mirrors for v in views) and four_corners(inks, _view_inks(views, d, mirrored=True)):
        other = [_View(v.first_frame, v.last_frame, v.mirrors, v.quads, v.reference) for v in views]
        mirror_rank = np.array([_template(v, d, rank_box) for v in other], np.float32)
        mirror_suit = np.array([_template(v, d, suit_box) for v in other], np.float32)
    corner = np.clip(255.0 * (1.0 - inks.mean(axis=0)), 0, 255).astype(np.uint8)
    quads = [q for v in views for q in v.quads]
    aspect = float(np.median([q.aspect for q in quads]))
    card_height = float(np.median([q.height for q in quads])) / max(1, frame_h)
    confidence = _held_out(views, d, g, layout, region, rank_box, suit_box, aspect, card_height)
    learnt = inkcolour.learn([_suit_inks(views[13 * k : 13 * k + 13], region, d.search) for k in range(4)])
    return Calibration(
        g,
        layout,
        rank,
        suit,
        aspect,
        card_height,
        deck,
        datetime.now(UTC).isoformat(timespec="seconds"),
        source,
        Thresholds(margin=confidence.threshold, agree=confidence.agree_threshold),
        corner=corner,
        corner_region=region,
        confidence=confidence,
        mirror_rank_templates=mirror_rank,
        mirror_suit_templates=mirror_suit,
        suit_colours=learnt[0] if learnt else None,
        colour_spread=learnt[1] if learnt else None,
    )


def _suit_inks(views: list[_View], region: Box, search: int) -> list[npt.NDArray[np.float32]]:
    """The ink colours seen in the reading region of one suit's views, frame by frame."""
    out = []
    for v in views:
        for flat, colour in zip(v.flats, v.colours, strict=False):
            rows, cols = (
                slice(region.y, region.y + region.h + 2 * search),
                slice(region.x, region.x + region.w + 2 * search),
            )
            seen = inkcolour.chromaticity(colour[rows, cols], flat[rows, cols])
            if seen is not None:
                out.append(seen)
    return out


def _held_out(
    views: list[_View],
    d: Geometry,
    g: Geometry,
    layout: Layout,
    region: Box,
    rank_box: Box,
    suit_box: Box,
    aspect: float,
    card_height: float,
) -> Confidence:
    """The margin threshold and the per-card error rate, from templates of each view's even flats read on its
    odd ones (see :mod:`.heldout`)."""
    from .recognise import Recogniser, Seen  # the recogniser reads calibrations: imported here, not at the top

    train = [_View(v.first_frame, v.last_frame, v.flats[0::2], v.quads, v.reference) for v in views]
    rank = np.array([_template(v, d, rank_box) for v in train], np.float32)
    suit = np.array([_template(v, d, suit_box) for v in train], np.float32)
    half = Calibration(g, layout, rank, suit, aspect, card_height, thresholds=Thresholds(margin=0.0))
    rec = Recogniser(half)

    def decide(evidence: npt.NDArray[np.float32]) -> tuple[int, float, bool]:
        reading = rec.decide(evidence, None)
        ok = reading.seen is Seen.CARD and reading.card is not None
        return (int(reading.card) if ok and reading.card is not None else -1), reading.confidence, ok

    held = [(i, region_flat(f, region, d.search)) for i, v in enumerate(views) for f in v.flats[1::2]]
    return estimate(held, rec.corner_scores, decide)


def _merge_repeats(
    views: list[_View], rank: Vectors, suit: Vectors, g: Geometry, top: Box, bottom: Box
) -> tuple[list[_View], Vectors, Vectors]:
    """Consecutive views of the same card (it was nudged, or a hand passed over it) become one view."""
    keep = [0]
    for i in range(1, len(views)):
        j = keep[-1]
        if min(float(rank[i] @ rank[j]), float(suit[i] @ suit[j])) > DUPLICATE_SIMILARITY:
            views[j].flats.extend(views[i].flats)
            views[j].mirrors.extend(views[i].mirrors)
            views[j].colours.extend(views[i].colours)
            views[j].quads.extend(views[i].quads)
            views[j].last_frame = views[i].last_frame
            rank[j] = _template(views[j], g, top)
            suit[j] = _template(views[j], g, bottom)
        else:
            keep.append(i)
    return [views[i] for i in keep], rank[keep], suit[keep]


def _name(position: int) -> Phrase:
    if position < 52:
        return Phrase("position {n} ({card})", n=position + 1, card=ALL_CARDS[position].pretty)
    return Phrase("position {n}", n=position + 1)


def _where(view: _View) -> Phrase:
    return Phrase("frames {first}-{last}", first=view.first_frame, last=view.last_frame)


def _check_pass(views: list[_View], rank: Vectors, suit: Vectors) -> None:
    n = len(views)
    if n != 52:
        order_problem = _order_problem(rank, suit)
        if order_problem is not None:
            raise CalibrationError(
                "calibration pass: found {n} distinct stable card views, expected 52; the first view out of the "
                "deck's pattern is {problem}; the last view is {last}",
                n=n,
                problem=order_problem,
                last=_where(views[-1]),
            )
        raise CalibrationError(
            "calibration pass: found {n} distinct stable card views, expected 52; the last view is {last}",
            n=n,
            last=_where(views[-1]),
        )
    sim = np.minimum(rank @ rank.T, suit @ suit.T)  # the same card: both parts alike
    np.fill_diagonal(sim, -1.0)
    i, j = np.unravel_index(int(sim.argmax()), sim.shape)
    if sim[i, j] > DUPLICATE_SIMILARITY:
        a, b = sorted((int(i), int(j)))
        raise CalibrationError(
            "calibration pass: {a} and {b} show the same card ({where_a} and {where_b}); every card must be "
            "shown once, in order",
            a=_name(a),
            b=_name(b),
            where_a=_where(views[a]),
            where_b=_where(views[b]),
        )


def _order_problem(rank: Vectors, suit: Vectors) -> Phrase | None:
    """Where the views stop following the sorted deck, judged by where the suit changes.

    Adjacent views of one suit share the suit symbol; the three least alike adjacent pairs are where the
    suit changed. In a sorted pass that is after positions 13, 26 and 39; the first change seen elsewhere
    names the position where a card is missing, extra or out of order.
    """
    n = min(len(suit), 52)
    if n < 14:
        return None
    adjacent = np.einsum("ij,ij->i", suit[: n - 1], suit[1:n])
    changes = sorted(int(k) + 1 for k in np.argsort(adjacent)[:3])  # first view of each new suit
    for seen, expected in zip(changes, (13, 26, 39), strict=True):
        if seen != expected:
            at = min(seen, expected)
            return Phrase(
                "{at}: the suit changes after position {seen} instead of after position {expected} "
                "(a card missing, extra or out of order near {at})",
                at=_name(at),
                seen=seen,
                expected=expected,
            )
    return None
