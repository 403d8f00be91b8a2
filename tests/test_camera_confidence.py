"""Confidence that means something (#31): the reader's threshold and per-card error rate from held-out views of
the calibration pass, kept in the file and shown to the technical judge."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from camera_support import calibration_for

from dealer.core.cards import Card
from drivers.camera import Calibration, Recogniser, Seen
from drivers.camera.heldout import FLOOR, SPOILS, estimate, poisson_upper
from drivers.camera.recognise import card_scores, pool


def test_the_error_bound_is_the_published_poisson_limit() -> None:
    """Gehrels (1986), one-sided 95% upper limits: 0 events 3.00, 1 4.74, 2 6.30, 5 10.51, 10 16.96."""
    assert [poisson_upper(n) for n in (0, 1, 2, 5, 10)] == [3.00, 4.74, 6.30, 10.51, 16.96]
    assert 18.0 < poisson_upper(11) < 19.0  # past the table: the normal approximation (exact limit 18.21)


def _scores(flat: object) -> npt.NDArray[np.float32]:
    """A stand-in for one corner's scores: different at every spoil, card 0 always best."""
    v = np.asarray(np.random.default_rng().random(52) * 0.5, np.float32)
    v[0] = 1.0
    return v


def _single(evidence: npt.NDArray[np.float32]) -> bool:
    return bool(np.array_equal(evidence[0], evidence[1]))  # one spoiled corner read as both


def test_a_reader_never_wrong_keeps_the_floor_and_predicts_three_over_the_readings() -> None:
    def decide(evidence: npt.NDArray[np.float32]) -> tuple[int, float, bool]:
        return 0, 0.9, True

    c = estimate([(0, np.ones((20, 16), np.float32))] * 10, _scores, decide)
    assert c.held_out == 10 * SPOILS and c.accepted == 10 * SPOILS and c.wrong == 0
    assert c.threshold == FLOOR and c.agree_threshold == FLOOR and c.agree_accepted == 10 * SPOILS // 2
    assert c.predicted_error_rate == pytest.approx(3.0 / (10 * SPOILS))
    assert c.predicted_unreadable_rate == 0.0


def test_the_threshold_rises_above_every_confidence_a_wrong_reading_had() -> None:
    """Readings alternate: right with confidence 0.9, wrong with 0.32: the least grid step above 0.32 is 0.35;
    half the readings fall below it (unreadable)."""
    calls = [0, 0]

    def decide(evidence: npt.NDArray[np.float32]) -> tuple[int, float, bool]:
        single = _single(evidence)
        calls[single] += 1
        if single:
            return (0, 0.9, True) if calls[1] % 2 else (1, 0.32, True)
        return (0, 0.9, True) if calls[0] % 2 else (1, 0.17, True)  # two corners agreeing: wrong only at 0.17

    c = estimate([(0, np.ones((20, 16), np.float32))] * 10, _scores, decide)
    assert c.threshold == 0.35 and c.wrong == 0 and c.accepted == 5 * SPOILS
    assert c.predicted_unreadable_rate == pytest.approx(0.5)
    assert calls[0] == 10 * SPOILS // 2  # a pair of spoiled readings for every two
    assert c.agree_threshold == 0.2 and c.agree_accepted == 10 * SPOILS // 4


def test_the_calibration_keeps_its_threshold_and_prediction_and_the_reader_uses_them(tmp_path: Path) -> None:
    cal = calibration_for("layout-beside-4c")
    c = cal.confidence
    assert c is not None and c.held_out > 1000 and c.wrong == 0
    assert cal.thresholds.margin == c.threshold >= FLOOR
    assert cal.thresholds.agree == c.agree_threshold >= FLOOR and c.agree_accepted > 500
    assert 0 < c.predicted_error_rate <= 3.0 / c.accepted + 1e-12
    cal.save(tmp_path / "c.npz")
    back = Calibration.load(tmp_path / "c.npz")
    assert back.confidence == c and back.thresholds == cal.thresholds


