"""Import of public deals: each deal once, every deal imported or reported, committed in bounded batches.

Every test runs on SQLite and on PostgreSQL (skipped, saying why, where no PostgreSQL server answers).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bank_engines import bank_at, engine, open_test_bank  # noqa: F401 (fixtures)
from bank_support import random_deal, station_source

from dealer.bank.composed import Bank
from dealer.bank.store import ImportItem, SqliteBank
from dealer.bank_import.importer import import_files
from dealer.core import Deal
from dealer.draw.verify import verify_bank
from dealer.formats.base import BoardRecord, FormatError
from dealer.formats.lin import LIN
from dealer.formats.pbn import PBN

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SAMPLE = SHARED / "data" / "pbn"


@pytest.fixture
def bank(bank_at: str, tmp_path: Path) -> Iterator[Bank]:  # noqa: F811 (on SQLite and on PostgreSQL)
    b = open_test_bank(bank_at, tmp_path)
    yield b
    b.close()


def _deals(n: int, seed: int) -> list[Deal]:
    rng = random.Random(seed)
    return [random_deal(rng) for _ in range(n)]


def test_duplicates_inside_and_across_files_and_bank_are_reported(bank: Bank, tmp_path: Path) -> None:
    a, b, c, d = _deals(4, 1)
    bank.commit_deal(d, station_source())  # deal 1, already in the bank
    f1 = tmp_path / "one.pbn"
    f1.write_bytes(PBN.write([BoardRecord(a, 1), BoardRecord(b, 2), BoardRecord(a, 3)]))
    f2 = tmp_path / "two.lin"
    f2.write_bytes(LIN.write([BoardRecord(b, 1), BoardRecord(c, 2), BoardRecord(d, 3)]))
    report = import_files(bank, [f1, f2])
    assert report.records == 6 and report.imported == 3 and report.duplicates == 3 and report.problems == 0
    one, two = report.files
    assert [(x.board, x.repeats) for x in one.duplicates] == [(3, 2)]
    assert one.duplicates[0].first_seen.endswith("one.pbn:" + str(PBN.read(f1.read_bytes()).records[0].line))
    assert [(x.board, x.repeats, x.first_seen) for x in two.duplicates][1] == (3, 1, "bank")
    assert bank.get_deal(4).deal == c
    digest = hashlib.sha256(f2.read_bytes()).hexdigest()  # base name and SHA-256 only: no local path
    # the deal's source references its batch's entry, which names the file (its second)
    assert bank.get_deal(4).source == {
        "batch": report.batch_index, "board": 2, "file_index": 1, "kind": "import", "line": 2, "shown": 0
    }  # fmt: skip
    batch = bank.entry(report.batch_index)
    assert (batch.data["files"][1]["file"], batch.data["files"][1]["sha256"]) == ("two.lin", digest)
    assert batch.kind == "import" and batch.data["imported"] == 3
    # one deal was already in the bank; two repeat deals earlier in the same import (found before the bank)
    assert batch.data["duplicates"] == 1 and batch.data["repeated_within_import"] == 2
    assert report.batch_indices == [report.batch_index]
    assert verify_bank(bank).ok


def test_unreadable_records_are_reported_with_line_and_reason(bank: Bank, tmp_path: Path) -> None:
    good = _deals(1, 2)[0]
    text = (
        PBN.write([BoardRecord(good, 1)]).decode() + '\r\n[Board "2"]\r\n[Deal "N:AKQ.. - - -"]\r\n\r\n[Board "3"]\r\n'
    )
    path = tmp_path / "bad.pbn"
    path.write_text(text)
    report = import_files(bank, [path])
    f = report.files[0]
    assert f.imported == 1
    lines = text.replace("\r\n", "\n").split("\n")
    board2, board3 = lines.index('[Board "2"]') + 1, lines.index('[Board "3"]') + 1
    reasons = {(p.board, p.line): p.reason for p in f.problems}
    assert set(reasons) == {(2, board2), (3, board3)}
    assert "N:AKQ.. - - -" in reasons[(2, board2)]
    assert "no Deal tag" in reasons[(3, board3)]


def test_import_is_all_or_nothing(bank: Bank, tmp_path: Path) -> None:
    path = tmp_path / "many.pbn"
    path.write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(_deals(50, 3))]))
    before = (bank.deal_count(), bank.ledger_size())
    calls = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        raise KeyboardInterrupt  # the operator stops it after the first deals were processed

    with pytest.raises(KeyboardInterrupt):
        bank.import_deals(
            [ImportItem(d, station_source()) for d in _deals(2000, 4)],
            {"files": []},
            lambda done: progress(done, 2000),
        )
    assert calls == [1000]
    assert (bank.deal_count(), bank.ledger_size()) == before
    missing = tmp_path / "missing.pbn"
    with pytest.raises(FormatError, match=r"missing\.pbn"):
        import_files(bank, [path, missing])
    assert (bank.deal_count(), bank.ledger_size()) == before
    with pytest.raises(FormatError, match="extension"):
        import_files(bank, [path, tmp_path / "deals.xyz"])
    assert verify_bank(bank).ok


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is not beside this checkout")
def test_the_shared_sample_imports_completely(bank: Bank) -> None:
    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn")
    report = import_files(bank, files)
    assert report.problems == 0, [(f.path, p) for f in report.files for p in f.problems][:5]
    assert report.imported + report.duplicates == report.records
    # every Deal tag in the files was read as a record
    deal_tags = sum(p.read_bytes().count(b"[Deal ") for p in files)
    assert report.records == deal_tags
    assert bank.deal_count() == report.imported
    distinct = {r.deal for p in files for r in PBN.read(p.read_bytes()).records}
    assert len(distinct) == report.imported
    assert verify_bank(bank).ok


def test_batches_past_the_batch_size_chain_and_verify(bank: Bank, tmp_path: Path) -> None:
    from dealer.bank_import.importer import import_parsed, read_files

    deals = _deals(250, 6)
    one = tmp_path / "one.pbn"
    one.write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[:150])]))
    two = tmp_path / "two.pbn"
    two.write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[100:])]))
    bank.commit_deal(deals[120], station_source())  # deal 1: the bank has it before the import
    report = import_parsed(bank, read_files([one, two]), batch_size=60)
    assert (report.records, report.imported, report.duplicates) == (300, 249, 51)
    assert len(report.batch_indices) == 5  # 250 distinct deals in batches of 60, one of them already in the bank
    parts = [bank.entry(i).data for i in report.batch_indices]
    assert [p["part"] for p in parts] == [1, 2, 3, 4, 5] and {p["parts"] for p in parts} == {5}
    assert sum(p["imported"] for p in parts) == 249 and sum(p["duplicates"] for p in parts) == 1
    assert (report.first_deal, report.last_deal) == (2, 250) and bank.deal_count() == 250
    got = {bank.get_deal(i).deal for i in range(1, 251)}
    assert got == set(deals)
    in_bank = [d for d in report.files[0].duplicates if d.first_seen == "bank"]
    assert [(d.board, d.repeats) for d in in_bank] == [(121, 1)]
    assert verify_bank(bank).ok


def _dealer(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_command_reports_as_json_and_as_a_quiet_summary(bank_at: str, tmp_path: Path) -> None:  # noqa: F811
    deals = _deals(30, 7)
    (tmp_path / "a.pbn").write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[:20])]))
    text = PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[10:])]).decode()
    (tmp_path / "b.pbn").write_text(text + '\r\n[Board "99"]\r\n[Deal "N:AKQ.. - - -"]\r\n')
    r = _dealer(
        tmp_path, "bank", "import", "--bank", bank_at, "--keys", str(tmp_path / "var"), "--json", "a.pbn", "b.pbn"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1  # one line of plain JSON, whatever the terminal
    out = json.loads(r.stdout)
    assert {k: out[k] for k in ("files", "records", "imported", "duplicates", "unreadable")} == {
        "files": 2, "records": 40, "imported": 30, "duplicates": 10, "unreadable": 1
    }  # fmt: skip
    assert (out["first_deal"], out["last_deal"]) == (1, 30)
    assert out["problems"][0]["board"] == 99 and "N:AKQ.. - - -" in out["problems"][0]["reason"]
    assert [d["repeats"] for d in out["duplicate_records"]] == list(range(11, 21))
    assert all(d["first_seen"].startswith("a.pbn:") for d in out["duplicate_records"])
    again = _dealer(tmp_path, "bank", "import", "--bank", bank_at, "--keys", str(tmp_path / "var"), "a.pbn")
    assert again.returncode == 0, again.stderr
    assert "imported 0 of 20 deals; 20 duplicates, 0 unreadable records" in again.stdout
    assert "a.pbn:" in again.stdout and "(bank)" in again.stdout and "more (--show 0 lists all)" not in again.stdout


def test_the_bulk_import_writes_the_compact_form_of_what_import_deals_writes(engine: str, tmp_path: Path) -> None:  # noqa: F811
    """The same deals and sources, at the same moment, by ``import_deals`` (each entry stored in full, as the bank's
    first format) and by ``bulk.import_canonical`` (the compact form): the same deals, ids, states and ledger
    entries, but for the random salts and what hangs on them (the commitment, and through it the bytes and hashes)
    and the deal entries' sources, which reference the batch's entry and the file's place in it; the compact deals
    have no ledger row, and their rows no commitment, source JSON or time."""
    from contextlib import ExitStack

    from bank_engines import bank_target

    from dealer.bank import bulk
    from dealer.bank.api import DealSource
    from dealer.bank.engines import is_url

    deals = _deals(7, 11)
    sha = "ab" * 32
    files = [{"file": f"m{k}.pbn", "sha256": sha} for k in range(2)]
    sources = [DealSource("import", file=f"/in/m{k % 2}.pbn", board=k + 1, line=10 * k + 3, file_sha256=sha)
               for k in range(len(deals))]  # fmt: skip
    held = deals[2]  # the bank holds one of them before: a duplicate both ways
    ts = "2026-12-01T06:00:00.000000+00:00"

    def opened(target: str) -> Bank:
        clock = lambda: ts  # noqa: E731
        if is_url(target):
            from dealer.bank.pg_store import PostgresBank

            return PostgresBank(target, tmp_path / "keys", clock=clock)
        return SqliteBank(target, tmp_path / "keys", clock=clock)

    with ExitStack() as stack:
        a, b = (opened(stack.enter_context(bank_target(engine, tmp_path / name))) for name in ("a", "b"))
        for bank in (a, b):
            stack.callback(bank.close)
            bank.commit_deal(held, station_source())
        one = a.import_deals([ImportItem(d, s) for d, s in zip(deals, sources, strict=True)], {"files": files})
        srcs = [bulk.source_text(k % 2, k + 1, 10 * k + 3) for k in range(len(deals))]
        two = b.import_canonical([d.to_bytes() for d in deals], srcs, {"files": files})
        assert (one.imported, one.duplicates, one.batch_index) == (two.imported, two.duplicates, two.batch_index)
        assert a.meta()["schema"] == "1" and b.meta()["schema"] == "3"  # the first batch marks the format

        def raw(bank: Bank, sql: str) -> list[list[Any]]:
            with bank.engine.read() as db:
                rows = db.execute(sql).fetchall()
            return [[bytes(v) if isinstance(v, memoryview) else v for v in row] for row in rows]

        deal_sql = "SELECT deal_id, ledger_index, canonical, salt, commitment, source, created FROM deals"
        full = raw(a, deal_sql + " WHERE deal_id > 1 ORDER BY deal_id")
        assert raw(b, deal_sql + " WHERE deal_id > 1") == []  # the batch's deals are in its row of batches
        # Any: as raw()'s rows, a row's values of several types
        small: list[list[Any]] = [[r.deal_id, r.ledger_index, r.canonical, r.salt, r.commitment, r.source, r.created]
                                  for r in b.deal_rows() if r.deal_id > 1]  # fmt: skip
        assert [r[:3] for r in full] == [r[:3] for r in small] and len(small) == len(deals) - 1
        assert all(r[4] == hashlib.sha256(r[3] + r[2]).digest() and r[6] == ts for r in full)
        assert [(r[4], r[5], r[6]) for r in small] == [(b"", f"{k % 2},{k + 1},{10 * k + 3}", "") for k in
                                                      (0, 1, 3, 4, 5, 6)]  # fmt: skip
        stored = [r[0] for r in raw(b, "SELECT idx FROM ledger ORDER BY idx")]
        assert stored == [0, 1, two.batch_index]  # genesis, the station's deal, the batch: no row per deal

        row_of = {r[0]: r for r in small}

        def entries(bank: Bank) -> list[tuple[object, ...]]:
            out: list[tuple[object, ...]] = []
            for row in bank.entries():
                assert row.hash == hashlib.sha256(row.body).digest()
                entry = json.loads(bytes(row.body))
                entry.pop("prev")
                if entry["k"] == "deal" and entry["d"]["id"] > 1:
                    if bank is b:  # the commitment of the stored salt and deal, the source of the batch
                        _, _, canonical, salt, *_ = row_of[entry["d"]["id"]]
                        assert entry["d"]["c"] == hashlib.sha256(salt + canonical).hexdigest()
                        src = entry["d"]["src"]
                        assert src.pop("batch") == two.batch_index
                        k = deals.index(Deal.from_bytes(canonical))
                        assert src.pop("file_index") == k % 2 and src == {"board": k + 1, "kind": "import",
                                                                          "line": 10 * k + 3, "shown": 0}  # fmt: skip
                    entry["d"].pop("src")
                if entry["k"] == "deal":
                    entry["d"].pop("c")  # the commitments: salted
                    entry["d"].pop("order", None)
                if entry["k"] == "genesis":
                    entry["d"].pop("bank")  # each bank's own random id
                out.append((row.idx, row.kind, entry))
            return out

        assert entries(a) == entries(b)
        assert verify_bank(a).ok and verify_bank(b).ok


def test_a_deal_committed_by_another_writer_between_batches_is_a_duplicate(
    bank: Bank, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into an empty bank the batches skip asking it about their deals while it holds only the import's own;
    a deal another writer commits between two batches (one the next batch holds) makes them ask again, and
    that deal is reported as the bank's duplicate, not committed twice."""
    from dealer.bank_import.importer import import_parsed, read_files

    deals = _deals(12, 21)
    path = tmp_path / "set.pbn"
    path.write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals)]))
    asked: list[int] = []
    kind = type(bank.engine)
    lookup, commit = kind.existing_ids, Bank.import_canonical

    def counting(self: Any, db: Any, batch: Any) -> Any:
        asked.append(len(batch))
        return lookup(self, db, batch)

    def station_meanwhile(b: Bank, batch: Any, *args: Any) -> Any:
        if batch[0] == deals[8].to_bytes():  # the third batch: a station commits its second deal first
            b.commit_deal(Deal.from_bytes(batch[1]), station_source())
        return commit(b, batch, *args)

    monkeypatch.setattr(kind, "existing_ids", counting)
    monkeypatch.setattr(Bank, "import_canonical", station_meanwhile)
    report = import_parsed(bank, read_files([path]), batch_size=4)
    assert asked == [4]  # batches 1 and 2 asked nothing (an empty bank, then only theirs); batch 3 asked
    assert (report.imported, report.duplicates) == (11, 1)
    (dup,) = report.files[0].duplicates
    assert (dup.board, dup.repeats, dup.first_seen) == (10, 9, "bank")  # the station's deal: id 9
    assert bank.deal_count() == 12 and verify_bank(bank).ok


