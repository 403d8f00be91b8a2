"""Index patches as feature vectors and their comparison with calibrated templates.

A patch is flattened for light first (divided by a local estimate of the paper's brightness, which takes out
uneven light and most of a glare's sheen), then every window of the template's size within the alignment
search is made zero-mean and unit-length. Similarity is the normalised cross-correlation: one matrix product
of all windows against all 52 templates, best window per template.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from .detect import Geometry

Vectors = npt.NDArray[np.float32]

_PAPER_KERNEL = cv2.getStructuringElement(cv2.MORPH_RECT, (15, 15))


def flatten_light(patch: npt.NDArray[np.uint8]) -> Vectors:
    """The patch divided by the paper brightness around each pixel (ink dark, paper about 1)."""
    grey = patch.astype(np.float32)
    paper = cv2.dilate(grey, _PAPER_KERNEL)
    paper = cv2.blur(paper, (9, 9))
    return grey / (paper + 8.0)


def windows(patch: npt.NDArray[np.uint8], g: Geometry) -> Vectors:
    """All alignment windows of the patch, one zero-mean unit-length row each; (search area, region size)."""
    flat = flatten_light(patch)
    view = sliding_window_view(flat, (g.region_h, g.region_w))
    rows = view.reshape(-1, g.region_h * g.region_w)
    return unit_rows(rows)


def unit_rows(rows: Vectors) -> Vectors:
    centred = rows - rows.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    out: Vectors = (centred / np.maximum(norms, 1e-6)).astype(np.float32)
    return out


def centre_index(g: Geometry) -> int:
    """Row of :func:`windows` that is the unshifted window."""
    side = 2 * g.search + 1
    return g.search * side + g.search


def best_scores(win: Vectors, templates: Vectors) -> tuple[Vectors, npt.NDArray[np.intp]]:
    """Best correlation of any window with each template, and which window gave it."""
    scores = win @ templates.T
    best = scores.argmax(axis=0)
    return scores[best, np.arange(scores.shape[1])], best
