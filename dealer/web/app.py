"""The FastAPI application: audience display (public), technical judge's console, director's console."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from dealer.core.errors import DealerError

from .auth import check_role, cookie_name
from .config import LANGUAGES
from .hub import parse_last_event_id
from .i18n import catalogue, translate
from .routes_export import make_router as make_export_router
from .service import Service
from .station import StationError

ROLES = ("judge", "director")


def _package_dir(name: str) -> str:
    return str(resources.files("dealer.web").joinpath(name))


def create_app(service: Service) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.startup()
        try:
            yield
        finally:
            await service.shutdown()

    app = FastAPI(title="bridge-dealer", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service
    app.mount("/static", StaticFiles(directory=_package_dir("static")), name="static")
    templates = Jinja2Templates(directory=_package_dir("templates"))

    def lang_of(request: Request) -> str:
        asked = request.query_params.get("lang") or request.cookies.get("dealer_lang")
        return asked if asked in LANGUAGES else service.config.language

    def page(request: Request, name: str, **extra: Any) -> HTMLResponse:
        lang = lang_of(request)
        context = {
            "lang": lang,
            "t": lambda key, **p: translate(lang, key, **p),
            "catalogues": json.dumps({code: catalogue(code) for code in LANGUAGES}, ensure_ascii=False),
            "delay": service.config.broadcast_delay,
            **extra,
        }
        response = templates.TemplateResponse(request, name, context)
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    # -- audience (public, read-only) -----------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    async def audience(request: Request) -> HTMLResponse:
        return page(request, "audience.html")

    @app.get("/api/public/snapshot")
    async def public_snapshot() -> JSONResponse:
        return JSONResponse(service.hub.state.snapshot(), headers={"X-Event-Id": str(service.hub.last_id)})

    @app.get("/api/public/events")
    async def public_events(request: Request) -> StreamingResponse:
        last = parse_last_event_id(request.headers.get("last-event-id") or request.query_params.get("last_event_id"))
        return StreamingResponse(
            service.hub.stream(last),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    @app.get("/i18n/{lang}.json")
    async def i18n(lang: str) -> JSONResponse:
        if lang not in LANGUAGES:
            raise HTTPException(404, f"no language {lang!r} (available: {', '.join(LANGUAGES)})")
        return JSONResponse(catalogue(lang))

    # -- role pages -----------------------------------------------------------------------------------------
    def role_page(role: str, template: str) -> Any:
        async def handler(request: Request) -> Response:
            token = request.query_params.get("token")
            if token is not None:
                if not service.secrets.check(role, token):
                    raise HTTPException(403, f"wrong secret for the {role} role")
                response = RedirectResponse(f"/{role}", status_code=303)
                response.set_cookie(
                    cookie_name(role),
                    token,
                    httponly=True,
                    samesite="strict",
                    secure=False,
                    path="/",
                    max_age=86400 * 7,
                )
                return response
            check_role(request, service.secrets, role, state_changing=False)
            return page(request, template, stations=list(service.stations))

        return handler

    app.add_api_route("/judge", role_page("judge", "judge.html"), methods=["GET"], response_class=HTMLResponse)
    app.add_api_route("/director", role_page("director", "director.html"), methods=["GET"], response_class=HTMLResponse)

    # -- technical judge ----------------------------------------------------------------------------------
    @app.get("/api/judge/state")
    async def judge_state(request: Request) -> dict[str, Any]:
        check_role(request, service.secrets, "judge", state_changing=False)
        return service.judge_state()

    @app.get("/api/judge/devices")
    async def judge_devices(request: Request) -> list[dict[str, str]]:
        check_role(request, service.secrets, "judge", state_changing=False)
        return service.devices()

    @app.post("/api/judge/stations/{name}/{action}")
    async def judge_action(name: str, action: str, request: Request) -> dict[str, Any]:
        check_role(request, service.secrets, "judge", state_changing=True)
        args = await _json_body(request)
        try:
            return await service.judge_command(name, action, args)
        except (StationError, DealerError, ValueError) as exc:
            raise HTTPException(400, str(exc)) from exc

    @app.websocket("/judge/ws")
    async def judge_ws(ws: WebSocket) -> None:
        try:
            check_role(ws, service.secrets, "judge", state_changing=True)
        except HTTPException as exc:
            denial = JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
            try:  # refuse the handshake with the HTTP status itself where the server supports it
                await ws.send_denial_response(denial)
            except RuntimeError:
                await ws.close(code=4000 + exc.status_code, reason=str(exc.detail)[:120])
            return
        await ws.accept()
        queue = service.operator.subscribe()
        await ws.send_text(json.dumps(service.judge_state(), ensure_ascii=False))

        async def pump() -> None:
            while True:
                text = await queue.get()
                if text is None:
                    await ws.close(code=1013)
                    return
                await ws.send_text(text)

        sender = asyncio.create_task(pump())
        try:
            while True:
                text = await ws.receive_text()
                reply: dict[str, Any]
                try:
                    data = json.loads(text)
                except ValueError:
                    data = None
                if not isinstance(data, dict):  # answer, and keep the console connected
                    await ws.send_text(json.dumps({"type": "error", "message": "a command must be a JSON object"}))
                    continue
                try:
                    if data.get("cmd") == "devices":
                        reply = {"type": "devices", "devices": service.devices()}
                    elif data.get("cmd") == "state":
                        reply = service.judge_state()
                    else:
                        await service.judge_command(str(data.get("station")), str(data.get("cmd")), data)
                        reply = {"type": "ok", "cmd": data.get("cmd"), "id": data.get("id")}
                except (StationError, DealerError, ValueError) as exc:
                    reply = {"type": "error", "cmd": data.get("cmd"), "message": str(exc), "id": data.get("id")}
                await ws.send_text(json.dumps(reply, ensure_ascii=False))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            service.operator.unsubscribe(queue)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender

    # -- director -------------------------------------------------------------------------------------------
    from .director import install_director_routes

    install_director_routes(app, service)
    app.include_router(make_export_router(service))
    from .routes_documents import make_router as make_documents_router

    app.include_router(make_documents_router(service))
    return app


async def _json_body(request: Request) -> dict[str, Any]:
    body = await request.body()
    if not body:
        return {}
    try:
        data = json.loads(body)
    except ValueError as exc:  # not JSON, or not even UTF-8 text (UnicodeDecodeError)
        raise HTTPException(400, f"request body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HTTPException(400, "request body must be a JSON object")
    return data
