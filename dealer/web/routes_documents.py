"""Documents from the consoles: the technical judge records equipment checks (the device's figures filled in by
the service) and issues the equipment check act; the chief judge (director role) issues the bank formation
act, the draw protocol and its sealed annex, the board-making act and the day's record. Files live in
``VAR/documents/``; each role downloads only what it may issue (the judge: equipment acts). Which documents
exist, what variant 1 refuses and how each is issued is ``dealer.app.documents_desk``'s; here, the HTTP side."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import FileResponse

from dealer.app.checks import equipment_check_payload, equipment_override_payload
from dealer.app.documents_desk import DocumentDesk, DocumentFieldError, DocumentKindUnknown
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


def make_router(service: Service) -> APIRouter:
    from dealer.bank.repository import BankRepository
    from dealer.documents.acts import CHECK_ENTRY, OVERRIDE_ENTRY, check_entries
    from dealer.documents.issue import Issued

    router = APIRouter()

    desk = DocumentDesk(service, lambda lang: translate(lang, "audience.title_closed"))  # the variant's name
    folder = desk.folder
    run = service.bank.call

    def bank() -> BankRepository:
        return service.bank.bank

    access = Depends(key_access(service.custody, "director"))  # the key only for the signed-in browser
    judge_access = Depends(key_access(service.custody, "judge"))  # the technical judge never uses it
    judge_read = [Depends(role_check(service.secrets, "judge", state_changing=False)), judge_access]
    judge_write = [Depends(role_check(service.secrets, "judge", state_changing=True)), judge_access]
    director_read = [Depends(role_check(service.secrets, "director", state_changing=False)), access]
    director_write = [Depends(role_check(service.secrets, "director", state_changing=True)), access]

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
        try:
            issued = await desk.equipment(body.session, lang=body.lang, witnesses=body.witnesses)
        except DealerError as exc:
            raise refusal(exc) from exc
        return issued_view(issued, "judge")

    @router.get("/api/judge/documents/{name}", response_class=FileResponse, dependencies=judge_read)
    async def judge_download(name: FileParam) -> FileResponse:
        return download("judge", name, ("equipment",))

    # -- the chief judge (director role) ------------------------------------------------------------------------
    @router.post("/api/director/documents/{kind}", response_model=IssuedDocument, dependencies=director_write)
    async def director_document(kind: str, body: DirectorDocument | None = None) -> IssuedDocument:
        body = body or DirectorDocument()
        try:
            issued = await desk.director(
                kind, label=body.label, day=body.date, lang=body.lang, witnesses=body.witnesses, audit=body.audit
            )
        except DocumentKindUnknown as exc:
            raise HTTPException(404, error_detail(exc)) from exc
        except DocumentFieldError as exc:
            raise HTTPException(422, error_detail(exc)) from exc
        except DealerError as exc:  # variant 1's refusals, and the issuer's: 400 (423 when the key is locked)
            raise refusal(exc) from exc
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