def test_a_card_read_with_less_confidence_than_the_threshold_is_unreadable() -> None:
    """♠5 against ♣5, its twin but for the suit symbol: evidence giving ♠5 a normalised margin just under the
    learnt threshold is unreadable; the same evidence under a threshold below it reads ♠5."""
    cal = calibration_for("layout-beside-4c")
    th = replace(cal.thresholds, margin=0.3, agree=0.2)
    rec = Recogniser(replace(cal, thresholds=th))
    s5, c5 = int(Card.S5), int(Card.C5)
    distance = float(rec._distance[s5, c5])
    for needed, corners in ((th.agree, 4), (th.margin, 1)):  # every corner picks ♠5; one corner (one glared out)
        margin = needed - 0.02
        evidence = np.full((4, 52), 0.2, np.float32)
        evidence[:, s5] = 0.95
        evidence[:, c5] = 0.95 - margin * distance
        evidence[corners:] = 0.3  # washed out: no face there
        assert rec.decide(evidence, None).seen is Seen.UNREADABLE
        lower = Recogniser(replace(cal, thresholds=replace(th, margin=margin - 0.01, agree=margin - 0.01)))
        reading = lower.decide(evidence, None)
        assert reading.seen is Seen.CARD and reading.card == Card.S5


def test_corners_that_disagree_need_the_single_corner_margin_and_a_washed_out_corner_says_nothing() -> None:
    cal = calibration_for("layout-beside-4c")
    th = replace(cal.thresholds, margin=0.3, agree=0.15)
    rec = Recogniser(replace(cal, thresholds=th))
    s5, c5 = int(Card.S5), int(Card.C5)
    distance = float(rec._distance[s5, c5])
    evidence = np.full((2, 52), 0.2, np.float32)
    evidence[:, s5] = 0.95
    evidence[0, c5] = 0.95 - 0.5 * distance  # the first corner: ♠5 by a margin of 0.5
    evidence[1, c5] = 0.95 + 0.05 * distance  # the second: ♣5, just (its own margin -0.05, above the corner floor)
    reading = rec.decide(evidence, None)  # mean margin 0.225: above the agreement threshold, below the margin
    assert reading.seen is Seen.UNREADABLE and 0.2 < reading.confidence < 0.25
    evidence[1, c5] = 0.95 - 0.05 * distance  # the second corner picks ♠5 too: both agree
    assert rec.decide(evidence, None).card == Card.S5
    # a glare washes the second corner out (nothing there scores as a face): the first decides alone
    evidence[1] = 0.4
    reading = rec.decide(evidence, None)
    assert reading.seen is Seen.CARD and reading.card == Card.S5 and reading.confidence == pytest.approx(0.5, abs=1e-3)
    evidence[0] = 0.4  # both washed out: no face of this deck
    assert rec.decide(evidence, None).seen is Seen.OTHER


def test_the_judge_sees_the_predicted_error_rate_of_the_station() -> None:
    from drivers.kinds.camera import _confidence_facts

    cal = calibration_for("layout-jumbo-2c")
    assert cal.confidence is not None
    facts = _confidence_facts(cal)
    expected = f"{100 * cal.confidence.predicted_error_rate:.3f}"
    assert expected in facts["predicted_error_rate"] and facts["unreadable_below"] == f"{cal.thresholds.margin:.2f}"


def test_pooled_evidence_averages_each_corner_over_the_frames_that_read_it() -> None:
    """A 4-corner deck's frame read surely from two corners leaves the other two unread (NaN rows): pooling
    frames averages each corner over the frames that read it, and a card's score is over the corners read."""
    nan = float("nan")
    a = np.array([[1.0] * 52, [2.0] * 52, [nan] * 52, [nan] * 52], np.float32)
    b = np.array([[3.0] * 52, [4.0] * 52, [5.0] * 52, [nan] * 52], np.float32)
    pooled = pool([a, b])
    assert pooled[:3, 0].tolist() == [2.0, 3.0, 5.0] and bool(np.isnan(pooled[3]).all())
    assert card_scores(pooled)[0] == pytest.approx(10 / 3)
    assert card_scores(a)[0] == pytest.approx(1.5)
