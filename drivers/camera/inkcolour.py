"""The colour of a card's index ink (#31): a deck printed in more than one ink tells suits apart by colour.

In a four-colour deck ♣ is green and ♦ blue, so ♠ and ♣, whose symbols differ only in a small shape, differ
plainly in ink; in a two-colour deck colour still tells ♠♣ from ♥♦. The reader compares shapes on the darkest
colour channel (every ink dark alike); this module adds the ink's hue as a separate piece of evidence.

The ink colour of an index patch is its **absorbance chromaticity**: the paper's mean colour minus the ink's
mean colour, per channel, as shares of their sum (black ink absorbs all three alike: a third each; red ink
absorbs blue and green). Uneven light scales both paper and ink and a glare adds to both, so the shares stay
put where the index is still legible. Calibration learns each suit's mean and spread from the sorted pass
(:func:`learn`); suits whose inks lie far apart in units of their spread are told apart by colour. At reading,
a suit whose learnt ink is clearly farther from the seen ink than another suit's is penalised in that corner's
scores (:func:`penalties`): in a four-colour deck only the seen suit is left, in a two-colour deck its colour.

Arrays in, arrays out; no I/O.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]

INK = 0.55  # light-flattened level below which a pixel is ink
PAPER = 0.9  # ... above which it is paper
MIN_INK = 8  # ink pixels needed for a colour (a washed-out index has none: no colour evidence)
MIN_ABSORB = 40.0  # grey levels of paper-minus-ink summed over the channels needed (faint ink: no evidence)
DISTINCT = 6.0  # two suits differ in colour when their means lie this many spreads apart ...
MIN_DISTANCE = 0.08  # ... and at least this far (shares of absorbance)
CLEAR = 0.5  # a suit is ruled out when the seen ink is nearer another suit's by this share of their distance
PENALTY = 0.5  # subtracted from the scores of the cards of a suit ruled out


def chromaticity(colour: npt.NDArray[np.uint8], flat: Floats) -> Floats | None:
    """The ink's absorbance chromaticity (3 shares, B G R) of one index patch, or None when there is too little
    ink or paper to tell. ``flat``: the patch's light-flattened grey, the same size."""
    ink = flat < INK
    paper = flat > PAPER
    if int(np.count_nonzero(ink)) < MIN_INK or int(np.count_nonzero(paper)) < MIN_INK:
        return None
    pixels = colour.reshape(-1, 3).astype(np.float32)
    absorb = pixels[paper.ravel()].mean(axis=0) - pixels[ink.ravel()].mean(axis=0)
    absorb = np.maximum(absorb, 0.0)
    total = float(absorb.sum())
    if total < MIN_ABSORB:
        return None
    out: Floats = (absorb / total).astype(np.float32)
    return out


def learn(samples: list[list[Floats]]) -> tuple[Floats, Floats] | None:
    """Each suit's mean ink chromaticity (4 x 3) and spread (4: RMS distance to its mean) from ``samples``
    (per suit, in deck order ♠ ♥ ♦ ♣, the chromaticities seen), or None when a suit had none."""
    if len(samples) != 4 or any(not s for s in samples):
        return None
    means = np.array([np.mean(s, axis=0) for s in samples], np.float32)
    spread = np.array(
        [float(np.sqrt(np.mean(np.sum((np.array(s) - m) ** 2, axis=1)))) for s, m in zip(samples, means, strict=True)],
        np.float32,
    )
    return means, spread


def distinct(means: Floats, spread: Floats) -> npt.NDArray[np.bool_]:
    """4 x 4: whether two suits' inks differ (far apart in units of the larger spread, and absolutely)."""
    gap = np.linalg.norm(means[:, None, :] - means[None, :, :], axis=2)
    scale = np.maximum(spread[:, None], spread[None, :])
    out: npt.NDArray[np.bool_] = (gap > DISTINCT * scale) & (gap > MIN_DISTANCE)
    return out


def penalties(seen: Floats | None, means: Floats, apart: npt.NDArray[np.bool_]) -> Floats | None:
    """Per card (52, suits in deck order), what to subtract from one corner's scores for the ink ``seen``: a suit
    is ruled out when the seen ink is nearer to a suit of another colour by ``CLEAR`` of their distance.
    None when nothing is ruled out."""
    if seen is None or not apart.any():
        return None
    d = np.linalg.norm(means - seen[None, :], axis=1)
    out = np.zeros(4, np.float32)
    for t in range(4):
        for a in range(4):
            if apart[a, t] and d[t] - d[a] > CLEAR * float(np.linalg.norm(means[t] - means[a])):
                out[t] = PENALTY
                break
    if not out.any():
        return None
    result: Floats = np.repeat(out, 13).astype(np.float32)
    return result
