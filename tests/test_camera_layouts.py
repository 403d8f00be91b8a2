"""Decks of other index layouts (#31): calibration learns where the deck prints its index, saves it, draws it.

The expected places come from how each deck was drawn (the shares of the card's width and height its drawing
code puts the rank and the suit at), not from the learning code: a learnt box must hold the drawn centre of the
rank glyph and of the suit symbol. The generated decks (``drivers/camera/layoutdeck.py``) need nothing outside
the repository.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from camera_support import calibration_for

from dealer.core.cards import ALL_CARDS, Card
from dealer.core.events import CardSeen, DeviceFault, FaultKind
from drivers.camera import Calibration, CalibrationError, CameraScanner, Frame, Recogniser, Seen
from drivers.camera.deckart import CardArt, DeckArt
from drivers.camera.layoutdeck import STYLES
from drivers.camera.streamscore import StreamScore, score_stream
from drivers.camera.tracker import EDGES
from drivers.camera.virtual import LEVELS, Pose, VirtualCamera, named_deck

CARD_W, CARD_H = 120, 168  # the canonical card the boxes are given in

# (deck, rank centre, suit centre as shares of the card's width and height, arrangement, size, corners indexed),
# from the drawing code of each deck: deckart._face, printdeck._face (two corners), layoutdeck.STYLES
DRAWN = [
    ("synthetic-2c-en", (0.115, 0.03 + 0.095 / 2), (0.115, 0.2), "above", "standard", 2),
    ("print-4c-en", (0.125, 0.045 + 0.085 / 2), (0.125, 0.195), "above", "standard", 2),
    *(
        (
            f"layout-{name}-{'4c' if name != 'jumbo' else '2c'}{'-low' if name == 'above' else ''}",
            (s.rank_cx, s.rank_top + s.rank_h / 2),
            (s.suit_cx, s.suit_cy),
            "beside" if name == "beside" else "above",
            "jumbo" if name == "jumbo" else "standard",
            s.corners,
        )
        for name, s in STYLES.items()
    ),
]


def _holds(box: list[int], x0: int, y0: int, centre: tuple[float, float]) -> bool:
    cx, cy = centre[0] * CARD_W, centre[1] * CARD_H
    x, y, w, h = box
    return x0 + x <= cx <= x0 + x + w and y0 + y <= cy <= y0 + y + h


@pytest.mark.parametrize(("deck", "rank", "suit", "arrangement", "size", "corners"), DRAWN, ids=[d[0] for d in DRAWN])
def test_calibration_finds_where_the_deck_prints_its_rank_and_suit(
    deck: str, rank: tuple[float, float], suit: tuple[float, float], arrangement: str, size: str, corners: int
) -> None:
    cal = calibration_for(deck)
    learnt = cal.describe()
    g = cal.geometry
    assert learnt["arrangement"] == arrangement and learnt["size"] == size, learnt
    assert learnt["corners"] == cal.corners == corners, learnt
    assert _holds(cal.layout.rank.as_list(), g.x0, g.y0, rank), (learnt, g)
    assert _holds(cal.layout.suit.as_list(), g.x0, g.y0, suit), (learnt, g)
    assert not _holds(cal.layout.rank.as_list(), g.x0, g.y0, suit)  # the parts are told apart
    assert not _holds(cal.layout.suit.as_list(), g.x0, g.y0, rank)


def test_the_learnt_layout_and_its_picture_survive_the_file(tmp_path: Path) -> None:
    cal = calibration_for("layout-beside-4c")
    path = tmp_path / "beside.npz"
    cal.save(path)
    back = Calibration.load(path)
    assert back.layout == cal.layout and back.geometry == cal.geometry and back.describe() == cal.describe()
    picture = back.picture()
    assert np.array_equal(picture, cal.picture())
    # the rank part is framed in red and the suit part in blue, where the index lies in the deck's mean corner
    assert back.corner is not None and back.corner_region is not None
    scale = 4
    for box, channel in ((back.layout.rank, 2), (back.layout.suit, 0)):
        x = (back.corner_region.x + box.x) * scale
        y = (back.corner_region.y + box.y + box.h // 2) * scale
        pixel = picture[y, x].astype(int)
        assert pixel[channel] > 180 and pixel[1] < 120, (box, pixel)
    # the mean corner shows ink (dark) inside the learnt boxes and paper round them
    region = back.corner_region
    inside = back.corner[region.y : region.y + region.h, region.x : region.x + region.w]
    assert inside.min() < 140 and np.median(back.corner) > 200


def test_a_version_1_file_is_read_as_the_fixed_index_cut_across(tmp_path: Path) -> None:
    cal = calibration_for("synthetic-2c-en")
    path = tmp_path / "now.npz"
    cal.save(path)
    with np.load(path) as data:
        fields = {k: data[k] for k in data.files}
    split, width, height = 26, 30, 52
    old = {
        "meta": np.array(str(fields["meta"]).replace('"version": 2', '"version": 1')),
        "geometry": np.array([120, 168, 5, 5, width, height, 3], np.int32),
        "split": np.array(split, np.int32),
        "rank_templates": np.ones((52, split * width), np.float32),
        "suit_templates": np.ones((52, (height - split) * width), np.float32),
        "aspect": fields["aspect"],
        "card_height": fields["card_height"],
    }
    np.savez(tmp_path / "v1.npz", **old)
    back = Calibration.load(tmp_path / "v1.npz")
    assert back.layout.rank.as_list() == [0, 0, width, split]
    assert back.layout.suit.as_list() == [0, split, width, height - split]
    bad = dict(fields, rank_box=np.array([0, 0, 500, 5], np.int32))
    np.savez(tmp_path / "bad.npz", **bad)
    with pytest.raises(CalibrationError, match="'rank_box' reaches outside"):
        Calibration.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("style", ["layout-beside-4c", "layout-jumbo-2c", "layout-above-4c-low"])
def test_a_deck_of_another_layout_calibrated_once_reads_a_hard_stream_without_misread(style: str) -> None:
    """The accessible deck with the rank beside the suit used to be misread on a fifth of its cards."""
    order = [ALL_CARDS[i] for i in np.random.default_rng(31).permutation(52)]
    cam = VirtualCamera(named_deck(style), order, LEVELS["hard"], seed=31, hold=(3, 8), slide=3, gap=2)
    score = StreamScore()
    score_stream(calibration_for(style), cam, score)
    assert score.cards == 52 and score.misread == [] and score.missed == [] and score.extra == 0
    assert score.unreadable <= 1


# -- cards lying against a frame edge, beside a glare (#31: "♣A at the right edge beside a glare: no event") ------


def _pose_at_edge(side: int, gap: float, angle: float, scale: float = 1.0) -> Pose:
    """A card of the virtual camera's nominal size (0.42 of 720 lines, the art's 63:88) ``gap`` pixels off one
    edge of a 1280 x 720 frame; half its turned bounding box worked out by hand."""
    h = 0.42 * 720 * scale
    w = h * 240 / round(240 * 88 / 63)
    rad = math.radians(angle)
    half_w = 0.5 * (abs(w * math.cos(rad)) + abs(h * math.sin(rad)))
    half_h = 0.5 * (abs(w * math.sin(rad)) + abs(h * math.cos(rad)))
    cx = (half_w + gap, 1280 - half_w - gap, 640.0, 640.0)[side]
    cy = (360.0, 360.0, half_h + gap, 720 - half_h - gap)[side]
    return Pose(cx, cy, angle, scale)


@pytest.mark.parametrize("side", [0, 1, 2, 3], ids=["left", "right", "top", "bottom"])
def test_a_whole_card_lying_against_the_frame_edge_is_read(side: int) -> None:
    cal = calibration_for("layout-beside-4c")
    rec = Recogniser(cal)
    cam = VirtualCamera(named_deck("layout-beside-4c"), [], LEVELS["edge"], seed=40 + side)
    seen = []
    for k, card in enumerate((Card.CA, Card.S3, Card.HQ, Card.DT)):
        for gap in (1.0, 3.0, 6.0):
            reading = rec.read(cam.render(card, _pose_at_edge(side, gap, (-4.0, 3.0, 178.0, 0.0)[k])))
            assert reading.seen in (Seen.CARD, Seen.UNREADABLE) and reading.card in (None, card), (card, gap)
            seen.append(reading.card == card)
    assert sum(seen) >= 10  # one frame each, under the edge level's glare: read, or at worst unreadable


def test_a_card_cut_by_the_frame_edge_is_not_read() -> None:
    """A fifth of the card outside the frame: sliding in or out, never taken for a whole card."""
    rec = Recogniser(calibration_for("layout-beside-4c"))
    cam = VirtualCamera(named_deck("layout-beside-4c"), [], LEVELS["clean"], seed=3)
    for side in range(4):
        pose = _pose_at_edge(side, 0.0, 0.0)
        out = 0.2 * 0.42 * 720 * (240 / round(240 * 88 / 63) if side < 2 else 1.0)
        shifted = Pose(pose.cx + (-out, out, 0, 0)[side], pose.cy + (0, 0, -out, out)[side], 0.0, 1.0)
        reading = rec.read(cam.render(Card.CA, shifted))
        assert reading.seen is Seen.NOTHING and reading.quad is not None and reading.quad.partial, side


@pytest.mark.parametrize("style", ["layout-beside-4c", "print-4c-en"])
def test_every_card_lying_against_an_edge_beside_a_glare_gives_one_right_event(style: str) -> None:
    order = [ALL_CARDS[i] for i in np.random.default_rng(9).permutation(52)]
    cam = VirtualCamera(named_deck(style), order, LEVELS["edge"], seed=9, hold=(3, 8), slide=3, gap=2)
    score = StreamScore()
    score_stream(calibration_for(style), cam, score)
    assert score.cards == 52 and score.misread == [] and score.missed == [] and score.extra == 0
    assert score.unreadable <= 2


# -- a card cut by the frame edge, lying still: reported, never silent (#31) ------------------------------------


class _Frames:
    """A frame source over frames rendered beforehand."""

    still = False
    name = "frames"

    def __init__(self, images: list[npt.NDArray[np.uint8]]) -> None:
        self.images = images

    def frames(self) -> Iterator[Frame]:
        for n, image in enumerate(self.images):
            yield Frame(image, n / 30, n)

    def close(self) -> None:
        pass


def _cut_pose(side: int, out: float, angle: float = 0.0) -> Pose:
    """A card of the nominal size with the share ``out`` of its width (left, right) or height (top, bottom)
    outside the 1280 x 720 frame."""
    h = 0.42 * 720
    w = h * 240 / round(240 * 88 / 63)
    extent = w if side < 2 else h
    cx = (w / 2 - out * extent, 1280 - w / 2 + out * extent, 640.0, 640.0)[side]
    cy = (360.0, 360.0, h / 2 - out * extent, 720 - h / 2 + out * extent)[side]
    return Pose(cx, cy, angle, 1.0)


def _scan_frames(deck: str, images: list[npt.NDArray[np.uint8]]) -> list[CardSeen | DeviceFault]:
    return list(CameraScanner(_Frames(images), calibration_for(deck), deal_id=5).events())


@pytest.mark.parametrize(
    ("side", "out", "angle"), [(0, 0.2, 0.0), (1, 0.4, 8.0), (2, 0.3, 172.0), (3, 0.15, -6.0)], ids=EDGES
)
def test_a_card_lying_still_cut_by_the_frame_edge_is_reported_to_the_judge(side: int, out: float, angle: float) -> None:
    """It cannot be read, and it must not be silent: a fault naming the edge, in the deal's next position."""
    deck = "layout-beside-4c"
    cam = VirtualCamera(named_deck(deck), [], LEVELS["mild"], seed=60 + side)
    first = Pose(640.0, 360.0, 0.0, 1.0)  # a card read before it, wholly in view
    cut = _cut_pose(side, out, angle)
    blank = cam.render("blank")
    images = [blank, *(cam.render(Card.S4, first) for _ in range(5)), blank, blank]
    images += [blank, *(cam.render(Card.HJ, cut) for _ in range(6)), blank, blank, blank]
    events = _scan_frames(deck, images)
    assert len(events) == 2, events
    read, fault = events
    assert isinstance(read, CardSeen) and read.card == Card.S4 and read.position == 0
    assert isinstance(fault, DeviceFault) and fault.kind is FaultKind.UNREADABLE_CARD
    assert fault.position == 1 and fault.deal_id == 5
    assert f"the {EDGES[side]} edge" in fault.detail and "outside the camera's view" in fault.detail
    assert fault.timestamp == pytest.approx(9 / 30)  # when it came to rest


