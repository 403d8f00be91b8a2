"""Read one frame against a calibration: find the card, compare both corner indices with the 52 templates.

Scores: for each card, the normalised cross-correlation of its rank part and of its suit part (each aligned on
its own), averaged over both corners. The rank part scores a rank by the best of its four suits' rank
templates, the same for all four cards of that rank, so cards of one rank differ in the suit part only: the
suit is decided by the shape of the suit symbol, never by a chance difference between two copies of the same
rank glyph. Patches are
the darkest colour channel (see :mod:`.detect`), so every ink is dark whatever its hue and colour plays no part.
The decision never guesses:

- best score below ``face``: whatever is there is no face of this deck (a back, a joker, a hand) - ignored;
- best score below ``accept``, or a normalised margin to any other card below ``margin``, or one corner
  clearly preferring another card (its own margin below ``corner``): unreadable.

The normalised margin to card b is (s_best - s_b) / (1 - sim(best, b)): the share of the way from b's template
to the best one that the observation has gone, so near twins (♠5 and ♣5 differ only in a small symbol) need
the same relative evidence as cards that differ everywhere. The reported confidence is the smallest such
margin, capped at 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

import cv2
import numpy as np
import numpy.typing as npt

from dealer.core.cards import Card

from . import inkcolour
from .blas import single_thread_blas
from .calibration import Calibration, box_windows
from .detect import Image, Quad, corner_views, find_card, mirror_patches, shrink
from .match import Vectors, flatten_light

Evidence = npt.NDArray[np.float32]  # (corners, 52): each corner's combined score per card; NaN: corner not read


class Seen(Enum):
    NOTHING = "nothing"  # no card, or only part of one at the frame edge
    OTHER = "other"  # a card-shaped object that is no face of this deck
    UNREADABLE = "unreadable"
    CARD = "card"


@dataclass(frozen=True, slots=True)
class Reading:
    seen: Seen
    card: Card | None = None
    confidence: float = 0.0
    score: float = 0.0
    quad: Quad | None = None
    evidence: Evidence | None = field(default=None, compare=False)  # per-corner scores, for the tracker
    ink: float = 0.0  # for a card-shaped object that is no face: the share of it printed dark (a back: most)


# Smallest card looked at, as a share of its size in the calibration pass. Cards come 0.6-1.3 times that size
# (the dealer's hand nearer or farther); the floor used to be 0.6, so a card at 60% whose outline measured a
# pixel short was dropped in every still frame and gave no event at all (#17). Below about 0.4 the index is too
# small to read, but such a card still gives an event: unreadable.
MIN_SCALE = 0.4


BACK_INK = 0.25  # a card-shaped object this much dark print is a back (a face of the decks drawn here: under a fifth)


def ink_share(image: Image, quad: Quad) -> float:
    """The share of the card printed dark (darkest channel under 60% of its paper), on a 24 x 34 view of it
    with the outer tenth left out. A face is mostly paper, a back mostly pattern (#31: a back where a face is
    expected is a fault, not an unreadable card)."""
    w, h = 24, 34
    inset = np.array([[-0.1 * w, -0.1 * h], [1.1 * w, -0.1 * h], [1.1 * w, 1.1 * h], [-0.1 * w, 1.1 * h]], np.float32)
    m = cv2.getPerspectiveTransform(quad.corners, inset)
    small = cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_AREA)
    grey = small.min(axis=2).astype(np.float32)
    paper = float(np.percentile(grey, 95))
    return float(np.mean(grey < 0.6 * paper)) if paper > 0 else 1.0


def read_rows(evidence: Evidence) -> Evidence:
    """The rows of the corners that were read (a corner not read is a row of NaN)."""
    out: Evidence = evidence[~np.isnan(evidence).any(axis=1)]
    return out


def card_scores(evidence: Evidence) -> Evidence:
    """Each card's score over the corners read."""
    out: Evidence = read_rows(evidence).mean(axis=0)
    return out


def pool(evidences: Sequence[Evidence]) -> Evidence:
    """Several frames' evidence as one: each corner's scores averaged over the frames that read that corner (NaN
    where none did)."""
    stack = np.stack(evidences)
    read = ~np.isnan(stack[:, :, :1])
    total = np.where(read, stack, 0.0).sum(axis=0)
    count = read.sum(axis=0)
    out: Evidence = np.where(count > 0, total / np.maximum(count, 1), np.nan).astype(np.float32)
    return out


def rank_similarity(rank_templates: Vectors) -> Vectors:
    """Rank-part similarity of every pair of cards (52 x 52) when each rank is scored by its best-matching suit's
    template: 1 within a rank, else the mean similarity of the two ranks' templates over all suit pairs."""
    per_suit = rank_templates.reshape(4, 13, -1)
    sim13 = np.einsum("aid,bjd->ij", per_suit, per_suit) / 16
    np.fill_diagonal(sim13, 1.0)
    return np.tile(sim13, (4, 4)).astype(np.float32)


