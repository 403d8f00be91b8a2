"""Card events from frame streams: one event per card, in order; slides, gaps, replacements and extras."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from camera_support import VARIANTS, calibration_for

from dealer.core.cards import ALL_CARDS, Card
from dealer.core.events import CardSeen, DeviceFault, FaultKind
from drivers.camera import CameraScanner, CardTracker, Reading, Recogniser, Seen, TrackerSettings
from drivers.camera.detect import Quad
from drivers.camera.virtual import LEVELS, Item, VirtualCamera, named_deck


def _shuffled(seed: int) -> list[Card]:
    return [ALL_CARDS[i] for i in np.random.default_rng(seed).permutation(52)]


def _cards(events: list[CardSeen | DeviceFault]) -> list[CardSeen]:
    assert not [e for e in events if isinstance(e, DeviceFault)]
    return [e for e in events if isinstance(e, CardSeen)]


def _scan(variant: str, items: list[Item], seed: int, gap: int) -> list[CardSeen | DeviceFault]:
    cam = VirtualCamera(named_deck(variant), items, LEVELS["strong"], seed=seed, hold=4, slide=2, gap=gap)
    return list(CameraScanner(cam, calibration_for(variant), deal_id=7).events())


@pytest.mark.parametrize(("variant", "gap"), [(VARIANTS[0], 2), (VARIANTS[1], 0), (VARIANTS[3], 1)])
def test_a_dealt_deck_gives_one_event_per_card_in_dealing_order(variant: str, gap: int) -> None:
    order = _shuffled(len(variant) + gap)
    events = _cards(_scan(variant, list(order), seed=gap + 40, gap=gap))
    cards = [e.card for e in events]
    assert len(events) == 52  # one event per card: read, or (rarely) unreadable in its place
    read = [c for c in cards if c is not None]
    assert read == [c for c in order if c in read]  # never a wrong or repeated card
    assert [c if c in read else None for c in order] == cards
    assert cards.count(None) <= 2
    assert [e.position for e in events] == list(range(len(events)))
    assert all(e.pocket is None and e.deal_id == 7 for e in events)
    frames = [e.frame for e in events if e.frame is not None]
    assert len(frames) == len(events) and frames == sorted(frames)
    stamps = [e.timestamp for e in events]
    assert stamps == sorted(stamps)


def test_blank_frames_and_a_hand_between_cards_give_no_event() -> None:
    variant = VARIANTS[2]
    cards = _shuffled(3)[:8]
    items: list[Item] = ["blank", cards[0], "hand", cards[1], cards[2], "blank", cards[3], "hand"]
    items += ["hand", "blank", cards[4], "blank", cards[5], cards[6], "blank", cards[7]]
    events = _cards(_scan(variant, items, seed=9, gap=2))
    assert len(events) == len(cards)  # one per card, none for the extras
    assert all(e.card in (None, c) for e, c in zip(events, cards, strict=True))  # an unreadable at worst
    assert sum(e.card is None for e in events) <= 1


def test_a_back_lying_still_is_a_fault_and_a_joker_an_unreadable_card() -> None:
    """#31: where a face is expected, a back (or a card of another deck face down) is a fault, and a joker, no
    face of the 52, an unreadable card: never silence. Blank frames and a hand passing give nothing."""
    variant = VARIANTS[0]
    items: list[Item] = ["blank", "hand", "back", "blank", "joker", "hand", "blank"]
    events = _scan(variant, items, seed=12, gap=1)
    assert len(events) == 2
    fault, joker = events
    assert isinstance(fault, DeviceFault) and fault.kind is FaultKind.OTHER and "back" in fault.detail
    assert isinstance(joker, CardSeen) and joker.card is None


# -- the tracker on its own, fed readings frame by frame ---------------------------------------------------


def _quad(x: float, y: float = 300.0) -> Quad:
    c = np.array([[x - 100, y - 140], [x + 100, y - 140], [x + 100, y + 140], [x - 100, y + 140]], np.float32)
    return Quad(c, (x, y), 200.0, 280.0, False)


def _feed(tracker: CardTracker, readings: list[Reading]) -> list[CardSeen]:
    out: list[CardSeen | DeviceFault] = []
    for n, reading in enumerate(readings):
        out += tracker.feed(reading, n / 30, n)
    return _cards(out + tracker.finish())


def card(c: Card, x: float = 500.0) -> Reading:
    return Reading(Seen.CARD, c, 0.9, 0.97, _quad(x))


def unreadable(x: float = 500.0) -> Reading:
    return Reading(Seen.UNREADABLE, None, 0.05, 0.9, _quad(x))


NOTHING = Reading(Seen.NOTHING)


def test_tracker_needs_a_card_still_for_several_frames() -> None:
    sliding = [card(Card.SA, x) for x in (100.0, 200.0, 300.0, 400.0)]  # moving: never still
    assert _feed(CardTracker(), [NOTHING, *sliding, NOTHING, NOTHING]) == []
    events = _feed(CardTracker(), [*sliding, card(Card.SA), card(Card.SA), card(Card.SA), NOTHING, NOTHING])
    assert [(e.card, e.frame) for e in events] == [(Card.SA, 4)]


def test_tracker_replacement_without_gap_is_a_new_event_and_a_flicker_is_not() -> None:
    readings = [card(Card.SA)] * 5 + [unreadable()] * 2 + [card(Card.SA)] * 5 + [card(Card.HK, 520)] * 5
    events = _feed(CardTracker(), readings)
    assert [e.card for e in events] == [Card.SA, Card.HK]
    assert [e.position for e in events] == [0, 1]


def test_tracker_same_card_shown_again_after_a_gap_is_reported_again() -> None:
    readings = [card(Card.D7)] * 4 + [NOTHING] * 3 + [card(Card.D7)] * 4
    assert [e.card for e in _feed(CardTracker(), readings)] == [Card.D7, Card.D7]


def test_tracker_reports_a_still_unread_card_once_when_it_goes() -> None:
    readings = [unreadable()] * 12 + [NOTHING] * 3 + [card(Card.C2)] * 4
    events = _feed(CardTracker(), readings)
    assert [e.card for e in events] == [None, Card.C2]
    assert events[0].frame == 0 and events[0].position == 0


def test_tracker_unread_spell_then_read_is_one_card_event() -> None:
    readings = [unreadable()] * 12 + [card(Card.HQ)] * 4 + [NOTHING] * 3
    assert [e.card for e in _feed(CardTracker(), readings)] == [Card.HQ]


def test_tracker_glare_on_a_card_already_read_adds_nothing() -> None:
    readings = [card(Card.S9)] * 4 + [unreadable()] * 20 + [NOTHING] * 3
    assert [e.card for e in _feed(CardTracker(), readings)] == [Card.S9]


def test_tracker_short_unreadable_moments_are_ignored() -> None:
    readings = [unreadable(x) for x in (100.0, 200.0, 300.0)] + [NOTHING] * 3
    assert _feed(CardTracker(), readings) == []


def test_tracker_stills_one_photo_per_card() -> None:
    readings = [card(Card.SA, 100), unreadable(300), card(Card.SK, 500), card(Card.SK, 700), NOTHING]
    events = _feed(CardTracker(settings=TrackerSettings.for_stills()), readings)
    assert [e.card for e in events] == [Card.SA, None, Card.SK]


# -- the deck's own constraint: each card once in a deal (#31) ---------------------------------------------


def _evidence(scores: dict[Card, float], rest: float = 0.3) -> npt.NDArray[np.float32]:
    """Both corners' scores: ``rest`` for every card but those given."""
    e = np.full((2, 52), rest, np.float32)
    for c, v in scores.items():
        e[:, int(c)] = v
    return e


