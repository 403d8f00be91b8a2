"""Scanner misses (#17): every card lying still for 3 frames gives an event; suits are told by pip shape.

The tracker is fed hand-made readings (independent of the recogniser) for the cases that used to give no
event; the whole scanner is run over shuffled decks at the virtual camera's ``hard`` level (scale 0.6-1.3,
glare beside the index, cards back to back with no empty frame, 3-8 still frames) with a smaller count than
the bench (``bench/bench_scanner.py``: 20 decks in each of four styles). The four-colour checks use the print
deck (``drivers/camera/printdeck.py``), drawn apart from the synthetic deck the scanner was developed on.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt
import pytest
from camera_support import calibration_for

from dealer.core.cards import ALL_CARDS, Card
from drivers.camera import CameraScanner, CardTracker, Reading, Recogniser, Seen
from drivers.camera.detect import Quad
from drivers.camera.streamscore import StreamScore, score_stream
from drivers.camera.virtual import LEVELS, Item, Perturbation, Pose, VirtualCamera, named_deck

SA, H7 = Card.parse("SA"), Card.parse("H7")


def _quad(x: float, y: float = 300.0, turn: float = 0.0) -> Quad:
    half = np.array([[-100, -140], [100, -140], [100, 140], [-100, 140]], np.float32)
    rad = np.radians(turn)
    rot = np.array([[np.cos(rad), -np.sin(rad)], [np.sin(rad), np.cos(rad)]], np.float32)
    return Quad((half @ rot.T + [x, y]).astype(np.float32), (x, y), 200.0, 280.0, False)


def _events(readings: list[Reading]) -> list[Card | None]:
    tracker = CardTracker()
    out = []
    for n, reading in enumerate(readings):
        out += tracker.feed(reading, n / 30, n)
    return [e.card for e in out + tracker.finish()]


def test_three_still_frames_never_read_alike_give_an_unreadable_event() -> None:
    q = _quad(500)
    mixed = [
        Reading(Seen.CARD, SA, 0.5, 0.9, q),
        Reading(Seen.UNREADABLE, None, 0.1, 0.8, q),
        Reading(Seen.CARD, SA, 0.5, 0.9, q),
    ]
    assert _events([Reading(Seen.NOTHING), *mixed, Reading(Seen.NOTHING), Reading(Seen.NOTHING)]) == [None]
    # two frames are not "lying still for 3 frames": nothing is reported for a card merely passing
    assert _events([Reading(Seen.NOTHING), *mixed[:2], Reading(Seen.NOTHING), Reading(Seen.NOTHING)]) == []


def test_a_card_swapped_in_place_but_turned_is_a_new_card_even_if_unreadable() -> None:
    """Back to back with no empty frame: ♠A read, then at almost the same spot another card that never reads."""
    first = [Reading(Seen.CARD, SA, 0.6, 0.95, _quad(500)) for _ in range(4)]
    second = [Reading(Seen.UNREADABLE, None, 0.1, 0.8, _quad(502, turn=6.0)) for _ in range(4)]
    assert _events([*first, *second, Reading(Seen.NOTHING), Reading(Seen.NOTHING)]) == [SA, None]
    # the same card dimmed by glare where it lies (no turn, no shift) is not a second card
    dimmed = [Reading(Seen.UNREADABLE, None, 0.1, 0.8, _quad(500)) for _ in range(4)]
    assert _events([*first, *dimmed, Reading(Seen.NOTHING), Reading(Seen.NOTHING)]) == [SA]


def test_suits_are_told_by_pip_shape_not_colour() -> None:
    """Calibrated on a two-colour deck, every card of a four-colour deck (other inks, same shapes) reads right."""
    rec = Recogniser(calibration_for("synthetic-2c-en"))
    cam = VirtualCamera(named_deck("synthetic-4c-en"), [], LEVELS["mild"], seed=3)
    readings = [(card, rec.read(cam.render(card))) for card in ALL_CARDS]
    wrong = [(c, r.card) for c, r in readings if r.seen is Seen.CARD and r.card != c]
    assert wrong == []
    assert sum(r.seen is Seen.CARD for _, r in readings) >= 51


@pytest.mark.parametrize("style", ["synthetic-4c-en", "print-4c-en"])
def test_a_hard_stream_gives_one_event_per_card(style: str) -> None:
    order = [ALL_CARDS[i] for i in np.random.default_rng(7).permutation(52)]
    cam = VirtualCamera(named_deck(style), order, LEVELS["hard"], seed=7, hold=(3, 8), slide=3, gap=2)
    assert LEVELS["hard"].scale == (0.6, 1.3) and LEVELS["hard"].back_to_back > 0
    score = StreamScore()
    score_stream(calibration_for(style), cam, score)
    assert sum(cam.laid_on) >= 5  # the stream did put cards back to back
    assert score.cards == 52 and score.misread == [] and score.missed == [] and score.extra == 0
    assert score.unreadable <= 1


# -- the cases of #17 on rendered frames: small card by a glare, cards back to back, an independently drawn deck ----


def _stream_events(style: str, items: list[Item], p: Perturbation, seed: int, hold: int) -> list[Card | None]:
    cam = VirtualCamera(named_deck(style), items, p, seed=seed, hold=hold, slide=3, gap=2)
    return [e.card for e in CameraScanner(cam, calibration_for(style)).events()]


def test_a_small_card_held_still_next_to_a_glare_gives_an_event() -> None:
    """60% of the calibrated size, a glare right beside the corner index, held 3 frames: one event per card.

    The detector used to drop cards below 60% of the calibrated height, so a card at that size whose outline
    measured a pixel short was never looked at while it lay still (it was seen only sliding in, blurred larger).
    """
    small_by_glare = replace(LEVELS["hard"], scale=(0.6, 0.6), glare=0.55, glare_at_index=1.0, back_to_back=0.0)
    cards = [ALL_CARDS[i] for i in np.random.default_rng(17).permutation(52)[:16]]
    got: list[Card | None] = []
    for k, c in enumerate(cards):
        got += _stream_events("synthetic-4c-en", ["blank", c, "blank"], small_by_glare, seed=300 + k, hold=3)
    assert len(got) == len(cards)  # an event for every card, none missed, none doubled
    assert [g for g in got if g is not None] == [c for c, g in zip(cards, got, strict=True) if g is not None]
    assert sum(g is None for g in got) <= 1  # and read, nearly always


def test_cards_back_to_back_with_no_empty_frame_give_two_events_in_order() -> None:
    """The second card takes the first one's place in the very next frame (within 12 pixels, any turn)."""
    swap = replace(LEVELS["hard"], back_to_back=1.0)
    pairs = [(ALL_CARDS[i], ALL_CARDS[j]) for i, j in np.random.default_rng(5).permutation(52).reshape(26, 2)[:10]]
    for k, (a, b) in enumerate(pairs):
        cam = VirtualCamera(named_deck("synthetic-2c-en"), [a, b], swap, seed=500 + k, hold=3, slide=3, gap=2)
        events = list(CameraScanner(cam, calibration_for("synthetic-2c-en")).events())
        assert cam.laid_on == [False, True]  # really back to back: no empty frame, no slide between them
        assert [e.card for e in events] == [a, b], (k, a, b)
        assert [e.position for e in events] == [0, 1]


