"""The director's export API: a drawn session's deal files, its boards made on a machine, its hand records.

Routes that parse, call and render: the steps are ``dealer.app.exports`` (the session's folder, board making with
its per-copy watchdog — the same code as ``dealer export boards`` —, the ledger's ``export`` record of every
written file set and finished board-making run) and ``dealer.app.draws`` (the boards' numbering, the reveal gate
of hand records), over ``dealer.export`` and ``dealer.handrecords.publish``. Everything is director only. Files of
a session live in ``VAR/export/<session>-<id>/``; the board-making journal is kept there too, so a service
restarted in the middle of board making resumes where it stopped when the director starts it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import Response

from dealer.app.closed import CLOSED_LABEL
from dealer.app.draws import RevealGate
from dealer.app.exports import (
    BoardProgress,
    interrupted_progress,
    make_boards,
    record_export,
    session_at_rest,
    session_boards,
    show_board_cards,
)
from dealer.app.jobs import Job, JobBusy, JobState
from dealer.app.operator_messages import (
    BoardsView,
    Foul,
    FoulShown,
)
from dealer.app.service import Service
from dealer.core.errors import DealerError, Phrase
from dealer.export.at_rest import AtRest
from dealer.export.boards import SessionBoard
from dealer.export.journal import FoulCopy
from dealer.export.machine import Progress, Stage
from dealer.export.names import board_journal, competition_meta, session_folder, session_slug
from dealer.formats import ExportMeta
from dealer.handrecords.publish import OUTPUTS, NotRevealedError, publish
from dealer.serving.i18n import error_detail, translate

from .auth import role_check
from .custody import key_access, refusal
from .models import (
    BoardCards,
    BoardCardsShown,
    FileParam,
    FilesWritten,
    HandRecords,
    LabelParam,
    MakeBoards,
    WriteFiles,
)

log = logging.getLogger("dealer.export")


def attachment(name: str) -> str:
    """A download's Content-Disposition: the name as it is (RFC 5987, Cyrillic kept) and a Latin fallback."""

    from dealer.formats.dlm import latin

    fallback = re.sub(r"[^A-Za-z0-9._-]", "_", latin(name))
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


_CARD_NAME = re.compile(r"[♠♥♦♣][AKQJT2-9]|\b[SHDC][AKQJT2-9]\b")


def _card_free(text: str) -> str:
    """An error text with every card name blanked out (the reason of a foul names the card)."""
    return _CARD_NAME.sub("…", text)


FOUL_PUBLIC_KEYS = ("board", "copy", "attempt", "kind", "pocket", "position")  # all the blind console gets


def _foul(f: FoulCopy, cards: bool) -> Foul:
    """A foul copy; without ``cards`` (the judge's console without Show cards) which pocket and which card
    position went wrong only, never the card (nor the pocket it belongs in, nor the reason, which names it)."""
    if not cards:
        return Foul(board=f.board, copy=f.copy, attempt=f.attempt, kind=f.kind, pocket=f.pocket, position=f.position)
    return FoulShown(
        board=f.board,
        copy=f.copy,
        attempt=f.attempt,
        kind=f.kind,
        pocket=f.pocket,
        position=f.position,
        reason=error_detail(f.reason_phrase()),
        card=f.card,
        expected=f.expected,
    )


def boards_view(
    label: str, state: JobState, p: BoardProgress, error: str | None = None, cards: bool = False
) -> BoardsView:
    return BoardsView(
        label=label,
        state=state,
        boards=p.boards,
        copies_total=p.total_copies,
        copies_done=p.copies_done,
        current=p.current,
        made=list(p.made),
        skipped=list(p.skipped),
        fouls=[_foul(f, cards) for f in p.fouls],
        error=error if cards or error is None else _card_free(error),
    )


def job_view(job: Job[BoardProgress], cards: bool) -> BoardsView:
    return boards_view(job.key, job.state, job.progress, job.error, cards)


