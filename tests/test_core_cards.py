import pytest

from dealer.core import Card, Rank, Seat, Suit


def test_card_numbering_follows_design() -> None:
    assert [int(c) for c in (Card.SA, Card.SK, Card.S2)] == [0, 1, 12]
    assert [int(c) for c in (Card.HA, Card.DA, Card.CA, Card.C2)] == [13, 26, 39, 51]
    assert [c.bigdeal_number for c in (Card.SA, Card.C2)] == [1, 52]
    for card in Card:
        assert Card.of(card.suit, card.rank) is card
        assert card.code == card.suit.letter + card.rank.char


@pytest.mark.parametrize(
    ("text", "card"),
    [("SA", Card.SA), ("ht", Card.HT), ("H10", Card.HT), ("♣2", Card.C2), ("AS", Card.SA), ("10d", Card.DT)],
)
def test_card_parse(text: str, card: Card) -> None:
    assert Card.parse(text) is card


@pytest.mark.parametrize("text", ["", "S", "SX", "X2", "S11", "♠"])
def test_card_parse_refuses_with_token(text: str) -> None:
    with pytest.raises(ValueError, match="unknown"):
        Card.parse(text)


def test_hcp_and_seats() -> None:
    assert [r.hcp for r in Rank][:5] == [4, 3, 2, 1, 0]
    assert sum(c.hcp for c in Card) == 40
    assert Seat.N.next is Seat.E and Seat.W.next is Seat.N and Seat.E.partner is Seat.W
    assert Seat.S.clockwise_from() == (Seat.S, Seat.W, Seat.N, Seat.E)
    assert Suit.parse("♥") is Suit.HEARTS and Seat.parse("west") is Seat.W
