"""The FastAPI application: audience display (public), technical judge's console, director's console."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from dealer.app.config import LANGUAGES, Limits
from dealer.app.hub import PublicHub, parse_last_event_id
from dealer.app.judge_console import answer_command
from dealer.app.operator_messages import (
    CommandError,
    DeviceEntry,
    JudgeAction,
    JudgeState,
    OperatorMessage,
    StationAction,
    StationView,
)
from dealer.app.service import Service
from dealer.app.station import StationError
from dealer.core.errors import DealerError, Phrase
from dealer.i18n import format_number
from dealer.serving.guard import ConnectionGuard, ConsoleAddresses
from dealer.serving.i18n import LanguageMiddleware, catalogue, error_detail, translate
from dealer.serving.limits import LimitsMiddleware, error_text, parse_json_text, validation_errors
from dealer.serving.pages import page_files
from dealer.serving.public_stream import PublicFrontApp, PublicStreams

from .auth import ROLES as ROLE_NAMES
from .auth import check_role, cookie_name, refuse_in_clear, role_check
from .custody import CUSTODY_COOKIE, key_access
from .models import (
    ErrorDetail,
    JudgeCommand,
    LangParam,
    PublicSnapshot,
    StationParam,
)
from .routes_export import make_router as make_export_router

ROLES = ("judge", "director")


def create_app(service: Service) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.startup()
        try:
            yield
        finally:
            await service.shutdown()

    app = PublicFrontApp(
        title="bridge-dealer",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        max_body_size=service.config.limits.max_body_bytes,
    )
    app.state.service = service
    app.add_middleware(LimitsMiddleware, limits=service.config.limits)
    app.add_middleware(LanguageMiddleware, default=service.config.language)
    app.state.guard = ConnectionGuard(service.config.limits)  # dealer serve hands it to its listening socket
    app.add_middleware(ConsoleAddresses, guard=app.state.guard)
    app.add_exception_handler(RequestValidationError, validation_errors)
    app.mount("/static", StaticFiles(directory=str(page_files("static"))), name="static")
    templates = Jinja2Templates(directory=str(page_files("templates")))

    def lang_of(request: Request) -> str:
        asked = request.query_params.get("lang") or request.cookies.get("dealer_lang")
        return asked if asked in LANGUAGES else service.config.language

    def page(request: Request, name: str, **extra: object) -> HTMLResponse:
        lang = lang_of(request)
        context = {
            "lang": lang,
            "t": lambda key, **p: translate(lang, key, **p),
            "catalogues": json.dumps({code: catalogue(code) for code in LANGUAGES}, ensure_ascii=False),
            "delay": service.config.broadcast_delay,
            "delay_text": format_number(service.config.broadcast_delay, lang),  # «2,5» in Russian, «2.5» in English
            "rehearsal": service.config.rehearsal,
            # the day's session is named in the service's language, whatever the page's: an English console
            # defaulted to «Session 1» and recorded (and listed) the checks of another session than the Russian one
            "default_session": translate(service.config.language, "docs.default_session"),
            **extra,
        }
        response = templates.TemplateResponse(request, name, context)
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    # -- audience (public, read-only): the hall's stream in real time, the remote viewers' held back -------------
    @app.get("/", response_class=HTMLResponse)
    async def audience(request: Request) -> HTMLResponse:
        return page(request, "audience.html", stream="public", delay=0.0, closed=service.closed is not None)

    @app.get("/remote", response_class=HTMLResponse)
    async def audience_remote(request: Request) -> HTMLResponse:
        return page(
            request, "audience.html", stream="remote", delay=service.config.broadcast_delay,
            closed=service.closed is not None,
        )  # fmt: skip

    def stream_routes(name: str, hub: PublicHub) -> None:
        """``/api/{name}/snapshot`` and ``/api/{name}/events``: the hall's stream (public) or the remote one."""

        async def snapshot() -> JSONResponse:
            return JSONResponse(hub.state.snapshot(), headers={"X-Event-Id": str(hub.last_id)})

        async def events(request: Request) -> StreamingResponse:
            asked = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
            return StreamingResponse(
                hub.stream(parse_last_event_id(asked)),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )

        app.add_api_route(
            f"/api/{name}/snapshot",
            snapshot,
            methods=["GET"],
            response_class=JSONResponse,
            responses={200: {"model": PublicSnapshot}},
        )
        app.add_api_route(
            f"/api/{name}/events",
            events,
            methods=["GET"],
            response_class=StreamingResponse,
            responses={
                200: {
                    "content": {"text/event-stream": {}},
                    "description": "public messages (app.public_messages.PublicMessage)",
                },
                503: {"model": ErrorDetail, "description": "the public display has its maximum of viewers"},
            },
        )

    stream_routes("public", service.hub)
    stream_routes("remote", service.remote)
    # the streams themselves bypass the framework (the routes above document them and serve the snapshots)
    app.public_streams = PublicStreams(
        {"/api/public/events": service.hub, "/api/remote/events": service.remote},
        service.config.limits.max_public_connections,
    )

    @app.get("/i18n/{lang}.json", response_class=JSONResponse)
    async def i18n(lang: LangParam) -> JSONResponse:
        if lang not in LANGUAGES:
            raise HTTPException(
                404,
                error_detail(
                    Phrase("no language {lang!r} (available: {available})", lang=lang, available=", ".join(LANGUAGES))
                ),
            )
        return JSONResponse(catalogue(lang))

    # -- role pages -----------------------------------------------------------------------------------------
    def role_page(role: str, template: str) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            token = request.query_params.get("token")
            if token is not None:
                secret, _, custody = token.partition(".")  # SECRET, or SECRET.CUSTODY as a script holds it
                refuse_in_clear(request, service.secrets, role)  # a link opened over plain HTTP on the Wi-Fi
                if not service.secrets.check(role, secret):
                    raise HTTPException(
                        403, error_detail(Phrase("wrong secret for the {role} role", role=ROLE_NAMES.get(role, role)))
                    )
                # the token leaves the address bar; a language asked for in the same link stays (a link with
                # «&lang=en» opened the page in the service's language)
                asked = request.query_params.get("lang")
                target = f"/{role}?lang={asked}" if asked in LANGUAGES else f"/{role}"
                response = RedirectResponse(target, status_code=303)
                https = request.url.scheme == "https"
                response.set_cookie(
                    cookie_name(role),
                    secret,
                    httponly=True,
                    samesite="strict",
                    secure=https,  # over HTTPS the browser never sends it back in clear
                    path="/",
                    max_age=86400 * 7,
                )
                if role == "director" and service.custody.holds(custody):
                    response.set_cookie(
                        CUSTODY_COOKIE, custody, httponly=True, samesite="strict", secure=https, path="/"
                    )
                return response
            check_role(request, service.secrets, role, state_changing=False)
            return page(request, template, stations=list(service.stations), closed=service.closed is not None)

        return handler

    app.add_api_route("/judge", role_page("judge", "judge.html"), methods=["GET"], response_class=HTMLResponse)
    app.add_api_route("/director", role_page("director", "director.html"), methods=["GET"], response_class=HTMLResponse)

    # -- technical judge ----------------------------------------------------------------------------------
    judge_access = Depends(key_access(service.custody, "judge"))  # the technical judge never uses the key
    judge_read = [Depends(role_check(service.secrets, "judge", state_changing=False)), judge_access]
    judge_write = [Depends(role_check(service.secrets, "judge", state_changing=True)), judge_access]

    @app.get("/api/judge/state", response_model=JudgeState, dependencies=judge_read)
    async def judge_state() -> JudgeState:
        return service.judge_state()

    @app.get("/api/judge/devices", response_model=list[DeviceEntry], dependencies=judge_read)
    async def judge_devices() -> list[DeviceEntry]:
        return service.devices()

    @app.post("/api/judge/stations/{name}/{action}", response_model=StationView, dependencies=judge_write)
    async def judge_action(name: StationParam, action: StationAction, body: JudgeAction | None = None) -> StationView:
        try:
            return await service.judge_command(name, action, body or JudgeAction())
        except (StationError, DealerError, ValueError) as exc:
            raise HTTPException(400, error_detail(exc)) from exc

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
        await ws.send_text(service.judge_state().model_dump_json())

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
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                reply: OperatorMessage
                try:
                    if not isinstance(text, str):  # a binary frame: commands are JSON text
                        raise CommandInvalid("a command must be a JSON text message, not binary data")
                    command = parse_command(text, service.config.limits)
                except CommandInvalid as exc:  # answer, and keep the console connected
                    await ws.send_text(
                        CommandError(message=error_detail(exc), cmd=exc.cmd, id=exc.id).model_dump_json()
                    )
                    continue
                try:
                    reply = await answer_command(service, command.cmd, command.station, command.id, command)
                except (StationError, DealerError, ValueError) as exc:
                    reply = CommandError(cmd=command.cmd, message=error_detail(exc), id=command.id)
                await ws.send_text(reply.model_dump_json())
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


class CommandInvalid(DealerError, ValueError):
    """A command the judge's console cannot run, with its ``cmd`` and ``id`` when they are short enough to
    return (so the console can tell which command failed); said in the console's language."""

    def __init__(self, template: str = "", /, data: object = None, **params: object) -> None:
        super().__init__(template, **params)
        fields = data if isinstance(data, dict) else {}
        cmd, ident = fields.get("cmd"), fields.get("id")
        self.cmd = cmd if isinstance(cmd, str) and len(cmd) <= 32 else None
        self.id = ident if isinstance(ident, int | str) and len(str(ident)) <= 64 else None


def parse_command(text: str, limits: Limits) -> JudgeCommand:
    """One command from the judge's WebSocket; ``CommandInvalid`` naming the problem (never echoing the input)."""
    try:
        data = parse_json_text(text, limits)
    except ValueError as exc:
        raise CommandInvalid("a command must be a JSON object: {exc}", exc=exc) from None
    if not isinstance(data, dict):
        raise CommandInvalid("a command must be a JSON object")
    try:
        return JudgeCommand.model_validate(data)
    except ValidationError as exc:
        raise CommandInvalid("{problems}", data, problems=error_text(exc.errors())) from None
