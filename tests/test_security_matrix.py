"""Security matrix: every route and endpoint of the real app, tried as every role over a real server.

The routes are read from the FastAPI application itself, so a route added later is tried automatically; a route
whose path matches none of the known areas (public, judge, director) fails the test until someone decides who may
call it. The table goes to the test output and to ``test-artifacts/security-matrix.md``.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets as pysecrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import websockets
from _web_server import regulation, service_config
from custody_support import TEST_KEYRING, unlocked, write_custody
from fastapi import FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette.routing import Mount
from test_web_stream import Capture, wait_for

from dealer.app.service import Service
from dealer.bank.store import SqliteBank
from dealer.core import Card
from dealer.draw.director import Director
from dealer.serving.guard import server_options
from dealer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
ROLES = ("none", "judge", "director", "wrong")
EVIL = "http://evil.example"
# one harmless value for every path parameter the app declares; a new parameter name fails the test below
PARAM_VALUES = {"name": "A", "action": "hide", "label": "matrix", "lang": "en", "kind": "bank"}
STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}


LOTTO = {"named": "Lotto draw 1600, first 10 numbers as drawn", "numbers": 10, "max": 90, "as_drawn": True}


@dataclass
class Live:
    service: Service
    app: FastAPI
    base: str
    port: int
    custody_token: str  # the chief judge's sign-in on the console

    def secret(self, role: str) -> str | None:
        if role == "director":  # the link, and the chief judge's sign-in (``serve`` below)
            return f"{self.service.secrets.secret(role)}.{self.custody_token}"
        if role == "judge":
            return self.service.secrets.secret(role)
        return None if role == "none" else "w" + pysecrets.token_urlsafe(32)


@dataclass(frozen=True)
class Endpoint:
    kind: str  # http, sse or ws
    method: str
    template: str  # the route's path as declared
    path: str  # a concrete path to call
    area: str  # public, judge or director


def serve(tmp: Path, target: int = 10, **config: Any) -> Any:
    """A real uvicorn server on a free loopback port (like ``_web_server.running_service``) that also gives the app."""

    class Ctx:
        def __enter__(self) -> Live:
            self.service = Service(service_config(tmp, **config), regulation(2, 32, target=target), autostart=False)
            bank = self.service.bank.bank
            write_custody(bank.key_dir)  # the chief judge's key, set up and unlocked as after sign-in
            bank.unlock(TEST_KEYRING)
            self.custody_token = self.service.custody.sign_in()
            self.service.custody.touch(time.monotonic())
            self.app = create_app(self.service)
            self.sock = socket.socket()  # bound here and handed to uvicorn: no other process can take the port
            self.sock.bind(("127.0.0.1", 0))
            port = int(self.sock.getsockname()[1])
            self.server = uvicorn.Server(
                uvicorn.Config(
                    self.app,
                    host="127.0.0.1",
                    port=port,
                    log_level="warning",
                    lifespan="on",
                    **server_options(self.service.config.limits),  # as `dealer serve` runs it
                )
            )
            self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
            self.thread.start()
            deadline = time.monotonic() + 20
            while not self.server.started:
                if not self.thread.is_alive() or time.monotonic() > deadline:
                    raise RuntimeError("the test server did not start")
                time.sleep(0.01)
            return Live(self.service, self.app, f"http://127.0.0.1:{port}", port, self.custody_token)

        def __exit__(self, *exc: object) -> None:
            self.server.should_exit = True
            self.thread.join(30)
            self.sock.close()

    return Ctx()


def area_of(path: str) -> str:
    if path in ("/judge", "/judge/ws") or path.startswith("/api/judge/"):
        return "judge"
    if path == "/director" or path.startswith("/api/director/"):
        return "director"
    if path in ("/", "/remote") or path.startswith(("/api/public/", "/api/remote/", "/i18n/", "/static/")):
        return "public"
    raise AssertionError(f"route {path} belongs to no known area: decide who may call it and add it to area_of()")


def concrete(template: str) -> str:
    def value(m: re.Match[str]) -> str:
        name = m.group(1).split(":")[0]
        assert name in PARAM_VALUES, f"route {template}: add a test value for path parameter {name!r}"
        return PARAM_VALUES[name]

    return re.sub(r"\{([^}]+)\}", value, template)


def endpoints(app: FastAPI) -> list[Endpoint]:
    return _endpoints(app.routes, "")


def _endpoints(routes: Any, prefix: str) -> list[Endpoint]:
    out: list[Endpoint] = []
    for plain in routes:
        included = getattr(plain, "original_router", None)  # FastAPI's lazily included APIRouter
        if included is not None:
            out += _endpoints(included.routes, prefix + plain.include_context.prefix)
            continue
        route = plain
        if prefix and isinstance(route, APIRoute | APIWebSocketRoute):
            raise AssertionError(f"prefixed router {prefix}: extend the matrix to join prefixes")
        if isinstance(route, APIWebSocketRoute):
            out.append(Endpoint("ws", "WS", route.path, concrete(route.path), area_of(route.path)))
        elif isinstance(route, APIRoute):
            assert route.methods is not None  # FastAPI fills in GET when a route names no method
            for method in sorted(route.methods - {"HEAD"}):
                kind = "sse" if route.path.endswith("/events") else "http"
                out.append(Endpoint(kind, method, route.path, concrete(route.path), area_of(route.path)))
        elif isinstance(route, Mount):
            static = Path(str(getattr(route.app, "directory", "")))
            files = sorted(p.name for p in static.iterdir() if p.is_file())
            assert files, f"mount {route.path} serves nothing"
            for name in files:
                path = f"{route.path}/{name}"
                out.append(Endpoint("http", "GET", f"{route.path}/{{file}}", path, area_of(path)))
        else:
            raise AssertionError(f"route of an unknown type {type(route).__name__}: {route!r}")
    return out


def http_try(live: Live, ep: Endpoint, role: str) -> str:
    secret = live.secret(role)
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    with httpx.Client(base_url=live.base, follow_redirects=False, timeout=10) as client:
        if ep.kind == "sse":
            with client.stream(ep.method, ep.path, headers=headers) as r:
                if r.status_code == 200:
                    first = next(r.iter_bytes())  # the stream opens with a snapshot
                    assert b'"type":"snapshot"' in first
                return str(r.status_code)
        body: dict[str, object] | None = {} if ep.method in STATE_CHANGING else None
        return str(client.request(ep.method, ep.path, headers=headers, json=body).status_code)


def ws_try(live: Live, ep: Endpoint, headers: dict[str, str]) -> str:
    async def attempt() -> str:
        try:
            async with websockets.connect(f"ws://127.0.0.1:{live.port}{ep.path}", additional_headers=headers) as ws:
                await asyncio.wait_for(ws.recv(), 5)
                return "open"
        except websockets.InvalidStatus as exc:
            return str(exc.response.status_code)

    return asyncio.run(attempt())


def try_as(live: Live, ep: Endpoint, role: str) -> str:
    if ep.kind == "ws":
        secret = live.secret(role)
        return ws_try(live, ep, {"Authorization": f"Bearer {secret}"} if secret else {})
    return http_try(live, ep, role)


def allowed(outcome: str) -> bool:
    return outcome == "open" or (outcome.isdigit() and int(outcome) not in (401, 403) and int(outcome) < 500)


def expected(area: str, role: str, outcome: str) -> bool:
    if area == "public":
        return outcome == "200"
    if role == area:
        return allowed(outcome)
    return outcome == ("401" if role == "none" else "403")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with serve(tmp_path_factory.mktemp("matrix")) as running:
        yield running


def test_security_matrix(live: Live, capsys: pytest.CaptureFixture[str]) -> None:
    eps = endpoints(live.app)
    # the areas the design names are all there, with their WebSocket and SSE endpoints
    assert {e.area for e in eps} == {"public", "judge", "director"}
    assert any(e.kind == "ws" for e in eps) and any(e.kind == "sse" for e in eps)
    rows: list[tuple[Endpoint, dict[str, str]]] = []
    wrong: list[str] = []
    for ep in eps:
        outcomes = {role: try_as(live, ep, role) for role in ROLES}
        rows.append((ep, outcomes))
        for role, got in outcomes.items():
            if not expected(ep.area, role, got):
                wrong.append(f"{ep.method} {ep.path} as {role}: {got}")
    lines = [
        "# Security matrix",
        "",
        "Every route of the app, called with no secret, the judge's, the director's and a wrong one (Bearer).",
        "`open` = WebSocket accepted; 401 = no secret; 403 = wrong secret; 4xx other than 401/403 = authorised but",
        "the request itself was refused (e.g. no such draw).",
        "",
        "| kind | method | route | area | none | judge | director | wrong | ok |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for ep, out in rows:
        ok = all(expected(ep.area, r, out[r]) for r in ROLES)
        lines.append(
            f"| {ep.kind} | {ep.method} | `{ep.path}` | {ep.area} | "
            + " | ".join(out[r] for r in ROLES)
            + f" | {'yes' if ok else 'NO'} |"
        )
    table = "\n".join(lines) + "\n"
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "security-matrix.md").write_text(table, encoding="utf-8")
    with capsys.disabled():
        print("\n" + table)
    assert not wrong, "\n".join(wrong)


def test_audience_routes_only_read(live: Live) -> None:
    public = [e for e in endpoints(live.app) if e.area == "public"]
    assert public and all(e.method == "GET" and e.kind != "ws" for e in public)


def test_no_cors_for_foreign_sites(live: Live) -> None:
    r = httpx.options(
        f"{live.base}/api/director/seal",
        headers={
            "Origin": EVIL,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization",
        },
    )
    assert "access-control-allow-origin" not in r.headers
    assert (
        "access-control-allow-origin"
        not in httpx.get(f"{live.base}/api/public/snapshot", headers={"Origin": EVIL}).headers
    )


@pytest.mark.parametrize("forged", [{"Origin": EVIL}, {"Origin": "null"}, {"Referer": EVIL + "/page"}])
def test_foreign_origin_cannot_act_on_any_state_changing_route(live: Live, forged: dict[str, str]) -> None:
    """A foreign page holds the role's cookie (SameSite aside) and forges a request: refused, nothing done."""
    acting = [e for e in endpoints(live.app) if e.method in STATE_CHANGING or e.kind == "ws"]
    assert acting and all(e.area != "public" for e in acting)
    before = (director_status(live), live.service.stations["A"].state())
    for ep in acting:
        secret, _, custody = str(live.secret(ep.area)).partition(".")  # the console's two cookies
        cookie = {"Cookie": f"dealer_{ep.area}={secret}" + (f"; dealer_custody={custody}" if custody else "")}
        if ep.kind == "ws":
            assert ws_try(live, ep, {**cookie, **forged}) == "403", ep
            continue
        r = httpx.request(ep.method, live.base + ep.path, headers={**cookie, **forged}, json={"label": "csrf"})
        assert r.status_code == 403 and "cross-site" in r.json()["detail"], (ep, r.text)
    after = (director_status(live), live.service.stations["A"].state())
    assert after == before  # the bank and its ledger did not move, the station did not change
    # the same cookie from this very site is accepted: the refusal above was the Origin check
    ok = httpx.post(
        f"{live.base}/api/judge/stations/A/hide",
        headers={"Cookie": f"dealer_judge={live.secret('judge')}", "Origin": live.base},
    )
    assert ok.status_code == 200


