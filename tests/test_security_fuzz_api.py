"""The app's own OpenAPI schema fuzzed with schemathesis against a real server, as every role: never a 5xx.

Bodies, query and path parameters come from the schema FastAPI derives from the routes' pydantic models (no
hand-kept list of fields): schemathesis generates valid bodies (positive mode) and bodies that break the schema
(negative mode: wrong types, out-of-range numbers, over-long strings, unknown fields). Only path parameters get a
hint besides arbitrary strings: the names that exist on the test server (station ``A``, draw ``R1``), so the
fuzz reaches past "no such station". Each operation is tried most with the role that may call it and a few times
with every other role. A 4xx answer must be short (no echo of what was sent).

``make test`` runs at least 2,000 requests; ``DEALER_API_FUZZ_EXAMPLES`` (per operation, own role) raises it,
and the slow test hunts ten times longer.
"""

from __future__ import annotations

import copy
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from test_security_matrix import ARTIFACTS, Live, area_of, serve

OWN_ROLE = int(os.environ.get("DEALER_API_FUZZ_EXAMPLES", "150"))  # examples per operation with its own role
OTHER_ROLES = 4  # examples per operation with each other role (refused before the body is read)
MIN_REQUESTS = 2000
ECHO_LIMIT = 4096  # bytes: a 4xx answer longer than this is echoing its input
PATH_HINTS = {"name": ["A"], "label": ["R1"], "lang": ["en", "ru"]}


def hinted(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with the test server's own names offered for path parameters (besides anything the schema
    allows); bodies and queries are left exactly as the app declares them."""
    schema = copy.deepcopy(schema)
    for item in schema["paths"].values():
        for op in item.values():
            for p in op.get("parameters", []):
                if p["in"] == "path" and p["name"] in PATH_HINTS:
                    p["schema"] = {"anyOf": [{"enum": PATH_HINTS[p["name"]]}, p["schema"]]}
    return schema


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with serve(tmp_path_factory.mktemp("fuzz"), target=10) as running:
        yield running


def fuzz_operation(live: Live, op: Any, role: str, examples: int, tally: Tally) -> None:
    secret = live.secret(role)
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    session = requests.Session()
    strategy = st.one_of(op.as_strategy(GenerationMode.POSITIVE), op.as_strategy(GenerationMode.NEGATIVE))

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
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
                    status, body = raw.status_code, b""
            else:
                r = case.call(base_url=live.base, session=session, headers=headers, timeout=15)
                status, body = r.status_code, r.content
        except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, UnicodeEncodeError):
            return  # the client itself refuses to send such a request (not the server's doing)
        tally.counts[f"{role} {status // 100}xx"] += 1
        tally.counts["requests"] += 1
        where = f"{role}: {case.method} {case.formatted_path} {case.query} {str(case.body)[:300]!r}"
        if status >= 500:
            tally.failures.append(f"{where} -> {status} {body[:200]!r}")
        elif 400 <= status < 500 and len(body) > ECHO_LIMIT:
            tally.failures.append(f"{where} -> {status} with a {len(body)}-byte answer (echo?)")

    t0 = time.perf_counter()
    fuzz()
    tally.seconds += time.perf_counter() - t0


def run_fuzz(live: Live, own_role: int) -> Tally:
    schema = schemathesis.openapi.from_dict(hinted(live.app.openapi()))
    tally = Tally()
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result.err()  # an operation the schema cannot describe
        op = result.ok()
        area = area_of(op.path)
        own = "none" if area == "public" else area
        for role in ("none", "wrong", "judge", "director"):
            fuzz_operation(live, op, role, own_role if role == own else OTHER_ROLES, tally)
    return tally


def report(tally: Tally, name: str) -> str:
    lines = [f"# OpenAPI fuzz (schemathesis): {name}", ""]
    lines += [f"requests: {tally.counts['requests']} in {tally.seconds:.1f} s", ""]
    lines += [f"- {k}: {v}" for k, v in sorted(tally.counts.items()) if k != "requests"]
    lines += ["", f"failures (5xx or echo): {len(tally.failures)}", *tally.failures[:20]]
    text = "\n".join(lines) + "\n"
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"{name}.md").write_text(text, encoding="utf-8")
    return text


@pytest.mark.timeout(1800)  # 3,450 requests: 75 s on a quiet machine, past the suite's 300 s with every core busy
def test_openapi_fuzz_never_5xx(live: Live, capsys: pytest.CaptureFixture[str]) -> None:
    tally = run_fuzz(live, OWN_ROLE)
    text = report(tally, "api-fuzz")
    with capsys.disabled():
        print("\n" + text)
    assert tally.counts["requests"] >= MIN_REQUESTS * OWN_ROLE // 150
    assert tally.counts["judge 2xx"] > 0 and tally.counts["director 2xx"] > 0  # past the role checks
    assert tally.counts["judge 4xx"] > 0 and tally.counts["director 4xx"] > 0  # bad bodies were sent
    assert not tally.failures, "\n".join(tally.failures[:20])


@pytest.mark.slow
def test_openapi_fuzz_long_hunt(live: Live, capsys: pytest.CaptureFixture[str]) -> None:
    tally = run_fuzz(live, OWN_ROLE * 10)
    text = report(tally, "api-fuzz-long")
    with capsys.disabled():
        print("\n" + text)
    assert not tally.failures, "\n".join(tally.failures[:20])


def test_the_schema_declares_every_body_and_answer(live: Live) -> None:
    """The schema is complete: every POST that reads a body declares it, every JSON answer has a model, and the
    fuzz above draws its bodies from nothing else."""
    paths = live.app.openapi()["paths"]
    with_body = {"/api/judge/stations/{name}/{action}", "/api/director/draws", "/api/director/draws/{label}/value"}
    with_body |= {f"/api/director/draws/{{label}}/{x}" for x in ("run", "void", "files", "boards", "handrecords")}
    with_body |= {"/api/judge/boards/cards", "/api/judge/checks", "/api/judge/documents/equipment"}
    with_body.add("/api/director/documents/{kind}")
    for path, item in paths.items():
        for method, op in item.items():
            if path in with_body and method == "post":
                content = op["requestBody"]["content"]["application/json"]["schema"]
                assert "$ref" in content or "anyOf" in content, (path, content)
            ok = op["responses"].get("200") or op["responses"].get("202")
            assert ok is not None, (method, path)
            if path.startswith("/api/") and not path.endswith(
                ("/events", "/bundle", "/files/{name}", "/documents/{name}", "/snapshot")
            ):
                schema = ok["content"]["application/json"]["schema"]
                assert schema and schema != {}, (method, path, schema)
    schema = schemathesis.openapi.from_dict(hinted(live.app.openapi()))
    results = list(schema.get_all_operations())
    ops = [r.ok() for r in results if isinstance(r, Ok)]
    assert len(ops) == len(results), [r.err() for r in results if not isinstance(r, Ok)]
    assert {o.method.upper() for o in ops} == {"GET", "POST"}
    assert any(o.path == "/api/judge/stations/{name}/{action}" for o in ops)
