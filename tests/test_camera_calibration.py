"""Calibration: the file, refusing bad passes, and sources (image folders, video files)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from camera_support import VARIANTS, calibration_for

from dealer.core.cards import ALL_CARDS, Card
from dealer.core.errors import DealerError
from drivers.camera import Calibration, CalibrationError, Recogniser, Seen, SourceError, calibrate, open_source
from drivers.camera.virtual import LEVELS, Item, Pose, VirtualCamera, named_deck


def test_calibration_file_round_trip(tmp_path: Path) -> None:
    cal = calibration_for(VARIANTS[0])
    path = tmp_path / "deck.npz"
    cal.save(path)
    back = Calibration.load(path)
    assert back.geometry == cal.geometry and back.layout == cal.layout and back.thresholds == cal.thresholds
    assert np.array_equal(back.rank_templates, cal.rank_templates)
    assert np.array_equal(back.suit_templates, cal.suit_templates)
    assert back.deck == VARIANTS[0] and back.created == cal.created
    assert not list(tmp_path.glob("*.tmp*"))  # written through a temporary file, renamed


def test_calibration_file_errors_name_the_field(tmp_path: Path) -> None:
    cal = calibration_for(VARIANTS[0])
    with pytest.raises(CalibrationError, match="not found"):
        Calibration.load(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file")
    with pytest.raises(CalibrationError, match="not an NPZ"):
        Calibration.load(junk)
    good = tmp_path / "good.npz"
    cal.save(good)
    with np.load(good) as data:
        fields = {k: data[k] for k in data.files}
    cut = dict(fields)
    del cut["suit_templates"]
    np.savez(tmp_path / "cut.npz", **cut)
    with pytest.raises(CalibrationError, match="'suit_templates' is missing"):
        Calibration.load(tmp_path / "cut.npz")
    wrong = dict(fields, rank_templates=fields["rank_templates"][:51])
    np.savez(tmp_path / "wrong.npz", **wrong)
    with pytest.raises(CalibrationError, match="'rank_templates' has shape"):
        Calibration.load(tmp_path / "wrong.npz")
    old = dict(fields, meta=np.array(str(fields["meta"]).replace('"version": 2', '"version": 99')))
    np.savez(tmp_path / "old.npz", **old)
    with pytest.raises(CalibrationError, match="version"):
        Calibration.load(tmp_path / "old.npz")


def _pass(items: list[Item], variant: str = VARIANTS[0]) -> VirtualCamera:
    return VirtualCamera(named_deck(variant), items, LEVELS["calibration"], seed=2, hold=4, slide=2, gap=1)


def test_a_pass_with_a_card_missing_is_refused_naming_where() -> None:
    items: list[Item] = [c for c in ALL_CARDS if c is not Card.S5]
    with pytest.raises(CalibrationError, match=r"found 51 distinct stable card views, expected 52.*position 13 \(♠2\)"):
        calibrate(_pass(items).frames())


def test_a_pass_with_a_card_shown_twice_is_refused_naming_both_positions() -> None:
    items: list[Item] = list(ALL_CARDS)
    items[20] = Card.SK  # ♥7's place holds ♠K again
    with pytest.raises(CalibrationError, match=r"position 2 \(♠K\) and position 21 \(♥7\) show the same card"):
        calibrate(_pass(items).frames())


def test_a_card_shown_twice_in_a_row_counts_once() -> None:
    items: list[Item] = list(ALL_CARDS)
    items.insert(10, Card.S4)  # nudged: the same card, two stable spells
    items.insert(30, "blank")
    cal = calibrate(_pass(items, VARIANTS[2]).frames())
    assert cal.rank_templates.shape[0] == 52


def test_a_pass_of_nothing_is_refused() -> None:
    with pytest.raises(CalibrationError, match="no stable card view"):
        calibrate(_pass(["blank", "blank", "hand"]).frames())


def test_calibrate_from_a_folder_of_stills_then_read_a_video_file(tmp_path: Path) -> None:
    variant = VARIANTS[1]
    still = VirtualCamera(named_deck(variant), [], LEVELS["calibration"], seed=5)
    folder = tmp_path / "pass"
    folder.mkdir()
    for n, card in enumerate(ALL_CARDS):  # natural order: 2 before 10
        cv2.imwrite(str(folder / f"card{n + 1}.png"), still.render(card))
    source = open_source(str(folder))
    assert source.still
    cal = calibrate(source.frames(), still=True)
    assert Calibration.load(_saved(cal, tmp_path)).layout == cal.layout

    glob_source = open_source(str(folder / "card1*.png"))
    assert len(list(glob_source.frames())) == 11  # card1, card10..card19

    video = tmp_path / "deal.avi"
    order = [Card.HQ, Card.C3, Card.SA]
    cam = VirtualCamera(named_deck(variant), list(order), LEVELS["mild"], seed=6, hold=6, slide=3, gap=2)
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"MJPG"), 30.0, (1280, 720))
    assert writer.isOpened()
    for frame in cam.frames():
        writer.write(frame.image)
    writer.release()
    from drivers.camera import CameraScanner

    src = open_source(str(video))
    events = list(CameraScanner(src, cal).events())
    src.close()
    assert [e.card for e in events] == order
    assert events[1].timestamp > events[0].timestamp > 0.0  # the file's own clock


def _saved(cal: Calibration, folder: Path) -> Path:
    path = folder / "cal.npz"
    cal.save(path)
    return path


def test_bad_sources_are_named() -> None:
    with pytest.raises(SourceError, match="not a camera index"):
        open_source("/no/such/place.mp4")
    with pytest.raises(SourceError, match="no image files"):
        open_source("/no/such/*.png")
    with pytest.raises(DealerError, match="order"):
        open_source("virtual:order=backwards")
    with pytest.raises(DealerError, match="unknown option"):
        open_source("virtual:colour=7")


def test_still_reading_uses_the_calibrated_card_size() -> None:
    cal = calibration_for(VARIANTS[0])
    assert 0.38 < cal.card_height < 0.46 and 0.68 < cal.aspect < 0.75
    rec = Recogniser(cal)
    cam = VirtualCamera(named_deck(VARIANTS[0]), [], LEVELS["clean"], seed=1)
    tiny = rec.read(cam.render(Card.SA, Pose(640, 360, 0.0, 0.35)))
    assert tiny.seen is Seen.NOTHING  # far smaller than any card of the pass: not taken for one
