"""Role checks: a secret in an HttpOnly SameSite=Strict cookie (or a Bearer header), compared in constant time,
taken only over HTTPS or from this computer (never in clear over the hall's network, unless the configuration
allows it); an Origin check (scheme, host and port) on every state-changing request that a browser could forge (CSRF,
cross-site WebSockets)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from ipaddress import IPv6Address, ip_address
from urllib.parse import urlsplit

from fastapi import HTTPException, Request, WebSocket

from dealer.app.secrets import RoleSecrets
from dealer.core.errors import Phrase
from dealer.serving.i18n import error_detail

ROLES = {"judge": Phrase("judge"), "director": Phrase("director")}  # the roles as the messages name them

COOKIE = "dealer_{role}"


def cookie_name(role: str) -> str:
    return COOKIE.format(role=role)


def bearer(conn: Request | WebSocket) -> tuple[str, str | None] | None:
    """A Bearer credential as (role secret, custody token): ``SECRET``, or ``SECRET.CUSTODY`` once the chief judge
    has signed in (``custody.presented_custody``); None without one."""
    header = conn.headers.get("authorization", "")
    if not header.lower().startswith("bearer "):
        return None
    secret, dot, token = header[7:].strip().partition(".")
    return secret, (token if dot else None)


def presented_secret(conn: Request | WebSocket, role: str) -> tuple[str | None, bool]:
    """The secret the client presents for ``role`` and whether it came from a cookie."""
    credential = bearer(conn)
    if credential is not None:
        return credential[0], False
    value = conn.cookies.get(cookie_name(role))
    return value, value is not None


DEFAULT_PORTS = {"http": 80, "https": 443}
_PAGE_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}  # a WebSocket's page


def origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin or URL, the port made explicit; None when it is not a web origin."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


def same_origin(conn: Request | WebSocket) -> bool:
    """Origin (or, failing that, Referer) names this very server: same scheme, host and port. A request with
    neither is not a browser's cross-site request (browsers always send Origin on cross-origin POSTs and
    WebSockets)."""
    origin = conn.headers.get("origin")
    if origin is None:
        origin = conn.headers.get("referer")
        if origin is None:
            return True
    host = conn.headers.get("host")
    if not host:
        return False
    scheme = _PAGE_SCHEME.get(conn.url.scheme, conn.url.scheme)
    ours = origin_of(f"{scheme}://{host}")
    return ours is not None and origin_of(origin) == ours


def private_channel(conn: Request | WebSocket) -> bool:
    """The request came over HTTPS or from this computer (loopback): a secret on it crossed no network in clear."""
    if conn.url.scheme in ("https", "wss"):
        return True
    host = conn.client.host if conn.client else ""
    try:
        address = ip_address(host)
    except ValueError:
        return host == "testclient"  # Starlette's in-process test client
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:  # ::ffff:127.0.0.1 on a dual stack
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def refuse_in_clear(conn: Request | WebSocket, secrets: RoleSecrets, role: str) -> None:
    """403 for a role's secret that came in clear over the network (plain HTTP from another computer): on the
    hall's open Wi-Fi anyone could have read it. The configuration's ``[secrets] allow_plain_http`` lets it in."""
    if not secrets.allow_plain_http and not private_channel(conn):
        raise HTTPException(
            403,
            error_detail(
                Phrase(
                    "the {role} role's secret is not taken in clear over the network: open the https:// link the "
                    "service prints (HTTPS is set up with dealer tls init)",
                    role=ROLES.get(role, role),
                )
            ),
        )


def check_role(conn: Request | WebSocket, secrets: RoleSecrets, role: str, state_changing: bool) -> None:
    value, from_cookie = presented_secret(conn, role)
    if value is None:
        raise HTTPException(
            401,
            error_detail(
                Phrase(
                    "the {role} role needs its secret (open the link printed at start-up)", role=ROLES.get(role, role)
                )
            ),
        )
    refuse_in_clear(conn, secrets, role)  # before the secret is compared: no answer tells a listener it is right
    if not secrets.check(role, value):
        raise HTTPException(403, error_detail(Phrase("wrong secret for the {role} role", role=ROLES.get(role, role))))
    if state_changing and from_cookie and not same_origin(conn):
        raise HTTPException(403, error_detail(Phrase("cross-site request refused (Origin does not match)")))


def role_check(secrets: RoleSecrets, role: str, state_changing: bool) -> Callable[[Request], Awaitable[None]]:
    """``check_role`` as a route dependency: it runs before the body is validated, so a caller without the
    role learns nothing about what the route takes (401/403 before any 422)."""

    async def dependency(request: Request) -> None:
        check_role(request, secrets, role, state_changing)

    return dependency
