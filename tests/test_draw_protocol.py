"""The draw's rules: the quota, the public value's one canonical form, the seed and the eligible set."""

from __future__ import annotations

import math
from hashlib import sha256

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealer.draw.protocol import (
    DrawError,
    check_public_value,
    check_quota,
    dice_spec,
    draw_seed,
    drawn_ids,
    eligible_ranges,
    named_spec,
    percent_text,
    public_value,
    quota_limit,
    share_basis_points,
    to_ranges,
)


def test_quota_is_a_share_of_the_whole_sealed_bank() -> None:
    assert share_basis_points(5) == 500 and share_basis_points(2.5) == 250 and share_basis_points("10") == 1000
    for bad in (0.99, 10.01, 2.555):
        with pytest.raises(DrawError):
            share_basis_points(bad)
    assert [percent_text(x) for x in (1000, 500, 250, 125, 105)] == ["10%", "5%", "2.5%", "1.25%", "1.05%"]
    assert quota_limit(3360, 500) == 168  # 3360 × 5 / 100
    assert quota_limit(3399, 500) == 169  # floor(169.95)
    check_quota(3360, 500, 144, 24)
    with pytest.raises(
        DrawError, match=r"192 of 3360 sealed deals = 5\.71%, above the regulation's 5%.*at most 168.*168 are"
    ):
        check_quota(3360, 500, 168, 24)
    with pytest.raises(DrawError, match="at least one deal"):
        check_quota(3360, 500, 0, 0)


def test_dice_bits_and_the_32_bit_floor() -> None:
    spec = dice_spec(["Ann", "Boris", "Vera"], 5)  # 3 witnesses × 5 rolls of a d6
    assert spec.outcomes() == 6**15
    assert round(spec.bits(), 1) == 38.8  # 15 × log2(6) = 38.77
    with pytest.raises(DrawError, match=r"carries 31\.0 bits.*at least 32"):
        dice_spec(["Ann"], 12)  # 12 × 2.585 = 31.02
    assert round(dice_spec(["Ann", "Boris"], 5, faces=10).bits(), 1) == 33.2
    with pytest.raises(DrawError, match="6 .* or 10"):
        dice_spec(["Ann", "Boris"], 20, faces=8)
    with pytest.raises(DrawError, match="once"):
        dice_spec(["Ann", "Ann"], 20)


def test_named_bits_follow_the_committed_grammar() -> None:
    lotto = named_spec("Russian Lotto draw 1600, first 10 numbers as drawn", 10, 1, 90, order="as drawn")
    assert lotto.outcomes() == math.perm(90, 10) and lotto.width == 2
    with pytest.raises(DrawError, match=r"23\.7 bits"):  # C(49, 6) = 13,983,816
        named_spec("6 of 49", count=6, minimum=1, maximum=49)
    assert named_spec("6 of 49, twice", 12, 1, 49, distinct=False, order="as drawn").outcomes() == 49**12


def test_dice_entry_is_normalised_and_the_canonical_form_alone_verifies() -> None:
    spec = dice_spec(["Ann", "Boris"], 8)
    canonical = "12345612/65432165"
    for typed in (
        ["12345612", "65432165"],
        ["1234 5612", " 6543,2165 "],
        ["12345612 65432165"],
        ["1234-5612/6543-2165"],
        ["\u0661\u0662\u0663\u0664\u0665\u0666\u0661\u0662", "65432165"],  # Arabic-Indic digits typed
        ["12345612\u00a0", "6543\u20092165"],  # no-break and thin spaces
    ):
        assert public_value(spec, dice=typed) == canonical, typed
    check_public_value(spec, canonical)
    for bad_entry, why in ((["1234561", "65432165"], "7 digits"), (["12345670", "65432165"], "roll 7 is 7"),
                           (["1234561x", "65432165"], "LATIN SMALL LETTER X")):  # fmt: skip
        with pytest.raises(DrawError, match=why):
            public_value(spec, dice=bad_entry)


