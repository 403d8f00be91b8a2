"""Documents from the consoles: the technical judge records equipment checks (the device's figures filled in by
the service) and issues the equipment check act; the chief judge (director role) issues the bank formation
act, the draw protocol and its sealed annex, the board-making act and the day's record. Files live in
``VAR/documents/``; each role downloads only what it may issue (the judge: equipment acts)."""

from __future__ import annotations

import asyncio
import threading
from datetime import date
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse

from dealer.core.errors import DealerError
from dealer.i18n import LANGUAGES

from .auth import check_role
from .director import _body
from .service import Service

DIRECTOR_KINDS = ("bank", "draw", "draw-annex", "boards", "day")


def _str(body: dict[str, Any], key: str, default: str | None = None, limit: int = 200) -> str:
    value = body.get(key, default)
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise HTTPException(400, f"{key} must be a non-empty string")
    if len(value) > limit:
        raise HTTPException(400, f"{key} is longer than {limit} characters")
    return value


def _witnesses(body: dict[str, Any]) -> list[str]:
    raw = body.get("witnesses", [])
    if isinstance(raw, str):
        raw = [w for w in (x.strip() for x in raw.split(",")) if w]
    if not isinstance(raw, list) or not all(isinstance(w, str) and len(w) <= 120 for w in raw) or len(raw) > 20:
        raise HTTPException(400, "witnesses must be a list of at most 20 names (or one comma-separated string)")
    return [w.strip() for w in raw if w.strip()]


def _calibration(path: Path | None) -> dict[str, Any] | None:
    """A camera station's calibration file and the date it was made (its own ``created``, else the file's)."""
    if path is None:
        return None
    created = ""
    try:
        from drivers.camera.calibration import Calibration, CalibrationError

        created = Calibration.load(path).created
    except (ImportError, OSError, CalibrationError):
        pass
    if not created:
        from datetime import UTC, datetime

        try:
            created = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
        except OSError:
            created = ""
    return {"file": str(path), "created": created}