def test_a_batch_made_beforehand_is_committed_as_made_with_its_work_inside(
    bank: Bank,
    bank_at: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """``prepared`` (``bulk.salted``, made before the batch's transaction, as the import makes the next batch while
    the server writes one) is what the bank stores: its salts and commitments, and a ledger that verifies. The
    work given for while the rows are written runs inside the transaction: another connection does not see the
    batch yet, and does once it returns."""
    from dealer.bank import bulk

    deals = [d.to_bytes() for d in _deals(9, 31)]
    sources = [bulk.source_text(0, k + 1, 4 * k + 1) for k in range(len(deals))]
    prepared = bulk.salted(deals, sources)
    other = open_test_bank(bank_at, tmp_path / "other")
    seen: list[tuple[str, int, int]] = []  # (when, deals another connection sees, deals the outcome holds)
    try:
        outcome = bank.import_canonical(
            deals,
            sources,
            {"files": []},
            only_ours_upto=0,
            while_ledger=lambda o: seen.append(("ledger", other.deal_count(), len(o.imported))),
            while_deals=lambda: seen.append(("deals", other.deal_count(), -1)),
            prepared=prepared,
        )
        assert seen == [("ledger", 0, len(deals)), ("deals", 0, -1)]
        assert other.deal_count() == len(deals)
    finally:
        other.close()
    assert [deal_id for _, deal_id in outcome.imported] == list(range(1, len(deals) + 1))
    with bank.engine.read() as db:
        (blob,) = db.execute("SELECT packed FROM batches").fetchone()
    n = len(deals)  # the packed row by hand: a byte of count (n < 128), n deals of 13 bytes, then n salts of 16
    assert bytes(blob)[0] == n and bytes(blob)[1 : 1 + 13 * n] == b"".join(deals)
    assert [bytes(blob)[1 + 13 * n + 16 * k : 1 + 13 * n + 16 * (k + 1)] for k in range(n)] == prepared.salts
    assert [bytes.fromhex(e.commitment) for e in bank.deal_entries()] == prepared.coms
    assert verify_bank(bank).ok
