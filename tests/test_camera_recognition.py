"""Recognition on synthetic decks: 20 shuffled decks per variant under every perturbation, zero misreads."""

from __future__ import annotations

import numpy as np
import pytest
from camera_support import VARIANTS, calibration_for

from dealer.core.cards import ALL_CARDS, Card
from drivers.camera import Recogniser, Seen
from drivers.camera.virtual import LEVELS, Extra, Pose, VirtualCamera, named_deck

DECKS_PER_VARIANT = 20


@pytest.mark.parametrize("variant", VARIANTS[:3])
def test_twenty_shuffled_decks_under_all_perturbations_have_no_misread(variant: str) -> None:
    rec = Recogniser(calibration_for(variant))
    cam = VirtualCamera(named_deck(variant), [], LEVELS["strong"], seed=100 + VARIANTS.index(variant))
    rng = np.random.default_rng(7)
    misreads: list[tuple[str, str]] = []
    unreadable = upside_down_read = 0
    for _ in range(DECKS_PER_VARIANT):
        for index in rng.permutation(52):
            card = ALL_CARDS[index]
            pose = cam.random_pose(card)
            reading = rec.read(cam.render(card, pose))
            if reading.seen is Seen.CARD:
                if reading.card != card:
                    misreads.append((card.code, reading.card.code if reading.card else "?"))
                elif abs(pose.angle) > 90:
                    upside_down_read += 1
            else:
                unreadable += 1
    views = DECKS_PER_VARIANT * 52
    assert misreads == []
    assert unreadable <= 0.02 * views, f"{unreadable} of {views} views unreadable"
    assert upside_down_read >= 0.3 * views  # about half the cards lie upside down


def test_upside_down_and_tilted_cards_read() -> None:
    variant = VARIANTS[0]
    rec = Recogniser(calibration_for(variant))
    cam = VirtualCamera(named_deck(variant), [], LEVELS["clean"], seed=3)
    for angle in (180.0, 165.0, 195.0, 15.0, -15.0):
        for card in (Card.SA, Card.H6, Card.H9, Card.DQ, Card.C8):
            reading = rec.read(cam.render(card, Pose(640, 360, angle, 1.0)))
            assert (reading.seen, reading.card) == (Seen.CARD, card), (angle, card)


@pytest.mark.parametrize("scale", [0.7, 1.4])
def test_scale_extremes_read(scale: float) -> None:
    variant = VARIANTS[1]
    rec = Recogniser(calibration_for(variant))
    cam = VirtualCamera(named_deck(variant), [], LEVELS["mild"], seed=4)
    read = 0
    for card in ALL_CARDS:
        reading = rec.read(cam.render(card, Pose(640, 360, 5.0, scale)))
        assert reading.seen is not Seen.CARD or reading.card == card
        read += reading.card == card
    assert read >= 50


@pytest.mark.parametrize("item", ["blank", "hand", "back", "joker"])
def test_no_card_from_blank_hand_back_or_joker(item: Extra) -> None:
    variant = VARIANTS[0]
    rec = Recogniser(calibration_for(variant))
    cam = VirtualCamera(named_deck(variant), [], LEVELS["strong"], seed=11)
    seen = [rec.read(cam.render(item)).seen for _ in range(40)]
    assert all(s in (Seen.NOTHING, Seen.OTHER) for s in seen), seen


def test_a_card_half_out_of_the_frame_is_not_read() -> None:
    variant = VARIANTS[0]
    rec = Recogniser(calibration_for(variant))
    cam = VirtualCamera(named_deck(variant), [], LEVELS["clean"], seed=5)
    for x in (20.0, 1270.0):
        reading = rec.read(cam.render(Card.SK, Pose(x, 360, 0.0, 1.0)))
        assert reading.seen is Seen.NOTHING and reading.quad is not None and reading.quad.partial