def director_status(live: Live) -> Any:
    r = httpx.get(f"{live.base}/api/director/status", headers={"Authorization": f"Bearer {live.secret('director')}"})
    assert r.status_code == 200
    return r.json()


# -- the public stream during a variant-2 session and a draw ------------------------------------------------------

LABEL = "Round 1"
K = 32
DEALS = 20
AFTER_KEYS = {
    "cleared": {"type", "station"},
    "commitment": {
        "type",
        "label",
        "commitment",
        "head",  # the ledger head right after the commitment (SIZE:HASH), an anchor officials note
        "deals",
        "kind",
        "previous",
        "drawn_before",
        "public_value",
        "public_value_spec",
        "witnesses",
        "format",
        "bits",
        "value",
        "state",
    },
    "bank": {"type", "formed", "target", "ledger_head", "ledger_size"},
    "station": {"type", "station", "variant", "open_count", "status"},
}


def _walk(value: Any, found: list[int], key: str = "") -> None:
    """Every card index a public message carries, wherever it sits."""
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(v, found, k)
    elif isinstance(value, list):
        for v in value:
            _walk(v, found, key)
    elif key in ("card", "open", "cards") and isinstance(value, int):
        found.append(value)


def test_public_stream_carries_no_hidden_card_and_no_drawn_deal(tmp_path: Path) -> None:
    with serve(tmp_path, target=DEALS) as live:
        judge = {"Authorization": f"Bearer {live.secret('judge')}"}
        director = {"Authorization": f"Bearer {live.secret('director')}"}
        judge_ws: list[str] = []
        stop = threading.Event()

        def watch_judge() -> None:
            async def run() -> None:
                async with websockets.connect(f"ws://127.0.0.1:{live.port}/judge/ws", additional_headers=judge) as ws:
                    while not stop.is_set():
                        try:
                            judge_ws.append(str(await asyncio.wait_for(ws.recv(), 0.2)))
                        except TimeoutError:
                            continue

            asyncio.run(run())

        watcher = threading.Thread(target=watch_judge, daemon=True)
        watcher.start()
        with Capture(f"{live.base}/api/public/events") as cap:
            # the judge even chooses to see the cards: the audience must still get only the first K of each deal
            for action in ("connect", "show", "start"):
                body = {"device": "simulator"} if action == "connect" else {}
                assert httpx.post(f"{live.base}/api/judge/stations/A/{action}", json=body, headers=judge).is_success
            wait_for(lambda: live.service.stations["A"].status == "target_reached")
            steps: list[tuple[str, dict[str, Any]]] = [
                ("/api/director/seal", {}),
                ("/api/director/draws", {"label": LABEL, **LOTTO}),
                (f"/api/director/draws/{LABEL}/publish", {}),
                (f"/api/director/draws/{LABEL}/value", {"named": "4 1 6 3 2 5 90 17 33 44"}),
                (f"/api/director/draws/{LABEL}/run", {}),
            ]
            for path, body in steps:
                r = httpx.post(live.base + path, json=body, headers=director, timeout=30)
                assert r.status_code == 200, (path, r.text)
            drawn_ids = [d["deal_id"] for d in r.json()["drawn"]]
            judge_view = httpx.get(f"{live.base}/api/judge/state", headers=judge).text
            snapshot = httpx.get(f"{live.base}/api/public/snapshot").content
            time.sleep(0.5)
        stop.set()
        watcher.join(10)
    raw = bytes(cap.raw)
    messages = cap.messages()  # every byte accounted for by a parsed message (see parse_sse)
    bank = unlocked(SqliteBank(tmp_path / "var" / "bank.sqlite"))  # the chief judge's key opens the draw
    try:
        stored = bank.get_deals(list(range(1, bank.deal_count() + 1)))
        record = bank.get_draw(LABEL)
        secret = Director(bank)._secret(record)  # K itself, as well as K sealed, must not be public
    finally:
        bank.close()
    assert len(stored) == DEALS and len(drawn_ids) == 1 and record.sealed_result is not None
    # 1. hidden cards: in every attempt, the cards the public saw are exactly the first K dealt
    seen: dict[int, list[int]] = {}
    committed: dict[int, int] = {}
    for _, m in messages:
        if m["type"] == "card":
            seen.setdefault(m["attempt"], []).append(m["card"])
        elif m["type"] == "deal_committed":
            committed[m["attempt"]] = m["bank_deal"]
        if m["type"] in ("hidden", "deal_committed", "deal_started", "deal_voided"):
            found: list[int] = []
            _walk(m, found)
            assert not found, m  # these carry no card at all
    assert len(committed) == DEALS
    for attempt, deal_id in committed.items():
        order = [Card(c) for c in stored[deal_id - 1].dealing_order or b""]
        assert len(order) == 52
        assert seen[attempt] == [int(c) for c in order[:K]]
    judge_hidden = [m for m in map(json.loads, judge_ws) if m.get("open") is False and "card" in m]
    assert len(judge_hidden) >= DEALS * (52 - K)  # the judge did see the hidden cards: the filter is the session's
    # 2. the draw: after the session, the public stream and snapshot only got the published commitment
    last_commit = max(i for i, (_, m) in enumerate(messages) if m["type"] == "deal_committed")
    after = [m for _, m in messages[last_commit + 1 :]]
    assert {m["type"] for m in after} <= {"commitment", "bank", "station", "cleared"}, after
    assert any(m["type"] == "commitment" for m in after)
    for m in after:
        assert set(m) == AFTER_KEYS[m["type"]], m
    public_bytes = raw + snapshot
    judge_bytes = ("".join(judge_ws) + judge_view).encode()
    for deal_id in drawn_ids:
        d = stored[deal_id - 1].deal
        for needle in (d.to_pbn(), d.to_bytes().hex(), str(d.rank()), stored[deal_id - 1].salt.hex()):
            assert needle.encode() not in public_bytes, (deal_id, needle)
            assert needle.encode() not in judge_bytes, (deal_id, needle)
    assert record.secret.hex().encode() not in public_bytes + judge_bytes
    assert secret.hex().encode() not in public_bytes + judge_bytes
    assert json.dumps(sorted(drawn_ids)).encode() not in public_bytes
    # the judge's pages say nothing of which deals were drawn
    assert b'"drawn"' not in judge_bytes and b'"drawn":' not in public_bytes and b"drawn_ids" not in public_bytes


