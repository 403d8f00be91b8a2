"""Confidence that means something (#31): the reader's margin threshold and its per-card error rate, measured
on a held-out part of the calibration pass.

Each card's stable views in the pass are split: the even frames make the templates, the odd frames are held out.
Every held-out corner is read many times over, each time spoiled in its own way (print contrast down to
under half, a glare washing out part of the index, blur, sensor noise, a shift within the alignment search), so the
deck's own near twins are put under more strain than a table usually gives. From these readings:

- the **threshold**: the least normalised margin (the reader's confidence) above which no held-out reading was
  wrong; a card read with less is reported unreadable, not guessed;
- the **predicted error rate** per card read: the 95% upper Poisson limit of the wrong readings above the
  threshold over the readings accepted (3 / n when none was wrong);
- the **predicted unreadable rate**: the share of the spoiled readings below the threshold (pessimistic: the
  spoiling is harsher than most frames);
- the **agreement threshold**: the same least margin for a card every corner of a view picks on its own. The
  reader sees two (or four) index corners of a card, each spoiled in its own way by the table's light; pairs of
  one held-out corner's spoiled readings stand for them, and where both pick the same card, their mean
  evidence is judged. Corners that agree are wrong less often than one corner alone, so this threshold is
  usually lower: a small card under a glare, read alike in every corner, is no longer "unreadable".

Deterministic (a fixed seed), about a second on one core.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from .layout import Box

Floats = npt.NDArray[np.float32]

FLOOR = 0.15  # the threshold is never below the reader's fixed margin of old
GRID = tuple(round(0.15 + 0.05 * k, 2) for k in range(18))  # 0.15 .. 1.0
SPOILS = 16  # spoiled readings per held-out corner view
# 95% upper Poisson limits for 0..10 events (published tables, e.g. Gehrels 1986, table 1, one-sided 0.95)
POISSON_95 = (3.00, 4.74, 6.30, 7.75, 9.15, 10.51, 11.84, 13.15, 14.43, 15.71, 16.96)


@dataclass(frozen=True, slots=True)
class Confidence:
    held_out: int  # spoiled readings of held-out views
    threshold: float  # least margin accepted
    wrong: int  # wrong readings at or above the threshold
    accepted: int  # readings at or above the threshold
    predicted_error_rate: float  # per card read (95% upper limit)
    predicted_unreadable_rate: float  # share of spoiled readings below the threshold
    agree_threshold: float = 1.0  # least margin accepted when every corner picks the card (1.0: no such pairs)
    agree_accepted: int = 0  # pairs of agreeing corners at or above it (none wrong)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "held_out": self.held_out,
            "threshold": self.threshold,
            "wrong": self.wrong,
            "accepted": self.accepted,
            "predicted_error_rate": self.predicted_error_rate,
            "predicted_unreadable_rate": self.predicted_unreadable_rate,
            "agree_threshold": self.agree_threshold,
            "agree_accepted": self.agree_accepted,
        }

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> Confidence:
        def num(key: str, default: float | None = None) -> float:
            value = d[key] if default is None else d.get(key, default)
            if not isinstance(value, int | float):
                raise TypeError(key)
            return float(value)

        return cls(
            int(num("held_out")),
            num("threshold"),
            int(num("wrong")),
            int(num("accepted")),
            num("predicted_error_rate"),
            num("predicted_unreadable_rate"),
            num("agree_threshold", 1.0),  # files before the agreement threshold: none
            int(num("agree_accepted", 0)),
        )


def poisson_upper(events: int) -> float:
    if events < len(POISSON_95):
        return POISSON_95[events]
    return events + 1.645 * math.sqrt(events + 1) + 1.5  # a normal approximation past the table


def spoil(flat: Floats, rng: np.random.Generator) -> Floats:
    """One spoiled copy of a light-flattened index region (paper about 1, ink dark)."""
    out = 1.0 - float(rng.uniform(0.45, 1.0)) * (1.0 - flat)  # print contrast
    h, w = out.shape
    if rng.random() < 0.6:  # a glare washing part of the index out
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        cy, cx = float(rng.uniform(0, h)), float(rng.uniform(0, w))
        sigma = float(rng.uniform(3.0, 0.5 * max(h, w)))
        wash = float(rng.uniform(0.15, 0.6)) * np.exp(-((ys - cy) ** 2 + (xs - cx) ** 2) / (2 * sigma**2))
        out = np.asarray(out + wash * (1.0 - out), np.float32)
    blur = float(rng.uniform(0.0, 1.2))
    if blur > 0.3:
        out = np.asarray(cv2.GaussianBlur(out, (0, 0), blur), np.float32)
    out = np.asarray(out + rng.normal(0.0, float(rng.uniform(0.02, 0.06)), out.shape), np.float32)
    dy, dx = (int(v) for v in rng.integers(-2, 3, size=2))
    return np.asarray(np.roll(out, (dy, dx), axis=(0, 1)), np.float32)


def region_flat(flat: Floats, region: Box, search: int) -> Floats:
    """The reading region (with its search margin) cut from a view's larger discovery flat."""
    return flat[region.y : region.y + region.h + 2 * search, region.x : region.x + region.w + 2 * search]


Reader = Callable[[Floats], tuple[int, float, bool]]


def _least_safe(results: list[tuple[float, bool]]) -> float:
    """The least margin of the grid above which none of ``results`` (confidence, right) was wrong."""
    conf = np.array([c for c, _ in results], np.float64)
    right = np.array([r for _, r in results], bool)
    for m in GRID:
        if not np.any((conf >= m) & ~right):
            return m
    return GRID[-1]


def estimate(
    held_out: list[tuple[int, Floats]],
    score: Callable[[Floats], Floats],
    decide: Reader,
    seed: int = 31,
) -> Confidence:
    """``held_out``: (card index, region flat) pairs; ``score``: one corner's flat to its score per card;
    ``decide``: per-corner scores (corners x 52) to (best card, confidence, score accepted), with the fixed
    thresholds but no margin floor."""
    rng = np.random.default_rng(seed)
    results: list[tuple[float, bool]] = []  # (confidence, right) of readings the score thresholds let through
    pairs: list[tuple[float, bool]] = []  # the same, for two spoiled corners that pick the same card
    total = 0
    for card, flat in held_out:
        scores = [score(spoil(flat, rng)) for _ in range(SPOILS)]
        for s in scores:
            total += 1
            best, confidence, ok = decide(np.stack([s, s]))
            if ok:
                results.append((confidence, best == card))
        for a, b in zip(scores[0::2], scores[1::2], strict=True):
            if int(a.argmax()) == int(b.argmax()):
                best, confidence, ok = decide(np.stack([a, b]))
                if ok:
                    pairs.append((confidence, best == card))
    choice = _least_safe(results)
    conf = np.array([c for c, _ in results], np.float64)
    right = np.array([r for _, r in results], bool)
    accepted = int(np.count_nonzero(conf >= choice))
    wrong = int(np.count_nonzero((conf >= choice) & ~right))
    agree = max(FLOOR, _least_safe(pairs)) if pairs else 1.0
    return Confidence(
        total,
        max(FLOOR, choice),
        wrong,
        accepted,
        poisson_upper(wrong) / max(1, accepted),
        1.0 - accepted / max(1, total),
        agree,
        sum(c >= agree for c, _ in pairs),
    )
