"""The scanner on a real deck design (../shared/data/decks/standard), skipped where that folder is absent."""

from __future__ import annotations

import numpy as np
import pytest
from camera_support import REAL_DECK

from dealer.core.cards import ALL_CARDS
from dealer.core.events import CardSeen
from drivers.camera import CameraScanner, Recogniser, Seen, calibrate
from drivers.camera.deckart import image_deck
from drivers.camera.virtual import LEVELS, VirtualCamera

pytestmark = pytest.mark.skipif(not (REAL_DECK / "ace_of_spades.png").exists(), reason=f"{REAL_DECK} is absent")


def test_real_deck_calibrate_then_read_shuffled_decks_without_misread() -> None:
    deck = image_deck(REAL_DECK)
    cal = calibrate(
        VirtualCamera(deck, list(ALL_CARDS), LEVELS["calibration"], seed=1, hold=4, slide=2, gap=1).frames()
    )
    rec = Recogniser(cal)
    cam = VirtualCamera(deck, [], LEVELS["strong"], seed=21)
    rng = np.random.default_rng(3)
    misreads, unreadable, views = [], 0, 0
    for _ in range(2):
        for index in rng.permutation(52):
            card = ALL_CARDS[index]
            reading = rec.read(cam.render(card))
            views += 1
            if reading.seen is Seen.CARD and reading.card != card:
                misreads.append((card.code, reading.card))
            unreadable += reading.seen is not Seen.CARD
    assert misreads == []
    assert unreadable <= 0.03 * views

    for item in ("back", "joker", "hand", "blank"):
        assert all(rec.read(cam.render(item)).seen in (Seen.NOTHING, Seen.OTHER) for _ in range(10)), item

    order = [ALL_CARDS[i] for i in rng.permutation(52)][:20]
    stream = VirtualCamera(deck, [*order[:10], "joker", "back", *order[10:]], LEVELS["strong"], seed=8, hold=4, slide=2)
    events = list(CameraScanner(stream, cal).events())
    # the joker and this deck's back (a pale pattern, as light as a face) lie still where faces are expected:
    # each an event (#31), unreadable (or, for the back, a fault), never silence
    assert len(events) == 22
    read = [e.card for e in events if isinstance(e, CardSeen) and e.card is not None]
    assert read == [c for c in order if c in read] and len(read) >= 19  # in order, never a wrong card