def test_a_cut_card_pushed_wholly_into_view_is_read_once_and_a_card_sliding_past_is_not_reported() -> None:
    deck = "layout-beside-4c"
    cam = VirtualCamera(named_deck(deck), [], LEVELS["mild"], seed=70)
    blank = cam.render("blank")
    cut, whole = _cut_pose(0, 0.3), _cut_pose(0, -0.1)
    images = [blank, *(cam.render(Card.DQ, cut) for _ in range(5)), *(cam.render(Card.DQ, whole) for _ in range(5))]
    # the card just read slides out past the right edge and pauses there, half out, before it goes
    images += [cam.render(Card.DQ, _cut_pose(1, 0.5)) for _ in range(5)]
    images += [blank, blank]
    # another card slides in from the top and out again without stopping
    images += [cam.render(Card.C9, _cut_pose(2, out)) for out in (0.8, 0.6, 0.4, 0.6, 0.8)]
    images += [blank, blank]
    events = _scan_frames(deck, images)
    assert [(type(e).__name__, getattr(e, "card", None)) for e in events] == [("CardSeen", Card.DQ)]


# -- indices in two corners or four: learnt, kept, used (#31) -----------------------------------------------------


def _only_the_other_corners(deck: DeckArt) -> DeckArt:
    """The deck with the top-left and bottom-right corners of every face painted over in its paper colour: the
    index is left in the top-right and bottom-left corners only."""
    faces = {}
    for c in ALL_CARDS:
        art = deck.face(c)
        image = art.image.copy()
        h, w = image.shape[:2]
        paper = image[h // 2 - 2 : h // 2 + 2, 2:6].reshape(-1, 3).max(axis=0)  # the stock beside the body
        cw, ch = round(0.45 * w), round(0.42 * h)
        image[:ch, :cw] = paper
        image[h - ch :, w - cw :] = paper
        faces[c] = CardArt(image, art.mask)
    return DeckArt(deck.name, faces, deck.back, deck.joker)


@pytest.mark.parametrize("style", ["layout-beside-4c", "layout-jumbo-2c"])
def test_a_deck_indexed_in_four_corners_is_read_from_the_other_two_when_two_are_hidden(style: str) -> None:
    cal = calibration_for(style)
    assert cal.corners == 4
    two = replace(cal, mirror_rank_templates=None, mirror_suit_templates=None)  # the same, as if learnt with 2
    assert two.corners == 2
    four_reader, two_reader = Recogniser(cal), Recogniser(two)
    cam = VirtualCamera(_only_the_other_corners(named_deck(style)), [], LEVELS["clean"], seed=5)
    cards = [Card.SA, Card.HT, Card.D7, Card.C2, Card.SQ, Card.H5]
    read_four, read_two = [], []
    for k, card in enumerate(cards):
        image = cam.render(card, Pose(640.0, 360.0, (0.0, 4.0, 180.0, -5.0, 177.0, 2.0)[k], 1.0))
        four, two_corners = four_reader.read(image), two_reader.read(image)
        assert four.evidence is not None and four.evidence.shape == (4, 52)
        assert two_corners.evidence is not None and two_corners.evidence.shape == (2, 52)
        assert four.card in (None, card) and two_corners.card in (None, card)  # never a wrong card
        read_four.append(four.card == card)
        read_two.append(two_corners.card == card)
    assert all(read_four) and not any(read_two)


def test_a_deck_indexed_in_two_corners_reads_two_and_the_file_keeps_how_many(tmp_path: Path) -> None:
    two = calibration_for("layout-above-4c-low")
    assert two.corners == 2 and two.mirror_rank_templates is None
    image = VirtualCamera(named_deck("layout-above-4c-low"), [], LEVELS["clean"], seed=6).render(Card.DK)
    reading = Recogniser(two).read(image)
    assert reading.card == Card.DK and reading.evidence is not None and reading.evidence.shape == (2, 52)
    for cal in (two, calibration_for("layout-beside-4c")):
        path = tmp_path / f"{cal.deck}.npz"
        cal.save(path)
        back = Calibration.load(path)
        assert back.corners == cal.corners and back.describe()["corners"] == cal.corners
        for mine, theirs in (
            (back.mirror_rank_templates, cal.mirror_rank_templates),
            (back.mirror_suit_templates, cal.mirror_suit_templates),
        ):
            assert (mine is None and theirs is None) or (
                mine is not None and theirs is not None and np.array_equal(mine, theirs)
            )
