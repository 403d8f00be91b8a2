"""Limits on what a client can send, checked before any route runs (numbers in ``docs/service.md``, "Limits").

FastAPI's own ``max_body_size`` refuses a body over ``max_body_bytes`` (413, without reading the rest).
``LimitsMiddleware`` (plain ASGI) refuses JSON nested deeper than ``max_json_depth`` (422, before any parser
recurses into it). The public event streams never reach it: ``public_stream.PublicStreams`` serves them in front
of the framework and caps them at ``max_public_connections`` (503 with Retry-After past the cap, so thousands of
viewers cannot take the event loop from the officials' consoles). ``validation_errors`` answers a bad field with
its place and a short preview of the input, never the input itself (a 100 MB value is not echoed).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send  # the ASGI spec's plain dicts, as Starlette types them

from dealer.app.config import Limits
from dealer.core.errors import DealerError
from dealer.core.json_types import JsonObject

from .i18n import error_detail

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PREVIEW = 40  # characters of a refused value shown back (the rest is cut)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[\[\]{}]")


def json_depth(data: bytes) -> int:
    """How deeply arrays and objects nest in a JSON text (brackets inside strings do not count); no recursion."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRING.sub(b'""', data)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(data: bytes) -> bool:
    """True when a JSON string in ``data`` escapes a lone UTF-16 surrogate (``"\\ud800"``): valid JSON, but no
    text (UTF-8 cannot hold it, so no answer or file could carry it). A proper pair is one character, as it should
    be. Each string is decoded on its own (a literal: no recursion); a text that is not JSON is left to the parser."""
    if not _ESCAPED_SURROGATE.search(data):
        return False
    for token in _STRING.findall(data):
        if _ESCAPED_SURROGATE.search(token) is None:
            continue
        try:
            json.loads(token).encode("utf-8")
        except UnicodeEncodeError:
            return True
        except ValueError:
            continue
    return False


def preview(value: object) -> object:
    """What of a refused value may be shown back: short scalars as they are, the start of a long text."""
    if isinstance(value, str):
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate shown as its escape
        return value if len(value) <= PREVIEW else value[:PREVIEW] + f"… ({len(value)} characters)"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # JSON has no NaN or infinity: shown as text
    if value is None or isinstance(value, bool | int | float):
        text = repr(value)
        return value if len(text) <= PREVIEW else text[:PREVIEW] + "…"
    if isinstance(value, dict):
        return f"an object of {len(value)} keys"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} items"
    return type(value).__name__


def _loc(loc: Iterable[object]) -> list[str | int]:
    return [part if isinstance(part, int) else str(preview(str(part))) for part in loc]


MAX_ERRORS_LISTED = 8  # a body with 20 bad list items gets 8 named and a count, never a page of previews

# pydantic's error types → the web catalogues' problem (``request.*``); a type not named here is «not valid here»
_PROBLEMS = {
    "missing": "request.missing",
    "extra_forbidden": "request.extra_forbidden",
    "string_type": "request.string_type",
    "string_pattern_mismatch": "request.string_pattern_mismatch",
    "string_too_short": "request.string_too_short",
    "string_too_long": "request.string_too_long",
    "int_type": "request.int",
    "int_parsing": "request.int",
    "int_parsing_size": "request.int",
    "int_from_float": "request.int",
    "float_type": "request.float",
    "float_parsing": "request.float",
    "finite_number": "request.finite_number",
    "bool_type": "request.bool",
    "bool_parsing": "request.bool",
    "list_type": "request.list_type",
    "dict_type": "request.object",
    "model_type": "request.object",
    "model_attributes_type": "request.object",
    "too_short": "request.too_short",
    "too_long": "request.too_long",
    "greater_than_equal": "request.greater_than_equal",
    "greater_than": "request.greater_than",
    "less_than_equal": "request.less_than_equal",
    "less_than": "request.less_than",
    "literal_error": "request.one_of",
    "enum": "request.one_of",
}
_COUNTS = {"string_too_short": "min_length", "string_too_long": "max_length", "too_short": "min_length",
           "too_long": "max_length"}  # fmt: skip
_LIMITS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}


def _problem(e: Mapping[str, object], lang: str) -> str:
    """What is wrong with one field, in ``lang``, from the web catalogues (a validator's own DealerError through
    the core catalogue); pydantic's English ``msg`` is never shown."""
    from dealer.i18n import error_text as dealer_error_text
    from dealer.i18n import format_number

    from .i18n import translate

    kind = str(e.get("type", ""))
    raw_ctx = e.get("ctx")
    ctx: Mapping[str, object] = raw_ctx if isinstance(raw_ctx, Mapping) else {}
    if kind == "value_error" and isinstance(ctx.get("error"), DealerError):
        return dealer_error_text(ctx["error"], lang)
    key = _PROBLEMS.get(kind, "request.invalid")
    if kind in _COUNTS and isinstance(ctx.get(_COUNTS[kind]), int):
        count = ctx[_COUNTS[kind]]
        assert isinstance(count, int)
        return translate(lang, key, n=count)
    if kind in _LIMITS and isinstance(ctx.get(_LIMITS[kind]), int | float):
        limit = ctx[_LIMITS[kind]]
        assert isinstance(limit, int | float)
        return translate(lang, key, limit=format_number(limit, lang, "#,##0.##"))
    if key == "request.one_of":  # pydantic's "'en' or 'ru'": the choices, without its English "or"
        expected = ", ".join(re.split(r", | or ", str(ctx.get("expected", "")))) or "—"
        return translate(lang, key, expected=expected)
    return translate(lang, key)


