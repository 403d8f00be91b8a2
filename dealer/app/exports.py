"""The director's export steps, one implementation for the director's console and ``dealer export boards``.

A session's files live in a folder of its own (``dealer.export.names.session_folder``: the readable slug of the
label, then an id of the exact label, so "Round 1" and "Round_1" never share a folder). Boards are made on a
machine with a per-copy watchdog (``make_boards``): a machine (or link) that goes quiet in the middle of a copy
makes that copy foul instead of stalling the run for ever — the web's job and the CLI's command both go through
it. Each written file set and each finished board-making run is recorded in the ledger (kind ``export``) with
the files' SHA-256 (``record_export``, on the bank's thread).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.core.events import DeviceEvent
from dealer.core.json_types import JsonObject
from dealer.export.journal import FoulCopy
from dealer.export.machine import CopyMaker, Progress, ProgressCallback

if TYPE_CHECKING:  # board making loads the device layer only when it runs
    from dealer.draw.director import Director
    from dealer.export.at_rest import AtRest
    from dealer.export.boards import SessionBoard
    from dealer.export.run import BoardsDone
    from dealer.formats import BoardRecord

    from .jobs import Job
    from .service import Service

MIN_COPY_DEADLINE = 30.0  # seconds a copy may take at least, whatever the pace


@dataclass
class BoardProgress:
    """What a board-making run has done so far, as the director's console sees it."""

    boards: int = 0
    total_copies: int = 0
    copies_done: int = 0
    current: str = ""
    made: list[tuple[int, int]] = field(default_factory=list)
    skipped: list[tuple[int, int]] = field(default_factory=list)
    fouls: list[FoulCopy] = field(default_factory=list)


class CopyTimeout(DealerError, TimeoutError):
    """The machine did not finish a copy in time (the copy is foul and made again)."""


