"""Read one frame against a calibration: find the card, compare both corner indices with the 52 templates.

Scores: for each card, the normalised cross-correlation of its rank part and of its suit part (each aligned on
its own), averaged over both corners. The decision never guesses:

- best score below ``face``: whatever is there is no face of this deck (a back, a joker, a hand) - ignored;
- best score below ``accept``, or a normalised margin to any other card below ``margin``, or one corner
  clearly preferring another card (its own margin below ``corner``): unreadable.

The normalised margin to card b is (s_best - s_b) / (1 - sim(best, b)): the share of the way from b's template
to the best one that the observation has gone, so near twins (♠5 and ♣5 differ only in a small symbol) need
the same relative evidence as cards that differ everywhere. The reported confidence is the smallest such
margin, capped at 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from dealer.core.cards import Card

from .blas import single_thread_blas
from .calibration import Calibration, part_windows
from .detect import Image, Quad, corner_patches, find_card
from .match import flatten_light


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


class Recogniser:
    def __init__(self, calibration: Calibration) -> None:
        single_thread_blas()
        self.cal = calibration
        self._parts = calibration.parts
        self._distance = np.maximum(1.0 - calibration.similarity(), 1e-3).astype(np.float32)
        lo = max(0.05, calibration.card_height * 0.6)
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
        g = self.cal.geometry
        flats = [flatten_light(p) for p in corner_patches(image, quad, g)]
        per_corner = []
        for flat in flats:
            total = np.zeros(52, np.float32)
            for top, bottom, templates in self._parts:
                total += (part_windows(flat, g, top, bottom) @ templates.T).max(axis=0)
            per_corner.append(total / len(self._parts))
        scores = (per_corner[0] + per_corner[1]) / 2
        best = int(scores.argmax())
        score = float(scores[best])
        th = self.cal.thresholds
        if score < th.face:
            return Reading(Seen.OTHER, score=score, quad=quad)
        margins = (score - scores) / self._distance[best]
        margins[best] = np.inf
        confidence = float(min(1.0, margins.min()))
        corner_margins = []
        for corner in per_corner:
            own = (corner[best] - corner) / self._distance[best]
            own[best] = np.inf
            corner_margins.append(float(own.min()))
        if score < th.accept or confidence < th.margin or min(corner_margins) < th.corner:
            return Reading(Seen.UNREADABLE, confidence=max(0.0, confidence), score=score, quad=quad)
        return Reading(Seen.CARD, Card(best), confidence, score, quad)