def _message(e: Mapping[str, object], where: list[str | int], lang: str) -> str:
    """The field's name (its place past body/path/query: ``formats[0]``) and its problem, from the catalogues."""
    from .i18n import translate

    if e.get("type") == "json_invalid":  # the place is the character where the text stops being JSON
        pos = where[1] if len(where) > 1 else 0
        return translate(lang, "request.whole", problem=translate(lang, "request.json_invalid", pos=pos))
    parts = where[1:] if where and where[0] in ("body", "path", "query", "header", "cookie") else where
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")
    problem = _problem(e, lang)
    return (
        translate(lang, "request.field", field=field, problem=problem)
        if field
        else translate(lang, "request.whole", problem=problem)
    )


def brief_errors(errors: Iterable[Mapping[str, object]], lang: str | None = None) -> list[JsonObject]:
    """pydantic's errors without echo: the field's place (``loc``, for scripts), the message naming the field in
    the request's language (web catalogues), a preview of the input; at most ``MAX_ERRORS_LISTED`` of them, then
    one entry counting the rest."""
    from .i18n import REQUEST_LANGUAGE, translate

    lang = lang or REQUEST_LANGUAGE.get() or "en"
    out: list[JsonObject] = []
    rest = 0
    for e in errors:
        if len(out) == MAX_ERRORS_LISTED:
            rest += 1
            continue
        loc = e.get("loc", ())
        where: list[str | int] = _loc(loc) if isinstance(loc, Iterable) else [str(loc)]
        item: JsonObject = {"type": e.get("type"), "loc": where, "msg": _message(e, where, lang)}
        if "input" in e:
            item["input"] = preview(e["input"])
        out.append(item)
    if rest:
        out.append({"type": "more_errors", "loc": [], "msg": translate(lang, "request.more_errors", n=rest)})
    return out


def error_text(errors: Iterable[Mapping[str, object]]) -> str:
    """The same errors as one line for a console: ``поле «rolls»: …; …`` (each message names its field)."""
    return "; ".join(str(e["msg"]) for e in brief_errors(errors))


async def validation_errors(_: Request, exc: Exception) -> JSONResponse:
    """422 for a body, path or query that does not fit its model (a body that is not JSON among them), each field
    named in the request's language (``LanguageMiddleware``)."""
    assert isinstance(exc, RequestValidationError)
    return JSONResponse({"detail": brief_errors(exc.errors())}, status_code=422)


def _json_error(status: int, detail: object, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _json_body(scope: Scope) -> bool:
    """Whether FastAPI reads this request's body as JSON (no Content-Type, or application/json or …+json)."""
    kind = next((v for k, v in scope.get("headers", []) if k.lower() == b"content-type"), b"")
    main = kind.split(b";")[0].strip().lower()
    return not main or main == b"application/json" or (main.startswith(b"application/") and main.endswith(b"+json"))


def _decodes(body: bytes) -> bool:
    """Whether ``body`` is text in the encoding JSON's reader detects (UTF-8, -16 or -32)."""
    try:
        body.decode(json.detect_encoding(body))
    except (UnicodeDecodeError, LookupError):
        return False
    return True


class LimitsMiddleware:
    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []  # at most max_body_bytes: FastAPI's own limit (max_body_size) wraps this
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if json_depth(body) > self.limits.max_json_depth:
            deep = JsonTextError("JSON nested deeper than {limit} levels", limit=self.limits.max_json_depth)
            detail = [{"type": "json_depth", "loc": ["body"], "msg": error_detail(deep)}]
            await _json_error(422, detail)(scope, receive, send)
            return
        if lone_surrogate(body):
            problem = JsonTextError("a lone UTF-16 surrogate (\\ud800 to \\udfff) in a string: not text")
            detail = [{"type": "string_unicode", "loc": ["body"], "msg": error_detail(problem)}]
            await _json_error(422, detail)(scope, receive, send)
            return
        if body and _json_body(scope) and not _decodes(body):  # FastAPI's own answer is English (400)
            from .i18n import REQUEST_LANGUAGE, translate

            lang = REQUEST_LANGUAGE.get() or "en"
            msg = translate(lang, "request.whole", problem=translate(lang, "request.not_text"))
            await _json_error(400, [{"type": "json_invalid", "loc": ["body"], "msg": msg}])(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class JsonTextError(DealerError, ValueError):
    """A WebSocket message that is not JSON within the limits (the catalogues say it in the reader's language)."""


def parse_json_text(text: str, limits: Limits) -> object:
    """A JSON message from a WebSocket within the limits; JsonTextError (without echo) otherwise."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > limits.max_ws_message_bytes:
        raise JsonTextError("a message is limited to {limit} bytes", limit=limits.max_ws_message_bytes)
    if json_depth(raw) > limits.max_json_depth:
        raise JsonTextError("JSON nested deeper than {limit} levels", limit=limits.max_json_depth)
    if lone_surrogate(raw):
        raise JsonTextError("a lone UTF-16 surrogate (\\ud800 to \\udfff) in a string: not text")
    try:
        return json.loads(text)
    except ValueError:  # not JSON, an integer of more than 4,300 digits, …
        raise JsonTextError("not a JSON text") from None