NON_CANONICAL_DICE = [
    "12345612 /65432165", " 12345612/65432165", "12345612/65432165 ", "12345612\t/65432165", "12345612 65432165",
    "12345612-65432165", "12345612,65432165", "12345612//65432165", "\u0661\u0662345612/65432165",
    "\uff11\uff12345612/65432165", "12345612\u00a0/65432165", "12345612/\u200965432165", "012345612/65432165",
    "12345612/65432165/", "12345612/6543216.0", "1.2345612e7/65432165", "12345612/65432170",
]  # fmt: skip


@pytest.mark.parametrize("value", NON_CANONICAL_DICE)
def test_verifier_refuses_every_other_form_of_dice(value: str) -> None:
    with pytest.raises(DrawError, match="V = "):
        check_public_value(dice_spec(["Ann", "Boris"], 8), value)


def test_named_entry_normalised_and_refused_otherwise() -> None:
    spec = named_spec("Lotto 1600 first 10 numbers as drawn", 10, 1, 90, order="as drawn")
    canonical = "07-90-01-33-12-45-08-61-02-19"
    assert public_value(spec, named="7, 90, 1, 33, 12, 45, 8, 61, 2, 19") == canonical
    assert public_value(spec, named="07 90 01 33 12 45 08 61 02 19") == canonical
    check_public_value(spec, canonical)
    for bad in (
        "7-90-01-33-12-45-08-61-02-19", "007-90-01-33-12-45-08-61-02-19", "07.0-90-01-33-12-45-08-61-02-19",
        "07-90-01-33-12-45-08-61-02-19 ", "07 - 90-01-33-12-45-08-61-02-19", "07\u201390-01-33-12-45-08-61-02-19",
        "\u0660\u0667-90-01-33-12-45-08-61-02-19", "07-90-01-33-12-45-08-61-02", "07-91-01-33-12-45-08-61-02-19",
        "07-90-07-33-12-45-08-61-02-19", "7e0-90-01-33-12-45-08-61-02-19", "07-90-01-33-12-45-08-61-02-1E",
    ):  # fmt: skip
        with pytest.raises(DrawError):
            check_public_value(spec, bad)
    asc = named_spec("Lotto 1600 first 10 numbers ascending", 10, 1, 90)
    assert public_value(asc, named="90 7 1 33 12 45 8 61 2 19") == "01-02-07-08-12-19-33-45-61-90"
    with pytest.raises(DrawError, match="not ascending"):
        check_public_value(asc, "90-01-02-07-08-12-19-33-45-61")
    with pytest.raises(DrawError, match="9 numbers"):
        public_value(asc, named="1 2 3 4 5 6 7 8 9")


@given(st.lists(st.integers(1, 6), min_size=16, max_size=16))
def test_one_outcome_has_exactly_one_canonical_value(rolls: list[int]) -> None:
    spec = dice_spec(["Ann", "Boris"], 8)
    digits = "".join(map(str, rolls))
    canonical = digits[:8] + "/" + digits[8:]
    assert public_value(spec, dice=[" ".join(digits)]) == canonical
    check_public_value(spec, canonical)


def test_seed_is_sha256_of_k_v_root_label() -> None:
    k, root = bytes(range(32)), bytes(32)
    assert draw_seed(k, "12/34", root, "S1") == sha256(k + b"12/34" + root + b"S1").digest()
    with pytest.raises(DrawError):
        draw_seed(b"short", "1", root, "S1")


def test_eligible_set_is_the_sealed_deals_minus_the_chain() -> None:
    assert eligible_ranges(10, [4, 5, 9]) == [[1, 3], [6, 8], [10, 10]]
    assert eligible_ranges(10, []) == [[1, 10]]
    with pytest.raises(DrawError, match="beyond the sealed deals"):
        eligible_ranges(10, [12])
    ids = [1, 2, 3, 7, 8, 10]
    ranges = to_ranges(ids)
    assert ranges == [[1, 3], [7, 8], [10, 10]]
    picks = drawn_ids(b"\x01" * 32, ranges, len(ids), 6)
    assert sorted(i for _, i in picks) == ids
    assert all(ids[p - 1] == i for p, i in picks)
