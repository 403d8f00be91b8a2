"""Cards, suits, ranks and seats with the project's fixed numbering (DESIGN.md §3).

Card index 0..51 runs ♠A ♠K … ♠2 ♥A … ♥2 ♦A … ♦2 ♣A … ♣2 (Big Deal's card number minus one).
Seats: N=0, E=1, S=2, W=3.
"""

from __future__ import annotations

from enum import IntEnum
from functools import cache

RANK_CHARS = "AKQJT98765432"
SUIT_CHARS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
SEAT_CHARS = "NESW"


class Suit(IntEnum):
    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        return SUIT_CHARS[self]

    @property
    def symbol(self) -> str:
        return SUIT_SYMBOLS[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        key = text.strip().upper()
        if len(key) == 1 and key in SUIT_CHARS:
            return cls(SUIT_CHARS.index(key))
        if len(key) == 1 and key in SUIT_SYMBOLS:
            return cls(SUIT_SYMBOLS.index(key))
        raise ValueError(f"unknown suit {text!r}: expected one of S H D C or ♠ ♥ ♦ ♣")


class Rank(IntEnum):
    """Rank by position in a suit: ACE=0 is the highest, TWO=12 the lowest."""

    ACE = 0
    KING = 1
    QUEEN = 2
    JACK = 3
    TEN = 4
    NINE = 5
    EIGHT = 6
    SEVEN = 7
    SIX = 8
    FIVE = 9
    FOUR = 10
    THREE = 11
    TWO = 12

    @property
    def char(self) -> str:
        return RANK_CHARS[self]

    @property
    def hcp(self) -> int:
        """Milton Work points: A 4, K 3, Q 2, J 1."""
        return (4, 3, 2, 1)[self] if self <= Rank.JACK else 0

    @classmethod
    def parse(cls, text: str) -> Rank:
        key = text.strip().upper()
        if key == "10":
            key = "T"
        if len(key) == 1 and key in RANK_CHARS:
            return cls(RANK_CHARS.index(key))
        raise ValueError(f"unknown rank {text!r}: expected one of A K Q J T(10) 9..2")


class Seat(IntEnum):
    N = 0
    E = 1
    S = 2
    W = 3

    @property
    def letter(self) -> str:
        return SEAT_CHARS[self]

    @property
    def next(self) -> Seat:
        """The seat to the left (clockwise)."""
        return Seat((self + 1) % 4)

    @property
    def partner(self) -> Seat:
        return Seat((self + 2) % 4)

    def clockwise_from(self) -> tuple[Seat, Seat, Seat, Seat]:
        """The four seats in dealing order starting with this one."""
        return (self, Seat((self + 1) % 4), Seat((self + 2) % 4), Seat((self + 3) % 4))

    @classmethod
    def parse(cls, text: str) -> Seat:
        key = text.strip().upper()[:1]
        if key and key in SEAT_CHARS:
            return cls(SEAT_CHARS.index(key))
        raise ValueError(f"unknown seat {text!r}: expected one of N E S W")


class Card(IntEnum):
    """A card is its index 0..51; members are named like ``SA``, ``HT``, ``C2``."""

    # fmt: off
    SA = 0; SK = 1; SQ = 2; SJ = 3; ST = 4; S9 = 5; S8 = 6; S7 = 7; S6 = 8; S5 = 9; S4 = 10; S3 = 11; S2 = 12  # noqa: E702
    HA = 13; HK = 14; HQ = 15; HJ = 16; HT = 17; H9 = 18; H8 = 19; H7 = 20; H6 = 21; H5 = 22; H4 = 23; H3 = 24; H2 = 25  # noqa: E702
    DA = 26; DK = 27; DQ = 28; DJ = 29; DT = 30; D9 = 31; D8 = 32; D7 = 33; D6 = 34; D5 = 35; D4 = 36; D3 = 37; D2 = 38  # noqa: E702
    CA = 39; CK = 40; CQ = 41; CJ = 42; CT = 43; C9 = 44; C8 = 45; C7 = 46; C6 = 47; C5 = 48; C4 = 49; C3 = 50; C2 = 51  # noqa: E702
    # fmt: on

    @property
    def suit(self) -> Suit:
        return Suit(self // 13)

    @property
    def rank(self) -> Rank:
        return Rank(self % 13)

    @property
    def hcp(self) -> int:
        return self.rank.hcp

    @property
    def code(self) -> str:
        """Two-letter code, suit then rank: ``SA``, ``HT``, ``C2``."""
        return self.name

    @property
    def pretty(self) -> str:
        return f"{self.suit.symbol}{self.rank.char}"

    @property
    def bigdeal_number(self) -> int:
        """Big Deal's card number 1..52."""
        return int(self) + 1

    @classmethod
    def of(cls, suit: Suit, rank: Rank) -> Card:
        return cls(int(suit) * 13 + int(rank))

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``SA``, ``S10``, ``♠A`` or rank-first ``AS``."""
        key = text.strip().upper()
        return _parse_card(key)


@cache
def _parse_card(key: str) -> Card:
    if len(key) >= 2:
        head, tail = key[0], key[1:]
        if head in SUIT_CHARS or head in SUIT_SYMBOLS:
            return Card.of(Suit.parse(head), Rank.parse(tail))
        last, rest = key[-1], key[:-1]
        if last in SUIT_CHARS or last in SUIT_SYMBOLS:
            return Card.of(Suit.parse(last), Rank.parse(rest))
    raise ValueError(f"unknown card {key!r}: expected a suit and a rank such as SA, HT, D10 or ♣2")


ALL_CARDS: tuple[Card, ...] = tuple(Card)
SEATS: tuple[Seat, ...] = tuple(Seat)
SUITS: tuple[Suit, ...] = tuple(Suit)
