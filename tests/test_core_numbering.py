import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import deals

from dealer.core import DEAL_COUNT, Deal, DealNumberError, Seat, deal_from_rank
from dealer.core.numbering import format_deal_number, parse_deal_number

VECTORS = json.loads((Path(__file__).parent / "data" / "bigdeal_goe.json").read_text())["vectors"]


def test_deal_count() -> None:
    assert DEAL_COUNT == 53_644_737_765_488_792_839_237_440_000


@pytest.mark.parametrize(("pbn", "goe"), VECTORS)
def test_agrees_with_big_deal_goe_output(pbn: str, goe: str) -> None:
    deal = Deal.from_pbn(pbn)
    assert format_deal_number(deal.rank()) == goe
    assert deal_from_rank(parse_deal_number(goe)) == deal


def test_rank_zero_and_last() -> None:
    first = deal_from_rank(0)
    assert [first.hand(s).lengths for s in Seat] == [(13, 0, 0, 0), (0, 13, 0, 0), (0, 0, 13, 0), (0, 0, 0, 13)]
    last = deal_from_rank(DEAL_COUNT - 1)
    assert [last.hand(s).lengths for s in Seat] == [(0, 0, 0, 13), (0, 0, 13, 0), (0, 13, 0, 0), (13, 0, 0, 0)]
    assert first.rank() == 0 and last.rank() == DEAL_COUNT - 1


@given(deals())
def test_rank_is_a_bijection_on_deals(deal: Deal) -> None:
    number = deal.rank()
    assert 0 <= number < DEAL_COUNT
    assert deal_from_rank(number) == deal


@given(st.integers(min_value=0, max_value=DEAL_COUNT - 1))
def test_unrank_then_rank(number: int) -> None:
    assert deal_from_rank(number).rank() == number


@pytest.mark.parametrize("bad", [-1, DEAL_COUNT, DEAL_COUNT + 5])
def test_out_of_range_numbers_refused(bad: int) -> None:
    with pytest.raises(DealNumberError, match="out of range"):
        deal_from_rank(bad)


def test_parse_deal_number_refuses_text() -> None:
    with pytest.raises(DealNumberError, match="not a whole number"):
        parse_deal_number("12a")
