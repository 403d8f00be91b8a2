"""What the station does after each step (``dealer.app.station_steps``), as tables: every combination of the
inputs, the expected command written out by hand from the dealing loop's rules (docs/service.md: the target, the
judge's Start and Pause, the automatic re-deal of a device's fault, the bank coming back). No asyncio, no device.
"""

from __future__ import annotations

import itertools

import pytest

from dealer.app.station_state import StationStatus
from dealer.app.station_steps import (
    Do,
    Next,
    after_board,
    after_commit,
    after_drain,
    after_void,
    before_next_deal,
    target_met,
)

B = (False, True)


def shown(nxt: Next) -> tuple[str, str | None, bool]:
    return nxt.do.value, nxt.event.value if nxt.event is not None else None, nxt.stop_running


@pytest.mark.parametrize(("made", "on_the_way", "target", "met"), [
    (0, 0, 0, False), (40, 5, 0, False),  # no target: never met
    (5, 0, 6, False), (5, 1, 6, True), (6, 0, 6, True), (7, 0, 6, True), (0, 6, 6, True),
])  # fmt: skip
def test_the_target_counts_the_deals_on_their_way_to_disk(made: int, on_the_way: int, target: int, met: bool) -> None:
    assert target_met(made, on_the_way, target) is met


def test_before_the_next_deal() -> None:
    # the target is there: stop, and say so only when no deal is still on its way to disk
    assert shown(before_next_deal(made=6, committing=0, target=6, linked=True)) == ("event", "target_reached", True)
    assert shown(before_next_deal(made=5, committing=1, target=6, linked=True)) == ("nothing", None, True)
    assert shown(before_next_deal(made=6, committing=0, target=6, linked=False)) == ("event", "target_reached", True)
    # below the target: ask the device, if there is one
    assert shown(before_next_deal(made=5, committing=0, target=6, linked=True)) == ("request_deal", None, False)
    assert shown(before_next_deal(made=5, committing=0, target=6, linked=False)) == ("nothing", None, False)
    assert shown(before_next_deal(made=500, committing=3, target=0, linked=True)) == ("request_deal", None, False)


@pytest.mark.parametrize(("running", "auto", "device", "operator", "met"), list(itertools.product(B, B, B, B, B)))
def test_after_a_void(running: bool, auto: bool, device: bool, operator: bool, met: bool) -> None:
    made, target = (6, 6) if met else (2, 6)
    got = shown(after_void(running=running, auto_redeal=auto, by_device=device, by_operator=operator, made=made,
                           committing=0, target=target))  # fmt: skip
    if running and auto and device:
        assert got == ("next_deal", None, False)  # the device's fault is re-dealt at once
    elif met:
        assert got == ("event", "target_reached", True)  # nothing to re-deal
    elif operator:
        assert got == ("send_state", None, False)  # the judge's own action has set the status
    else:
        assert got == ("event", "deal_voided", False)  # the judge's re-deal (a station at rest stays)


@pytest.mark.parametrize(("waiting", "running", "formed", "target", "expected"), [
    (True, False, 6, 6, ("send_state", None, False)),  # more writes wait: the status is the bank's
    (False, True, 6, 6, ("send_state", None, False)),  # still dealing: the next deal's own step decides
    (True, True, 1, 6, ("send_state", None, False)),
    (False, False, 6, 6, ("event", "target_reached", False)),
    (False, False, 7, 6, ("event", "target_reached", False)),
    (False, False, 5, 6, ("event", "deal_recorded_idle", False)),  # the last deal of a paused station
    (False, False, 9, 0, ("event", "deal_recorded_idle", False)),  # no target
])  # fmt: skip
def test_after_a_commit(
    waiting: bool, running: bool, formed: int, target: int, expected: tuple[str, str | None, bool]
) -> None:
    assert shown(after_commit(waiting=waiting, running=running, formed=formed, target=target)) == expected


def test_after_a_board_of_variant_1() -> None:
    assert shown(after_board(complete=True, running=True)) == ("event", "target_reached", True)
    assert shown(after_board(complete=True, running=False)) == ("event", "target_reached", True)
    assert shown(after_board(complete=False, running=True)) == ("next_deal", None, False)
    assert shown(after_board(complete=False, running=False)) == ("event", "deal_recorded_idle", False)


@pytest.mark.parametrize(("status", "dealing", "running", "paused"),
                         list(itertools.product(StationStatus, B, B, B)))  # fmt: skip
def test_after_the_bank_takes_every_waiting_write(
    status: StationStatus, dealing: bool, running: bool, paused: bool
) -> None:
    got = shown(after_drain(status=status, dealing=dealing, running=running, paused_under_wait=paused))
    if status.value != "bank_waiting":
        assert got == ("send_state", None, False)  # the judge moved the station meanwhile: only told
    elif dealing:
        assert got == ("event", "bank_back_dealing", False)
    elif running:
        assert got == ("next_deal", None, False)
    else:
        assert got == ("event", "bank_back_paused" if paused else "bank_back_empty", False)


def test_the_commands_are_the_listed_ones() -> None:
    assert {d.value for d in Do} == {"nothing", "send_state", "next_deal", "request_deal", "event"}
