"""Documents from the consoles: the technical judge records equipment checks (the device's figures filled in by
the service) and issues the equipment check act; the chief judge (director role) issues the bank formation
act, the draw protocol and its sealed annex, the board-making act and the day's record. Files live in
``VAR/documents/``; each role downloads only what it may issue (the judge: equipment acts)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import ParamSpec, TypeVar

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import FileResponse

from dealer.app.checks import equipment_check_payload, equipment_override_payload
from dealer.app.service import Service
from dealer.core.errors import DealerError, Phrase
from dealer.core.json_types import JsonObject
from dealer.serving.i18n import error_detail, translate

from .auth import ROLES, role_check
from .custody import key_access, refusal
from .models import (
    CheckRecorded,
    DirectorDocument,
    EquipmentDocument,
    EquipmentOverride,
    FileParam,
    IssuedDocument,
    Label,
    OverrideRecorded,
    RecordCheck,
)

T = TypeVar("T")
P = ParamSpec("P")

DIRECTOR_KINDS = ("bank", "draw", "draw-annex", "boards", "day", "closed")


def make_router(service: Service) -> APIRouter:
    from dealer.app.closed import CLOSED_LABEL
    from dealer.bank.repository import BankRepository
    from dealer.documents import issuers
    from dealer.documents.acts import CHECK_ENTRY, OVERRIDE_ENTRY, check_entries
    from dealer.documents.issue import Issued, issue_day
    from dealer.export.names import board_journal

    router = APIRouter()

    folder = service.config.var_dir / "documents"
    run = service.bank.call
    numbering = threading.Lock()

    def bank() -> BankRepository:
        return service.bank.bank

    access = Depends(key_access(service.custody, "director"))  # the key only for the signed-in browser
    judge_access = Depends(key_access(service.custody, "judge"))  # the technical judge never uses it
    judge_read = [Depends(role_check(service.secrets, "judge", state_changing=False)), judge_access]
    judge_write = [Depends(role_check(service.secrets, "judge", state_changing=True)), judge_access]
    director_read = [Depends(role_check(service.secrets, "director", state_changing=False)), access]
    director_write = [Depends(role_check(service.secrets, "director", state_changing=True)), access]

    def lang_of(body: EquipmentDocument | DirectorDocument) -> str:
        return body.lang or service.config.language

    def issued_view(issued: Issued, role: str) -> IssuedDocument:
        return IssuedDocument(
            number=issued.number,
            kind=issued.kind,
            title=issued.title,
            file=issued.path.name,
            sha256=issued.sha256,
            ledger_index=issued.ledger_index,
            url=f"/api/{role}/documents/{issued.path.name}",
        )

    async def act(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await run(fn, *args, **kwargs)
        except DealerError as exc:
            raise refusal(exc) from exc

    async def issuing(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Issue off the bank's thread: rendering (and the bank act's audit) must not hold up deals being
        committed; the bank's connection is shared under its own lock, each read and the final record atomic."""

        def locked() -> T:
            with numbering:  # one document at a time: each takes the next number
                return fn(*args, **kwargs)

        try:
            return await asyncio.to_thread(locked)
        except DealerError as exc:
            raise refusal(exc) from exc

    def download(role: str, name: str, kinds: tuple[str, ...] | None) -> FileResponse:
        path = folder / name
        kind = name[4:].rsplit("-", 1)[0] if len(name) > 4 else ""
        if (
            name != Path(name).name
            or not name.endswith(".pdf")
            or not path.is_file()
            or (kinds is not None and kind not in kinds)
        ):
            raise HTTPException(
                404, error_detail(Phrase("no document {name!r} for the {role}", name=name, role=ROLES.get(role, role)))
            )
        return FileResponse(path, media_type="application/pdf", filename=name, headers={"Cache-Control": "no-store"})

    # -- the technical judge ------------------------------------------------------------------------------------
    @router.post("/api/judge/checks", response_model=CheckRecorded, dependencies=judge_write)
    async def record_check(body: RecordCheck) -> CheckRecorded:
        try:
            payload = equipment_check_payload(service, body.station, body.session, body.phase, body.outcome, body.note)
        except DealerError as exc:
            raise refusal(exc) from exc
        index = await act(bank().record_event, CHECK_ENTRY, payload)
        return CheckRecorded(ledger_index=index, **payload)

    @router.get("/api/judge/checks", dependencies=judge_read)
    async def list_checks(session: Label) -> list[JsonObject]:
        entries = await act(check_entries, bank(), session)
        return [{"ledger_index": e.index, "ts": e.ts, **e.data} for e in entries]

    @router.get("/api/director/checks", dependencies=director_read)
    async def director_checks(session: Label) -> list[JsonObject]:
        """The chief judge sees every equipment check of the session, as the technical judge recorded it."""
        entries = await act(check_entries, bank(), session)
        return [{"ledger_index": e.index, "ts": e.ts, **e.data} for e in entries]

    @router.post("/api/judge/documents/equipment", response_model=IssuedDocument, dependencies=judge_write)
    async def equipment_document(body: EquipmentDocument) -> IssuedDocument:
        issued = await issuing(
            issuers.issue_equipment_act,
            bank(),
            service.regulation,
            lang_of(body),
            folder,
            body.session,
            list(body.witnesses),
        )
        return issued_view(issued, "judge")

    @router.get("/api/judge/documents/{name}", response_class=FileResponse, dependencies=judge_read)
    async def judge_download(name: FileParam) -> FileResponse:
        return download("judge", name, ("equipment",))

    # -- the chief judge (director role) ------------------------------------------------------------------------
    @router.post("/api/director/documents/{kind}", response_model=IssuedDocument, dependencies=director_write)
    async def director_document(kind: str, body: DirectorDocument | None = None) -> IssuedDocument:
        if kind not in DIRECTOR_KINDS:
            raise HTTPException(
                404,
                error_detail(
                    Phrase(
                        "no document kind {kind!r} (available: {available})",
                        kind=kind,
                        available=", ".join(DIRECTOR_KINDS),
                    )
                ),
            )
        body = body or DirectorDocument()
        lang, reg, b, witnesses = lang_of(body), service.regulation, bank(), list(body.witnesses)
        issued: Issued
        closed = service.closed
        if kind in ("bank", "draw", "draw-annex") and closed is not None:
            raise HTTPException(
                400,
                error_detail(
                    Phrase("variant 1 (closed dealing) has no bank and no draw: no {kind} document", kind=kind)
                ),
            )
        if kind == "closed" and closed is None:
            raise HTTPException(400, error_detail(Phrase("the closed dealing act is for variant 1 only")))
        if kind == "closed":
            assert closed is not None
            issued = await issuing(
                issuers.issue_closed_act,
                b,
                reg,
                lang,
                folder,
                body.label or translate(lang, "audience.title_closed"),  # the variant's name, never «closed»
                closed.records(),
                closed.audit_deals() if body.audit else [],
                witnesses,
            )
        elif kind == "bank":
            issued = await issuing(issuers.issue_bank_act, b, reg, lang, folder, witnesses, body.audit)
        elif kind == "day":
            try:
                day = date.fromisoformat(body.date or date.today().isoformat())
            except ValueError as exc:
                text = Phrase("date = {date!r}: expected a real date YYYY-MM-DD", date=body.date)
                raise HTTPException(422, error_detail(text)) from exc
            issued = await issuing(issue_day, b, folder, day, lang)
        else:
            if body.label is None:
                raise HTTPException(
                    422, error_detail(Phrase("label: the {kind} document needs the session label", kind=kind))
                )
            label = body.label
            if kind == "draw":
                issued = await issuing(issuers.issue_draw_protocol, b, reg, lang, folder, label, witnesses)
            elif kind == "draw-annex":
                issued = await issuing(issuers.issue_draw_annex, b, reg, lang, folder, label, witnesses)
            else:
                shown = None
                if closed is not None:  # variant 1: the boards the stations dealt, named by the variant
                    label, shown = CLOSED_LABEL, translate(lang, "audience.title_closed")
                journal = board_journal(service.config.var_dir, label)
                issued = await issuing(issuers.issue_boards_act, b, reg, lang, folder, label, journal, witnesses, shown)
        return issued_view(issued, "director")

    @router.post("/api/director/equipment-override", response_model=OverrideRecorded, dependencies=director_write)
    async def override_check(body: EquipmentOverride) -> OverrideRecorded:
        """Leave for «Старт» without today's "before" check: the chief judge's decision, in the ledger."""
        try:
            payload = equipment_override_payload(service, body.station, body.reason)
        except DealerError as exc:
            raise refusal(exc) from exc
        index = await act(bank().record_event, OVERRIDE_ENTRY, payload)
        return OverrideRecorded(ledger_index=index, station=body.station, reason=str(payload["reason"]))

    @router.get("/api/director/documents/{name}", response_class=FileResponse, dependencies=director_read)
    async def director_download(name: FileParam) -> FileResponse:
        return download("director", name, None)

    return router