def _object(c: Card, evidence: npt.NDArray[np.float32], frames: int = 4) -> list[Reading]:
    return [Reading(Seen.CARD, c, 0.5, float(evidence.mean(axis=0).max()), _quad(500), evidence)] * frames


def test_a_card_read_twice_in_a_deal_is_read_again_as_the_undealt_card_its_frames_nearly_tie_with() -> None:
    """♠5 dealt; later an object read ♠5 whose evidence scores ♣5 (undealt) within 0.01: it is ♣5."""
    judge = Recogniser(calibration_for(VARIANTS[0])).decide
    first = _object(Card.S5, _evidence({Card.S5: 0.95}))
    tie = _object(Card.S5, _evidence({Card.S5: 0.93, Card.C5: 0.92}))
    gap = [Reading(Seen.NOTHING)] * 2
    got = _feed(CardTracker(judge=judge), [*first, *gap, *tie, *gap])
    assert [e.card for e in got] == [Card.S5, Card.C5] and [e.position for e in got] == [0, 1]


def test_a_clear_second_copy_of_a_card_is_reported_as_read_for_the_deal_to_be_voided() -> None:
    """A second ♠5 read clearly (♣5 far behind) is a foreign card: reported as ♠5, the session voids the deal
    as a duplicate; the reader never invents the missing card."""
    judge = Recogniser(calibration_for(VARIANTS[0])).decide
    first = _object(Card.S5, _evidence({Card.S5: 0.95}))
    again = _object(Card.S5, _evidence({Card.S5: 0.95, Card.C5: 0.6}))
    gap = [Reading(Seen.NOTHING)] * 2
    got = _feed(CardTracker(judge=judge), [*first, *gap, *again, *gap])
    assert [e.card for e in got] == [Card.S5, Card.S5]


