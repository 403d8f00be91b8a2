"""Shufflers: fair CSPRNG shuffles are uniform and reproducible by seed; GSR riffles behave as riffles."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dealer.audit.shufflers import (
    FairShuffler,
    GsrShuffler,
    ShufflerSpecError,
    collect_hands,
    deal_from_order,
    gsr_riffle,
    parse_shuffler,
    seats_from_orders,
    simulator_shuffler,
)
from dealer.core import Seat


def rising_sequences(deck: np.ndarray, reference: np.ndarray) -> int:
    """Rising sequences of ``deck`` relative to ``reference`` (Bayer–Diaconis)."""
    pos = np.empty(52, dtype=int)
    pos[deck] = np.arange(52)
    where = pos[reference]  # new position of the reference's i-th card
    return 1 + int((np.diff(where) < 0).sum())


@given(st.permutations(list(range(52))))
def test_deal_from_order_deals_clockwise_from_north(order: list[int]) -> None:
    deal = deal_from_order(order)
    for t, card in enumerate(order):
        assert deal.seat_of(card) == Seat(t % 4)
    np.testing.assert_array_equal(seats_from_orders(np.array([order]))[0], np.frombuffer(deal.seats, np.uint8))


def test_fair_shuffler_is_reproducible_by_seed_and_uniform() -> None:
    a = FairShuffler(b"seed").orders(5)
    b = FairShuffler(b"seed").orders(5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, FairShuffler(b"other").orders(5))
    assert all(sorted(row) == list(range(52)) for row in FairShuffler().orders(3))  # os.urandom keys
    orders = FairShuffler(b"uniform").orders(5200)
    counts = np.bincount(np.argmax(orders == 0, axis=1), minlength=52)  # position of ♠A
    assert stats.chisquare(counts).pvalue > 1e-4


def test_one_riffle_leaves_at_most_two_rising_sequences() -> None:
    rng = np.random.default_rng(1)
    deck = np.arange(52)
    for _ in range(200):
        riffled = gsr_riffle(deck, rng)
        assert sorted(riffled) == list(range(52))
        assert rising_sequences(riffled, deck) <= 2
    three = deck
    for _ in range(3):
        three = gsr_riffle(three, rng)
    assert rising_sequences(three, deck) <= 8


def test_gsr_shuffler_riffles_the_collected_hands() -> None:
    zero = GsrShuffler(0)
    first = zero.next_order()
    np.testing.assert_array_equal(first, np.arange(52))  # a new pack, not shuffled
    second = zero.next_order()
    np.testing.assert_array_equal(second, collect_hands(first))
    assert list(second[:13]) == list(range(0, 52, 4))  # North's pocket first
    one = GsrShuffler(1, seed=3)
    previous = one.next_order()
    for _ in range(20):
        current = one.next_order()
        assert rising_sequences(current, collect_hands(previous)) <= 2
        previous = current


def test_parse_shuffler() -> None:
    assert isinstance(parse_shuffler("fair"), FairShuffler)
    gsr = parse_shuffler("gsr:3:7")
    assert isinstance(gsr, GsrShuffler) and gsr.riffles == 3
    np.testing.assert_array_equal(parse_shuffler("fair:abcd").next_order(), FairShuffler(b"\xab\xcd").next_order())
    for bad in ("gsr", "gsr:x", "random", "fair:abc", "gsr:65"):
        with pytest.raises(ShufflerSpecError):
            parse_shuffler(bad)


def test_simulator_shuffler_feeds_a_riffled_pack_of_the_previous_deal() -> None:
    shuffle = simulator_shuffler("gsr:1:9")
    first = shuffle(range(52))
    assert sorted(first) == list(range(52))
    second = shuffle(range(52))
    assert rising_sequences(np.array(second), collect_hands(np.array(first))) <= 2
    fair = simulator_shuffler("fair")
    assert sorted(fair(range(52))) == list(range(52))
    with pytest.raises(ShufflerSpecError, match="full pack"):
        fair(range(10))
