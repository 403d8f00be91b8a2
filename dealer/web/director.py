"""The director's console API (director role): bank status and seals, seal, prepare a draw, publish its
commitment on the audience display, enter the public value, run the draw, see the drawn deals, reveal, bundle.

Everything goes through ``dealer.draw.director.Director`` on the bank's own thread. Drawn deals are returned
only here, behind the director's secret; the audience gets nothing of a draw but its published commitment.
Bodies and answers are the models of ``models.py``; the role check runs before a body is read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import Response

from dealer.app.custody import CustodySession
from dealer.app.director_console import (
    altered_value,
    console_status,
    custody_status,
    drawn_view,
    set_up_custody,
    unlock_custody,
)
from dealer.app.draws import enter_value, normalise_value, value_spec
from dealer.app.service import Service
from dealer.core.errors import DealerError, Phrase
from dealer.core.json_types import json_text
from dealer.custody import CustodyLockedError
from dealer.export.names import session_slug
from dealer.serving.i18n import error_detail

from .auth import private_channel, role_check
from .custody import CUSTODY_COOKIE, key_access, presented_custody
from .models import (
    CustodyPassphrase,
    CustodyView,
    DirectorStatus,
    Drawn,
    HallCleared,
    HallView,
    LabelParam,
    Prepared,
    PrepareDraw,
    PublicValue,
    Revealed,
    RunDraw,
    SealView,
    ValueEntered,
    VoidDraw,
    Voided,
)
from .routes_export import attachment

log = logging.getLogger("dealer.web")

T = TypeVar("T")
P = ParamSpec("P")


def install_director_routes(app: FastAPI, service: Service) -> None:
    bank = service.bank.bank
    director = service.director  # the export routes' too (one cache of the sealed trees)
    run = service.bank.call
    custody: CustodySession = service.custody
    # the role first (401/403 before anything else), then the key: only the signed-in browser's requests use it
    access = Depends(key_access(custody, "director"))
    read = [Depends(role_check(service.secrets, "director", state_changing=False)), access]
    write = [Depends(role_check(service.secrets, "director", state_changing=True)), access]

    async def act(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            result = await run(fn, *args, **kwargs)
        except CustodyLockedError as exc:  # 423 Locked: the console asks for the passphrase
            raise HTTPException(423, error_detail(exc)) from exc
        except DealerError as exc:
            raise HTTPException(400, error_detail(exc)) from exc
        if bank.unlocked:
            custody.touch(time.monotonic())
        return result

    # -- the chief judge's custody ------------------------------------------------------------------------------
    def custody_view(holds: bool) -> CustodyView:
        """The key as this browser sees it: unlocked for it, for another browser, locked, or not set up."""
        st = custody_status(bank, holds)
        minutes = int(custody.idle_lock_s // 60)
        return CustodyView(state=st.state, public_key=st.public_key, idle_lock_minutes=minutes)

    def signed_in(request: Request, response: Response) -> CustodyView:
        """This browser now holds the key (any other loses it): its token in an HttpOnly cookie."""
        token = custody.sign_in()
        custody.throttle.succeeded()
        custody.touch(time.monotonic())
        response.set_cookie(
            CUSTODY_COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https", path="/"
        )
        return custody_view(holds=True)

    def over_private_channel(request: Request) -> None:
        if not private_channel(request):
            text = Phrase("the passphrase is taken only on this laptop or over HTTPS, not over the hall's network")
            raise HTTPException(403, error_detail(text))

    def throttled() -> None:
        wait = custody.throttle.wait(time.monotonic())
        if wait > 0:
            raise HTTPException(
                429,
                error_detail(Phrase("too many wrong passphrases: try again in {seconds} s", seconds=int(wait) + 1)),
                headers={"Retry-After": str(int(wait) + 1)},
            )

    @app.get("/api/director/custody", response_model=CustodyView, dependencies=read)
    async def director_custody(request: Request) -> CustodyView:
        return await act(custody_view, custody.holds(presented_custody(request)))

    @app.post("/api/director/custody/unlock", response_model=CustodyView, dependencies=write)
    async def director_unlock(request: Request, response: Response, body: CustodyPassphrase) -> CustodyView:
        over_private_channel(request)
        throttled()

        try:
            await run(unlock_custody, bank, body.passphrase)
        except CustodyLockedError as exc:
            raise HTTPException(409, error_detail(exc)) from exc
        except DealerError as exc:
            custody.throttle.failed(time.monotonic())
            log.warning("custody: a wrong passphrase (try %d)", custody.throttle.failures)
            raise HTTPException(403, error_detail(exc)) from exc
        log.info("custody: unlocked by the chief judge")
        return signed_in(request, response)

    @app.post("/api/director/custody/setup", response_model=CustodyView, dependencies=write)
    async def director_custody_setup(request: Request, response: Response, body: CustodyPassphrase) -> CustodyView:
        over_private_channel(request)

        await act(set_up_custody, bank, body.passphrase)
        return signed_in(request, response)

    @app.post("/api/director/hall/clear", response_model=HallCleared, dependencies=write)
    async def director_clear_hall() -> HallCleared:
        """The chief judge's command: the hall and remote displays forget every deal's cards and bank number."""
        service.streams.publish({"type": "cleared", "station": None})
        return HallCleared(cleared=True)

    @app.post("/api/director/custody/lock", response_model=CustodyView, dependencies=write)
    async def director_lock(response: Response) -> CustodyView:
        """Any holder of the director's link may lock the key (the safe direction); it leaves memory at once."""
        await run(bank.lock)
        custody.sign_out()
        response.delete_cookie(CUSTODY_COOKIE, path="/")
        return await act(custody_view, False)

    async def to_hall(label: str) -> None:
        view = await act(director.hall_view, label)
        service.publish_commitment(view)
        await service.publish_ledger_head()  # every draw step is a ledger entry: the consoles and the hall follow

    @app.get("/api/director/status", response_model=DirectorStatus, dependencies=read)
    async def director_status() -> DirectorStatus:
        return DirectorStatus.model_validate(await act(console_status, service))

    @app.post("/api/director/seal", response_model=SealView, response_model_exclude_none=True, dependencies=write)
    async def director_seal() -> SealView:
        seal = await act(director.seal)
        await service.publish_ledger_head()
        shown = service.regulation.seal_warning(seal.last_deal)
        warning = error_detail(shown) if shown is not None else None
        return SealView(
            index=seal.ledger_index,
            size=seal.size,
            root=seal.root,
            last_deal=seal.last_deal,
            ts=seal.ts,
            warning=warning,
        )

    @app.post("/api/director/draws", response_model=Prepared, dependencies=write)
    async def director_prepare(body: PrepareDraw) -> Prepared:
        def prepare() -> Prepared:
            spec = value_spec(body, service.config.language)
            return Prepared.model_validate(
                director.prepare(
                    body.label,
                    spec,
                    service.regulation,
                    replacement=body.replacement,
                    override=body.override or None,
                )
            )

        return await act(prepare)

    @app.post("/api/director/draws/{label}/publish", response_model=HallView, dependencies=write)
    async def director_publish(label: LabelParam) -> HallView:
        view = await act(director.publish, label)
        service.publish_commitment(view)  # recorded in the ledger first, then on the audience display
        return HallView.model_validate(view)

    @app.post("/api/director/draws/{label}/value", response_model=ValueEntered, dependencies=write)
    async def director_value(label: LabelParam, body: PublicValue) -> ValueEntered:
        typed = body.public_value if body.public_value is not None else body.named
        if body.check:  # show the canonical form back without storing it
            normalised = await act(normalise_value, director, label, body.dice, typed)
            return ValueEntered(label=label, public_value=normalised, stored=False)
        value = await act(enter_value, director, label, body.dice, typed)
        await to_hall(label)
        return ValueEntered(label=label, public_value=value, stored=True)

    @app.post("/api/director/draws/{label}/void", response_model=Voided, dependencies=write)
    async def director_void(label: LabelParam, body: VoidDraw) -> Voided:
        data = await act(director.void, label, body.reason)
        await to_hall(label)
        return Voided(label=label, reason=data["void"]["reason"])

    @app.post("/api/director/draws/{label}/run", response_model=Drawn, dependencies=write)
    async def director_run(label: LabelParam, body: RunDraw | None = None) -> Drawn:
        if body is not None and (body.public_value or body.dice):
            await act(enter_value, director, label, body.dice, body.public_value)
            await to_hall(label)
        altered = await act(altered_value, service, label)
        if altered is not None:
            log.error("draw %r: the bank's public value differs from the one shown in the hall", label)
            raise HTTPException(409, error_detail(altered))
        await act(director.run, label)
        await to_hall(label)  # the hall learns that the draw has run; nothing of what it drew
        return Drawn(label=label, drawn=await act(drawn_view, director, label))

    @app.post("/api/director/draws/{label}/reveal", response_model=Revealed, dependencies=write)
    async def director_reveal(label: LabelParam) -> Revealed:
        result = Revealed.model_validate(await act(director.reveal, label))
        await to_hall(label)
        return result

    @app.get(
        "/api/director/draws/{label}/bundle",
        dependencies=read,
        response_class=Response,
        responses={200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
    )
    async def director_bundle(label: LabelParam) -> Response:
        bundle = await act(director.bundle, label)
        return Response(
            json_text(bundle) + "\n",  # Cyrillic as itself, as `dealer draw bundle` writes it
            media_type="application/json; charset=utf-8",
            headers={
                "Content-Disposition": attachment(f"bundle-{session_slug(label)}.json"),
            },
        )
