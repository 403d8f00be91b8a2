"""Lone UTF-16 surrogates in a JSON body (``"\\ud800"`` is valid JSON, but no UTF-8 text can hold it): every POST
route of the real app, over a real server, as the role that may call it, answers 4xx naming the place, never 5xx.

The routes are read from the application (a route added later is tried too); the bodies put a lone high, a lone
low and a reversed pair of surrogates in every field the route's own schema declares, in a key, and in an
unknown field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from test_security_matrix import Live, endpoints, serve

SURROGATES = ["\\ud800", "\\udfff", "a\\udc00b", "\\udc00\\ud800"]  # JSON escapes, sent as written


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with serve(tmp_path_factory.mktemp("surrogates"), target=10) as running:
        yield running


def body_fields(live: Live, template: str) -> list[str]:
    """The fields the route's body model declares, from the app's own OpenAPI schema."""
    spec = live.app.openapi()
    op = spec["paths"][template]["post"]
    content = op.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return []
    schema: dict[str, Any] = content["schema"]
    refs = [schema, *list(schema.get("anyOf", []))]
    fields: list[str] = []
    for ref in refs:
        if "$ref" in ref:
            name = ref["$ref"].rsplit("/", 1)[1]
            fields += list(spec["components"]["schemas"][name].get("properties", {}))
    return fields


def bodies(fields: list[str]) -> list[str]:
    out = []
    for bad in SURROGATES:
        out.append(f'{{"kind": "{bad}"}}')
        out.append(f'{{"{bad}": 1}}')
        out.append(f'["{bad}"]')
        out.append(f'"{bad}"')
        for name in fields:
            out.append(f'{{{json.dumps(name)}: "{bad}"}}')
            out.append(f'{{{json.dumps(name)}: ["{bad}"]}}')
    return out


def test_a_lone_surrogate_in_any_post_body_is_a_4xx_naming_the_body_never_a_5xx(live: Live) -> None:
    posts = [ep for ep in endpoints(live.app) if ep.method == "POST"]
    assert len(posts) >= 10  # the app's state-changing routes were found
    tried, failures = 0, []
    with httpx.Client(base_url=live.base, timeout=15) as client:
        for ep in posts:
            secret = live.secret(ep.area) if ep.area != "public" else None
            headers = {"Content-Type": "application/json"}
            if secret:
                headers["Authorization"] = f"Bearer {secret}"
            for body in bodies(body_fields(live, ep.template)):
                r = client.post(ep.path, content=body.encode("ascii"), headers=headers)
                tried += 1
                if not 400 <= r.status_code < 500:
                    failures.append(f"{ep.path} {body[:80]} -> {r.status_code} {r.content[:200]!r}")
                elif r.status_code == 422 and "surrogate" in r.text:
                    assert '"body"' in r.text, r.text  # the place is named
    assert tried >= 200
    assert not failures, f"{len(failures)} of {tried}:\n" + "\n".join(failures[:20])


def test_a_surrogate_pair_written_as_escapes_is_an_ordinary_character(live: Live) -> None:
    """The check refuses only lone surrogates: a proper pair (U+1F0A1, a playing card) is text like any other."""
    secret = live.secret("director")
    r = httpx.post(
        f"{live.base}/api/director/draws",
        content=b'{"label": "R\\ud83c\\udca1"}',
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {secret}"},
        timeout=15,
    )
    assert 400 <= r.status_code < 500  # refused for its own reasons (no sealed bank yet), not for the character
    assert "surrogate" not in r.text, r.text


def test_a_judge_websocket_command_with_a_lone_surrogate_gets_an_error_reply_and_stays_connected(live: Live) -> None:
    import asyncio

    import websockets

    async def talk() -> tuple[str, str]:
        headers = {"Authorization": f"Bearer {live.secret('judge')}"}
        async with websockets.connect(f"ws://127.0.0.1:{live.port}/judge/ws", additional_headers=headers) as ws:
            await asyncio.wait_for(ws.recv(), 10)  # the state on connect
            await ws.send('{"cmd": "state", "id": "\\ud800"}')
            bad = await asyncio.wait_for(ws.recv(), 10)
            await ws.send('{"cmd": "state", "id": 7}')
            good = await asyncio.wait_for(ws.recv(), 10)
            return str(bad), str(good)

    bad, good = asyncio.run(talk())
    assert json.loads(bad)["type"] == "error" and "surrogate" in bad
    assert json.loads(good)["type"] == "state"


def judge_ws_exchange(live: Live, frames: list[str | bytes]) -> list[str]:
    """Send ``frames`` on the judge's WebSocket, one answer read after each; then a ``state`` command."""
    import asyncio

    import websockets

    async def talk() -> list[str]:
        headers = {"Authorization": f"Bearer {live.secret('judge')}"}
        answers = []
        async with websockets.connect(
            f"ws://127.0.0.1:{live.port}/judge/ws", additional_headers=headers, max_size=None
        ) as ws:
            await asyncio.wait_for(ws.recv(), 10)  # the state on connect
            for frame in [*frames, '{"cmd": "state"}']:
                await ws.send(frame)
                while True:  # heartbeats and station news may come in between: the answer is error or state
                    text = str(await asyncio.wait_for(ws.recv(), 10))
                    if json.loads(text)["type"] in ("error", "state"):
                        answers.append(text)
                        break
        return answers

    return asyncio.run(talk())


def test_a_judge_websocket_message_over_the_limit_gets_an_error_reply_and_the_console_stays(live: Live) -> None:
    limit = live.service.config.limits.max_ws_message_bytes
    big = json.dumps({"cmd": "state", "id": "x" * (limit + 10)})
    huge = json.dumps({"cmd": "state", "id": "x" * (limit * 8)})
    *errors, last = judge_ws_exchange(live, [big, huge])
    for answer in errors:
        assert json.loads(answer)["type"] == "error" and f"limited to {limit} bytes" in answer, answer[:300]
    assert json.loads(last)["type"] == "state"  # still connected


def test_a_binary_frame_on_the_judge_websocket_gets_an_error_reply_not_a_traceback(live: Live) -> None:
    error, last = judge_ws_exchange(live, [b'{"cmd": "state"}'])
    assert json.loads(error)["type"] == "error" and "binary" in error
    assert json.loads(last)["type"] == "state"