@pytest.mark.parametrize("body", [b"\xff\xfe\x00", b"\x80", b'{"label": "\xac"}', b"[1, 2]", b"nul"])
def test_bodies_that_are_not_json_text_are_refused_not_crashed(live: Live, body: bytes) -> None:
    """Found by the fuzz: a body that is not UTF-8 made every POST answer 500 (UnicodeDecodeError). A route that
    takes a body refuses it (400 unparsable, 422 not the model); one that takes none ignores it."""
    schema = live.app.openapi()["paths"]
    posts = [e for e in endpoints(live.app) if e.method == "POST"]
    assert posts
    for ep in posts:
        takes_body = "requestBody" in schema[ep.template]["post"]
        r = httpx.post(live.base + ep.path, content=body, headers={"Authorization": f"Bearer {live.secret(ep.area)}"})
        assert r.status_code < 500, (ep.path, r.status_code, r.text)
        if takes_body:
            assert r.status_code in (400, 422), (ep.path, r.status_code, r.text)


def test_bundle_downloads_for_a_russian_label(tmp_path: Path) -> None:
    """Found in review: a session label outside Latin-1 (e.g. 'Тур 1') made the bundle download a 500."""
    label = 'Тур 1 "финал"'
    with serve(tmp_path, target=20) as live:
        judge = {"Authorization": f"Bearer {live.secret('judge')}"}
        director = {"Authorization": f"Bearer {live.secret('director')}"}
        for action, body in (("connect", {"device": "simulator"}), ("start", {})):
            assert httpx.post(f"{live.base}/api/judge/stations/A/{action}", json=body, headers=judge).is_success
        wait_for(lambda: live.service.stations["A"].status == "target_reached")
        for path, step in [
            ("/api/director/seal", {}),
            ("/api/director/draws", {"label": label, **LOTTO}),
            (f"/api/director/draws/{label}/publish", {}),
            (f"/api/director/draws/{label}/value", {"named": "4 1 6 3 2 5 90 17 33 44"}),
            (f"/api/director/draws/{label}/run", {}),
            (f"/api/director/draws/{label}/reveal", {}),
        ]:
            assert httpx.post(live.base + path, json=step, headers=director, timeout=30).status_code == 200, path
        r = httpx.get(f"{live.base}/api/director/draws/{label}/bundle", headers=director)
    assert r.status_code == 200 and r.json()["commitment"]["label"] == label
    disposition = r.headers["content-disposition"]
    assert disposition.startswith("attachment;") and disposition.isascii() and "bundle-" in disposition


