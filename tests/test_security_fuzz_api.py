"""The app's OpenAPI schema fuzzed with schemathesis against a real server, as every role: never a 5xx.

The routes read their JSON bodies and most query parameters themselves, so the schema FastAPI derives lists only
path parameters. Before fuzzing, the schema is widened with what the handlers really read (the JSON fields of
the judge's and the director's requests, ``token``/``lang``/``last_event_id`` queries, the ``Last-Event-ID``
header), each allowed to be any JSON value, and the path parameters get the meaningful values (stations, actions,
draw labels) besides arbitrary strings. Examples are bounded so the whole run stays well under two minutes.
"""

from __future__ import annotations

import copy
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from test_security_matrix import ARTIFACTS, Live, serve

EXAMPLES = int(os.environ.get("DEALER_API_FUZZ_EXAMPLES", "5"))  # per operation, role and mode; raise to hunt longer
ANY: dict[str, Any] = {}
BODY_FIELDS = {
    # judge
    "device": {"anyOf": [{"enum": ["simulator"]}, {"type": "string"}]},
    "kind": {"anyOf": [{"enum": ["jam", "duplicate_card", "unreadable_card"]}, {"type": "string"}]},
    # director
    "label": {"anyOf": [{"enum": ["R1"]}, {"type": "string"}]},
    "share": ANY,
    "count": ANY,
    "witnesses": ANY,
    "digits": ANY,
    "dice": ANY,
    "named": ANY,
    "public_value": ANY,
    "public_value_source": ANY,
    # the judge's WebSocket commands, sent over HTTP too
    "cmd": ANY,
    "station": ANY,
    "id": ANY,
}
PATH_VALUES = {
    "name": ["A", "B"],
    "action": ["connect", "disconnect", "start", "resume", "pause", "stop", "redeal", "show", "hide", "inject"],
    "label": ["R1"],
    "lang": ["en", "ru"],
}


def widened(schema: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(schema)
    for path, item in schema["paths"].items():
        for method, op in item.items():
            params = op.setdefault("parameters", [])
            for p in params:
                if p["in"] == "path" and p["name"] in PATH_VALUES:
                    p["schema"] = {"anyOf": [{"enum": PATH_VALUES[p["name"]]}, {"type": "string", "minLength": 1}]}
            for q in ("token", "lang", "last_event_id"):
                params.append({"name": q, "in": "query", "required": False, "schema": {"type": "string"}})
            if path.endswith("/events"):
                params.append(
                    {"name": "Last-Event-ID", "in": "header", "required": False, "schema": {"type": "string"}}
                )
            if method == "post":
                op["requestBody"] = {
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": BODY_FIELDS, "additionalProperties": True}
                        }
                    },
                }
    return schema


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with serve(tmp_path_factory.mktemp("fuzz"), target=10) as running:
        yield running


def run_fuzz(live: Live, role: str, tally: Counter[str], failures: list[str], spent: Counter[str]) -> None:
    schema = schemathesis.openapi.from_dict(widened(live.app.openapi()))
    secret = live.secret(role)
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    session = requests.Session()
    for result in schema.get_all_operations():
        op = result.ok()
        strategy = st.one_of(op.as_strategy(GenerationMode.POSITIVE), op.as_strategy(GenerationMode.NEGATIVE))

        @settings(
            max_examples=EXAMPLES * 2,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def fuzz(case: Any) -> None:
            try:
                if case.path.endswith("/events"):  # a stream that never ends: read the status, then hang up
                    with session.get(
                        live.base + case.formatted_path,
                        params=case.query,
                        headers={**headers, **(case.headers or {})},
                        stream=True,
                        timeout=15,
                    ) as raw:
                        status, text = raw.status_code, ""
                else:
                    r = case.call(base_url=live.base, session=session, headers=headers, timeout=15)
                    status, text = r.status_code, r.text
            except (requests.exceptions.InvalidHeader, UnicodeEncodeError):
                return  # the client itself refuses to send such a header (not the server's doing)
            tally[f"{role} {status // 100}xx"] += 1
            tally["requests"] += 1
            if status >= 500:
                failures.append(
                    f"{role}: {case.method} {case.formatted_path} {case.query} {case.body!r} -> {status} {text[:200]}"
                )

        t0 = time.perf_counter()
        fuzz()
        spent[f"{role} {op.method.upper()} {op.path}"] += time.perf_counter() - t0


def test_openapi_fuzz_never_5xx(live: Live, capsys: pytest.CaptureFixture[str]) -> None:
    tally: Counter[str] = Counter()
    failures: list[str] = []
    spent: Counter[str] = Counter()
    for role in ("none", "wrong", "judge", "director"):
        run_fuzz(live, role, tally, failures, spent)

    lines = ["# OpenAPI fuzz (schemathesis)", "", f"requests: {tally['requests']} in {sum(spent.values()):.1f} s", ""]
    lines += [f"- {k}: {v}" for k, v in sorted(tally.items()) if k != "requests"]
    lines += ["", f"5xx responses: {len(failures)}", *failures[:20]]
    text = "\n".join(lines) + "\n"
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "api-fuzz.md").write_text(text, encoding="utf-8")
    with capsys.disabled():
        print("\n" + text)
    assert tally["requests"] >= 40 * EXAMPLES
    assert tally["judge 2xx"] > 0 and tally["director 2xx"] > 0  # the fuzz reached past the role checks
    assert not failures, "\n".join(failures[:20])


def test_widened_schema_is_valid_openapi(live: Live) -> None:
    schema = schemathesis.openapi.from_dict(widened(live.app.openapi()))
    ops = [r.ok() for r in schema.get_all_operations()]
    assert {o.method.upper() for o in ops} == {"GET", "POST"}
    assert any(o.path == "/api/judge/stations/{name}/{action}" for o in ops)
    assert Path(ARTIFACTS).name == "test-artifacts"