def make_router(service: Service) -> APIRouter:
    from dealer.draw.director import Director

    router = APIRouter()
    director = service.director  # the director's console's too (one cache of the sealed trees)
    jobs = service.jobs
    export_root = service.config.var_dir / "export"

    access = Depends(key_access(service.custody, "director"))  # the key only for the signed-in browser
    judge_access = Depends(key_access(service.custody, "judge"))  # the technical judge never uses it
    read = [Depends(role_check(service.secrets, "director", state_changing=False)), access]
    write = [Depends(role_check(service.secrets, "director", state_changing=True)), access]
    judge_write = [Depends(role_check(service.secrets, "judge", state_changing=True)), judge_access]

    def guard() -> Director:
        return director

    def out_dir(label: str) -> Path:
        return export_root / session_folder(label)

    def at_rest(d: Director, label: str) -> AtRest:
        return session_at_rest(d, label)

    async def boards_of(d: Director, label: str, first: int, copies: int) -> list[SessionBoard]:
        try:
            return await session_boards(service, label, first=first, copies=copies)
        except DealerError as exc:
            raise refusal(exc) from exc

    def shown(label: str) -> str:
        """The session as files and hand records name it: variant 1's boards by the variant's own name."""
        if label == CLOSED_LABEL and service.closed is not None:
            return translate(service.config.language, "audience.title_closed")
        return label

    # Any: ExportMeta's own fields, passed through by name (str, bool and int among them)
    def meta_of(label: str, event: str = "", **extra: Any) -> ExportMeta:
        """PBN Event (the given one, else the session), Site and Date by the regulation (dealer.export.names)."""
        return competition_meta(service.regulation, ExportMeta(event=event or shown(label), **extra), date.today())

    async def record(kind: str, label: str, paths: list[Path], **extra: object) -> None:
        await service.bank.call(record_export, service.bank.bank, kind, label, paths, **extra)

    # -- deal files -----------------------------------------------------------------------------------------
    @router.post("/api/director/draws/{label}/files", dependencies=write, response_model=FilesWritten)
    async def write_files(label: LabelParam, body: WriteFiles | None = None) -> FilesWritten:
        d = guard()
        body = body or WriteFiles()
        boards = await boards_of(d, label, body.first, body.copies or service.regulation.copies)
        meta = meta_of(label, body.event or "", sealed=body.sealed, copies=boards[0].copies)
        from dealer.export.files import write_session_files

        try:
            paths = await asyncio.to_thread(
                write_session_files,
                boards,
                out_dir(label),
                session_slug(shown(label)),  # variant 1's files by the variant's name («Закрытая_сдача.pbn»)
                list(body.formats),
                meta,
                at_rest(d, label),
            )
        except DealerError as exc:
            raise refusal(exc) from exc
        await record("files", label, paths, sealed=meta.sealed)
        return FilesWritten(label=label, boards=len(boards), files=[p.name for p in paths])

    @router.get(
        "/api/director/draws/{label}/files/{name}",
        dependencies=read,
        response_class=Response,
        responses={200: {"content": {"application/octet-stream": {}}}},
    )
    async def download(label: LabelParam, name: FileParam) -> Response:
        """A file of the session, opened with the chief judge's key when sealed (423 for anyone else)."""
        d = guard()
        folder = out_dir(label)
        path = folder / name
        if name != Path(name).name or name.startswith(".") or not path.is_file():
            raise HTTPException(404, error_detail(Phrase("no such file for this session")))
        try:
            data = await asyncio.to_thread(at_rest(d, label).read, path)
        except DealerError as exc:
            raise refusal(exc) from exc
        headers = {"Content-Disposition": attachment(name), "Cache-Control": "no-store"}
        return Response(data, media_type="application/octet-stream", headers=headers)

    # -- boards on a machine --------------------------------------------------------------------------------
    async def run_boards(job: Job[BoardProgress], boards: list[SessionBoard], body: MakeBoards, sealed: AtRest) -> None:
        """The whole run, set-up included: whatever fails here ends the job ``failed`` (the job runner)."""
        p = job.progress

        def on_progress(pr: Progress) -> None:
            p.copies_done = pr.copies_done
            p.current = translate(  # the service's language: «коробка 7 из 8 (№ 7), экземпляр 2 из 2»
                service.config.language, "director.copy_progress", index=pr.index, total=pr.total, board=pr.board,
                copy=pr.copy, copies=pr.copies,
            )  # fmt: skip
            if pr.stage is Stage.DONE:
                p.made.append((pr.board, pr.copy))
            elif pr.stage is Stage.SKIPPED:
                p.skipped.append((pr.board, pr.copy))
            elif pr.stage is Stage.FOUL and pr.foul is not None:
                p.fouls.append(pr.foul)
            service.operator.send(job_view(job, cards=service.board_cards_shown))

        journal = board_journal(service.config.var_dir, job.key)  # in out_dir(job.key), made by make_boards
        done = await make_boards(
            body.device,
            boards,
            journal,
            copy_timeout=body.copy_timeout,
            max_attempts=body.max_attempts,
            on_progress=on_progress,
            pace=body.pace,
            faults=body.faults,
            seed=body.seed,
            at_rest=sealed,
        )
        machine = dataclasses.asdict(done.machine) if done.machine is not None else None
        await record("boards", job.key, [journal], copies=p.total_copies, machine=machine)

    @router.post("/api/judge/boards/cards", response_model=BoardCardsShown, dependencies=judge_write)
    async def board_cards(body: BoardCards) -> BoardCardsShown:
        """Show cards for board making on the judge's console (ledgered before anything is shown), or hide them."""
        await show_board_cards(service, body.show, time.time())
        return BoardCardsShown(show=body.show)

    @router.post("/api/director/draws/{label}/boards", dependencies=write, status_code=202, response_model=BoardsView)
    async def start_boards(label: LabelParam, body: MakeBoards | None = None) -> BoardsView:
        d = guard()
        body = body or MakeBoards()
        running = jobs.running("boards", label)
        if running is not None:
            text = Phrase(
                "boards of {label!r} are being made ({current})", label=label, current=running.progress.current
            )
            raise HTTPException(409, error_detail(text))
        boards = await boards_of(d, label, body.first, body.copies or service.regulation.copies)
        progress = BoardProgress(boards=len(boards), total_copies=sum(b.copies for b in boards))
        try:
            job = jobs.start(
                "boards",
                label,
                progress,
                lambda j: run_boards(j, boards, body, at_rest(d, label)),
                on_end=lambda j: service.operator.send(job_view(j, cards=service.board_cards_shown)),
            )
        except JobBusy as exc:
            raise HTTPException(409, error_detail(exc)) from exc
        return job_view(job, cards=d.bank.unlocked)

    @router.get("/api/director/draws/{label}/boards", dependencies=read, response_model=BoardsView)
    async def boards_progress(label: LabelParam) -> BoardsView:
        d = guard()
        job = jobs.get("boards", label)
        if job is not None:  # a foul copy's card and pockets only for the signed-in chief judge (the key is theirs)
            return job_view(job, cards=d.bank.unlocked)
        # made in an earlier run of the service: what its journal says is finished
        progress = interrupted_progress(service.config.var_dir, label, at_rest(d, label))
        if progress is None:
            return boards_view(label, JobState.IDLE, BoardProgress())
        return boards_view(label, JobState.INTERRUPTED, progress)

    # -- hand records ---------------------------------------------------------------------------------------
    @router.post("/api/director/draws/{label}/handrecords", dependencies=write, response_model=FilesWritten)
    async def handrecords(label: LabelParam, body: HandRecords | None = None) -> FilesWritten:
        d = guard()
        body = body or HandRecords()
        kinds = list(body.formats or OUTPUTS)
        lang = body.lang or service.config.language
        try:
            gate = RevealGate(d.bank, CLOSED_LABEL if service.closed is not None else None)
            await service.bank.call(gate.ensure_revealed, label)
        except NotRevealedError as exc:
            raise HTTPException(403, error_detail(exc)) from exc
        except DealerError as exc:
            raise refusal(exc) from exc
        boards = await boards_of(d, label, body.first, 1)
        records = [b.record() for b in boards]
        written: list[Path] = []
        word = translate(
            service.config.language, "files.handrecords"
        )  # «Тур_1.расклады.pdf», «Round_1.handrecords.pdf»

        async def work(_: Job[None]) -> None:
            paths = await asyncio.to_thread(
                publish,
                records,
                out_dir(label),
                f"{session_slug(shown(label))}.{word}",
                gate=None,  # checked above, on the bank's thread
                kinds=kinds,
                title=body.title or shown(label),
                subtitle=body.subtitle,
                lang=lang if lang in ("en", "ru") else "en",
                meta=meta_of(label),
            )
            await record("handrecords", label, paths)
            written.extend(paths)

        try:
            job = jobs.start("handrecords", label, None, work)
        except JobBusy as exc:
            raise HTTPException(409, error_detail(exc)) from exc
        await job.wait()
        if job.state is not JobState.DONE:
            status = 400 if isinstance(job.exception, DealerError) else 500
            reason = error_detail(job.exception) if job.exception is not None else str(job.error)
            raise HTTPException(
                status, error_detail(Phrase("hand records of {label!r}: {reason}", label=label, reason=reason))
            )
        return FilesWritten(label=label, boards=len(records), files=[p.name for p in written])

    return router