def test_judge_websocket_answers_malformed_commands_and_stays_open(live: Live) -> None:
    """Found in review: a WebSocket message that was not a JSON object ended the handler with an exception."""

    async def talk() -> list[dict[str, Any]]:
        url = f"ws://127.0.0.1:{live.port}/judge/ws"
        headers = {"Authorization": f"Bearer {live.secret('judge')}"}
        async with websockets.connect(url, additional_headers=headers) as ws:
            await asyncio.wait_for(ws.recv(), 5)  # the state on connect
            replies = []
            for bad in ("not json", "[1, 2]", '"text"', "{"):
                await ws.send(bad)
                replies.append(await _next_reply(ws))
            await ws.send(json.dumps({"cmd": "state"}))
            replies.append(await _next_reply(ws, "state"))
            return replies

    replies = asyncio.run(talk())
    assert [r["type"] for r in replies] == ["error"] * 4 + ["state"]
    assert all("JSON object" in r["message"] for r in replies[:4])


async def _next_reply(ws: Any, want: str = "error") -> dict[str, Any]:
    while True:  # skip heartbeats and station updates broadcast to every console
        msg = json.loads(await asyncio.wait_for(ws.recv(), 5))
        if msg["type"] == want:
            return dict(msg)


JUDGE_ACTIONS = ("connect", "disconnect", "start", "resume", "pause", "stop", "redeal", "show", "hide", "inject")


@pytest.mark.parametrize("action", JUDGE_ACTIONS)
def test_every_judge_action_is_refused_to_everyone_else(live: Live, action: str) -> None:
    url = f"{live.base}/api/judge/stations/A/{action}"
    before = live.service.stations["A"].state()
    for role, want in (("none", 401), ("wrong", 403), ("director", 403)):
        secret = live.secret(role)
        headers = {"Authorization": f"Bearer {secret}"} if secret else {}
        assert httpx.post(url, json={"device": "simulator"}, headers=headers).status_code == want, (action, role)
        cookie = {"Cookie": f"dealer_judge={secret}"} if secret else {}
        assert httpx.post(url, json={}, headers={**cookie, "Origin": live.base}).status_code == want, (action, role)
    assert live.service.stations["A"].state() == before
