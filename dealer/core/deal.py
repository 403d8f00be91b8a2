"""Hands and deals; PBN deal strings; the canonical 13-byte form (DESIGN.md §3)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .cards import RANK_CHARS, SEAT_CHARS, SUIT_SYMBOLS, Card, Seat, Suit
from .errors import CardTokenError, DealError, DuplicateCardError, HandSizeError

CANONICAL_SIZE = 13
UNKNOWN = 4  # seat code for a card whose hand is unknown in a partial deal


@dataclass(frozen=True, slots=True)
class Hand:
    """A set of cards held by one seat, kept sorted by suit then rank (♠A first)."""

    cards: tuple[Card, ...]

    @classmethod
    def of(cls, cards: Iterable[Card]) -> Hand:
        return cls(tuple(sorted(set(cards))))

    def __len__(self) -> int:
        return len(self.cards)

    def __contains__(self, card: object) -> bool:
        return card in self.cards

    def suit(self, suit: Suit) -> tuple[Card, ...]:
        return tuple(c for c in self.cards if c // 13 == suit)

    @property
    def hcp(self) -> int:
        return sum(c.hcp for c in self.cards)

    @property
    def lengths(self) -> tuple[int, int, int, int]:
        """Suit lengths in the order ♠ ♥ ♦ ♣."""
        n = [0, 0, 0, 0]
        for c in self.cards:
            n[c // 13] += 1
        return (n[0], n[1], n[2], n[3])

    @property
    def pattern(self) -> tuple[int, ...]:
        """Suit lengths sorted from longest: (4, 4, 3, 2)."""
        return tuple(sorted(self.lengths, reverse=True))

    @property
    def pattern_name(self) -> str:
        return "-".join(str(n) for n in self.pattern)

    def holding(self, suit: Suit) -> str:
        return "".join(RANK_CHARS[c % 13] for c in self.cards if c // 13 == suit)

    def to_pbn(self) -> str:
        """``AJ9.K9542.Q.AK93``: suits ♠.♥.♦.♣, ranks descending."""
        return ".".join(self.holding(s) for s in Suit)


class Deal:
    """A complete deal: the seat of each of the 52 cards, in card-index order.

    Immutable and hashable; two deals are equal when every card is in the same seat.
    """

    __slots__ = ("_seats",)
    _seats: bytes

    def __init__(self, seats: bytes | Sequence[int]) -> None:
        raw = bytes(seats)
        if len(raw) != 52:
            raise DealError("a deal assigns 52 cards, got {n_raw}", n_raw=len(raw))
        counts = [raw.count(seat) for seat in range(4)]
        if sum(counts) != 52:
            bad = next(i for i, s in enumerate(raw) if s > 3)
            raise DealError("card {name} has no seat (value {raw}, allowed 0..3)", name=Card(bad).name, raw=raw[bad])
        for seat in Seat:
            if counts[seat] != 13:
                raise HandSizeError(seat.letter, counts[seat])
        object.__setattr__(self, "_seats", raw)

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def _trusted(cls, seats: bytes) -> Deal:
        deal = cls.__new__(cls)
        object.__setattr__(deal, "_seats", seats)
        return deal

    @classmethod
    def from_hands(cls, hands: Mapping[Seat, Iterable[Card]]) -> Deal:
        seats = bytearray([UNKNOWN] * 52)
        for seat in Seat:
            count = 0
            for card in hands.get(seat, ()):
                if seats[card] != UNKNOWN:
                    raise DuplicateCardError(Card(card).name, SEAT_CHARS[seats[card]], seat.letter)
                seats[card] = seat
                count += 1
            if count != 13:
                raise HandSizeError(seat.letter, count)
        return cls(bytes(seats))

    @classmethod
    def from_pbn(cls, text: str) -> Deal:
        fast = fast_pbn_deal(text)
        if fast is not None:
            return fast
        return parse_pbn_deal(text, allow_partial=False).complete()

    @classmethod
    def from_bytes(cls, data: bytes) -> Deal:
        """Decode the canonical 13-byte form."""
        if len(data) != CANONICAL_SIZE:
            raise DealError(
                "canonical deal is {CANONICAL_SIZE} bytes, got {n_data}",
                CANONICAL_SIZE=CANONICAL_SIZE,
                n_data=len(data),
            )
        return cls(_UNPACK_TABLE_JOIN(data))

    @classmethod
    def from_rank(cls, number: int) -> Deal:
        from .numbering import deal_from_rank

        return deal_from_rank(number)

    # -- views --------------------------------------------------------------------------------------
    @property
    def seats(self) -> bytes:
        """Seat code (0..3) of every card in index order."""
        return self._seats

    def seat_of(self, card: Card | int) -> Seat:
        return Seat(self._seats[card])

    def hand(self, seat: Seat) -> Hand:
        return Hand(tuple(Card(i) for i, s in enumerate(self._seats) if s == seat))

    def hands(self) -> dict[Seat, Hand]:
        return {seat: self.hand(seat) for seat in Seat}

    def hcp(self) -> dict[Seat, int]:
        points = [0, 0, 0, 0]
        for i, s in enumerate(self._seats):
            r = i % 13
            if r < 4:
                points[s] += 4 - r
        return {seat: points[seat] for seat in Seat}

    def to_bytes(self) -> bytes:
        """The canonical 13-byte form: two bits per card, first card in the top bits of byte 0."""
        s = self._seats
        return bytes((s[i] << 6) | (s[i + 1] << 4) | (s[i + 2] << 2) | s[i + 3] for i in range(0, 52, 4))

    def to_pbn(self, first: Seat = Seat.N) -> str:
        return format_pbn_deal(self._seats, first)

    def rank(self) -> int:
        from .numbering import deal_rank

        return deal_rank(self)

    def rotated(self, steps: int) -> Deal:
        """The same cards moved ``steps`` seats clockwise (N's hand to E for steps=1)."""
        return Deal._trusted(bytes((s + steps) % 4 for s in self._seats))

    # -- protocol -----------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deal) and other._seats == self._seats

    def __hash__(self) -> int:
        return hash(self._seats)

    def __repr__(self) -> str:
        return f"Deal({self.to_pbn()!r})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Deal is immutable")


