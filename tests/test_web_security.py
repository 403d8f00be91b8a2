"""Roles: the judge's and the director's endpoints refuse missing and wrong secrets; the audience can do nothing."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from _web_server import Running, regulation, running_service, service_config

from dealer.app.config import ConfigError, config_from_dict, load_config
from dealer.app.secrets import RoleSecrets, load_or_create_secret

JUDGE_GET = ["/judge", "/api/judge/state", "/api/judge/devices"]
JUDGE_POST = ["/api/judge/stations/A/start", "/api/judge/stations/A/stop", "/api/judge/stations/A/show"]
DIRECTOR_GET = ["/director", "/api/director/status", "/api/director/draws/x/bundle"]
DIRECTOR_POST = [
    "/api/director/seal",
    "/api/director/draws",
    "/api/director/draws/x/run",
    "/api/director/draws/x/reveal",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("sec")
    with running_service(service_config(tmp), regulation(), autostart=False) as running:
        yield running


def call(
    server: Running,
    method: str,
    path: str,
    cookies: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    json: object = None,
) -> httpx.Response:
    with httpx.Client(base_url=server.base, follow_redirects=False, cookies=cookies) as client:
        return client.request(method, path, headers=headers, json=json)


@pytest.mark.parametrize("path", JUDGE_GET + DIRECTOR_GET)
def test_get_without_secret_is_401(server: Running, path: str) -> None:
    assert call(server, "GET", path).status_code == 401


@pytest.mark.parametrize("path", JUDGE_POST + DIRECTOR_POST)
def test_audience_cannot_change_anything(server: Running, path: str) -> None:
    assert call(server, "POST", path, json={}).status_code == 401


@pytest.mark.parametrize("path", JUDGE_GET + JUDGE_POST)
def test_judge_endpoints_refuse_wrong_and_director_secret(server: Running, path: str) -> None:
    method = "POST" if path in JUDGE_POST else "GET"
    for secret in ("x" * 43, server.director):
        r = call(server, method, path, headers={"Authorization": f"Bearer {secret}"})
        assert r.status_code == 403, (path, r.text)


@pytest.mark.parametrize("path", DIRECTOR_GET + DIRECTOR_POST)
def test_director_endpoints_refuse_wrong_and_judge_secret(server: Running, path: str) -> None:
    method = "POST" if path in DIRECTOR_POST else "GET"
    for secret in ("y" * 43, server.judge):
        r = call(server, method, path, headers={"Authorization": f"Bearer {secret}"})
        assert r.status_code == 403, (path, r.text)
    for cookie_role, secret in (("judge", server.judge), ("director", "z" * 43)):
        r = call(server, method, path, cookies={f"dealer_{cookie_role}": secret})
        assert r.status_code in (401, 403)


def test_wrong_token_link_is_403(server: Running) -> None:
    assert call(server, "GET", "/judge?token=nope").status_code == 403
    assert call(server, "GET", f"/director?token={server.judge}").status_code == 403


def test_token_link_sets_a_strict_httponly_cookie_and_strips_the_token(server: Running) -> None:
    r = call(server, "GET", f"/judge?token={server.judge}")
    assert r.status_code == 303 and r.headers["location"] == "/judge"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "dealer_judge=" in cookie
    with httpx.Client(base_url=server.base) as client:
        client.get(f"/judge?token={server.judge}", follow_redirects=False)
        page = client.get("/judge")
        assert page.status_code == 200 and "judge.js" in page.text
        assert server.judge not in page.text  # the secret is never echoed into a page
        assert client.get("/api/judge/state").json()["type"] == "state"


def test_cookie_requests_from_another_origin_are_refused(server: Running) -> None:
    cookies = {"dealer_judge": server.judge}
    evil = call(
        server, "POST", "/api/judge/stations/A/hide", cookies=cookies, headers={"Origin": "http://evil.example"}
    )
    assert evil.status_code == 403 and "Origin" in evil.json()["detail"]
    referer = call(
        server, "POST", "/api/judge/stations/A/hide", cookies=cookies, headers={"Referer": "http://evil.example/x"}
    )
    assert referer.status_code == 403
    same = call(server, "POST", "/api/judge/stations/A/hide", cookies=cookies, headers={"Origin": server.base})
    assert same.status_code == 200 and same.json()["show_cards"] is False


def test_judge_websocket_needs_the_secret_and_the_origin(server: Running) -> None:
    url = f"ws://127.0.0.1:{server.port}/judge/ws"

    async def attempt(headers: dict[str, str]) -> str:
        try:
            async with websockets.connect(url, additional_headers=headers) as ws:
                return str(await asyncio.wait_for(ws.recv(), 5))
        except websockets.InvalidStatus as exc:
            return f"refused {exc.response.status_code}"

    assert asyncio.run(attempt({})) == "refused 401"
    assert asyncio.run(attempt({"Cookie": "dealer_judge=wrong-wrong-wrong"})) == "refused 403"
    assert asyncio.run(attempt({"Cookie": f"dealer_judge={server.director}"})) == "refused 403"
    evil = {"Cookie": f"dealer_judge={server.judge}", "Origin": "http://evil.example"}
    assert asyncio.run(attempt(evil)) == "refused 403"
    good = {"Cookie": f"dealer_judge={server.judge}", "Origin": server.base}
    assert json.loads(asyncio.run(attempt(good)))["type"] == "state"


def test_audience_pages_need_no_secret(server: Running) -> None:
    assert call(server, "GET", "/").status_code == 200
    assert call(server, "GET", "/api/public/snapshot").json()["type"] == "snapshot"
    assert call(server, "GET", "/i18n/ru.json").json()["seat.letters"] == ["С", "В", "Ю", "З"]
    assert call(server, "GET", "/i18n/xx.json").status_code == 404


# -- secrets on disk and in config ------------------------------------------------------------------------------


def test_secrets_are_created_owner_only_and_reused(tmp_path: Path) -> None:
    var = tmp_path / "var"
    first = load_or_create_secret(var, "judge")
    mode = stat.S_IMODE(os.stat(var / "judge.secret").st_mode)
    assert mode == 0o600 and stat.S_IMODE(os.stat(var).st_mode) == 0o700
    assert len(first) >= 40 and load_or_create_secret(var, "judge") == first
    assert load_or_create_secret(var, "director") != first


def test_role_secrets_must_differ_and_compare_exactly() -> None:
    with pytest.raises(ValueError, match="differ"):
        RoleSecrets("same-secret-123456", "same-secret-123456")
    s = RoleSecrets("judge-secret-123456", "director-secret-123")
    assert s.check("judge", "judge-secret-123456")
    assert not s.check("judge", "judge-secret-12345")
    assert not s.check("judge", None) and not s.check("director", "judge-secret-123456")


def test_config_from_file_sets_secrets(tmp_path: Path) -> None:
    p = tmp_path / "service.toml"
    p.write_text('[secrets]\njudge = "0123456789abcdef-j"\ndirector = "0123456789abcdef-d"\n', encoding="utf-8")
    cfg = load_config(p)
    assert cfg.judge_secret == "0123456789abcdef-j" and cfg.stations[0].kind == "simulator"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"language": "de"}, "language = 'de'"),
        ({"port": 70000}, "port = 70000"),
        ({"colour": 1}, "unknown key 'colour'"),
        ({"stations": [{"name": "A", "kind": "serial"}]}, "stations[0].url is required"),
        ({"stations": [{"name": "A", "kind": "fax"}]}, "stations[0].kind = 'fax'"),
        ({"stations": [{"name": "A"}, {"name": "A"}]}, "station name 'A' is used twice"),
        ({"stations": [{"name": "A", "fault_rate": 2}]}, "stations[0].fault_rate = 2"),
        ({"secrets": {"judge": "short"}}, "secrets.judge must be"),
        ({"secrets": {"judge": "0123456789abcdef", "director": "0123456789abcdef"}}, "must differ"),
        ({"broadcast_delay": -1}, "broadcast_delay = -1"),
    ],
)
def test_bad_config_is_refused_with_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict(data, "svc.toml")
    assert message in str(err.value) and str(err.value).startswith("svc.toml: ")
