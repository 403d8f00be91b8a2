import pytest
from hypothesis import given
from strategies import deals, seats

from dealer.core import (
    CardTokenError,
    Deal,
    DealError,
    DuplicateCardError,
    HandSizeError,
    Seat,
    parse_pbn_deal,
)

SAMPLE = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84"


def test_sample_deal_hcp_and_hands() -> None:
    deal = Deal.from_pbn(SAMPLE)
    assert deal.hcp() == {Seat.N: 17, Seat.E: 9, Seat.S: 7, Seat.W: 7}
    assert deal.hand(Seat.N).to_pbn() == "AJ9.K9542.Q.AK93"
    assert deal.hand(Seat.S).pattern == (6, 3, 2, 2)
    assert deal.hand(Seat.E).pattern_name == "6-4-2-1"
    assert deal.hand(Seat.W).lengths == (3, 2, 4, 4)


def test_any_first_seat_and_rank_order() -> None:
    east_first = "E:K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84 AJ9.K9542.Q.AK93"
    scrambled = "N:9AJ.2459K.Q.3K9A K.67JQ.36789K.57 3456TQ.TA.TJ.26T 278.38.2A45.JQ48"
    assert Deal.from_pbn(east_first) == Deal.from_pbn(SAMPLE)
    assert Deal.from_pbn(scrambled) == Deal.from_pbn(SAMPLE)
    with_tens = "n:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 Q106543.A10.J10.1062 872.83.A542.QJ84"
    assert Deal.from_pbn(with_tens) == Deal.from_pbn(SAMPLE)


def test_format_with_chosen_first_seat_ranks_descending() -> None:
    deal = Deal.from_pbn(SAMPLE)
    assert deal.to_pbn(Seat.W) == "W:872.83.A542.QJ84 AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62"


@given(deals(), seats)
def test_pbn_round_trip_every_first_seat(deal: Deal, first: Seat) -> None:
    text = deal.to_pbn(first)
    assert text[0] == first.letter
    assert Deal.from_pbn(text) == deal


@given(deals())
def test_canonical_bytes_bijection(deal: Deal) -> None:
    data = deal.to_bytes()
    assert len(data) == 13
    assert Deal.from_bytes(data) == deal
    # first card in the two most significant bits of the first byte
    assert data[0] >> 6 == deal.seats[0]


def test_canonical_bytes_layout_known() -> None:
    deal = Deal.from_rank(0)  # N spades, E hearts, S diamonds, W clubs
    assert deal.to_bytes() == bytes.fromhex("000000 15 5555 5A AAAA AB FFFFFF")


def test_partial_deal_with_unknown_hand() -> None:
    partial = parse_pbn_deal("N:AJ9.K9542.Q.AK93 - QT6543.AT.JT.T62 872.83.A542.QJ84")
    assert partial.known_seats == {Seat.N, Seat.S, Seat.W}
    assert partial.complete() == Deal.from_pbn(SAMPLE)
    assert partial.to_pbn() == "N:AJ9.K9542.Q.AK93 - QT6543.AT.JT.T62 872.83.A542.QJ84"
    with pytest.raises(CardTokenError, match="unknown"):
        Deal.from_pbn("N:AJ9.K9542.Q.AK93 - QT6543.AT.JT.T62 872.83.A542.QJ84")
    with pytest.raises(DealError, match="hands E W are unknown"):
        parse_pbn_deal("N:AJ9.K9542.Q.AK93 - QT6543.AT.JT.T62 -").complete()


def test_duplicate_card_is_named() -> None:
    bad = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ8A"
    with pytest.raises(DuplicateCardError, match="duplicate card CA: in N and W") as info:
        Deal.from_pbn(bad)
    assert info.value.card == "CA"


def test_wrong_count_names_seat_and_count() -> None:
    short = "N:AJ9.K9542.Q.AK9 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84"
    with pytest.raises(HandSizeError, match="hand N has 12 cards, expected 13") as info:
        Deal.from_pbn(short)
    assert (info.value.seat, info.value.count) == ("N", 12)


def test_unknown_token_names_token_and_position() -> None:
    bad = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJX4"
    with pytest.raises(CardTokenError) as info:
        Deal.from_pbn(bad)
    assert info.value.token == "♣X"
    assert bad[info.value.position] == "X"


def test_hand_with_three_suits_is_refused() -> None:
    with pytest.raises(CardTokenError, match="4 suits"):
        Deal.from_pbn("N:AJ9.K9542.QAK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84")


def test_deal_constructor_validates_counts() -> None:
    with pytest.raises(HandSizeError):
        Deal(bytes([0] * 14 + [1] * 12 + [2] * 13 + [3] * 13))
    with pytest.raises(DealError, match="52 cards"):
        Deal(bytes(13))
    deal = Deal.from_pbn(SAMPLE)
    with pytest.raises(AttributeError):
        deal._seats = b""
    assert deal.rotated(1).hand(Seat.E) == deal.hand(Seat.N)
