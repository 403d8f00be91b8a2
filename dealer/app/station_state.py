"""The station's status as a pure state machine: a status enum, the events that move it, a transition table.

In the manner of h11's ``_state.py``: the table maps ``(status, event)`` to the next status, and an event the table
has no entry for in the current status raises ``InvalidTransition`` naming both — a status is never assigned
directly. The machine does no I/O and reads no clock: the time of a transition is passed in by the runner
(``dealer.web.station.Station``), which does the device, the bank and the announcements.

The statuses are today's strings (``StrEnum``), so what the judge's console, the audience pages and the API show is
unchanged. Most events move the station from any status (the judge's commands, the device link, the bank holding a
write): that is what the station did before the table existed, and each such event is listed once in
``FROM_ANY``. The table's own decisions are the conditional ones: a void leaves a station that is not dealing where it
is (``DEAL_VOIDED``), a deal recorded while the station deals no more turns ``dealing`` into ``paused``
(``DEAL_RECORDED_IDLE``), and the bank coming back is only an event of a station that waits for it (``BANK_BACK_*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StationStatus(StrEnum):
    """What the station is doing, as the judge's console and the audience see it."""

    IDLE = "idle"  # not connected yet (the service has just started)
    CONNECTING = "connecting"  # a device is being opened
    READY = "ready"  # a device is connected, nothing is being dealt
    DEALING = "dealing"  # a deal was asked of the device (or armed for a manual station)
    PAUSED = "paused"  # the judge paused: the deal in progress finishes, no next one
    STOPPED = "stopped"  # the judge stopped: the deal in progress is voided
    NEEDS_REDEAL = "needs_redeal"  # a deal was voided (or refused): the judge decides the re-deal
    BANK_WAITING = "bank_waiting"  # a ledger write waits for the bank: the station deals no more
    TARGET_REACHED = "target_reached"  # the bank (or the session's boards) is formed
    DISCONNECTED = "disconnected"  # no device (disconnected, lost, or never reached)
    ERROR = "error"  # the device reader failed (quiet: the link's loss follows)


class StationEvent(StrEnum):
    """What happened to the station: the judge's commands, the device link, the bank's answers."""

    CONNECT = "connect"  # the judge (or the service's autostart) connects a device
    LINK_OPENED = "link_opened"  # the device is open and its reader runs
    LINK_CLOSED = "link_closed"  # the device is gone: disconnected, its stream ended, or it could not be opened
    RESET = "reset"  # the judge's Reset with a device connected
    PAUSE = "pause"  # the judge's Pause
    STOP = "stop"  # the judge's Stop
    READER_FAILED = "reader_failed"  # the device reader raised
    DEAL_REQUESTED = "deal_requested"  # the device took the request for the next deal
    DEVICE_REFUSED = "device_refused"  # the device refused (or did not answer) the request for a deal
    WRITE_HELD = "write_held"  # a ledger write is queued behind the bank: deal no more until it is taken
    TARGET_REACHED = "target_reached"  # the bank's target (or the session's last board) is reached
    LOST_DEAL_VOIDED = "lost_deal_voided"  # the ledger recorded the void of a deal the bank refused or never took
    BOARD_REFUSED = "board_refused"  # variant 1: a board could not be recorded (boards left to make)
    DEAL_VOIDED = "deal_voided"  # a deal was voided and the station does not re-deal it itself
    DEAL_RECORDED_IDLE = "deal_recorded_idle"  # a deal (or board) is recorded and the station deals no next one
    BANK_BACK_DEALING = "bank_back_dealing"  # the bank took every waiting write; a deal is in progress
    BANK_BACK_PAUSED = "bank_back_paused"  # ... and the judge had paused while the write waited
    BANK_BACK_EMPTY = "bank_back_empty"  # ... and the waiting deals were voided: nothing is dealt


S = StationStatus
E = StationEvent

# Events that move the station from any status (the status the event leads to).
FROM_ANY: dict[StationEvent, StationStatus] = {
    E.CONNECT: S.CONNECTING,
    E.LINK_OPENED: S.READY,
    E.LINK_CLOSED: S.DISCONNECTED,
    E.RESET: S.READY,
    E.PAUSE: S.PAUSED,
    E.STOP: S.STOPPED,
    E.READER_FAILED: S.ERROR,
    E.DEAL_REQUESTED: S.DEALING,
    E.DEVICE_REFUSED: S.NEEDS_REDEAL,
    E.WRITE_HELD: S.BANK_WAITING,
    E.TARGET_REACHED: S.TARGET_REACHED,
    E.LOST_DEAL_VOIDED: S.NEEDS_REDEAL,
    E.BOARD_REFUSED: S.NEEDS_REDEAL,
}

# A void leaves a station that is not dealing where it is; any other needs the judge's re-deal.
_AT_REST = (S.STOPPED, S.IDLE, S.DISCONNECTED, S.BANK_WAITING)


def _table() -> dict[StationStatus, dict[StationEvent, StationStatus]]:
    table: dict[StationStatus, dict[StationEvent, StationStatus]] = {s: dict(FROM_ANY) for s in S}
    for s in S:
        table[s][E.DEAL_VOIDED] = s if s in _AT_REST else S.NEEDS_REDEAL
        table[s][E.DEAL_RECORDED_IDLE] = S.PAUSED if s is S.DEALING else s
    table[S.BANK_WAITING][E.BANK_BACK_DEALING] = S.DEALING
    table[S.BANK_WAITING][E.BANK_BACK_PAUSED] = S.PAUSED
    table[S.BANK_WAITING][E.BANK_BACK_EMPTY] = S.NEEDS_REDEAL
    return table


TRANSITIONS: dict[StationStatus, dict[StationEvent, StationStatus]] = _table()


class InvalidTransition(Exception):
    """An event the table has no entry for in the station's current status."""

    def __init__(self, status: StationStatus, event: StationEvent) -> None:
        super().__init__(f"the station cannot handle {event.value!r} when its status is {status.value!r}")
        self.status = status
        self.event = event


@dataclass(frozen=True, slots=True)
class Transition:
    """One step of the machine: from, event, to, and when (the runner's clock, passed in)."""

    before: StationStatus
    event: StationEvent
    after: StationStatus
    at: float

    @property
    def changed(self) -> bool:
        return self.before is not self.after


def next_status(status: StationStatus, event: StationEvent) -> StationStatus:
    """The status ``event`` leads to from ``status``; ``InvalidTransition`` if the table has none."""
    try:
        return TRANSITIONS[status][event]
    except KeyError:
        raise InvalidTransition(status, event) from None


class StationMachine:
    """The station's status and its transitions; no I/O, no clock (``now`` is the caller's)."""

    __slots__ = ("since", "status")

    def __init__(self, status: StationStatus = S.IDLE, since: float = 0.0) -> None:
        self.status = status
        self.since = since  # when the status last changed

    def handle(self, event: StationEvent, now: float) -> Transition:
        """Apply ``event`` at time ``now``; the status is unchanged if the event is invalid (it raises)."""
        before = self.status
        after = next_status(before, event)
        step = Transition(before, event, after, now)
        if step.changed:
            self.status, self.since = after, now
        return step
