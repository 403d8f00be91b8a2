"""The public event streams' own lean ASGI path, in front of the web framework (the hall's and the relays').

A viewer's connection costs the server once, when it opens: the cap is checked, the response head is sent, and
the connection's transport is handed to its ``PublicHub``, which from then on writes every message to it in its
one fan-out loop (see ``hub.py``). No router, no middleware, no per-viewer task woken per message: the coroutine
of the request only waits for the hang-up (or for the service to stop, when it ends the response).

The transport is the server's own (uvicorn's request cycle keeps it as ``transport``); where a server exposes
none (a test's in-process ASGI client), or for an HTTP/1.0 client, the same stream is sent through ASGI ``send``.
Past ``max_public_connections`` (all public streams together) a viewer gets 503 with ``Retry-After``: thousands
of viewers cannot take the event loop from the officials' consoles.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from urllib.parse import parse_qs

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send  # the ASGI spec's plain dicts, as Starlette types them

from dealer.app.hub import PublicHub, Transport, parse_last_event_id

RETRY_AFTER_S = 5
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
    (b"x-content-type-options", b"nosniff"),
]


def _transport_of(send: Send) -> Transport | None:
    """The connection's transport where the server keeps it on its request cycle (uvicorn: h11 and httptools)."""
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if isinstance(transport, asyncio.WriteTransport):
        return transport
    return None


def _last_event_id(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"last-event-id":
            return parse_last_event_id(value.decode("latin-1"))
    query = scope.get("query_string", b"")
    if b"last_event_id" in query:
        asked = parse_qs(query.decode("latin-1")).get("last_event_id")
        return parse_last_event_id(asked[0]) if asked else None
    return None


async def _json(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"detail": detail}, ensure_ascii=False).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class PublicStreams:
    """The ASGI app of the public event streams: ``paths`` maps each stream's path to its hub."""

    def __init__(self, paths: Mapping[str, PublicHub], cap: int) -> None:
        self.paths = dict(paths)
        self.cap = cap
        self.connections = 0
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub = self.paths[scope["path"]]
        method = scope.get("method", "GET")
        if method not in ("GET", "HEAD"):
            await _json(send, 405, "Method Not Allowed", [(b"allow", b"GET")])
            return
        if self.connections >= self.cap:
            self.refused += 1
            detail = f"the public display has its maximum of {self.cap} viewers: try again shortly"
            await _json(send, 503, detail, [(b"retry-after", str(RETRY_AFTER_S).encode())])
            return
        if method == "HEAD":
            await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        self.connections += 1
        try:
            transport = _transport_of(send) if scope.get("http_version") == "1.1" else None
            if transport is None:
                await self._through_send(hub, scope, receive, send)
            else:
                await self._direct(hub, transport, scope, receive, send)
        finally:
            self.connections -= 1

    async def _direct(self, hub: PublicHub, transport: Transport, scope: Scope, receive: Receive, send: Send) -> None:
        """The hub writes to the transport: chunk-framed, as the server announced for a body without a length."""
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        viewer = hub.attach(transport, _last_event_id(scope))
        hung_up = asyncio.ensure_future(_until_disconnect(receive))
        try:
            await asyncio.wait((hung_up, hub.ended()), return_when=asyncio.FIRST_COMPLETED)
        finally:
            hub.detach(viewer)
            connected = not hung_up.done()
            hung_up.cancel()
        if connected:  # the service stops: end the response properly
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _through_send(self, hub: PublicHub, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        hung_up = asyncio.ensure_future(_until_disconnect(receive))
        stream = hub.stream(_last_event_id(scope))
        try:
            async for data in stream:
                if hung_up.done():
                    return
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            return
        finally:
            hung_up.cancel()
            await stream.aclose()


class PublicFrontApp(FastAPI):
    """A FastAPI application whose public event streams bypass the framework (``public_streams``)."""

    public_streams: PublicStreams | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        streams = self.public_streams
        if streams is not None and scope["type"] == "http" and scope["path"] in streams.paths:
            await streams(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
