"""``dealer audit`` as a user runs it (real subprocess), and the audit JSON input it reads."""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import deals

from dealer.audit import AuditRecord, deal_from_order
from dealer.audit.inputs import filter_records, parse_audit_json, records_to_json
from dealer.audit.power import simulate
from dealer.audit.records import AuditInputError

ROOT = Path(__file__).resolve().parents[1]


def dealer(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "dealer", *args], capture_output=True, text=True, env=env, timeout=120, cwd=cwd
    )


records_strategy = st.lists(
    st.builds(
        AuditRecord,
        deal=deals(),
        deal_id=st.one_of(st.integers(0, 10**9), st.text("ABC123-", min_size=1, max_size=6)),
        station=st.one_of(st.none(), st.sampled_from(["T1", "стол 2"])),
        timestamp=st.one_of(st.none(), st.datetimes(timezones=st.just(UTC))),
        order=st.one_of(st.none(), st.permutations(list(range(52))).map(tuple)),
    ),
    max_size=5,
)


@settings(max_examples=40, deadline=None)
@given(records_strategy)
def test_audit_json_round_trips(records: list[AuditRecord]) -> None:
    assert parse_audit_json(records_to_json(records)) == records


def test_audit_json_accepts_a_plain_list_of_pbn_strings() -> None:
    deal = deal_from_order(list(range(52)))
    (record,) = parse_audit_json(json.dumps([deal.to_pbn()]).encode())
    assert record.deal == deal and record.deal_id == 1 and record.order is None


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("[1]", "deal #1: expected a PBN string or an object"),
        ('[{"deal": "N:AKQ"}]', "deal #1"),
        ('[{"dael": "x"}]', "unknown field(s) dael"),
        ('{"deals": 3}', "expected a JSON list of deals"),
        ("not json", "not valid JSON"),
    ],
)
def test_audit_json_errors_name_the_deal_and_field(doc: str, message: str) -> None:
    with pytest.raises(AuditInputError, match="x.json") as exc:
        parse_audit_json(doc.encode(), "x.json")
    assert message in str(exc.value)


def test_bad_dealing_order_is_named() -> None:
    pbn = deal_from_order(list(range(52))).to_pbn()
    order = list(range(52))
    order[5] = 99
    with pytest.raises(AuditInputError, match=r"deal #1: order\[5\] = 99 is not a card index in 0..51"):
        parse_audit_json(json.dumps([{"deal": pbn, "order": order}]).encode())
    order[5] = 4
    with pytest.raises(AuditInputError, match="lists card index 4 twice"):
        parse_audit_json(json.dumps([{"deal": pbn, "order": order}]).encode())


def test_cli_default_alpha_is_the_engine_default() -> None:
    from dealer.audit.engine import DEFAULT_ALPHA
    from dealer.cli import audit_cmds

    assert audit_cmds.DEFAULT_ALPHA == DEFAULT_ALPHA


def test_filters_by_station_and_time() -> None:
    deal = deal_from_order(list(range(52)))
    t = [datetime(2026, 11, 29, h, tzinfo=UTC) for h in (9, 12, 15)]
    records = [AuditRecord(deal, i, "A" if i else "B", t[i]) for i in range(3)] + [AuditRecord(deal, 9, "A")]
    assert [r.deal_id for r in filter_records(records, station="A")] == [1, 2, 9]
    assert [r.deal_id for r in filter_records(records, since=t[1])] == [1, 2]
    assert [r.deal_id for r in filter_records(records, since=t[0], until=t[2], station="A")] == [1]