def make_router(service: Service) -> APIRouter:
    from dealer.bank.store import SqliteBank
    from dealer.documents import issuers
    from dealer.documents.acts import CHECK_ENTRY, check_entries, equipment_check
    from dealer.documents.issue import Issued, issue_day

    from .routes_export import session_slug

    router = APIRouter()
    folder = service.config.var_dir / "documents"
    run = service.bank.call
    numbering = threading.Lock()

    def bank() -> SqliteBank:
        b = service.bank.bank
        if not isinstance(b, SqliteBank):
            raise HTTPException(404, "documents need the SQLite bank")
        return b

    def lang_of(body: dict[str, Any]) -> str:
        lang = body.get("lang") or service.config.language
        if lang not in LANGUAGES:
            raise HTTPException(400, f"lang = {lang!r}: allowed {', '.join(LANGUAGES)}")
        return str(lang)

    def issued_view(issued: Issued, role: str) -> dict[str, Any]:
        return {
            "number": issued.number,
            "kind": issued.kind,
            "title": issued.title,
            "file": issued.path.name,
            "sha256": issued.sha256,
            "ledger_index": issued.ledger_index,
            "url": f"/api/{role}/documents/{issued.path.name}",
        }

    async def act(fn: Any, *args: Any) -> Any:
        try:
            return await run(fn, *args)
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc

    async def issuing(fn: Any, *args: Any) -> Any:
        """Issue off the bank's thread: rendering (and the bank act's audit) must not hold up deals being
        committed; the bank's connection is shared under its own lock, each read and the final record atomic."""

        def locked() -> Any:
            with numbering:  # one document at a time: each takes the next number
                return fn(*args)

        try:
            return await asyncio.to_thread(locked)
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc

    def download(role: str, name: str, kinds: tuple[str, ...] | None) -> FileResponse:
        path = folder / name
        kind = name[4:].rsplit("-", 1)[0] if len(name) > 4 else ""
        if (
            name != Path(name).name
            or not name.endswith(".pdf")
            or not path.is_file()
            or (kinds is not None and kind not in kinds)
        ):
            raise HTTPException(404, f"no document {name!r} for the {role}")
        return FileResponse(path, media_type="application/pdf", filename=name, headers={"Cache-Control": "no-store"})

    # -- the technical judge ------------------------------------------------------------------------------------
    @router.post("/api/judge/checks")
    async def record_check(request: Request) -> dict[str, Any]:
        check_role(request, service.secrets, "judge", state_changing=True)
        body = _body(await request.body())
        station = service.stations.get(_str(body, "station"))
        if station is None:
            raise HTTPException(400, f"station: no station {body.get('station')!r} ({', '.join(service.stations)})")
        state = station.state()
        try:
            payload = equipment_check(
                _str(body, "session"),
                _str(body, "phase"),
                station.name,
                _str(body, "outcome"),
                state.get("device"),
                state.get("health", {}),
                _calibration(station.config.calibration),
                _str(body, "note", "", 500),
            )
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc
        index = await act(bank().record_event, CHECK_ENTRY, payload)
        return {"ledger_index": index, **payload}

    @router.get("/api/judge/checks")
    async def list_checks(request: Request, session: str = "") -> list[dict[str, Any]]:
        check_role(request, service.secrets, "judge", state_changing=False)
        if not session.strip():
            raise HTTPException(400, "session: give the session label (?session=…)")
        entries = await act(check_entries, bank(), session)
        return [{"ledger_index": e.index, "ts": e.ts, **e.data} for e in entries]

    @router.post("/api/judge/documents/equipment")
    async def equipment_document(request: Request) -> dict[str, Any]:
        check_role(request, service.secrets, "judge", state_changing=True)
        body = _body(await request.body())
        issued = await issuing(
            issuers.issue_equipment_act,
            bank(),
            service.regulation,
            lang_of(body),
            folder,
            _str(body, "session"),
            _witnesses(body),
        )
        return issued_view(issued, "judge")

    @router.get("/api/judge/documents/{name}")
    async def judge_download(name: str, request: Request) -> FileResponse:
        check_role(request, service.secrets, "judge", state_changing=False)
        return download("judge", name, ("equipment",))

    # -- the chief judge (director role) ------------------------------------------------------------------------
    @router.post("/api/director/documents/{kind}")
    async def director_document(kind: str, request: Request) -> dict[str, Any]:
        check_role(request, service.secrets, "director", state_changing=True)
        if kind not in DIRECTOR_KINDS:
            raise HTTPException(404, f"no document kind {kind!r} (available: {', '.join(DIRECTOR_KINDS)})")
        body = _body(await request.body())
        lang, reg, b = lang_of(body), service.regulation, bank()
        issued: Issued
        if kind == "bank":
            issued = await issuing(
                issuers.issue_bank_act, b, reg, lang, folder, _witnesses(body), bool(body.get("audit", True))
            )
        elif kind == "draw":
            issued = await issuing(
                issuers.issue_draw_protocol, b, reg, lang, folder, _str(body, "label"), _witnesses(body)
            )
        elif kind == "draw-annex":
            issued = await issuing(
                issuers.issue_draw_annex, b, reg, lang, folder, _str(body, "label"), _witnesses(body)
            )
        elif kind == "boards":
            label = _str(body, "label")
            slug = session_slug(label)
            journal = service.config.var_dir / "export" / slug / f"{slug}.journal.json"
            issued = await issuing(issuers.issue_boards_act, b, reg, lang, folder, label, journal, _witnesses(body))
        else:
            try:
                day = date.fromisoformat(_str(body, "date", date.today().isoformat(), 10))
            except ValueError as exc:
                raise HTTPException(400, f"date = {body.get('date')!r}: expected YYYY-MM-DD") from exc
            issued = await issuing(issue_day, b, folder, day, lang)
        return issued_view(issued, "director")

    @router.get("/api/director/documents/{name}")
    async def director_download(name: str, request: Request) -> FileResponse:
        check_role(request, service.secrets, "director", state_changing=False)
        return download("director", name, None)

    return router
