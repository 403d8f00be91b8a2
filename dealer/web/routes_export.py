"""The director's export API: a drawn session's deal files, its boards made on a machine, its hand records.

Thin routes over ``dealer.export`` (numbering, files, ``BoardMaker`` with its resumable journal) and
``dealer.handrecords.publish`` (behind the reveal gate). Everything is director only. Files of a session live in
``VAR/export/<session>-<id>/`` (``session_folder``: the id is from the exact label, so "Round 1" and "Round_1"
never share a folder); the board-making journal is kept there too, so a service restarted in the middle of
board making resumes where it stopped when the director starts it again. Each written file set and each
finished board-making run is recorded in the ledger (kind ``export``) with the files' SHA-256.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse

from dealer.core.errors import DealerError
from dealer.export.boards import SessionBoard, number_deals
from dealer.export.journal import FoulCopy
from dealer.export.machine import BoardMaker, Progress, Stage
from dealer.formats import ExportMeta, by_name, load_all
from dealer.handrecords.publish import OUTPUTS, NotRevealedError, publish

from .auth import check_role
from .director import _body
from .service import Service

log = logging.getLogger("dealer.export")

FILE_FORMATS = ("pbn", "dlm")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def session_slug(label: str) -> str:
    """A file-name stem for a session label ("Round 1" -> "Round_1"); never a path. Not unique: see session_folder."""
    slug = _SAFE.sub("_", label.strip()).strip("._")
    return slug[:64] or "session"


def session_folder(label: str) -> str:
    """The export folder of a session: keyed by an id of the exact label (SHA-256, 12 hex digits), the readable
    slug first — "Round 1" and "Round_1" get two folders (#19 item 9)."""
    return f"{session_slug(label)}-{hashlib.sha256(label.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


@dataclass
class BoardJob:
    """One board-making run of a session, as the director's console sees it."""

    label: str
    state: str = "idle"  # running, done, failed
    total_copies: int = 0
    copies_done: int = 0
    boards: int = 0
    current: str = ""
    made: list[tuple[int, int]] = field(default_factory=list)
    skipped: list[tuple[int, int]] = field(default_factory=list)
    fouls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    task: asyncio.Task[None] | None = None

    def view(self, cards: bool = True) -> dict[str, Any]:
        """``cards`` False (the judge's console without Show cards): fouls say pocket and position only."""
        return {
            "label": self.label,
            "state": self.state,
            "boards": self.boards,
            "copies_total": self.total_copies,
            "copies_done": self.copies_done,
            "current": self.current,
            "made": [list(x) for x in self.made],
            "skipped": [list(x) for x in self.skipped],
            "fouls": self.fouls if cards else [_foul_public(f) for f in self.fouls],
            "error": self.error if cards or self.error is None else _card_free(self.error),
        }


def _foul_dict(f: FoulCopy) -> dict[str, Any]:
    return {
        "board": f.board,
        "copy": f.copy,
        "attempt": f.attempt,
        "reason": f.reason,
        "card": f.card,
        "pocket": f.pocket,
        "expected": f.expected,
        "kind": f.kind,
        "position": f.position,
    }


_CARD_NAME = re.compile(r"[♠♥♦♣][AKQJT2-9]|\b[SHDC][AKQJT2-9]\b")


def _card_free(text: str) -> str:
    """An error text with every card name blanked out (the reason of a foul names the card)."""
    return _CARD_NAME.sub("…", text)


FOUL_PUBLIC_KEYS = ("board", "copy", "attempt", "kind", "pocket", "position")


def _foul_public(foul: dict[str, Any]) -> dict[str, Any]:
    """A foul copy as the judge's console gets it: which pocket and which card position went wrong, never the
    card (nor the pocket it belongs in, nor the reason text, which names the card)."""
    return {k: foul.get(k) for k in FOUL_PUBLIC_KEYS}


class CopyTimeout(DealerError, TimeoutError):
    """The machine did not finish a copy in time (the copy is foul and made again)."""


class WatchdogMaker:
    """A ``CopyMaker`` that gives each copy a deadline: a machine (or link) that goes quiet in the middle of a
    copy makes that copy foul instead of stalling the director's board making for ever."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    async def make_copy(self, board_number: int, deal: Any, copy: int) -> Any:
        try:
            return await asyncio.wait_for(self.inner.make_copy(board_number, deal, copy), self.seconds)
        except TimeoutError:
            raise CopyTimeout(
                f"board {board_number} copy {copy}: no end from the machine in {self.seconds:g} s"
            ) from None

    async def recover(self) -> None:
        await asyncio.wait_for(self.inner.recover(), self.seconds)


def _int(body: dict[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise HTTPException(400, f"{key} = {value!r} must be a whole number in {lo}..{hi}")
    return value


def make_router(service: Service) -> APIRouter:
    from dealer.bank.store import SqliteBank
    from dealer.draw.director import Director

    router = APIRouter()
    bank = service.bank.bank
    director = Director(bank) if isinstance(bank, SqliteBank) else None
    jobs: dict[str, BoardJob] = {}
    export_root = service.config.var_dir / "export"

    def guard(request: Request, state_changing: bool) -> Director:
        check_role(request, service.secrets, "director", state_changing=state_changing)
        if director is None:
            raise HTTPException(404, "this bank engine has no draws")
        return director

    def out_dir(label: str) -> Path:
        return export_root / session_folder(label)

    async def boards_of(d: Director, label: str, first: int, copies: int) -> list[SessionBoard]:
        try:
            drawn = await service.bank.call(d.drawn_deals, label)
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc
        return number_deals([item.deal.deal for item in drawn], first=first, copies=copies)

    def copies_of(body: dict[str, Any]) -> int:
        return _int(body, "copies", service.regulation.copies, 1, 50)

    async def record(kind: str, label: str, paths: list[Path], **extra: Any) -> None:
        digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
        payload = {"what": kind, "label": label, "files": digests, **extra}
        await service.bank.call(service.bank.bank.record_event, "export", payload)

    # -- deal files -----------------------------------------------------------------------------------------
    @router.post("/api/director/draws/{label}/files")
    async def write_files(label: str, request: Request) -> dict[str, Any]:
        d = guard(request, True)
        body = _body(await request.body())
        names = body.get("formats", list(FILE_FORMATS))
        load_all()
        if not isinstance(names, list) or not names:
            raise HTTPException(400, 'formats must be a non-empty list, e.g. ["pbn", "dlm"]')
        try:
            fmts = [by_name(str(n)) for n in names]
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc
        boards = await boards_of(d, label, _int(body, "first", 1, 1, 9999), copies_of(body))
        meta = ExportMeta(
            event=str(body.get("event", label)), sealed=bool(body.get("sealed", True)), copies=boards[0].copies
        )
        from dealer.export.files import write_session_files

        try:
            paths = await asyncio.to_thread(
                write_session_files, boards, out_dir(label), session_slug(label), [f.name for f in fmts], meta
            )
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc
        await record("files", label, paths, sealed=meta.sealed)
        return {"label": label, "boards": len(boards), "files": [p.name for p in paths]}

    @router.get("/api/director/draws/{label}/files/{name}")
    async def download(label: str, name: str, request: Request) -> FileResponse:
        guard(request, False)
        folder = out_dir(label)
        path = folder / name
        if name != Path(name).name or name.startswith(".") or not path.is_file():
            raise HTTPException(404, f"no file {name!r} for session {label!r}")
        return FileResponse(path, filename=name, headers={"Cache-Control": "no-store"})

    # -- boards on a machine --------------------------------------------------------------------------------
    async def make_boards(job: BoardJob, boards: list[SessionBoard], body: dict[str, Any]) -> None:
        from dealer.export.driver import DriverCopyMaker
        from drivers.machine import MachineDriver
        from drivers.simulator import SimulatorThread, VirtualMachine, parse_faults
        from drivers.transport import open_transport

        device = str(body.get("device", "simulator"))
        pace = float(body.get("pace", 0.5))
        deadline = float(body.get("copy_timeout", max(30.0, 4 * pace)))
        sim: SimulatorThread | None = None
        folder = out_dir(job.label)
        folder.mkdir(parents=True, exist_ok=True)
        journal = folder / f"{session_slug(job.label)}.journal.json"

        def on_progress(p: Progress) -> None:
            job.copies_done = p.copies_done
            job.current = p.text()
            if p.stage is Stage.DONE:
                job.made.append((p.board, p.copy))
            elif p.stage is Stage.SKIPPED:
                job.skipped.append((p.board, p.copy))
            elif p.stage is Stage.FOUL and p.foul is not None:
                job.fouls.append(_foul_dict(p.foul))
            service.operator.send({"type": "boards", **job.view(cards=service.board_cards_shown)})

        driver: Any = None
        try:
            if device == "simulator":
                plan = parse_faults(str(body.get("faults", "")), seed=body.get("seed"))
                sim = SimulatorThread(VirtualMachine(pace=pace, faults=plan, serial="SIM-BOARDS"), "pty")
                await asyncio.to_thread(sim.start)
                url = sim.url
            else:
                url = device
            driver = MachineDriver(lambda: open_transport(url))
            await driver.connect()
            maker = BoardMaker(
                WatchdogMaker(DriverCopyMaker(driver), deadline),
                journal,
                max_attempts=_int(body, "max_attempts", 3, 1, 20),
                on_progress=on_progress,
            )
            await maker.run_async(boards)
            info = driver.info  # DEVICE_INFO of the machine, for the board-making act
            machine = dataclasses.asdict(info) if info is not None else None
            await record("boards", job.label, [journal], copies=job.total_copies, machine=machine)
            job.state = "done"  # only once the ledger holds the run: a client that sees done finds the entry
        except asyncio.CancelledError:
            job.state = "stopped"
            raise
        except Exception as exc:  # shown to the director; the journal keeps what was finished
            log.warning("board making for %s: %s", job.label, exc)
            job.state = "failed"
            job.error = str(exc)
        finally:
            if driver is not None:
                with contextlib.suppress(Exception):
                    await driver.close()
            if sim is not None:
                await asyncio.to_thread(sim.stop)
            service.operator.send({"type": "boards", **job.view(cards=service.board_cards_shown)})

    @router.post("/api/judge/boards/cards")
    async def board_cards(request: Request) -> dict[str, Any]:
        """Show cards for board making on the judge's console (ledgered before anything is shown), or hide them."""
        check_role(request, service.secrets, "judge", state_changing=True)
        body = _body(await request.body())
        show = body.get("show")
        if not isinstance(show, bool):
            raise HTTPException(400, "show must be true or false")
        if show and not service.board_cards_shown:
            payload = {"what": "board making", "by": "judge", "time": time.time()}
            await service.bank.call(service.bank.bank.record_event, "cards_shown", payload)
        service.board_cards_shown = show
        return {"show": show}

    @router.post("/api/director/draws/{label}/boards", status_code=202)
    async def start_boards(label: str, request: Request) -> dict[str, Any]:
        d = guard(request, True)
        body = _body(await request.body())
        job = jobs.get(label)
        if job is not None and job.state == "running":
            raise HTTPException(409, f"boards of {label!r} are being made ({job.current})")
        boards = await boards_of(d, label, _int(body, "first", 1, 1, 9999), copies_of(body))
        job = BoardJob(label, "running", sum(b.copies for b in boards), boards=len(boards))
        jobs[label] = job
        job.task = asyncio.create_task(make_boards(job, boards, body), name=f"boards-{label}")
        return job.view()

    @router.get("/api/director/draws/{label}/boards")
    async def boards_progress(label: str, request: Request) -> dict[str, Any]:
        guard(request, False)
        job = jobs.get(label)
        if job is not None:
            return job.view()
        view = BoardJob(label).view()
        journal = out_dir(label) / f"{session_slug(label)}.journal.json"
        if journal.is_file():  # made in an earlier run of the service: what the journal says is finished
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                done = json.loads(journal.read_text(encoding="utf-8"))["done"]
                view.update(state="interrupted", copies_done=len(done), skipped=sorted(done))
        return view

    # -- hand records ---------------------------------------------------------------------------------------
    class _Gate:
        def __init__(self, d: Director) -> None:
            self.d = d

        def ensure_revealed(self, session: str) -> None:
            if self.d.bank.get_draw(session).state != "revealed":
                raise NotRevealedError(f"session {session!r} is not revealed: hand records wait for the reveal")

    @router.post("/api/director/draws/{label}/handrecords")
    async def handrecords(label: str, request: Request) -> dict[str, Any]:
        d = guard(request, True)
        body = _body(await request.body())
        kinds = body.get("formats", list(OUTPUTS))
        if not isinstance(kinds, list) or any(k not in OUTPUTS for k in kinds) or not kinds:
            raise HTTPException(400, f"formats must be a list of {', '.join(OUTPUTS)}")
        lang = str(body.get("lang", service.config.language))
        try:
            await service.bank.call(_Gate(d).ensure_revealed, label)
        except NotRevealedError as exc:
            raise HTTPException(403, str(exc)) from exc
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc
        boards = await boards_of(d, label, _int(body, "first", 1, 1, 9999), 1)
        records = [b.record() for b in boards]
        try:
            paths = await asyncio.to_thread(
                publish,
                records,
                out_dir(label),
                f"{session_slug(label)}.handrecords",
                gate=None,  # checked above, on the bank's thread
                kinds=[str(k) for k in kinds],
                title=str(body.get("title", label)),
                subtitle=str(body.get("subtitle", "")),
                lang=lang if lang in ("en", "ru") else "en",
                meta=ExportMeta(event=label),
            )
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc
        await record("handrecords", label, paths)
        return {"label": label, "boards": len(records), "files": [p.name for p in paths]}

    return router