def test_cli_flags_a_weak_shuffler_and_writes_reports(tmp_path: Path) -> None:
    r = dealer(
        "audit", "--simulate", "gsr:1:5", "--deals", "300", "--hands-only", "--check",
        "--html", str(tmp_path / "a.html"), "--json", str(tmp_path / "a.json"),
        "--save-deals", str(tmp_path / "d.json"),
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "NOT random" in r.stdout and "pair_repeat" in r.stdout
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["passed"] is False and doc["deals"] == 300
    parser = HTMLParser()
    parser.feed((tmp_path / "a.html").read_text())
    assert (tmp_path / "a.html").read_text().count("<svg") == 4
    # the saved deals audit the same way from the file, in Russian
    again = dealer("audit", str(tmp_path / "d.json"), "--lang", "ru", "--json", str(tmp_path / "b.json"))
    assert again.returncode == 0, again.stderr
    assert "НЕ случайна" in again.stdout
    redo = json.loads((tmp_path / "b.json").read_text())
    assert [t["p_value"] for t in redo["tests"]] == [t["p_value"] for t in doc["tests"]]


def test_cli_fair_deals_from_a_file_pass_with_station_filter(tmp_path: Path) -> None:
    orders = simulate("fair", 120, 77)
    records = [AuditRecord(deal_from_order(o), i + 1, "T1" if i % 2 else "T2") for i, o in enumerate(orders)]
    path = tmp_path / "deals.json"
    path.write_bytes(records_to_json(records))
    r = dealer("audit", str(path), "--station", "T1", "--check", "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["deals"] == 60 and doc["scope"]["station"] == "T1" and doc["passed"]


def test_cli_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"deal": "N:AKQ.x"}]')
    r = dealer("audit", str(bad))
    assert r.returncode == 1 and "bad.json: deal #1" in r.stderr
    missing = dealer("audit", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "nope.json" in missing.stderr
    both = dealer("audit")
    assert both.returncode == 2
    since = dealer("audit", "--simulate", "fair", "--since", "yesterday")
    assert since.returncode == 2 and "ISO 8601" in since.stderr
    shuffler = dealer("audit", "--simulate", "magic")
    assert shuffler.returncode == 1 and "unknown shuffler 'magic'" in shuffler.stderr
    assert not list(tmp_path.glob(".*"))  # nothing half-written


def test_bank_audit_finds_the_weak_station(tmp_path: Path) -> None:
    from dealer.bank.api import DealSource
    from dealer.bank.store import SqliteBank

    path = tmp_path / "bank.sqlite"
    weak = simulate("gsr:2", 25, 3)
    fair = simulate("fair", 25, 4)
    with SqliteBank(path) as bank:
        for w, f in zip(weak, fair, strict=True):  # the two stations deal at the same time, interleaved in the bank
            bank.commit_deal(deal_from_order(w), DealSource("station", station="T1", dealing_order=bytes(map(int, w))))
            bank.commit_deal(deal_from_order(f), DealSource("station", station="T2", dealing_order=bytes(map(int, f))))
    r = dealer(
        "bank", "audit", "--bank", str(path), "--json", str(tmp_path / "all.json"), "--html", str(tmp_path / "a.html")
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "all.json").read_text())
    assert doc["deals"] == 50 and doc["deals_with_order"] == 50 and doc["pairs_of_deals"] == 48
    stations = {s["station"]: s for s in doc["stations"]}
    assert stations["T1"]["passed"] is False and "order_kept" in stations["T1"]["failed"]
    assert stations["T2"]["passed"] is True
    one = dealer("bank", "audit", "--bank", str(path), "--station", "T2", "--check", "--since", "2000-01-01")
    assert one.returncode == 0, one.stdout + one.stderr
    assert "consistent with random dealing" in one.stdout
    none = dealer("bank", "audit", "--bank", str(tmp_path / "missing.sqlite"))
    assert none.returncode == 2 and "no bank there" in none.stderr
    assert not (tmp_path / "missing.sqlite").exists()


def test_cli_reads_any_registered_deal_file(tmp_path: Path) -> None:
    from dealer.formats import BoardRecord, by_name, load_all

    load_all()
    boards = [BoardRecord(deal_from_order(o), board=i + 1) for i, o in enumerate(simulate("fair", 30, 9))]
    path = tmp_path / "session.pbn"
    path.write_bytes(by_name("pbn").write(boards))
    r = dealer("audit", str(path), "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["deals"] == 30 and doc["deals_with_order"] == 0 and doc["scope"]["source"] == str(path)