def _build_unpack() -> list[bytes]:
    return [bytes(((b >> 6) & 3, (b >> 4) & 3, (b >> 2) & 3, b & 3)) for b in range(256)]


_UNPACK = _build_unpack()


def _UNPACK_TABLE_JOIN(data: bytes) -> bytes:
    return b"".join(_UNPACK[b] for b in data)


@dataclass(frozen=True, slots=True)
class PartialDeal:
    """A deal where some hands may be unknown (``-`` in PBN). ``seats`` uses 4 for an unknown card."""

    seats: bytes

    @property
    def known_seats(self) -> frozenset[Seat]:
        return frozenset(Seat(s) for s in set(self.seats) if s != UNKNOWN)

    @property
    def is_complete(self) -> bool:
        return UNKNOWN not in self.seats

    def complete(self) -> Deal:
        """The full deal; a single unknown hand is filled with the 13 cards left over."""
        seats = self.seats
        if UNKNOWN not in seats:
            return Deal(seats)
        known = self.known_seats
        missing = [seat for seat in Seat if seat not in known]
        if len(missing) == 1:
            seats = bytes(missing[0] if s == UNKNOWN else s for s in seats)
        elif missing:
            names = " ".join(s.letter for s in missing)
            raise DealError("hands {names} are unknown; a complete deal needs at least three hands", names=names)
        return Deal(seats)

    def to_pbn(self, first: Seat = Seat.N) -> str:
        return format_pbn_deal(self.seats, first)


_RANK_INDEX = {ch: i for i, ch in enumerate(RANK_CHARS)}
_RANK_LOWER = {ch.lower(): i for ch, i in _RANK_INDEX.items()}
_RANK_INDEX.update(_RANK_LOWER)


_SEAT_OF = {"N": 0, "E": 1, "S": 2, "W": 3, "n": 0, "e": 1, "s": 2, "w": 3}


