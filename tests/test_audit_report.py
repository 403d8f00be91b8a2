"""Reports: the JSON schema is stable and plain JSON; the HTML parses and carries the plots and tables."""

import json
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest

from dealer.audit import AuditRecord, deal_from_order, run_audit
from dealer.audit.engine import AuditResult
from dealer.audit.power import simulate
from dealer.audit.report_html import render_html
from dealer.audit.report_json import SCHEMA, SCHEMA_VERSION, TEST_KEYS, TOP_LEVEL_KEYS, to_json

TEST_IDS = [
    "patterns", "hcp_N", "hcp_E", "hcp_S", "hcp_W", "card_seat", "pair_repeat", "same_seat", "position_seat",
    "order_kept", "duplicates",
]  # fmt: skip


class Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="module")
def result() -> AuditResult:
    weak = simulate("gsr:1", 200, 1)
    fair = simulate("fair", 200, 2)
    records = [AuditRecord(deal_from_order(o), f"W{i}", "weak", order=tuple(map(int, o))) for i, o in enumerate(weak)]
    records += [AuditRecord(deal_from_order(o), f"F{i}", "fair") for i, o in enumerate(fair)]
    records.append(AuditRecord(records[3].deal, "W3-again", "fair"))
    return run_audit(records, 0.01, {"source": "test", "station": None})


def test_json_schema_is_stable(result: AuditResult) -> None:
    doc = to_json(result, datetime(2026, 11, 29, 12, 0, tzinfo=UTC))
    text = json.dumps(doc, allow_nan=False, ensure_ascii=False)  # plain JSON, no NaN
    doc = json.loads(text)
    assert tuple(doc) == TOP_LEVEL_KEYS
    assert doc["schema"] == SCHEMA and doc["version"] == SCHEMA_VERSION == 1
    assert doc["generated_at"] == "2026-11-29T12:00:00+00:00"
    assert [t["id"] for t in doc["tests"]] == TEST_IDS
    for test in doc["tests"]:
        assert tuple(test) == TEST_KEYS
        assert test["status"] in ("pass", "fail", "skipped")
        assert set(test["title"]) == set(test["verdict"]) == {"en", "ru"}
        if test["status"] != "skipped":
            assert 0 <= test["p_value"] <= test["p_holm"] <= 1
    assert doc["passed"] is False and doc["deals"] == 401
    assert doc["duplicates"] == [["W3", "W3-again"]]
    assert [s["station"] for s in doc["stations"]] == ["weak", "fair"]
    assert doc["stations"][0]["passed"] is False
    assert set(doc["stations"][0]) == {"station", "deals", "passed", "failed", "min_p_holm", "alpha"}
    patterns = next(t for t in doc["tests"] if t["id"] == "patterns")
    assert {"pattern", "probability", "observed", "expected"} == set(patterns["details"]["table"][0])
    assert sum(row["observed"] for row in patterns["details"]["table"]) == 4 * 401


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_html_renders_with_plots_and_tables(result: AuditResult, lang: str) -> None:
    page = render_html(result, lang)
    parser = Collector()
    parser.feed(page)
    parser.close()
    tags = [t for t, _ in parser.tags]
    assert tags[0] == "html"
    plots = {a.get("data-plot") for t, a in parser.tags if t == "figure"}
    assert plots == {"patterns", "hcp", "card_seat", "pair_repeat"}
    assert tags.count("svg") == 4
    assert "script" not in tags and not any(a.get("src") for _, a in parser.tags)  # self-contained
    rows = [a.get("data-test") for t, a in parser.tags if t == "tr" and a.get("data-test")]
    assert rows == TEST_IDS
    ids = {a.get("id") for _, a in parser.tags}
    assert {"verdict", "tests", "stations", "duplicates", "patterns", "hcp"} <= ids
    text = " ".join(parser.text)
    assert "W3-again" in text
    assert ("НЕ случайна" in text) if lang == "ru" else ("NOT random" in text)
    assert "4-4-3-2" in text


def test_empty_audit_still_renders() -> None:
    result = run_audit([])
    assert result.deals == 0 and result.passed
    doc = to_json(result)
    assert all(t["status"] == "skipped" or t["id"] == "duplicates" for t in doc["tests"])
    parser = Collector()
    parser.feed(render_html(result, "en"))
    assert any(t == "svg" for t, _ in parser.tags)