class Recogniser:
    def __init__(self, calibration: Calibration) -> None:
        single_thread_blas()
        self.cal = calibration
        self._ranks = calibration.rank_templates
        self._suits = calibration.suit_templates
        mirror = calibration.mirror_rank_templates, calibration.mirror_suit_templates
        self._mirror = (mirror[0], mirror[1]) if mirror[0] is not None and mirror[1] is not None else None
        rank_sim = rank_similarity(self._ranks)
        suit_sim = self._suits @ self._suits.T
        self._distance = np.maximum(1.0 - (rank_sim + suit_sim) / 2, 1e-3).astype(np.float32)
        colours, spread = calibration.suit_colours, calibration.colour_spread
        self._inks: tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]] | None = None
        if colours is not None and spread is not None and inkcolour.distinct(colours, spread).any():
            self._inks = colours, inkcolour.distinct(colours, spread)
        lo = max(0.05, calibration.card_height * MIN_SCALE)
        self._min_height = lo
        self._aspect = (calibration.aspect - 0.07, calibration.aspect + 0.07)

    def read(self, image: Image) -> Reading:
        quad = find_card(image, self._min_height, self._aspect)
        if quad is None:
            return Reading(Seen.NOTHING)
        if quad.partial:
            return Reading(Seen.NOTHING, quad=quad)
        return self.read_quad(image, quad)

    def read_quad(self, image: Image, quad: Quad) -> Reading:
        reading = self.decide(self.evidence(image, quad), quad)
        if reading.seen is Seen.OTHER:
            return replace(reading, ink=ink_share(image, quad))
        return reading

    def evidence(self, image: Image, quad: Quad) -> Evidence:
        """Each corner's score per card: the mean of its rank-part and suit-part correlations. Two corners, or
        all four for a deck that calibration found indexed in four (the other two read mirrored).

        The other two corners are read only when the first two are unsure: when they do not both pick one card,
        or the card they pick has less than the single corner's margin (:meth:`sure`). Their rows are then NaN.
        Reading four corners costs twice two; most frames of a card in view are read surely from two (#31).

        In a deck whose suits differ in ink (calibration learnt it), when the first two corners are unsure by
        shape, their scores of the cards of a suit whose ink is clearly not the one seen are lowered
        (:mod:`.inkcolour`)."""
        g = self.cal.geometry
        out = np.full((self.cal.corners, 52), np.nan, np.float32)
        views = corner_views(image, quad, g)
        flats = [flatten_light(patch) for patch, _ in views]
        for k, flat in enumerate(flats):
            out[k] = self.corner_scores(flat)
        if self._inks is not None and not self.sure(out[:2]):
            for k, ((patch, colour), flat) in enumerate(zip(views, flats, strict=True)):
                penalty = inkcolour.penalties(inkcolour.chromaticity(shrink(colour, patch), flat), *self._inks)
                if penalty is not None:
                    out[k] -= penalty
        if self._mirror is not None and not self.sure(out[:2]):
            for k, patch in enumerate(mirror_patches(image, quad, g)):
                out[2 + k] = self.corner_scores(flatten_light(patch), self._mirror)
        return out

    def sure(self, evidence: Evidence) -> bool:
        """Every corner read picks the same card and, together, by at least the single corner's margin."""
        picks = {int(row.argmax()) for row in evidence}
        if len(picks) != 1:
            return False
        reading = self.decide(evidence, None)
        return reading.seen is Seen.CARD and reading.confidence >= self.cal.thresholds.margin

    def corner_scores(self, flat: Vectors, templates: tuple[Vectors, Vectors] | None = None) -> Vectors:
        """One corner's score per card from its light-flattened index region (with the search margin), against
        the first pair of corners' rank and suit templates unless others are given."""
        g, layout = self.cal.geometry, self.cal.layout
        ranks, suits = templates or (self._ranks, self._suits)
        rank = (box_windows(flat, layout.rank, g.search) @ ranks.T).max(axis=0)
        suit = (box_windows(flat, layout.suit, g.search) @ suits.T).max(axis=0)
        best_rank = rank.reshape(4, 13).max(axis=0)  # card i has rank i % 13: every suit of it scores alike
        out: Vectors = ((np.tile(best_rank, 4) + suit) / 2).astype(np.float32)
        return out

    def decide(self, evidence: Evidence, quad: Quad | None) -> Reading:
        """The reading that per-corner ``evidence`` (one frame's, or several frames' pooled) supports."""
        per_corner = read_rows(evidence)
        clear = per_corner.max(axis=1) >= self.cal.thresholds.face
        if clear.any() and not clear.all():
            per_corner = per_corner[clear]  # a corner washed out (a glare, shadow) is like no face: it says nothing
        scores = per_corner.mean(axis=0)
        best = int(scores.argmax())
        score = float(scores[best])
        th = self.cal.thresholds
        if score < th.face:
            return Reading(Seen.OTHER, score=score, quad=quad, evidence=evidence)
        margins = (score - scores) / self._distance[best]
        margins[best] = np.inf
        confidence = float(min(1.0, margins.min()))
        corner_margins = []
        for corner in per_corner:
            own = (corner[best] - corner) / self._distance[best]
            own[best] = np.inf
            corner_margins.append(float(own.min()))
        agreed = len(per_corner) > 1 and all(int(corner.argmax()) == best for corner in per_corner)
        needed = min(th.margin, th.agree) if agreed else th.margin
        if score < th.accept or confidence < needed or min(corner_margins) < th.corner:
            return Reading(Seen.UNREADABLE, None, max(0.0, confidence), score, quad, evidence)
        return Reading(Seen.CARD, Card(best), confidence, score, quad, evidence)
