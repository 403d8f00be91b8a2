"""Role checks: a secret in an HttpOnly SameSite=Strict cookie (or a Bearer header), compared in constant time;
an Origin check on every state-changing request that a browser could forge (CSRF, cross-site WebSockets)."""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import HTTPException, Request, WebSocket

from .secrets import RoleSecrets

COOKIE = "dealer_{role}"


def cookie_name(role: str) -> str:
    return COOKIE.format(role=role)


def presented_secret(conn: Request | WebSocket, role: str) -> tuple[str | None, bool]:
    """The secret the client presents for ``role`` and whether it came from a cookie."""
    header = conn.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip(), False
    value = conn.cookies.get(cookie_name(role))
    return value, value is not None


def same_origin(conn: Request | WebSocket) -> bool:
    """Origin (or, failing that, Referer) names this very server; a request with neither is not a browser's
    cross-site request (browsers always send Origin on cross-origin POSTs and WebSockets)."""
    host = conn.headers.get("host", "")
    origin = conn.headers.get("origin")
    if origin is None:
        referer = conn.headers.get("referer")
        if referer is None:
            return True
        origin = referer
    if origin == "null":
        return False
    return urlsplit(origin).netloc == host


def check_role(conn: Request | WebSocket, secrets: RoleSecrets, role: str, state_changing: bool) -> None:
    value, from_cookie = presented_secret(conn, role)
    if value is None:
        raise HTTPException(401, f"the {role} role needs its secret (open the link printed at start-up)")
    if not secrets.check(role, value):
        raise HTTPException(403, f"wrong secret for the {role} role")
    if state_changing and from_cookie and not same_origin(conn):
        raise HTTPException(403, "cross-site request refused (Origin does not match)")
