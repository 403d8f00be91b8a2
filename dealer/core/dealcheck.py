"""The card checker: is this stream of cards one whole deal? Sans-I/O, one class for every reader of cards.

The dealing-machine driver, every station's dealing session (machine or camera under manual dealing) and board
making feed the cards they are told of, one at a time, to a :class:`DealCheck`; it answers ``None`` (the card
is fine) or a :class:`Verdict` naming the first rule broken. The rules: positions come in order (0, 1, 2, …),
at most 52 cards, every card readable and seen once, at most 13 per seat, each card in the seat the intended
deal says (board making), and at the end all 52 read, the device's own count 52 and its record of the deal
equal to what was read. Each caller words the verdict in its own vocabulary (a fault, a void reason, a foul).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .deal import Deal

CARDS = 52
PER_SEAT = 13
_UNSEATED = 4
RECORD_SIZE = 13


class Problem(Enum):
    EXTRA = "extra"  # a 53rd card
    REPEATED = "repeated"  # a position already passed
    GAP = "gap"  # a position beyond the next one (cards were skipped)
    UNREADABLE = "unreadable"
    NO_POCKET = "no_pocket"  # a machine reported a card without its pocket
    DUPLICATE = "duplicate"  # a card seen twice
    WRONG_POCKET = "wrong_pocket"  # not the seat the intended deal puts it in
    SEAT_FULL = "seat_full"  # a 14th card to one seat
    SHORT = "short"  # the deal ended before 52 cards were read
    COUNT = "count"  # the device counted other than 52 cards
    RECORD = "record"  # the device's own record of the deal differs from what was read


@dataclass(frozen=True, slots=True)
class Verdict:
    """The first rule a card (or the end of the deal) broke.

    ``seat`` is where the card went; ``expected`` the seat it should have gone to (the intended deal's, the
    device record's for RECORD and SHORT) or, for DUPLICATE, where it went the first time; ``number`` is the
    expected position (GAP, REPEATED), the cards read (SHORT) or the device's count (COUNT).
    """

    problem: Problem
    position: int | None = None
    card: int | None = None
    seat: int | None = None
    expected: int | None = None
    number: int | None = None


def record_seats(record: bytes) -> bytes | None:
    """The seat of each card in a 13-byte deal record (two bits per card, first card in the top bits)."""
    if len(record) != RECORD_SIZE:
        return None
    return bytes((record[i >> 2] >> (6 - 2 * (i & 3))) & 3 for i in range(CARDS))


class DealCheck:
    """Checks the cards of one deal as they come.

    ``target``: the deal the cards must make (board making), else any deal is fine. ``first_seat``: for
    manual dealing, a card reported without a pocket goes to seat ``(first_seat + position) mod 4``; without
    it such a card is a NO_POCKET problem.
    """

    def __init__(self, target: Deal | None = None, first_seat: int | None = None) -> None:
        self.target = target
        self.first_seat = first_seat
        self.next_position = 0
        self.seats = bytearray([_UNSEATED] * CARDS)  # card -> seat, for cards read
        self.order = bytearray()  # cards read, in dealing order
        self.counts = [0, 0, 0, 0]
        self.unreadable: list[int] = []  # positions of cards that could not be read

    @property
    def cards_read(self) -> int:
        """Cards accepted so far (readable, in order, each once)."""
        return len(self.order)

    def card(self, position: int, card: int | None, pocket: int | None) -> Verdict | None:
        """One card at ``position`` into ``pocket``; ``card`` None when unreadable. None if it is fine.

        An unreadable card takes its position (a reader that goes on is told of it again by :meth:`end`)."""
        if self.next_position >= CARDS:
            return Verdict(Problem.EXTRA, position, card, pocket)
        if position != self.next_position:
            problem = Problem.GAP if position > self.next_position else Problem.REPEATED
            return Verdict(problem, position, card, pocket, number=self.next_position)
        seat = pocket
        if seat is None:
            if self.first_seat is None:
                return Verdict(Problem.NO_POCKET, position, card)
            seat = (self.first_seat + position) % 4
        if card is None:
            self.next_position += 1
            self.unreadable.append(position)
            return Verdict(Problem.UNREADABLE, position, None, seat)
        if self.seats[card] != _UNSEATED:
            return Verdict(Problem.DUPLICATE, position, card, seat, self.seats[card])
        if self.target is not None and self.target.seats[card] != seat:
            return Verdict(Problem.WRONG_POCKET, position, card, seat, self.target.seats[card])
        if self.counts[seat] >= PER_SEAT:
            return Verdict(Problem.SEAT_FULL, position, card, seat)
        self.next_position += 1
        self.seats[card] = seat
        self.order.append(card)
        self.counts[seat] += 1
        return None

    def seat_of(self, card: int) -> int:
        """The seat a card read so far went to."""
        return self.seats[card]

    def end(self, record: bytes | None = None, counted: int | None = None) -> Verdict | None:
        """The device says the deal is over (``record``: its 13-byte record, ``counted``: its count of cards)."""
        recorded = None if record is None else record_seats(record)
        if self.unreadable:
            return Verdict(Problem.UNREADABLE, self.unreadable[0])
        if self.cards_read < CARDS:
            first = next(c for c in range(CARDS) if self.seats[c] == _UNSEATED)
            where = None if recorded is None else recorded[first]
            return Verdict(Problem.SHORT, None, first, None, where, self.cards_read)
        if counted is not None and counted != CARDS:
            return Verdict(Problem.COUNT, number=counted)
        if record is not None:
            if recorded is None:
                return Verdict(Problem.RECORD)
            for card, seat in enumerate(self.seats):
                if recorded[card] != seat:
                    return Verdict(Problem.RECORD, None, card, seat, recorded[card])
        return None

    def deal(self) -> Deal:
        """The deal read (only once :meth:`end` found nothing wrong)."""
        return Deal(bytes(self.seats))
