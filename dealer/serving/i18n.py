"""Message catalogues (``dealer/web/i18n/<lang>.json``, the pages'): every string a page shows comes from here,
and the language of the request being answered (``LanguageMiddleware``), which error answers are written in.

An entry is a text (with ``{name}`` parameters), a list, or plural forms ``{"one": …, "few": …, "many": …,
"other": …}`` picked by CLDR rules (Babel here, ``Intl.PluralRules`` in the pages).
"""

from __future__ import annotations

import contextlib
import json
from contextvars import ContextVar
from functools import cache
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from dealer.app.config import LANGUAGES

from .pages import page_files


@cache
def catalogue(lang: str) -> dict[str, Any]:  # Any: json.loads; entries are texts or plural-form tables
    if lang not in LANGUAGES:
        raise KeyError(f"no catalogue for language {lang!r}")
    text = page_files("i18n").joinpath(f"{lang}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)  # Any: json.loads of the catalogue
    return data


def translate(lang: str, key: str, **params: object) -> str:
    """The text of ``key``; an entry with plural forms takes ``n`` (CLDR rules through Babel)."""
    from dealer.i18n import Messages

    return Messages(lang, catalogue(lang))(key, **params)


# The language of the request being answered (set by ``LanguageMiddleware``): error answers are written in it.
REQUEST_LANGUAGE: ContextVar[str | None] = ContextVar("dealer_request_language", default=None)


def error_detail(exc: object) -> str:
    """An error for an answer to people (a 4xx detail, a console's command error) in the request's language."""
    from dealer.i18n import error_text

    return error_text(exc, REQUEST_LANGUAGE.get() or "en")


class LanguageMiddleware:
    """Notes each request's language: the page's ``X-Dealer-Lang`` header, ``?lang=``, the ``dealer_lang``
    cookie, else the configured default (HTTP and WebSocket alike)."""

    def __init__(self, app: ASGIApp, default: str) -> None:
        self.app = app
        self.default = default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            token = REQUEST_LANGUAGE.set(self.language(scope))
            try:
                await self.app(scope, receive, send)
            finally:
                REQUEST_LANGUAGE.reset(token)
        else:
            await self.app(scope, receive, send)

    def language(self, scope: Scope) -> str:
        from http.cookies import SimpleCookie
        from urllib.parse import parse_qs

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        asked = [headers.get("x-dealer-lang", "")]
        asked += parse_qs(scope.get("query_string", b"").decode("latin-1")).get("lang", [])
        cookie: SimpleCookie = SimpleCookie()
        with contextlib.suppress(Exception):  # a malformed cookie header is ignored, never an error
            cookie.load(headers.get("cookie", ""))
        if "dealer_lang" in cookie:
            asked.append(cookie["dealer_lang"].value)
        return next((lang for lang in asked if lang in LANGUAGES), self.default)
