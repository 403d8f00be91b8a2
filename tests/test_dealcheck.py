"""The card checker (``dealer.core.dealcheck.DealCheck``) against an independent check, on random card streams:
whole deals, and deals broken by a duplicate, an unreadable card, a missing pocket, a skipped or repeated
position, a 53rd card, a card in another seat than the intended deal's, a 14th card to one seat, an early end,
and a device record that differs."""

from __future__ import annotations

from collections import Counter

import hypothesis.strategies as st
from hypothesis import given, settings

from dealer.core import Deal
from dealer.core.dealcheck import DealCheck, Problem

Card3 = tuple[int, int | None, int | None]  # position, card (None: unreadable), pocket (None: not said)


def prefix_is_fine(cards: list[Card3], target: bytes | None, first_seat: int | None) -> bool:
    """Independent of DealCheck: recomputed from scratch with sets and counters over the whole prefix."""
    if len(cards) > 52 or [p for p, _, _ in cards] != list(range(len(cards))):
        return False
    if any(c is None for _, c, _ in cards):
        return False
    if first_seat is None and any(s is None for _, _, s in cards):
        return False
    seats = [s if s is not None else (first_seat or 0) + p & 3 for p, _, s in cards]
    named = [c for _, c, _ in cards]
    if len(set(named)) != len(named) or max(Counter(seats).values(), default=0) > 13:
        return False
    return target is None or all(target[c] == s for c, s in zip(named, seats, strict=True) if c is not None)


@st.composite
def streams(draw: st.DrawFn) -> tuple[list[Card3], bytes, bool, int | None, bytes | None]:
    """A dealt deal's cards (pockets from a valid deal), then one or two accidents."""
    seats = draw(st.permutations([i % 4 for i in range(52)]))
    order = draw(st.permutations(range(52)))
    manual = draw(st.booleans())
    first = draw(st.integers(0, 3))
    cards: list[Card3] = [(n, card, None if manual else seats[card]) for n, card in enumerate(order)]
    if manual:  # seats follow the dealing order: the deal is what that order makes
        seats = [0] * 52
        for n, card in enumerate(order):
            seats[card] = (first + n) % 4
    for _ in range(draw(st.integers(0, 2))):
        i = draw(st.integers(0, len(cards) - 1)) if cards else 0
        accident = draw(st.sampled_from(["dup", "unreadable", "nopocket", "skip", "repeat", "extra", "pocket",
                                         "cut", "swap"]))  # fmt: skip
        if not cards:
            break
        p, c, s = cards[i]
        if accident == "dup":
            cards[i] = (p, cards[draw(st.integers(0, len(cards) - 1))][1], s)
        elif accident == "unreadable":
            cards[i] = (p, None, s)
        elif accident == "nopocket":
            cards[i] = (p, c, None)
        elif accident == "skip":
            cards[i] = (p + draw(st.integers(1, 3)), c, s)
        elif accident == "repeat" and p > 0:
            cards[i] = (p - 1, c, s)
        elif accident == "extra":
            cards.append((len(cards), draw(st.integers(0, 51)), draw(st.integers(0, 3))))
        elif accident == "pocket":
            cards[i] = (p, c, draw(st.integers(0, 3)))
        elif accident == "cut":
            cards = cards[:i]
        elif accident == "swap":
            j = draw(st.integers(0, len(cards) - 1))
            cards[i], cards[j] = (p, cards[j][1], cards[j][2]), (cards[j][0], c, s)
    with_target = draw(st.booleans()) and not manual
    record = draw(st.sampled_from(["none", "true", "other"]))
    true_record = Deal(bytes(seats)).to_bytes()
    other = Deal(bytes(draw(st.permutations([i % 4 for i in range(52)])))).to_bytes()
    recorded = None if record == "none" else true_record if record == "true" else other
    return cards, bytes(seats), with_target, first if manual else None, recorded


@settings(max_examples=600, deadline=None)
@given(streams())
def test_the_checker_stops_where_an_independent_check_does(
    case: tuple[list[Card3], bytes, bool, int | None, bytes | None],
) -> None:
    cards, seats, with_target, first_seat, record = case
    target = Deal(seats) if with_target else None
    check = DealCheck(target, first_seat)
    stopped = None
    for n, (p, c, s) in enumerate(cards):
        verdict = check.card(p, c, s)
        if verdict is not None:
            stopped = n
            break
    seats_wanted = None if target is None else target.seats
    good = [n for n in range(len(cards) + 1) if prefix_is_fine(cards[:n], seats_wanted, first_seat)]
    expected_stop = None if good[-1] == len(cards) else good[-1]  # the first card whose prefix is no longer fine
    assert stopped == expected_stop
    if stopped is not None:
        return
    verdict = check.end(record)
    whole = len(cards) == 52
    if not whole:
        assert verdict is not None and verdict.problem is Problem.SHORT
        return
    read = bytearray(52)
    for p, c, s in cards:
        assert c is not None
        read[c] = s if s is not None else ((first_seat or 0) + p) % 4
    if record is not None and record != Deal(bytes(read)).to_bytes():
        assert verdict is not None and verdict.problem is Problem.RECORD
    else:
        assert verdict is None and check.deal() == Deal(bytes(read))


def test_an_unreadable_card_takes_its_place_and_is_named_at_the_end() -> None:
    deal = Deal(bytes(i % 4 for i in range(52)))
    check = DealCheck()
    for position in range(52):
        verdict = check.card(position, None if position == 7 else position, deal.seats[position])
        assert (verdict is None) == (position != 7)
    verdict = check.end(deal.to_bytes(), 52)
    assert verdict is not None and verdict.problem is Problem.UNREADABLE and verdict.position == 7


def test_the_device_count_and_a_short_deal_are_named() -> None:
    deal = Deal(bytes(i % 4 for i in range(52)))
    check = DealCheck()
    for position in range(52):
        assert check.card(position, position, deal.seats[position]) is None
    verdict = check.end(deal.to_bytes(), 53)
    assert verdict is not None and verdict.problem is Problem.COUNT and verdict.number == 53
    short = DealCheck()
    assert short.card(0, 5, 1) is None
    verdict = short.end(deal.to_bytes())
    assert verdict is not None and verdict.problem is Problem.SHORT and verdict.card == 0 and verdict.number == 1
    assert verdict.expected == deal.seats[0]  # the device record's seat of the first card never read
