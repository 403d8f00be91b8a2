"""Shared helpers of the camera tests: calibrations made once per test session from virtual passes."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from dealer.core.cards import ALL_CARDS
from drivers.camera import Calibration, calibrate
from drivers.camera.virtual import LEVELS, VirtualCamera, named_deck

VARIANTS = ("synthetic-2c-en", "synthetic-4c-en", "synthetic-2c-fr", "synthetic-4c-de")
SHARED = Path(os.environ.get("DEALER_TEST_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
REAL_DECK = SHARED / "data" / "decks" / "standard"


def calibration_pass(deck_name: str, seed: int = 1) -> VirtualCamera:
    """The sorted deck shown once, card after card, as the judge would at calibration."""
    return VirtualCamera(
        named_deck(deck_name), list(ALL_CARDS), LEVELS["calibration"], seed=seed, hold=4, slide=2, gap=1
    )


@cache
def calibration_for(deck_name: str) -> Calibration:
    return calibrate(calibration_pass(deck_name).frames(), deck=deck_name)