def test_a_card_laid_exactly_where_the_last_lay_is_a_new_card_even_unread() -> None:
    """Same spot, same turn: only the index tells the cards apart. A new card that no frame reads is still a
    new (unreadable) event, and the reported card merely dimmed is not."""
    cal = calibration_for("synthetic-2c-en")
    rec = Recogniser(cal)
    cam = VirtualCamera(named_deck("synthetic-2c-en"), [], LEVELS["clean"], seed=2)
    pose = Pose(640, 360, 4.0, 1.0)
    first, second = Card.parse("S7"), Card.parse("DK")
    tracker = CardTracker(judge=rec.decide)
    readings = [rec.read(cam.render(first, pose)) for _ in range(3)]
    blurred = []
    for _ in range(4):  # the new card, seen so badly that no single frame reads it
        r = rec.read(cam.render(second, pose))
        assert r.evidence is not None
        blurred.append(Reading(Seen.UNREADABLE, None, 0.0, r.score, r.quad, r.evidence * 0.98))
    events = []
    for n, reading in enumerate([*readings, *blurred, Reading(Seen.NOTHING), Reading(Seen.NOTHING)]):
        events += tracker.feed(reading, n / 30, n)
    assert [e.card for e in events + tracker.finish()] == [first, second]  # the mean evidence reads it
    dimmed = [replace(r, seen=Seen.UNREADABLE, card=None) for r in readings]
    tracker = CardTracker(judge=rec.decide)
    events = []
    for n, reading in enumerate([*readings, *dimmed, *dimmed, Reading(Seen.NOTHING), Reading(Seen.NOTHING)]):
        events += tracker.feed(reading, n / 30, n)
    assert [e.card for e in events + tracker.finish()] == [first]


def _index_corner(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    h, w = image.shape[:2]
    corner = cv2.resize(image[: round(h * 0.34), : round(w * 0.3)].min(axis=2), (30, 52), interpolation=cv2.INTER_AREA)
    v = corner.astype(np.float32).ravel()
    v -= v.mean()
    return np.asarray(v / np.linalg.norm(v), np.float32)


def test_print_deck_is_drawn_apart_from_the_synthetic_one() -> None:
    """The evaluation deck shares no art with the deck the scanner was developed on: the same card's corner
    index in the two designs correlates far less than two renders of one design do."""
    a, b = named_deck("print-4c-en"), named_deck("synthetic-4c-en")
    same_card = [float(_index_corner(a.face(c).image) @ _index_corner(b.face(c).image)) for c in ALL_CARDS]
    assert float(np.median(same_card)) < 0.75, float(np.median(same_card))


def test_four_colour_deck_never_misread_and_colour_plays_no_part() -> None:
    """Blue diamonds, green clubs, black spades: calibrated on the two-colour print of the same design (its
    clubs black like its spades), 8 shuffled four-colour decks read with no misread — the suit is the shape."""
    rec = Recogniser(calibration_for("print-2c-en"))
    cam = VirtualCamera(named_deck("print-4c-en"), [], LEVELS["hard"], seed=41)
    rng = np.random.default_rng(41)
    misreads: list[tuple[str, str]] = []
    unread = 0
    for _ in range(8):
        for index in rng.permutation(52):
            card = ALL_CARDS[index]
            reading = rec.read(cam.render(card))
            if reading.seen is not Seen.CARD or reading.card is None:
                unread += 1
            elif reading.card != card:
                misreads.append((card.code, reading.card.code))
    assert misreads == []
    assert unread <= 0.03 * 8 * 52