def fast_pbn_deal(value: str) -> Deal | None:
    """The common case ``X:h h h h``: four full, valid hands; None when anything differs.

    A fast path only: on None, ``parse_pbn_deal`` parses again and names what is wrong.
    """
    if len(value) < 2 or value[1] != ":":
        return None
    first = _SEAT_OF.get(value[0])
    hands = value[2:].split()
    if first is None or len(hands) != 4:
        return None
    seats = bytearray(b"\x04" * 52)
    ranks = _RANK_INDEX
    total = 0
    for k, hand in enumerate(hands):
        seat = (first + k) & 3
        suits = hand.split(".")
        if len(suits) != 4:
            return None
        for suit, holding in enumerate(suits):
            base = suit * 13
            total += len(holding)
            for ch in holding:
                r = ranks.get(ch)
                if r is None:
                    return None
                seats[base + r] = seat
    if total != 52 or UNKNOWN in seats:
        return None
    raw = bytes(seats)
    if raw.count(0) != 13 or raw.count(1) != 13 or raw.count(2) != 13:
        return None
    return Deal._trusted(raw)


def parse_pbn_deal(text: str, *, allow_partial: bool = True) -> PartialDeal:
    """Parse a PBN ``Deal`` value: ``"N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 ..."``.

    Any first seat, ranks in any order (``10`` accepted for ``T``), ``-`` for an unknown hand when
    ``allow_partial``. Errors name the token and its character position in ``text``.
    """
    src = text.strip()
    if len(src) < 2 or src[1] != ":" or src[0].upper() not in SEAT_CHARS:
        raise CardTokenError(src[:2] or src, 0, "deal must start with a seat and a colon, e.g. 'N:', got")
    first = SEAT_CHARS.index(src[0].upper())
    seats = bytearray([UNKNOWN] * 52)
    pos = 2
    hand_no = 0
    n = len(src)
    while pos < n and hand_no < 4:
        while pos < n and src[pos] in " \t":
            pos += 1
        if pos >= n:
            break
        start = pos
        while pos < n and src[pos] not in " \t":
            pos += 1
        token = src[start:pos]
        seat = (first + hand_no) % 4
        hand_no += 1
        if token == "-":
            if not allow_partial:
                raise CardTokenError(token, start, "hand {seat} is unknown ('-') in", seat=SEAT_CHARS[seat])
            continue
        _parse_hand_into(token, start, seat, seats)
    rest = src[pos:].strip()
    if rest:
        raise CardTokenError(rest, pos, "unexpected text after the fourth hand:")
    if hand_no < 4 and not allow_partial:
        raise CardTokenError(src, 0, "deal has {hand_no} hands, expected 4:", hand_no=hand_no)
    if hand_no == 0:
        raise CardTokenError(src, 0, "deal has no hands:")
    return PartialDeal(bytes(seats))


def _parse_hand_into(token: str, offset: int, seat: int, seats: bytearray) -> None:
    suits = token.split(".")
    if len(suits) != 4:
        raise CardTokenError(
            token, offset, "hand {seat} must have 4 suits separated by '.', got", seat=SEAT_CHARS[seat]
        )
    count = 0
    base = 0
    table = _RANK_INDEX
    for holding in suits:
        text = holding.replace("10", "T") if "1" in holding else holding
        for ch in text:
            rank = table.get(ch)
            if rank is None:
                raise CardTokenError(
                    SUIT_SYMBOLS[base // 13] + ch, _locate(token, offset, base // 13, ch), "unknown card token"
                )
            card = base + rank
            if seats[card] != UNKNOWN:
                raise DuplicateCardError(Card(card).name, SEAT_CHARS[seats[card]], SEAT_CHARS[seat])
            seats[card] = seat
        count += len(text)
        base += 13
    if count != 13:
        raise HandSizeError(SEAT_CHARS[seat], count)


def _locate(token: str, offset: int, suit: int, ch: str) -> int:
    """Character position in the deal text of the first ``ch`` in the given suit of a hand token."""
    start = 0
    for _ in range(suit):
        start = token.index(".", start) + 1
    return offset + token.index(ch, start)


def format_pbn_deal(seats: bytes, first: Seat = Seat.N) -> str:
    holdings: list[list[list[str]]] = [[[], [], [], []] for _ in range(5)]
    for card, seat in enumerate(seats):
        holdings[seat][card // 13].append(RANK_CHARS[card % 13])
    known = set(seats)
    hands = []
    for k in range(4):
        seat = (first + k) % 4
        hands.append(".".join("".join(h) for h in holdings[seat]) if seat in known else "-")
    return f"{SEAT_CHARS[first]}:" + " ".join(hands)
