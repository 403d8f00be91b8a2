"""The station's status as a pure state machine: a status enum, the events that move it, a transition table.

In the manner of h11's ``_state.py``: the table maps ``(status, event)`` to the next status, and an event the table
has no entry for in the current status raises ``InvalidTransition`` naming both — a status is never assigned
directly. The machine does no I/O and reads no clock: the time of a transition is passed in by the station's core
(``dealer.app.station_core.StationCore``), whose runner ``dealer.app.station.Station`` does the device, the bank
and the announcements.

The statuses are today's strings (``StrEnum``), so what the judge's console, the audience pages and the API show is
unchanged. Thirteen events have one outcome (``SINGLE``): each names the statuses it may arrive in — every status
for the judge's commands and a device's loss, which come at any time; not ``idle`` for what needs a device or a
dealt deal; not ``ready`` or ``error`` for the device's open (``DURING_OPEN``), nor ``connecting`` for its reader
(``LINKED``) — the runner's awaits let an unlocked event land between two steps, and the rows say which. The other
decisions are conditional: a void leaves a station that is not dealing where it is (``DEAL_VOIDED``), a deal
recorded while the station deals no more turns ``dealing`` into ``paused`` (``DEAL_RECORDED_IDLE``), and the bank
coming back is only an event of a station that waits for it (``BANK_BACK_*``).
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

EVERY = frozenset(S)
# Before the first CONNECT there is no device, no reader and no deal: only the judge's commands, the link's
# failure to open and a ledger write of start-up (the void of a deal a crash interrupted) reach an idle station.
CONNECTED = EVERY - {S.IDLE}
# The judge's CONNECT and the LINK_OPENED that follows it run under the station's lock, the device's open between
# them. Nothing else sets READY (only LINK_OPENED and RESET, both under the lock) or ERROR (the reader of the
# previous device is closed before CONNECT, the new one starts after LINK_OPENED); an unlocked event (the judge's
# Pause or Stop, the bank's answer to a write, the service's own report of a failed open) may land in between.
DURING_OPEN = EVERY - {S.IDLE, S.READY, S.ERROR}
# A device is connected and its reader runs: not before the first device, not while one is being opened.
LINKED = EVERY - {S.IDLE, S.CONNECTING}

# Each event of a single outcome: the statuses it may arrive in (the table's rows), and the status it leads to.
SINGLE: dict[StationEvent, tuple[frozenset[StationStatus], StationStatus]] = {
    E.CONNECT: (EVERY, S.CONNECTING),  # the judge (or the autostart) may connect, or replace the device, any time
    E.LINK_OPENED: (DURING_OPEN, S.READY),
    E.LINK_CLOSED: (EVERY, S.DISCONNECTED),  # the judge's Disconnect, the reader's end, a failed open: any time
    E.RESET: (LINKED, S.READY),  # Reset without a device is LINK_CLOSED
    E.PAUSE: (EVERY, S.PAUSED),  # the judge's console offers Pause and Stop in every status
    E.STOP: (EVERY, S.STOPPED),
    E.READER_FAILED: (LINKED, S.ERROR),
    # asked of the device the station holds (the judge may pause, stop or reconnect while the request is out)
    E.DEAL_REQUESTED: (CONNECTED, S.DEALING),
    E.DEVICE_REFUSED: (CONNECTED, S.NEEDS_REDEAL),
    E.WRITE_HELD: (EVERY, S.BANK_WAITING),  # the start-up void of an interrupted deal may wait for the bank too
    E.TARGET_REACHED: (CONNECTED, S.TARGET_REACHED),  # after a deal, a void or the judge's Start
    E.LOST_DEAL_VOIDED: (CONNECTED, S.NEEDS_REDEAL),  # the void of a dealt deal the bank refused or never took
    E.BOARD_REFUSED: (CONNECTED, S.NEEDS_REDEAL),  # variant 1: a dealt board the disk refused
}

# A void leaves a station that is not dealing where it is; any other needs the judge's re-deal.
_AT_REST = (S.STOPPED, S.IDLE, S.DISCONNECTED, S.BANK_WAITING)


def _table() -> dict[StationStatus, dict[StationEvent, StationStatus]]:
    table: dict[StationStatus, dict[StationEvent, StationStatus]] = {s: {} for s in S}
    for event, (sources, after) in SINGLE.items():
        for s in sources:
            table[s][event] = after
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
