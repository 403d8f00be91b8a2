"""Making the boards on a dealing machine, every reported card checked against the intended deal.

Board after board, copy after copy, the deal goes to the machine through a ``CopyMaker`` (the project's
driver via ``dealer.export.driver.DriverCopyMaker``, or a simple synchronous ``BoardMakingDevice``); each card
the machine reports is checked (readable, the pocket it belongs in, not twice, all 52, the machine's own
record). A mismatch or fault stops that copy, records it as foul (card and pocket) and the copy is made again,
up to ``max_attempts`` times. Finished copies are journalled, so an interrupted run resumes where it stopped;
a copy that was under way when the run stopped is made again in full.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol, cast

from dealer.core import Card, Deal, Seat
from dealer.core.dealcheck import DealCheck, Problem, Verdict
from dealer.core.errors import DealerError, Phrase
from dealer.core.events import CardSeen, DealEnded, DealStarted, DeviceEvent, DeviceFault, Disconnected, Reconnected

from .at_rest import AtRest
from .boards import SessionBoard
from .journal import FoulCopy, Journal


class CopyMaker(Protocol):
    """What the orchestrator needs of a machine: make one copy of a board and report what happened.

    ``make_copy`` returns the device's events of this copy (cards with pockets, faults, the end), which may
    be a lazy iterator: the orchestrator stops reading at the first wrong card. ``recover`` is called after
    a foul copy, before it is made again (stop the machine, clear its fault state).
    """

    async def make_copy(self, board_number: int, deal: Deal, copy: int) -> Iterable[DeviceEvent]: ...

    async def recover(self) -> None: ...


class BoardMakingDevice(Protocol):
    """A simple synchronous machine: ``make_board`` yields the events of one copy; ``abort`` stops it."""

    def make_board(self, board_number: int, deal: Deal, copy: int) -> Iterable[DeviceEvent]: ...

    def abort(self) -> None: ...


class SyncDeviceMaker:
    """``CopyMaker`` over a ``BoardMakingDevice``."""

    def __init__(self, device: BoardMakingDevice) -> None:
        self.device = device

    async def make_copy(self, board_number: int, deal: Deal, copy: int) -> Iterable[DeviceEvent]:
        return self.device.make_board(board_number, deal, copy)

    async def recover(self) -> None:
        self.device.abort()


class MachineError(DealerError, RuntimeError):
    """A copy could not be made correctly within the allowed attempts."""


class Stage(Enum):
    MAKING = "making"
    DONE = "done"
    FOUL = "foul"
    SKIPPED = "skipped"  # finished in an earlier run (journal)


@dataclass(frozen=True, slots=True)
class Progress:
    index: int  # board k of n, 1-based
    total: int
    board: int
    copy: int  # copy c of m, 1-based
    copies: int
    attempt: int
    stage: Stage
    copies_done: int  # all copies of all boards finished so far
    copies_total: int
    foul: FoulCopy | None = None

    def text(self) -> str:
        return f"board {self.index} of {self.total} (no. {self.board}), copy {self.copy} of {self.copies}"


@dataclass
class MakeReport:
    made: list[tuple[int, int]] = field(default_factory=list)
    skipped: list[tuple[int, int]] = field(default_factory=list)
    fouls: list[FoulCopy] = field(default_factory=list)


class _Foul(Exception):
    def __init__(
        self,
        reason: Phrase,
        card: int | None = None,
        pocket: int | None = None,
        expected: int | None = None,
        *,
        kind: str = "error",
        position: int | None = None,
    ):
        super().__init__(str(reason))
        self.reason = reason
        self.card = card
        self.pocket = pocket
        self.expected = expected
        self.kind = kind  # names no card: what the judge's console may be told
        self.position = None if position is None else position + 1


def _json_params(params: dict[str, object]) -> dict[str, str | int | None]:
    """A phrase's params as the journal keeps them (JSON: text, whole numbers, null)."""
    return {k: v if v is None or isinstance(v, str | int) else str(v) for k, v in params.items()}


def _name(card: int | None) -> str | None:
    return None if card is None else Card(card).pretty


def _seat(seat: int | None) -> str | None:
    return None if seat is None else Seat(seat).letter


def _card_foul(deal: Deal, event: CardSeen, verdict: Verdict) -> _Foul:
    """A card of the copy broke a rule of :class:`DealCheck`, worded for the journal and the judge."""
    card, position, pocket = verdict.card, event.position, event.pocket
    expected = None if card is None else deal.seat_of(card)
    match verdict.problem:
        case Problem.UNREADABLE:
            reason = Phrase("unreadable card at position {position}", position=position)
            return _Foul(reason, pocket=pocket, kind="unreadable", position=position)
        case Problem.DUPLICATE:
            reason = Phrase("card {card} reported twice", card=_name(card))
            return _Foul(reason, card, pocket, expected, kind="twice", position=position)
        case Problem.NO_POCKET:
            reason = Phrase("card {card} reported without a pocket", card=_name(card))
            return _Foul(reason, card, None, expected, kind="no_pocket", position=position)
        case Problem.WRONG_POCKET | Problem.SEAT_FULL:
            reason = Phrase(
                "card {card} went to pocket {pocket}, belongs in {expected}",
                card=_name(card),
                pocket=_seat(pocket),
                expected=_seat(expected),
            )
            return _Foul(reason, card, pocket, expected, kind="wrong_pocket", position=position)
        case _:  # GAP, REPEATED, EXTRA: a card at a position the copy cannot have
            reason = Phrase(
                "card at position {position}, expected position {expected}", position=position, expected=verdict.number
            )
            return _Foul(reason, card, pocket, expected, kind="out_of_order", position=position)


