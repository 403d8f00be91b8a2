"""The relay's web application: the audience page, its static files and catalogues, the public snapshot and SSE.

Nothing else is routed: every judge, director, export or other path is a 404 here, and the relay holds no secret
to check (it has none to lose). The page, scripts and stream are the hall's audience display, fed by ``RelayFeed``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from dealer.app.config import LANGUAGES
from dealer.app.hub import PublicHub
from dealer.app.relay_signing import Verifier
from dealer.core.json_types import JsonObject
from dealer.serving.i18n import catalogue, translate
from dealer.serving.pages import page_files
from dealer.serving.public_stream import PublicFrontApp, PublicStreams

from .feed import RelayFeed

MAX_VIEWERS = 50_000  # one relay's viewers at once; more get 503 with Retry-After (another relay takes them)
PUBLIC_PATHS = ("/", "/static", "/i18n/{lang}.json", "/api/public/snapshot", "/api/public/events", "/api/public/health")


def create_relay_app(
    url: str,
    event: str,
    delay: float = 0.0,
    language: str = "ru",
    max_viewers: int = MAX_VIEWERS,
    verifier: Verifier | None = None,
) -> FastAPI:
    hub = PublicHub()
    hub.wait_ahead = True  # a viewer coming from a relay further along waits here for the same ids
    feed = RelayFeed(hub, url, event, delay, verifier)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        feed.start()
        try:
            yield
        finally:
            hub.close()
            await feed.close()

    app = PublicFrontApp(
        title="bridge-dealer relay", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None
    )
    app.state.hub = hub
    app.state.feed = feed
    app.public_streams = PublicStreams({"/api/public/events": hub}, max_viewers)  # the lean path, as the hall's
    app.mount("/static", StaticFiles(directory=str(page_files("static"))), name="static")
    templates = Jinja2Templates(directory=str(page_files("templates")))

    @app.get("/", response_class=HTMLResponse)
    async def audience(request: Request) -> HTMLResponse:
        asked = request.query_params.get("lang") or request.cookies.get("dealer_lang")
        lang = asked if asked in LANGUAGES else language
        context: JsonObject = {
            "lang": lang,
            "t": lambda key, **p: translate(lang, key, **p),
            "catalogues": json.dumps({code: catalogue(code) for code in LANGUAGES}, ensure_ascii=False),
            "delay": delay,
        }
        response = templates.TemplateResponse(request, "audience.html", context)
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.get("/i18n/{lang}.json")
    async def i18n(lang: str) -> JSONResponse:
        if lang not in LANGUAGES:
            raise HTTPException(404, f"no language {lang!r} (available: {', '.join(LANGUAGES)})")
        return JSONResponse(catalogue(lang))

    @app.get("/api/public/snapshot")
    async def public_snapshot() -> JSONResponse:
        return JSONResponse(hub.state.snapshot(), headers={"X-Event-Id": str(hub.last_id)})

    @app.get("/api/public/health")
    async def health() -> JSONResponse:
        """For a reverse proxy's health check: 200 while this relay reads the stream, 503 otherwise."""
        body = {
            "nats": feed.connected,
            "last_id": hub.last_id,
            "viewers": hub.clients,
            "delay": delay,
            "lag_s": round(feed.lag, 4),  # stream stored -> this relay read it, for the last message
            "max_lag_s": round(feed.max_lag, 4),
            "forged": feed.forged,  # messages not signed by the hall, dropped
        }
        return JSONResponse(body, status_code=200 if feed.connected else 503)

    return app
