"""What the station does next after each of its steps: the decisions of the dealing loop, out of the runner.

Events in, commands out: each function takes what the runner knows at the end of a step (the status, whether a
deal is in progress, whether the judge's Start is on, the bank's progress) and answers with one ``Next`` — tell
the judge (``SEND_STATE``), ask the device for the next deal (``NEXT_DEAL``), or move the status by an event of
``station_state`` (``EVENT``) — and whether the station stops dealing. ``dealer.app.station_core.StationCore``
turns it into commands its runner carries out (the device, the bank's thread, the announcements). Pure: no I/O,
no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .station_state import StationEvent, StationStatus


class Do(StrEnum):
    NOTHING = "nothing"
    SEND_STATE = "send_state"  # the status stays: the judge's console gets the station's state
    NEXT_DEAL = "next_deal"  # ask the device for the next deal (``StationCore._next_deal``)
    REQUEST_DEAL = "request_deal"  # the next deal itself: the device is asked now
    EVENT = "event"  # the status moves by ``event`` (announced, the judge told)


@dataclass(frozen=True, slots=True)
class Next:
    do: Do
    event: StationEvent | None = None
    stop_running: bool = False  # the judge's Start is over: the station deals no more by itself


SEND_STATE = Next(Do.SEND_STATE)
NEXT_DEAL = Next(Do.NEXT_DEAL)


def event(e: StationEvent, stop_running: bool = False) -> Next:
    return Next(Do.EVENT, e, stop_running)


def target_met(made: int, on_the_way: int, target: int) -> bool:
    """Is the target there once the deals on their way are written? (A target of 0: none.)"""
    return bool(target) and made + on_the_way >= target


def before_next_deal(*, made: int, committing: int, target: int, linked: bool) -> Next:
    """Before asking for the next deal (the runner has checked that no ledger write waits for the bank, else it is
    ``WRITE_HELD`` and the bank is not asked for its progress): not past the target (the station stops, and says so
    once no deal is on its way to disk); not without a device."""
    if target_met(made, committing, target):
        return event(StationEvent.TARGET_REACHED, True) if not committing else Next(Do.NOTHING, None, True)
    if not linked:
        return Next(Do.NOTHING)
    return Next(Do.REQUEST_DEAL)


def after_void(
    *, running: bool, auto_redeal: bool, by_device: bool, by_operator: bool, made: int, committing: int, target: int
) -> Next:
    """A deal is voided (its ledger entry written or queued): the device's fault is re-dealt at once when the
    station redeals by itself; else the target may be there; else the judge's own action already set the status;
    else the deal needs the judge's re-deal (a station at rest stays where it is: ``DEAL_VOIDED``)."""
    if running and auto_redeal and by_device:
        return NEXT_DEAL
    if target_met(made, committing, target):
        return event(StationEvent.TARGET_REACHED, True)
    if by_operator:
        return SEND_STATE
    return event(StationEvent.DEAL_VOIDED)


def after_commit(*, waiting: bool, running: bool, formed: int, target: int) -> Next:
    """A deal is in the bank and told: while writes wait or the station deals on, the status stays; the bank's
    target reached ends it; else a station that dealt its last deal is paused (``DEAL_RECORDED_IDLE``)."""
    if waiting or running:
        return SEND_STATE
    if target and formed >= target:
        return event(StationEvent.TARGET_REACHED)
    return event(StationEvent.DEAL_RECORDED_IDLE)


def after_board(*, complete: bool, running: bool) -> Next:
    """Variant 1: a board is recorded: the session's boards made end it; else the next deal, or paused."""
    if complete:
        return event(StationEvent.TARGET_REACHED, True)
    if running:
        return NEXT_DEAL
    return event(StationEvent.DEAL_RECORDED_IDLE)


def after_drain(*, status: StationStatus, dealing: bool, running: bool, paused_under_wait: bool) -> Next:
    """The bank took every waiting write: a station that no longer waits (the judge moved it) only tells; else the
    deal in progress goes on, or the next is asked, or the station stays paused (the judge's pause the wait
    covered), or — the waiting deals were voided — needs the judge's re-deal."""
    if status is not StationStatus.BANK_WAITING:
        return SEND_STATE
    if dealing:
        return event(StationEvent.BANK_BACK_DEALING)
    if running:
        return NEXT_DEAL
    return event(StationEvent.BANK_BACK_PAUSED if paused_under_wait else StationEvent.BANK_BACK_EMPTY)
