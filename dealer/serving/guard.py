"""Connections that cannot lock the officials out: caps at accept, a deadline for every request, a console reserve.

A spectator's laptop on the hall's network can open a thousand connections and feed each a header line every few
seconds (slowloris). Unchecked, they hold a file descriptor each until the process runs out (``Too many open
files``: no console can connect, and every refused accept is a traceback in the log). Here:

- ``ConnectionGuard.admit`` runs as each connection is accepted (``accept.PacedSocket``): past
  ``max_connections_per_address`` from one address, or past the public total, the connection is closed at once,
  before any byte is read, and counted; the log says once a minute how many were refused (``REPORT_EVERY_S``).
- The public total stays below the process's file limit (raised to the hard limit at start, where allowed), and
  ``console_reserve`` connections above it are kept for the addresses the consoles signed in from
  (``ConsoleAddresses``: an address that was answered on a judge's or director's route is an official's); those
  addresses have no per-address cap either.
- ``GuardedH11Protocol`` closes a connection whose request (headers and body) has not arrived whole within
  ``request_timeout_s`` of the connection's start or of the previous answer: a slow client holds a descriptor for
  seconds, not forever.

The numbers are in ``docs/service.md`` ("Limits"); ``server_options`` gives uvicorn what ``dealer serve`` and
``dealer relay`` run with.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import h11
from starlette.types import Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from dealer.app.config import Limits

log = logging.getLogger("dealer.connections")

REPORT_EVERY_S = 60.0  # refused connections are reported at most once a minute
FILES_KEPT = 128  # descriptors kept aside for the bank, devices, documents and logs
TRUST_FOR_S = 24 * 3600.0  # an address a console signed in from keeps the console reserve this long
WS_FRAME_FACTOR = 16  # the transport reads a WebSocket message up to 16 × max_ws_message_bytes (then 1009)
ROLE_PREFIXES = ("/judge", "/director", "/api/judge/", "/api/director/")


WINDOWS_SOCKETS = 16384  # Windows has no RLIMIT_NOFILE: sockets are kernel handles, bounded by memory alone


def raise_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (where allowed); the soft limit now.
    Where there is no such limit (Windows: no ``resource`` module) a fixed figure the guard shares out."""
    try:
        import resource
    except ImportError:
        return WINDOWS_SOCKETS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


class ConnectionGuard:
    """Counts open connections per address and in all; admits or refuses each new one (see the module)."""

    def __init__(self, limits: Limits, file_limit: int | None = None) -> None:
        files = raise_file_limit() if file_limit is None else file_limit
        self.reserve = limits.console_reserve
        room = max(16, files - FILES_KEPT - self.reserve)
        self.public_cap = min(limits.max_connections, room)
        self.per_address = limits.max_connections_per_address
        self.open: Counter[str] = Counter()
        self.total = 0
        self.trusted: dict[str, float] = {}
        self.refused: Counter[str] = Counter()  # reason -> count since the last report
        self.refused_total = 0
        self._report: asyncio.TimerHandle | None = None

    def trust(self, address: str) -> None:
        """An address a console was answered from: the reserve is open to it, the per-address cap is not."""
        self.trusted[address] = time.monotonic() + TRUST_FOR_S

    def is_trusted(self, address: str) -> bool:
        until = self.trusted.get(address)
        if until is None:
            return False
        if until < time.monotonic():
            del self.trusted[address]
            return False
        return True

    def admit(self, address: str) -> bool:
        """True and counted, or False (the caller closes the connection) with the refusal counted."""
        trusted = self.is_trusted(address)
        if trusted:
            allowed = self.total < self.public_cap + self.reserve
            reason = "total"
        elif self.open[address] >= self.per_address:
            allowed, reason = False, "address"
        else:
            allowed, reason = self.total < self.public_cap, "total"
        if not allowed:
            self._refuse(reason)
            return False
        self.open[address] += 1
        self.total += 1
        return True

    def closed(self, address: str) -> None:
        self.total -= 1
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]

    def _refuse(self, reason: str) -> None:
        self.refused[reason] += 1
        self.refused_total += 1
        if self._report is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.report()
                return
            self._report = loop.call_later(REPORT_EVERY_S, self.report)

    def report(self) -> None:
        """One log line for the refusals since the last one (never one line, let alone a traceback, per refusal);
        called a minute after the first refusal, and at shutdown."""
        if self._report is not None:
            self._report.cancel()
        self._report = None
        if not self.refused:
            return
        log.warning(
            "refused %d connections since the last report (%d over the cap of %d per address, %d over the total of "
            "%d; %d open now)",
            sum(self.refused.values()),
            self.refused["address"],
            self.per_address,
            self.refused["total"],
            self.public_cap,
            self.total,
        )
        self.refused.clear()


