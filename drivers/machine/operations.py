"""The operation in progress on the machine (a random deal or one board copy): begun, fed the machine's reports
(deal start, cards, end, faults), ended or voided; every outcome becomes an event on the driver's stream and the
result of the operation's future. No I/O: stopping the machine is the driver's callback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from dealer.core import Card, Deal, Seat
from dealer.core.events import CardSeen, DealEnded, DealStarted, DeviceEvent, DeviceFault, FaultKind
from firmware_protocol.messages import BoardDone, CardRead, DealEnd, DealStart, Fault

from ..device import DeviceBusy
from .cards import Operation, Void, card_void, end_void, fault_kind


@dataclass(slots=True)
class DriverStats:
    cards: int = 0
    stale: int = 0
    reconnects: int = 0
    faults: int = 0


class Operations:
    """At most one operation at a time; ``emit`` puts an event on the driver's stream, ``now`` is the wall
    clock of the events, ``stop_machine`` sends ABORT (when the session is open)."""

    def __init__(
        self,
        emit: Callable[[DeviceEvent], None],
        now: Callable[[], float],
        stop_machine: Callable[[], None],
        stats: DriverStats,
    ) -> None:
        self._emit = emit
        self._now = now
        self._stop_machine = stop_machine
        self.stats = stats
        self.current: Operation | None = None
        self.last_ended: int | None = None  # the deal that ended well last, until another begins
        self._next_id = 1

    def begin(self, board: int | None = None, copy: int | None = None, target: Deal | None = None) -> Operation:
        if self.current is not None:
            raise DeviceBusy("deal {deal_id} is still in progress", deal_id=self.current.deal_id)
        op = Operation(self._next_id, board, copy, target)
        self._next_id = (self._next_id + 1) % 0xFFFFFFFF or 1
        op.outcome = asyncio.get_running_loop().create_future()
        self.current = op
        return op

    def forget(self, op: Operation) -> None:
        """The operation never started (its command failed)."""
        if self.current is op:
            self.current = None

    def void(self, op: Operation, void: Void, *, send_abort: bool = True, emit: bool = True) -> None:
        """The driver voids the operation: report, forget it, stop the machine."""
        fault = DeviceFault(
            void.kind,
            void.detail,
            self._now(),
            op.deal_id,
            void.position,
            None if void.card is None else Card(void.card),
            None if void.pocket is None else Seat(void.pocket),
        )
        if emit:
            self.stats.faults += 1
            self._emit(fault)
        self.forget(op)
        if op.outcome is not None and not op.outcome.done():
            op.outcome.set_result(fault)
        if send_abort:
            self._stop_machine()

    def void_current(self, kind: FaultKind, detail: str, *, emit: bool = True) -> int | None:
        """The host ended the operation (abort, reset, a lost link): void it without stopping the machine
        again; returns its deal id, if there was one."""
        op = self.current
        if op is None:
            return None
        self.void(op, Void(kind, detail), send_abort=False, emit=emit)
        return op.deal_id

    # -- the machine's reports -----------------------------------------------------------------------------
    def started(self, msg: DealStart) -> None:
        if self.current is not None and msg.deal_id == self.current.deal_id:
            self._emit(DealStarted(msg.deal_id, self._now()))
        elif not self.unknown_deal(msg):
            self.stats.stale += 1

    def unknown_deal(self, msg: DealStart | CardRead | DealEnd | BoardDone) -> bool:
        """A report naming a deal the host never started (ids are given in increasing order: a lower one is an
        earlier deal's leftover, stale) voids the operation in progress; True if it did."""
        op = self.current
        if op is None or (msg.deal_id is not None and msg.deal_id < op.deal_id):
            return False
        named = "none" if msg.deal_id is None else str(msg.deal_id)
        detail = (
            f"{msg.TYPE.name} names deal {named}, which the host never started, during deal {op.deal_id} "
            "(PROTOCOL.md §8)"
        )
        self.void(op, Void(FaultKind.PROTOCOL, detail))
        return True

    def card(self, msg: CardRead) -> None:
        op = self.current
        if op is None or msg.deal_id != op.deal_id:
            if not self.unknown_deal(msg):
                self.after_end(msg, msg.deal_id)
            return
        if msg.position is None:  # 0xFF is a legal position value, but no card's: the device never tells it
            self.void(op, Void(FaultKind.PROTOCOL, "CARD_READ without a position (0xFF) (PROTOCOL.md §8)", None))
            return
        ts = self._now()
        verdict = op.check.card(msg.position, msg.card, msg.pocket)
        if verdict is not None:
            void = card_void(op, verdict)
            if void is not None:
                self.void(op, void)
                return
        assert msg.pocket is not None  # a card without a pocket is void above
        if msg.card is None:  # unreadable: reported now, voids the deal at its end
            self._emit(CardSeen(op.deal_id, msg.position, None, Seat(msg.pocket), msg.confidence / 255, ts))
            return
        self.stats.cards += 1
        self._emit(CardSeen(op.deal_id, msg.position, Card(msg.card), Seat(msg.pocket), msg.confidence / 255, ts))

    def after_end(self, msg: CardRead | DealEnd | BoardDone, deal_id: int | None) -> None:
        """A report for no operation in progress: stale (an operation the host voided or never began), or, for
        the deal that has just ended well, a device reporting more than one whole deal: that is a fault."""
        if deal_id is None or deal_id != self.last_ended:
            self.stats.stale += 1
            return
        self.last_ended = None  # one fault per deal
        self.stats.faults += 1
        if isinstance(msg, CardRead):
            detail = f"CARD_READ position {msg.position} after the end of deal {deal_id} (a 53rd card) (PROTOCOL.md §8)"
            card, pocket = msg.card, msg.pocket
        else:
            detail = f"{msg.TYPE.name} again after the end of deal {deal_id} (PROTOCOL.md §8)"
            card = pocket = None
        self._emit(
            DeviceFault(
                FaultKind.EXTRA_CARD if isinstance(msg, CardRead) else FaultKind.PROTOCOL,
                detail,
                self._now(),
                deal_id,
                None,
                None if card is None else Card(card),
                None if pocket is None else Seat(pocket),
            )
        )

    def end(self, msg: DealEnd | BoardDone) -> None:
        op = self.current
        if op is None or msg.deal_id != op.deal_id:
            if not self.unknown_deal(msg):
                self.after_end(msg, msg.deal_id)
            return
        verdict = op.check.end(bytes(msg.record), msg.cards)
        if verdict is not None:
            self.void(op, end_void(op, verdict))
            return
        ended = DealEnded(op.deal_id, self._now(), bytes(msg.record))
        self.current = None
        self.last_ended = op.deal_id
        self._emit(ended)
        if op.outcome is not None and not op.outcome.done():
            op.outcome.set_result(ended)

    def fault(self, msg: Fault) -> None:
        op = self.current
        kind = fault_kind(msg.code)
        self.stats.faults += 1
        fault = DeviceFault(
            kind,
            msg.detail or kind.value,
            self._now(),
            msg.deal_id,
            msg.position,
            None if msg.card is None else Card(msg.card),
            None if msg.pocket is None else Seat(msg.pocket),
        )
        self._emit(fault)
        if op is not None and (msg.deal_id is None or msg.deal_id == op.deal_id):
            self.current = None
            if op.outcome is not None and not op.outcome.done():
                op.outcome.set_result(fault)

    def restarted(self, detail: str) -> None:
        """The machine restarted (power): a fault on the stream, the operation in progress void."""
        op = self.current
        self.stats.faults += 1
        self._emit(DeviceFault(FaultKind.POWER, detail, self._now(), op.deal_id if op is not None else None))
        self.void_current(FaultKind.POWER, detail, emit=False)