def _unsure(evidence: npt.NDArray[np.float32], frames: int = 4) -> list[Reading]:
    return [Reading(Seen.UNREADABLE, None, 0.01, float(evidence.mean(axis=0).max()), _quad(500), evidence)] * frames


def test_an_object_unsure_between_a_dealt_card_and_its_undealt_twin_is_the_undealt_one() -> None:
    """#31: ♠7 dealt; later an object whose frames score ♠7 0.950 and ♣7 0.949 (a margin of a thousandth: alone,
    unreadable) is ♣7, the card of the two not yet in the deal. Without ♠7 dealt, the same object is unreadable;
    where the reported ♠7 still lies (no empty frame), it is ♠7 dimmed: nothing new."""
    judge = Recogniser(calibration_for(VARIANTS[0])).decide
    gap = [Reading(Seen.NOTHING)] * 2
    unsure = _unsure(_evidence({Card.S7: 0.95, Card.C7: 0.949}))
    alone = _feed(CardTracker(judge=judge), [*unsure, *gap])
    assert [e.card for e in alone] == [None]
    first = _object(Card.S7, _evidence({Card.S7: 0.95}))
    got = _feed(CardTracker(judge=judge), [*first, *gap, *unsure, *gap])
    assert [e.card for e in got] == [Card.S7, Card.C7]
    other = _object(Card.H2, _evidence({Card.H2: 0.95}))
    assert [e.card for e in _feed(CardTracker(judge=judge), [*other, *gap, *unsure, *gap])] == [Card.H2, None]
    assert [e.card for e in _feed(CardTracker(judge=judge), [*first, *unsure, *gap])] == [Card.S7]


def _cut_short(x: float = 500.0) -> Reading:
    """The same card outlined a few pixels short (cut by the frame edge it lies against): partial, no face."""
    q = _quad(x)
    corners = q.corners.copy()
    corners[[0, 3], 0] += 4.0
    return Reading(Seen.NOTHING, quad=Quad(corners, (x + 2.0, 300.0), 196.0, 280.0, True, 0, 0.95))


def test_tracker_a_card_at_the_edge_flickering_between_whole_and_cut_is_read_once() -> None:
    """#31: ♦8 lay still at the left edge, its frames whole, whole, cut, whole, cut, whole: read every time it
    was whole, never three whole frames in a row, so it gave no event at all."""
    readings = [NOTHING, card(Card.D8), card(Card.D8), _cut_short(), card(Card.D8), _cut_short(), card(Card.D8)]
    events = _feed(CardTracker(), [*readings, NOTHING, NOTHING])
    assert [(e.card, e.frame) for e in events] == [(Card.D8, 1)]
    # held three frames, one of them cut short, never read alike three times: unreadable, not silence
    readings = [NOTHING, unreadable(), _cut_short(), card(Card.D8), NOTHING, NOTHING]
    assert [e.card for e in _feed(CardTracker(), readings)] == [None]


def test_tracker_a_card_coming_to_rest_at_the_edge_cut_short_in_its_first_still_frame_gives_an_event() -> None:
    """#31 (layout-beside-4c, edge scene): ♥4 slid in, lay three frames against the left edge, the first outlined
    a pixel short (cut), the other two whole and read ♥4, then slid out: the cut frame broke nothing but started
    no still run either, two whole frames were not enough for anything, and the card gave no event at all. Held
    three frames, it is an event (unreadable, as a card read in fewer than three frames is)."""
    readings = [NOTHING, _cut_short(), card(Card.H4), card(Card.H4), NOTHING, NOTHING]
    events = _feed(CardTracker(), readings)
    assert [(e.card, e.frame) for e in events] == [(None, 1)]