class GuardedSocket(socket.socket):
    """An accepted connection that tells its guard when it closes (asyncio's transport closes it once)."""

    guard: ConnectionGuard | None = None
    address = ""

    def close(self) -> None:
        guard, self.guard = self.guard, None
        if guard is not None:
            guard.closed(self.address)
        super().close()


def address_of(peer: Any) -> str:  # Any: the peer address as socket.accept gives it (its shape depends on family)
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return str(peer)


# Any: the peer address, as typeshed types socket.accept (its shape depends on the family)
def guarded_accept(listener: socket.socket, guard: ConnectionGuard) -> tuple[socket.socket, Any] | None:
    """One connection from ``listener``'s queue: the socket and its address if admitted, None if refused (then
    already closed). ``BlockingIOError`` when the queue is empty, as ``socket.accept``."""
    fd, peer = listener._accept()  # type: ignore[attr-defined]  # socket.socket's own low-level accept
    address = address_of(peer)
    if not guard.admit(address):
        socket.close(fd)
        return None
    conn = GuardedSocket(listener.family, listener.type, listener.proto, fileno=fd)
    conn.guard = guard
    conn.address = address
    return conn, peer


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for each request to arrive whole (headers and body)."""

    request_timeout_s = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        if getattr(self, "_deadline", None) is not None:
            assert self._deadline is not None
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._too_slow)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request on this connection has its own deadline

    def connection_lost(self, exc: Exception | None) -> None:
        if getattr(self, "_deadline", None) is not None:
            assert self._deadline is not None
            self._deadline.cancel()
        super().connection_lost(exc)

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return  # closed already, or a WebSocket now
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # headers or body still incomplete
            self.transport.close()


ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ConsoleAddresses:
    """ASGI middleware: an address answered below 400 on a judge's or director's route (so its secret was
    accepted), or whose console WebSocket was accepted, is an official's (``ConnectionGuard.trust``)."""

    def __init__(self, app: ASGIApp, guard: ConnectionGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        client = scope.get("client")
        if scope["type"] not in ("http", "websocket") or not client or not path.startswith(ROLE_PREFIXES):
            await self.app(scope, receive, send)
            return
        address = str(client[0])

        async def noting(message: Message) -> None:
            kind = message["type"]
            if kind == "websocket.accept" or (kind == "http.response.start" and message["status"] < 400):
                self.guard.trust(address)
            await send(message)

        await self.app(scope, receive, noting)


# Any: uvicorn.Config's keyword arguments, of many types (uvicorn types them one by one, not as a mapping)
def server_options(limits: Limits) -> dict[str, Any]:
    """uvicorn's settings for a public listener (``dealer serve``, ``dealer relay``)."""
    protocol = type("Guarded", (GuardedH11Protocol,), {"request_timeout_s": float(limits.request_timeout_s)})
    return {
        "http": protocol,
        "ws_max_size": limits.max_ws_message_bytes * WS_FRAME_FACTOR,  # up to here an `error` reply (app.py)
        "timeout_keep_alive": 5,
    }
