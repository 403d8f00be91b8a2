"""The dealing session: acceptance, every variant's projection and every fault path."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import fields
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer.core import Card, Deal, Seat
from dealer.core.events import (
    CardSeen,
    DealEnded,
    DealStarted,
    DeviceEvent,
    DeviceFault,
    Disconnected,
    FaultKind,
    Reconnected,
)
from dealer.session import (
    CardAccepted,
    CardIgnored,
    DealComplete,
    DealingSession,
    DealVoided,
    FaultReported,
    PublicCardHidden,
    PublicCardOpen,
    PublicDealStarted,
    PublicDealVoided,
    Step,
    VoidReason,
)

T = TypeVar("T")


def dealt(seed: int) -> tuple[list[Card], list[Seat]]:
    """A random deck order and, for each card, the pocket it goes to (13 per seat, random interleave)."""
    rng = random.Random(seed)
    order = list(Card)
    rng.shuffle(order)
    pockets = [Seat(i % 4) for i in range(52)]
    rng.shuffle(pockets)
    return order, pockets


def machine_events(deal_id: int, order: list[Card], pockets: list[Seat | None], end: bool = True) -> list[DeviceEvent]:
    events: list[DeviceEvent] = [DealStarted(deal_id, 0.0)]
    events += [CardSeen(deal_id, i, c, p, 1.0, 0.0) for i, (c, p) in enumerate(zip(order, pockets, strict=True))]
    if end:
        events.append(DealEnded(deal_id, 0.0))
    return events


def run(session: DealingSession, events: list[DeviceEvent]) -> Step:
    total = Step()
    for ev in events:
        s = session.feed(ev)
        total.public += s.public
        total.operator += s.operator
    return total


def expected_deal(order: list[Card], pockets: list[Seat]) -> Deal:
    return Deal.from_hands({seat: [c for c, p in zip(order, pockets, strict=True) if p == seat] for seat in Seat})


def only(items: Sequence[object], kind: type[T]) -> list[T]:
    return [x for x in items if isinstance(x, kind)]


# -- acceptance ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_machine_deal_is_accepted_with_seats_from_pockets(seed: int) -> None:
    order, pockets = dealt(seed)
    session = DealingSession("A", 3)
    step = run(session, machine_events(7, order, list(pockets)))
    done = only(step.operator, DealComplete)
    assert len(done) == 1
    assert done[0].deal == expected_deal(order, pockets)
    assert done[0].dealing_order == bytes(order)
    assert done[0].deal_id == 7 and done[0].attempt == 1
    assert not only(step.operator, DealVoided)
    assert session.accepted == 1 and session.voided == 0 and not session.dealing


@pytest.mark.parametrize("first", list(Seat))
def test_manual_dealing_assigns_seats_in_dealing_order(first: Seat) -> None:
    order, _ = dealt(11)
    session = DealingSession("cam", 3, first_seat=first)
    step = run(session, machine_events(1, order, [None] * 52))
    (done,) = only(step.operator, DealComplete)
    for i, card in enumerate(order):
        assert done.deal.seat_of(card) == Seat((first + i) % 4)


def test_default_first_seat_is_north() -> None:
    order, _ = dealt(12)
    step = run(DealingSession("cam", 3), machine_events(1, order, [None] * 52))
    (done,) = only(step.operator, DealComplete)
    assert done.deal.seat_of(order[0]) == Seat.N and done.deal.seat_of(order[1]) == Seat.E


def test_machine_record_must_agree() -> None:
    order, pockets = dealt(3)
    good = expected_deal(order, pockets)
    events = machine_events(1, order, list(pockets), end=False)
    session = DealingSession("A", 3)
    step = run(session, [*events, DealEnded(1, 0.0, good.to_bytes())])
    assert only(step.operator, DealComplete)
    other = Deal.from_rank(12345)
    step = run(session, [*machine_events(2, order, list(pockets), end=False), DealEnded(2, 0.0, other.to_bytes())])
    (void,) = only(step.operator, DealVoided)
    assert void.reason is VoidReason.RECORD_MISMATCH
    assert not only(step.operator, DealComplete)


def test_device_without_deal_started_is_accepted() -> None:
    order, pockets = dealt(4)
    events = machine_events(9, order, list(pockets))[1:]
    step = run(DealingSession("A", 3), events)
    assert len(only(step.public, PublicDealStarted)) == 1
    assert only(step.operator, DealComplete)


def test_consecutive_deals_count_attempts() -> None:
    session = DealingSession("A", 2, 32)
    for n in range(1, 4):
        order, pockets = dealt(100 + n)
        step = run(session, machine_events(n, order, list(pockets)))
        (done,) = only(step.operator, DealComplete)
        assert done.attempt == n
    assert session.accepted == 3 and session.attempts == 3


# -- projections per variant ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "k", "expected_open"), [(1, None, 0), (2, 28, 28), (2, 32, 32), (2, 40, 40), (3, None, 52)]
)
def test_variant_projection(variant: int, k: int | None, expected_open: int) -> None:
    order, pockets = dealt(variant * 100 + (k or 0))
    session = DealingSession("A", variant, k)
    step = run(session, machine_events(1, order, list(pockets)))
    (started,) = only(step.public, PublicDealStarted)
    assert started.open_count == expected_open and started.variant == variant
    opens = only(step.public, PublicCardOpen)
    hidden = only(step.public, PublicCardHidden)
    assert [o.card for o in opens] == order[:expected_open]
    assert [o.position for o in opens] == list(range(expected_open))
    assert [o.seat for o in opens] == pockets[:expected_open]
    assert [h.position for h in hidden] == list(range(expected_open, 52))
    assert [h.seat for h in hidden] == pockets[expected_open:]
    # the hidden count per seat counts up 1, 2, ... in each seat
    seen = [0, 0, 0, 0]
    for h in hidden:
        seen[h.seat] += 1
        assert h.hidden_in_seat == seen[h.seat]
    accepted = only(step.operator, CardAccepted)
    assert [a.open for a in accepted] == [i < expected_open for i in range(52)]
    (done,) = only(step.operator, DealComplete)
    assert done.shown_cards == expected_open


def test_hidden_projection_has_no_field_for_a_card() -> None:
    names = {f.name for f in fields(PublicCardHidden)}
    assert names == {"attempt", "position", "seat", "hidden_in_seat"}
    for f in fields(PublicCardHidden):
        assert "Card" not in str(f.type)
    # and a void's public reason is a bare code
    assert {f.name for f in fields(PublicDealVoided)} == {"attempt", "reason"}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(28, 40))
def test_variant_2_public_stream_never_holds_a_hidden_card(seed: int, k: int) -> None:
    order, pockets = dealt(seed)
    step = run(DealingSession("A", 2, k), machine_events(1, order, list(pockets)))
    public_cards = [getattr(e, "card", None) for e in step.public]
    assert set(c for c in public_cards if c is not None) == set(order[:k])
    assert all(not hasattr(e, "card") for e in step.public if isinstance(e, PublicCardHidden))


def test_variant_2_requires_k() -> None:
    with pytest.raises(ValueError, match="open_cards"):
        DealingSession("A", 2)


# -- fault paths ------------------------------------------------------------------------------------------------


def void_of(step: Step) -> DealVoided:
    (void,) = only(step.operator, DealVoided)
    (pub,) = only(step.public, PublicDealVoided)
    assert pub.reason == void.reason.value and pub.attempt == void.attempt
    assert not only(step.operator, DealComplete)
    return void


def test_duplicate_card_voids() -> None:
    order, pockets = dealt(5)
    bad = list(order)
    bad[30] = bad[2]
    session = DealingSession("A", 2, 32)
    step = run(session, machine_events(1, bad, list(pockets)))
    void = void_of(step)
    assert void.reason is VoidReason.DUPLICATE_CARD
    assert void.position == 30 and void.card == order[2] and void.cards_dealt == 30
    assert void.dealing_order == bytes(order[:30])
    # cards after the void are ignored, not accepted; the DealEnded does nothing
    assert len(only(step.operator, CardIgnored)) == 21
    assert session.voided == 1 and not session.dealing


def test_fourteenth_card_to_a_seat_voids() -> None:
    order, _ = dealt(6)
    pockets = [Seat.N] * 14 + [Seat.E] * 13 + [Seat.S] * 13 + [Seat.W] * 12
    void = void_of(run(DealingSession("A", 3), machine_events(1, order, list(pockets))))
    assert void.reason is VoidReason.SEAT_OVERFULL and void.position == 13 and void.seat == Seat.N


def test_unreadable_card_voids() -> None:
    order, pockets = dealt(7)
    events = machine_events(1, order, list(pockets))
    events[20] = CardSeen(1, 19, None, pockets[19], 0.2, 0.0)
    void = void_of(run(DealingSession("A", 2, 32), events))
    assert void.reason is VoidReason.UNREADABLE_CARD and void.position == 19 and void.card is None


@pytest.mark.parametrize("kind", [k for k in FaultKind if k not in (FaultKind.ABORTED, FaultKind.DISCONNECTED)])
def test_any_fault_during_a_deal_voids(kind: FaultKind) -> None:
    order, pockets = dealt(8)
    events = machine_events(1, order, list(pockets))
    events.insert(11, DeviceFault(kind, "boom", 0.0, 1, 10, order[10], pockets[10]))
    step = run(DealingSession("A", 2, 32), events)
    void = void_of(step)
    assert void.reason is VoidReason.FAULT and void.position == 10
    (fault,) = only(step.operator, FaultReported)
    assert fault.kind is kind and fault.card == order[10]


def test_abort_fault_and_operator_abort_void() -> None:
    order, pockets = dealt(9)
    events = machine_events(1, order, list(pockets))
    events.insert(5, DeviceFault(FaultKind.ABORTED, "abort pressed", 0.0, 1))
    assert void_of(run(DealingSession("A", 3), events)).reason is VoidReason.ABORTED
    session = DealingSession("A", 3)
    run(session, machine_events(2, order, list(pockets), end=False)[:10])
    assert void_of(session.abort()).reason is VoidReason.ABORTED
    assert session.abort().public == []  # nothing left to abort


def test_disconnect_voids_and_reconnect_allows_redeal() -> None:
    order, pockets = dealt(10)
    session = DealingSession("A", 2, 32)
    first = machine_events(1, order, list(pockets))[:20]
    step = run(session, [*first, Disconnected("cable pulled", 0.0, 1), Reconnected(0.0)])
    void = void_of(step)
    assert void.reason is VoidReason.DISCONNECTED and void.cards_dealt == 19
    step = run(session, machine_events(2, order, list(pockets)))
    (done,) = only(step.operator, DealComplete)
    assert done.attempt == 2


def test_stream_ending_early_voids() -> None:
    order, pockets = dealt(13)
    session = DealingSession("A", 3)
    run(session, machine_events(1, order, list(pockets), end=False)[:40])
    void = void_of(session.end_of_stream())
    assert void.reason is VoidReason.STREAM_ENDED and void.cards_dealt == 39
    assert session.end_of_stream().operator == []


def test_deal_ended_short_voids() -> None:
    order, pockets = dealt(14)
    events = machine_events(1, order, list(pockets))
    del events[30:53]
    void = void_of(run(DealingSession("A", 3), events))
    assert void.reason is VoidReason.SHORT_DEAL and void.cards_dealt == 29


def test_complete_but_unended_deal_then_53rd_card_voids() -> None:
    order, pockets = dealt(15)
    events = machine_events(1, order, list(pockets), end=False)
    events.append(CardSeen(1, 52, order[0], Seat.N, 1.0, 0.0))
    assert void_of(run(DealingSession("A", 3), events)).reason is VoidReason.EXTRA_CARD


def test_out_of_order_position_voids() -> None:
    order, pockets = dealt(16)
    events = machine_events(1, order, list(pockets))
    del events[10]  # position 9 never arrives
    void = void_of(run(DealingSession("A", 3), events))
    assert void.reason is VoidReason.OUT_OF_ORDER and void.position == 10


def test_card_of_another_deal_voids() -> None:
    order, pockets = dealt(17)
    events = machine_events(1, order, list(pockets))
    events[5] = CardSeen(2, 4, order[4], pockets[4], 1.0, 0.0)
    assert void_of(run(DealingSession("A", 3), events)).reason is VoidReason.WRONG_DEAL


def test_new_deal_before_end_voids_the_old_one() -> None:
    order, pockets = dealt(18)
    session = DealingSession("A", 3)
    step = run(
        session, machine_events(1, order, list(pockets), end=False)[:30] + machine_events(2, order, list(pockets))
    )
    void = void_of(
        Step(
            public=[e for e in step.public if isinstance(e, PublicDealVoided)],
            operator=[e for e in step.operator if isinstance(e, DealVoided)],
        )
    )
    assert void.reason is VoidReason.NEW_DEAL_STARTED and void.deal_id == 1
    (done,) = only(step.operator, DealComplete)
    assert done.deal_id == 2 and done.attempt == 2


def test_fault_between_deals_is_reported_without_a_void() -> None:
    session = DealingSession("A", 3)
    step = session.feed(DeviceFault(FaultKind.HOPPER_EMPTY, "load cards", 0.0))
    assert only(step.operator, FaultReported) and not only(step.operator, DealVoided) and step.public == []


def test_redeal_after_void_is_accepted() -> None:
    order, pockets = dealt(19)
    bad = list(order)
    bad[45] = bad[44]
    session = DealingSession("A", 2, 32)
    void_of(run(session, machine_events(1, bad, list(pockets))))
    step = run(session, machine_events(2, order, list(pockets)))
    (done,) = only(step.operator, DealComplete)
    assert done.deal == expected_deal(order, pockets)
    assert session.accepted == 1 and session.voided == 1 and session.attempts == 2


def test_void_public_event_carries_no_card_even_for_a_hidden_duplicate() -> None:
    order, pockets = dealt(20)
    bad = list(order)
    bad[50] = bad[40]  # both hidden under K = 32
    step = run(DealingSession("A", 2, 32), machine_events(1, bad, list(pockets)))
    void = void_of(step)
    assert void.card == order[40]  # the judge sees it
    shown = {e.card for e in step.public if isinstance(e, PublicCardOpen)}
    assert order[40] not in shown and shown == set(order[:32])
