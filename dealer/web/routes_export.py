"""The director's export API: a drawn session's deal files, its boards made on a machine, its hand records.

Routes that parse, call and render: the steps are ``dealer.app.exports`` (the session's folder, its deal files and
hand records named by the session's shown name, board making with its per-copy watchdog — the same code as
``dealer export boards`` —, the ledger's ``export`` record of every written file set and finished board-making run),
``dealer.app.board_views`` (board making as each console sees it, cards hidden without Show cards) and
``dealer.app.draws`` (the boards' numbering, the reveal gate of hand records), over ``dealer.export`` and
``dealer.handrecords.publish``. Everything is director only. Files of
a session live in ``VAR/export/<session>-<id>/``; the board-making journal is kept there too, so a service
restarted in the middle of board making resumes where it stopped when the director starts it again.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import Response

from dealer.app.board_views import boards_view, job_view
from dealer.app.exports import (
    BoardProgress,
    MachineRun,
    hand_record_boards,
    interrupted_progress,
    publish_hand_records,
    run_board_making,
    session_at_rest,
    session_boards,
    session_dir,
    show_board_cards,
    write_deal_files,
)
from dealer.app.jobs import Job, JobBusy, JobState
from dealer.app.operator_messages import BoardsView
from dealer.app.service import Service
from dealer.core.errors import DealerError, Phrase
from dealer.export.at_rest import AtRest
from dealer.export.boards import SessionBoard
from dealer.export.machine import Progress
from dealer.handrecords.publish import OUTPUTS, NotRevealedError
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


def console_view(job: Job[BoardProgress], cards: bool) -> BoardsView:
    """A board-making job as a console sees it, a foul's reason in the request's language."""
    return job_view(job, cards, error_detail)


def make_router(service: Service) -> APIRouter:
    from dealer.draw.director import Director

    router = APIRouter()
    director = service.director  # the director's console's too (one cache of the sealed trees)
    jobs = service.jobs

    access = Depends(key_access(service.custody, "director"))  # the key only for the signed-in browser
    judge_access = Depends(key_access(service.custody, "judge"))  # the technical judge never uses it
    read = [Depends(role_check(service.secrets, "director", state_changing=False)), access]
    write = [Depends(role_check(service.secrets, "director", state_changing=True)), access]
    judge_write = [Depends(role_check(service.secrets, "judge", state_changing=True)), judge_access]

    def guard() -> Director:
        return director

    def out_dir(label: str) -> Path:
        return session_dir(service, label)

    def at_rest(d: Director, label: str) -> AtRest:
        return session_at_rest(d, label)

    def variant_name() -> str:
        """Variant 1's name in the service's language, the files' and hand records' name for its boards."""
        return translate(service.config.language, "audience.title_closed")

    async def boards_of(d: Director, label: str, first: int, copies: int) -> list[SessionBoard]:
        try:
            return await session_boards(service, label, first=first, copies=copies)
        except DealerError as exc:
            raise refusal(exc) from exc

    # -- deal files -----------------------------------------------------------------------------------------
    @router.post("/api/director/draws/{label}/files", dependencies=write, response_model=FilesWritten)
    async def write_files(label: LabelParam, body: WriteFiles | None = None) -> FilesWritten:
        guard()
        body = body or WriteFiles()
        try:
            done = await write_deal_files(
                service,
                label,
                formats=body.formats,
                first=body.first,
                copies=body.copies,
                event=body.event or "",
                sealed=body.sealed,
                variant_name=variant_name(),  # variant 1's files by the variant's name («Закрытая_сдача.pbn»)
            )
        except DealerError as exc:
            raise refusal(exc) from exc
        return FilesWritten(label=label, boards=done.boards, files=[p.name for p in done.paths])

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
    def copy_text(pr: Progress) -> str:
        """The copy in progress in the service's language: «коробка 7 из 8 (№ 7), экземпляр 2 из 2»."""
        return translate(
            service.config.language, "director.copy_progress", index=pr.index, total=pr.total, board=pr.board,
            copy=pr.copy, copies=pr.copies,
        )  # fmt: skip

    def console_changed(job: Job[BoardProgress]) -> None:
        service.operator.send(console_view(job, cards=service.board_cards_shown))

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
        machine_run = MachineRun(body.device, body.pace, body.copy_timeout, body.faults, body.seed, body.max_attempts)
        try:
            job = jobs.start(
                "boards",
                label,
                progress,
                lambda j: run_board_making(
                    service, j, boards, machine_run, at_rest(d, label), copy_text=copy_text, changed=console_changed
                ),
                on_end=console_changed,
            )
        except JobBusy as exc:
            raise HTTPException(409, error_detail(exc)) from exc
        return console_view(job, cards=d.bank.unlocked)

    @router.get("/api/director/draws/{label}/boards", dependencies=read, response_model=BoardsView)
    async def boards_progress(label: LabelParam) -> BoardsView:
        d = guard()
        job = jobs.get("boards", label)
        if job is not None:  # a foul copy's card and pockets only for the signed-in chief judge (the key is theirs)
            return console_view(job, cards=d.bank.unlocked)
        # made in an earlier run of the service: what its journal says is finished
        progress = interrupted_progress(service.config.var_dir, label, at_rest(d, label))
        if progress is None:
            return boards_view(label, JobState.IDLE, BoardProgress(), error_detail)
        return boards_view(label, JobState.INTERRUPTED, progress, error_detail)

    # -- hand records ---------------------------------------------------------------------------------------
    @router.post("/api/director/draws/{label}/handrecords", dependencies=write, response_model=FilesWritten)
    async def handrecords(label: LabelParam, body: HandRecords | None = None) -> FilesWritten:
        guard()
        body = body or HandRecords()
        try:
            records = await hand_record_boards(service, label, first=body.first)
        except NotRevealedError as exc:
            raise HTTPException(403, error_detail(exc)) from exc
        except DealerError as exc:
            raise refusal(exc) from exc
        written: list[Path] = []
        word = translate(service.config.language, "files.handrecords")  # «Тур_1.расклады.pdf», «Round_1.handrecords…»

        async def work(_: Job[None]) -> None:
            paths = await publish_hand_records(
                service,
                label,
                records,
                word=word,
                kinds=list(body.formats or OUTPUTS),
                title=body.title or "",
                subtitle=body.subtitle,
                lang=body.lang,
                variant_name=variant_name(),
            )
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