def check_copy(deal: Deal, events: Iterable[DeviceEvent]) -> None:
    """Consume one copy's events, raising ``_Foul`` at the first card or fault that is wrong."""
    check = DealCheck(deal)
    for event in events:
        if isinstance(event, CardSeen):
            card = None if event.card is None else int(event.card)
            pocket = None if event.pocket is None else int(event.pocket)
            verdict = check.card(event.position, card, pocket)
            if verdict is not None:
                raise _card_foul(deal, event, verdict)
        elif isinstance(event, DeviceFault):
            fault_card = None if event.card is None else int(event.card)
            belongs = None if fault_card is None else deal.seat_of(fault_card)
            raise _Foul(
                Phrase("machine fault {kind}: {detail}", kind=event.kind.value, detail=event.detail),
                fault_card,
                event.pocket,
                belongs,
                kind=f"fault:{event.kind.value}",
                position=check.cards_read,
            )
        elif isinstance(event, Disconnected):
            raise _Foul(
                Phrase("machine disconnected: {reason}", reason=event.reason),
                kind="disconnected",
                position=check.cards_read,
            )
        elif isinstance(event, DealEnded):
            verdict = check.end(event.record)
            if verdict is None:
                return
            if verdict.problem is Problem.SHORT:
                first = verdict.card
                assert first is not None
                missing = 52 - check.cards_read
                reason = Phrase(
                    "board done after {n} cards; missing {card} and {more} more",
                    n=check.cards_read,
                    card=_name(first),
                    more=missing - 1,
                )
                raise _Foul(reason, first, None, deal.seat_of(first), kind="incomplete", position=check.cards_read)
            raise _Foul(Phrase("the machine's own record of the board differs from the deal"), kind="record_differs")
        elif isinstance(event, DealStarted | Reconnected):
            continue
    raise _Foul(
        Phrase("the machine stopped after {n} cards without finishing the board", n=check.cards_read),
        kind="stopped",
        position=check.cards_read,
    )


ProgressCallback = Callable[[Progress], None]


class BoardMaker:
    def __init__(
        self,
        device: CopyMaker | BoardMakingDevice,
        journal_path: Path,
        *,
        max_attempts: int = 3,
        on_progress: ProgressCallback | None = None,
        before_remake: Callable[[FoulCopy], Awaitable[None]] | None = None,
        at_rest: AtRest | None = None,
    ) -> None:
        """``before_remake`` is awaited after a foul copy, e.g. to wait for the operator to clear a jam;
        ``at_rest``: the journal sealed under the chief judge's key."""
        if hasattr(device, "make_copy"):
            self.maker: CopyMaker = cast(CopyMaker, device)
        else:
            self.maker = SyncDeviceMaker(device)
        self.journal_path = journal_path
        self.max_attempts = max_attempts
        self.on_progress = on_progress
        self.before_remake = before_remake
        self.at_rest = at_rest

    async def _make(self, board: SessionBoard, copy: int) -> Iterable[DeviceEvent]:
        try:
            return await self.maker.make_copy(board.number, board.deal, copy)
        except DealerError as exc:  # the driver refused or lost the machine: this copy is foul
            raise _Foul(Phrase("device error: {exc}", exc=str(exc)), kind="device_error") from exc

    def _tell(self, progress: Progress) -> None:
        if self.on_progress is not None:
            self.on_progress(progress)

    def run(self, boards: Sequence[SessionBoard]) -> MakeReport:
        """Make every copy of every board (blocking; see ``run_async``)."""
        return asyncio.run(self.run_async(boards))

    async def run_async(self, boards: Sequence[SessionBoard]) -> MakeReport:
        journal = Journal.open(self.journal_path, boards, self.at_rest)
        report = MakeReport()
        total = len(boards)
        copies_total = sum(b.copies for b in boards)
        done_count = sum(1 for b in boards for c in range(1, b.copies + 1) if journal.is_done(b.number, c))
        for index, board in enumerate(boards, start=1):
            for copy in range(1, board.copies + 1):
                where = (index, total, board.number, copy, board.copies)
                if journal.is_done(board.number, copy):
                    report.skipped.append((board.number, copy))
                    self._tell(Progress(*where, 0, Stage.SKIPPED, done_count, copies_total))
                    continue
                for attempt in range(1, self.max_attempts + 1):
                    self._tell(Progress(*where, attempt, Stage.MAKING, done_count, copies_total))
                    try:
                        check_copy(board.deal, await self._make(board, copy))
                    except _Foul as foul:
                        await self.maker.recover()
                        record = FoulCopy(board.number, copy, attempt, str(foul.reason), _name(foul.card),
                                          _seat(foul.pocket), _seat(foul.expected), foul.kind,
                                          foul.position, foul.reason.template,
                                          _json_params(foul.reason.params))  # fmt: skip
                        journal.foul(record)
                        report.fouls.append(record)
                        self._tell(Progress(*where, attempt, Stage.FOUL, done_count, copies_total, record))
                        if self.before_remake is not None and attempt < self.max_attempts:
                            await self.before_remake(record)
                        continue
                    journal.finish(board.number, copy)
                    done_count += 1
                    report.made.append((board.number, copy))
                    self._tell(Progress(*where, attempt, Stage.DONE, done_count, copies_total))
                    break
                else:
                    raise MachineError(
                        "board {number} copy {copy} was foul {max_attempts} times in a row (last: {reason}); fix "
                        "the machine and run again to resume",
                        number=board.number,
                        copy=copy,
                        max_attempts=self.max_attempts,
                        reason=report.fouls[-1].reason,
                    )
        return report
