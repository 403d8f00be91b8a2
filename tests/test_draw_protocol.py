"""The draw's rules: how many deals (1%..10% after rounding), the public value, the seed and ranges."""

from __future__ import annotations

from hashlib import sha256

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealer.draw.protocol import (
    DrawError,
    check_public_value,
    deals_to_draw,
    dice_spec,
    draw_seed,
    drawn_ids,
    named_spec,
    public_value,
    to_ranges,
)


def test_share_rounds_half_up_and_must_stay_within_1_to_10_percent() -> None:
    assert deals_to_draw(1000, share_percent=2.5) == 25
    assert deals_to_draw(1010, share_percent=5) == 51  # 50.5 -> 51
    assert deals_to_draw(150, share_percent=1) == 2  # 1.5 -> 2 = 1.33%
    assert deals_to_draw(1000, count=100) == 100
    with pytest.raises(DrawError, match=r"0\.5% of 1000 eligible deals rounds to 5 deals = 0\.50%.*between 10 and 100"):
        deals_to_draw(1000, share_percent=0.5)
    with pytest.raises(DrawError, match=r"101 deals = 10\.10% of 1000.*between 10 and 100"):
        deals_to_draw(1000, count=101)
    with pytest.raises(DrawError, match="too small: 9 eligible"):
        deals_to_draw(9, count=1)
    with pytest.raises(DrawError, match="no eligible deals"):
        deals_to_draw(0, share_percent=5)
    with pytest.raises(DrawError, match="either"):
        deals_to_draw(100, share_percent=5, count=5)
    # 1% of 250 = 2.5 -> 3 (1.2%) is fine; 10% of 15 = 1.5 -> 2 = 13.3% is refused
    assert deals_to_draw(250, share_percent=1) == 3
    with pytest.raises(DrawError, match=r"13\.33%"):
        deals_to_draw(15, share_percent=10)


@given(st.integers(10, 10**6), st.integers(1, 10))
def test_share_is_drawn_exactly_when_its_rounding_stays_in_range(eligible: int, percent: int) -> None:
    rounded = (2 * percent * eligible + 100) // 200  # percent/100 * eligible, rounded half up
    fits = rounded >= 1 and eligible <= 100 * rounded <= 10 * eligible
    if fits:
        assert deals_to_draw(eligible, share_percent=percent) == rounded
    else:
        with pytest.raises(DrawError, match=f"rounds to {rounded} deals"):
            deals_to_draw(eligible, share_percent=percent)


def test_dice_public_value() -> None:
    spec = dice_spec(["Ann", "Boris"], 4)
    assert public_value(spec, dice=["1234", "5 6 7 8"]) == "1234/5678"
    check_public_value(spec, "1234/5678")
    for bad in (["123", "5678"], ["1234"], ["12a4", "5678"]):
        with pytest.raises(DrawError):
            public_value(spec, dice=bad)
    with pytest.raises(DrawError, match="dice"):
        public_value(spec, named="42")
    with pytest.raises(DrawError, match="once"):
        dice_spec(["Ann", "Ann"], 4)


def test_named_public_value() -> None:
    spec = named_spec("Russian Lotto draw 1600, first 10 numbers")
    assert public_value(spec, named=" 01 17 33 ") == "01 17 33"
    with pytest.raises(DrawError):
        public_value(spec, named="  ")
    with pytest.raises(DrawError):
        check_public_value(spec, " 01")


def test_seed_is_sha256_of_k_v_root_label() -> None:
    k, root = bytes(range(32)), bytes(32)
    assert draw_seed(k, "12/34", root, "S1") == sha256(k + b"12/34" + root + b"S1").digest()
    with pytest.raises(DrawError):
        draw_seed(b"short", "1", root, "S1")


def test_ranges_and_positions_map_into_the_eligible_set() -> None:
    ids = [1, 2, 3, 7, 8, 10]
    ranges = to_ranges(ids)
    assert ranges == [[1, 3], [7, 8], [10, 10]]
    picks = drawn_ids(b"\x01" * 32, ranges, len(ids), 6)
    assert sorted(i for _, i in picks) == ids
    assert all(ids[p - 1] == i for p, i in picks)