class WatchdogMaker:
    """A ``CopyMaker`` that gives each copy a deadline: a machine (or link) that goes quiet in the middle of a
    copy makes that copy foul instead of stalling the board making for ever."""

    def __init__(self, inner: CopyMaker, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    async def make_copy(self, board_number: int, deal: Deal, copy: int) -> Iterable[DeviceEvent]:
        try:
            return await asyncio.wait_for(self.inner.make_copy(board_number, deal, copy), self.seconds)
        except TimeoutError:
            raise CopyTimeout(
                "board {board_number} copy {copy}: no end from the machine in {seconds:g} s",
                board_number=board_number,
                copy=copy,
                seconds=self.seconds,
            ) from None

    async def recover(self) -> None:
        await asyncio.wait_for(self.inner.recover(), self.seconds)


def copy_deadline(copy_timeout: float | None, pace: float) -> float:
    """Seconds one copy may take: the given timeout, else four times the pace and at least 30 s."""
    return copy_timeout or max(MIN_COPY_DEADLINE, 4 * pace)


async def make_boards(
    device: str,
    boards: Sequence[SessionBoard],
    journal: Path,
    *,
    copy_timeout: float | None = None,
    max_attempts: int = 3,
    on_progress: ProgressCallback | None = None,
    before_remake: Callable[[FoulCopy], Awaitable[None]] | None = None,
    pace: float = 0.5,
    faults: str = "",
    seed: int | None = None,
    at_rest: AtRest | None = None,
) -> BoardsDone:
    """Every copy of ``boards`` made on ``device`` (``dealer.export.run.make_boards_on``), each copy under the
    watchdog's deadline (``copy_deadline``); the journal's folder is made first."""
    from dealer.export.run import make_boards_on

    deadline = copy_deadline(copy_timeout, pace)
    journal.parent.mkdir(parents=True, exist_ok=True)
    return await make_boards_on(
        device,
        boards,
        journal,
        max_attempts=max_attempts,
        on_progress=on_progress,
        before_remake=before_remake,
        wrap=lambda maker: WatchdogMaker(maker, deadline),
        pace=pace,
        faults=faults,
        seed=seed,
        at_rest=at_rest,
    )


@dataclass(frozen=True, slots=True)
class MachineRun:
    """How the director asked a session's boards to be made: the device and the watchdog's and retries' settings."""

    device: str = "simulator"
    pace: float = 0.5
    copy_timeout: float | None = None
    faults: str = ""
    seed: int | None = None
    max_attempts: int = 3


async def run_board_making(
    service: Service,
    job: Job[BoardProgress],
    boards: Sequence[SessionBoard],
    run: MachineRun,
    sealed: AtRest,
    *,
    copy_text: Callable[[Progress], str],
    changed: Callable[[Job[BoardProgress]], None],
) -> None:
    """The director's board-making job, set-up included (whatever fails ends the job ``failed``): every copy made
    under the watchdog, the job's progress kept (``copy_text`` says the copy in progress in the service's language;
    ``changed`` is told after each step), and the finished run recorded in the ledger with its journal's SHA-256."""
    import dataclasses

    from dealer.export.machine import Stage
    from dealer.export.names import board_journal

    p = job.progress

    def on_progress(pr: Progress) -> None:
        p.copies_done = pr.copies_done
        p.current = copy_text(pr)
        if pr.stage is Stage.DONE:
            p.made.append((pr.board, pr.copy))
        elif pr.stage is Stage.SKIPPED:
            p.skipped.append((pr.board, pr.copy))
        elif pr.stage is Stage.FOUL and pr.foul is not None:
            p.fouls.append(pr.foul)
        changed(job)

    journal = board_journal(service.config.var_dir, job.key)  # in the session's folder, made by make_boards
    done = await make_boards(
        run.device,
        boards,
        journal,
        copy_timeout=run.copy_timeout,
        max_attempts=run.max_attempts,
        on_progress=on_progress,
        pace=run.pace,
        faults=run.faults,
        seed=run.seed,
        at_rest=sealed,
    )
    machine = dataclasses.asdict(done.machine) if done.machine is not None else None
    await service.bank.call(
        record_export, service.bank.bank, "boards", job.key, [journal], copies=p.total_copies, machine=machine
    )


class EventLedger(Protocol):
    """What recording an export needs of the bank."""

    def record_event(self, kind: str, payload: JsonObject) -> int: ...


def export_payload(what: str, label: str, paths: Sequence[Path], **extra: object) -> JsonObject:
    """The ledger's ``export`` entry of a written file set or a board-making run: each file's SHA-256."""
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    return {"what": what, "label": label, "files": digests, **extra}


def record_export(bank: EventLedger, what: str, label: str, paths: Sequence[Path], **extra: object) -> int:
    """Record an export in the ledger (on the bank's thread); the entry's index."""
    return bank.record_event("export", export_payload(what, label, paths, **extra))


# -- a session's boards and files on the director's console --------------------------------------------------
async def session_boards(service: Service, label: str, *, first: int, copies: int) -> list[SessionBoard]:
    """The boards of a session numbered from ``first`` (Law 2), ``copies`` of each: variant 1's boards as the
    stations dealt them (``CLOSED_LABEL``), else the draw's drawn deals (read on the bank's thread)."""
    from dealer.app.closed import CLOSED_LABEL
    from dealer.app.draws import drawn_boards, renumbered

    if label == CLOSED_LABEL and service.closed is not None:  # variant 1: the boards the stations dealt
        made = service.closed.session_boards()
        if not made:
            raise DealerError("no board has been dealt yet (variant 1)")
        return renumbered(made, first=first, copies=copies)
    drawn = await service.bank.call(service.director.drawn_deals, label)
    return drawn_boards(drawn, first=first, copies=copies)


def session_at_rest(director: Director, label: str) -> AtRest:
    """The session's files in ``var/export`` sealed under the chief judge's key (``dealer.export.at_rest``): the
    account that runs the service reads that folder, and before play they are the drawn deals."""
    from dealer.export.at_rest import AtRest

    bank = director.bank
    return AtRest(lambda: bank.keyring, bank.bank_id, label)


async def show_board_cards(service: Service, show: bool, now: float) -> None:
    """Show cards for board making on the judge's console (recorded in the ledger before anything is shown), or
    hide them."""
    if show and not service.board_cards_shown:
        payload: JsonObject = {"what": "board making", "by": "judge", "time": now}
        await service.bank.call(service.bank.bank.record_event, "cards_shown", payload)
    service.board_cards_shown = show


def interrupted_progress(var_dir: Path, label: str, at_rest: AtRest) -> BoardProgress | None:
    """What a board-making run of ``label`` in an earlier run of the service finished, as its journal says (the
    copies done are skipped when it is started again); None when there is no journal."""
    from dealer.export.journal import finished_copies
    from dealer.export.names import board_journal

    done = finished_copies(board_journal(var_dir, label), at_rest)
    if done is None:
        return None
    return BoardProgress(copies_done=len(done), skipped=done)


# -- a session's deal files and hand records -------------------------------------------------------------------
def shown_label(service: Service, label: str, variant_name: str) -> str:
    """The session as files and hand records name it: variant 1's boards by the variant's own name
    (``variant_name``, in the service's language), any other session by its label."""
    from dealer.app.closed import CLOSED_LABEL

    if label == CLOSED_LABEL and service.closed is not None:
        return variant_name
    return label


def session_dir(service: Service, label: str) -> Path:
    """The session's folder of exported files, ``VAR/export/<session>-<id>/``."""
    from dealer.export.names import session_folder

    return service.config.var_dir / "export" / session_folder(label)


@dataclass(frozen=True, slots=True)
class FilesDone:
    """A written set of a session's files: how many boards, and the files."""

    boards: int
    paths: list[Path]


async def write_deal_files(
    service: Service,
    label: str,
    *,
    formats: Sequence[str],
    first: int = 1,
    copies: int | None = None,
    event: str = "",
    sealed: bool = True,
    variant_name: str = "",
) -> FilesDone:
    """The session's deal files (``formats``) in its folder, sealed at rest under the chief judge's key: boards
    numbered from ``first`` with ``copies`` of each (default: the regulation's), PBN's Event ``event`` else the
    session's shown name (``shown_label``; the files' stem too: «Закрытая_сдача.pbn»), Site and Date by the
    regulation; the files recorded in the ledger (``export``)."""
    from dealer.export.files import write_session_files
    from dealer.export.names import competition_meta, session_slug
    from dealer.formats import ExportMeta

    boards = await session_boards(service, label, first=first, copies=copies or service.regulation.copies)
    shown = shown_label(service, label, variant_name)
    meta = competition_meta(
        service.regulation, ExportMeta(event=event or shown, sealed=sealed, copies=boards[0].copies)
    )
    at_rest = session_at_rest(service.director, label)
    paths = await asyncio.to_thread(
        write_session_files, boards, session_dir(service, label), session_slug(shown), list(formats), meta, at_rest
    )
    await service.bank.call(record_export, service.bank.bank, "files", label, paths, sealed=meta.sealed)
    return FilesDone(len(boards), paths)


async def hand_record_boards(service: Service, label: str, *, first: int = 1) -> list[BoardRecord]:
    """The boards of ``label`` for its hand records, numbered from ``first``, once the reveal gate lets them out
    (``NotRevealedError`` before the reveal; variant 1's boards are the director's to publish). On the bank's
    thread, the gate."""
    from dealer.app.closed import CLOSED_LABEL
    from dealer.app.draws import RevealGate

    gate = RevealGate(service.director.bank, CLOSED_LABEL if service.closed is not None else None)
    await service.bank.call(gate.ensure_revealed, label)
    return [b.record() for b in await session_boards(service, label, first=first, copies=1)]


async def publish_hand_records(
    service: Service,
    label: str,
    records: Sequence[BoardRecord],
    *,
    word: str,
    kinds: Sequence[str],
    title: str = "",
    subtitle: str = "",
    lang: str | None = None,
    variant_name: str = "",
) -> list[Path]:
    """The hand records of ``records`` (checked by ``hand_record_boards``) in the session's folder, named
    ``<shown name>.<word>`` («Тур_1.расклады.pdf»), titled ``title`` else the shown name, in ``lang`` (else the
    service's; English for any other), PBN's Event, Site and Date by the regulation; recorded in the ledger. The
    double-dummy analysis runs off the event loop."""
    from dealer.export.names import competition_meta, session_slug
    from dealer.formats import ExportMeta
    from dealer.handrecords.publish import publish

    shown = shown_label(service, label, variant_name)
    language = lang or service.config.language
    paths = await asyncio.to_thread(
        publish,
        records,
        session_dir(service, label),
        f"{session_slug(shown)}.{word}",
        gate=None,  # checked by hand_record_boards, on the bank's thread
        kinds=kinds,
        title=title or shown,
        subtitle=subtitle,
        lang=language if language in ("en", "ru") else "en",
        meta=competition_meta(service.regulation, ExportMeta(event=shown)),
    )
    await service.bank.call(record_export, service.bank.bank, "handrecords", label, paths)
    return paths
