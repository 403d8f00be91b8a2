"""The index ink's colour as evidence of the suit (#31): learnt per suit from the sorted pass, used only where
the deck's suits differ in ink."""

from __future__ import annotations

import numpy as np
from camera_support import VARIANTS, calibration_for

from drivers.camera import inkcolour

BLACK = np.array([1 / 3, 1 / 3, 1 / 3], np.float32)
RED = np.array([0.45, 0.45, 0.10], np.float32)  # B G R shares: red ink absorbs blue and green
GREEN = np.array([0.45, 0.10, 0.45], np.float32)
BLUE = np.array([0.10, 0.45, 0.45], np.float32)


def test_chromaticity_of_red_ink_on_white_paper() -> None:
    """Paper (250, 250, 250), ink (50, 50, 230) in B G R: absorbed 200, 200, 20 -> shares 10/21, 10/21, 1/21."""
    colour = np.full((10, 10, 3), 250, np.uint8)
    colour[2:7, 2:7] = (50, 50, 230)
    flat = np.ones((10, 10), np.float32)
    flat[2:7, 2:7] = 0.2
    seen = inkcolour.chromaticity(colour, flat)
    assert seen is not None
    assert np.allclose(seen, [10 / 21, 10 / 21, 1 / 21], atol=1e-5)
    flat[:] = 1.0  # no ink: no colour evidence
    assert inkcolour.chromaticity(colour, flat) is None


def test_a_four_colour_deck_rules_out_every_suit_but_the_seen_ink_a_two_colour_deck_only_the_other_colour() -> None:
    spread = np.full(4, 0.005, np.float32)
    four = np.stack([BLACK, RED, BLUE, GREEN])
    apart = inkcolour.distinct(four, spread)
    assert apart.sum() == 12  # every pair of suits
    penalty = inkcolour.penalties(GREEN + 0.03, four, apart)  # clubs' green, a little off
    assert penalty is not None
    assert penalty[39:].max() == 0 and penalty[:39].min() == inkcolour.PENALTY
    two = np.stack([BLACK, RED, RED, BLACK])
    apart = inkcolour.distinct(two, spread)
    assert apart.astype(int).tolist() == [[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
    penalty = inkcolour.penalties(BLACK, two, apart)
    assert penalty is not None
    assert penalty[:13].max() == 0 and penalty[39:].max() == 0 and penalty[13:39].min() == inkcolour.PENALTY
    # an ink half-way between black and red rules out nothing
    assert inkcolour.penalties(((BLACK + RED) / 2).astype(np.float32), two, apart) is None


def test_calibration_learns_which_suits_share_an_ink() -> None:
    """The synthetic decks as drawn (deckart.TWO_COLOUR, FOUR_COLOUR): ♠♣ black and ♥♦ red; each suit its own ink."""
    two = calibration_for(VARIANTS[0])
    four = calibration_for(VARIANTS[1])
    for cal in (two, four):
        assert cal.suit_colours is not None and cal.colour_spread is not None
    assert two.suit_colours is not None and two.colour_spread is not None
    apart = inkcolour.distinct(two.suit_colours, two.colour_spread)
    assert apart.astype(int).tolist() == [[0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
    assert four.suit_colours is not None and four.colour_spread is not None
    assert inkcolour.distinct(four.suit_colours, four.colour_spread).sum() == 12
