"""#19 items 2, 3 and 6: anchors outside the file (`verify --head`, `--since`), every kind of damage a finding,
and `bank seal` refusing a key that is not the bank's.

Original findings: with write access and no key, `bank verify` passed after deleting the last 5 ledger entries,
after replacing an unsealed deal and recomputing the chain, and after erasing a finished draw and running it
again with a new K; 5 of 200 single-bit flips gave a traceback; `bank seal --bank copy/bank.sqlite` quietly
made a new key and sealed with it, breaking the bank for good.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from hashlib import sha256
from pathlib import Path

import pytest
from bank_support import fill, random_deal, station_source
from custody_support import cli_env, unlocked, write_custody
from draw_support import full_draw, regulation

from dealer.bank.store import SqliteBank
from dealer.custody import Keyring
from dealer.draw.director import Director
from dealer.draw.verify import AnchorError, Head, Since, verify_file
from dealer.integrity.ledger import Entry, commitment

ROOT = Path(__file__).resolve().parents[1]


def dealer(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **cli_env(cwd)}
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)


def noted(path: Path) -> Head:
    """The head as an official notes it from the hall display: SIZE:first 16 hex digits."""
    with unlocked(SqliteBank(path)) as bank:
        size, head = bank.anchor()
    return Head.parse(f"{size}:{head[:16]}")


def rechain(db: sqlite3.Connection, start: int) -> None:
    """The attacker's tool: recompute every hash from entry ``start`` on so the chain is consistent again."""
    prev = bytes(db.execute("SELECT hash FROM ledger WHERE idx=?", (start - 1,)).fetchone()[0]).hex()
    for idx, body in db.execute("SELECT idx, body FROM ledger WHERE idx>=? ORDER BY idx", (start,)).fetchall():
        obj = json.loads(body)
        obj["prev"] = prev
        new = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
        digest = sha256(new).digest()
        db.execute("UPDATE ledger SET body=?, hash=? WHERE idx=?", (new, digest, idx))
        prev = digest.hex()


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    path = tmp_path / "bank.sqlite"
    write_custody(tmp_path)
    with unlocked(SqliteBank(path)) as bank:
        fill(bank, 20, seed=1)
        bank.seal()
        for k in range(10):  # unsealed deals and voids after the seal
            bank.commit_deal(random_deal(random.Random(100 + k)), station_source())
        bank.void_deal("jam", "A")
    return path


def test_head_parsing_accepts_what_officials_copy_and_refuses_short_hashes() -> None:
    assert Head.parse("  33:ABCD ef01-2345 6789 ") == Head("abcdef0123456789", 33)
    assert Head.parse("ab" * 32) == Head("ab" * 32, None)
    for bad in ("abcdef", "x:" + "a" * 16, "33:" + "g" * 16, "", "a" * 65):
        with pytest.raises(AnchorError):
            Head.parse(bad)


def test_truncation_after_the_last_seal_is_found_only_with_the_head(sealed: Path) -> None:
    head = noted(sealed)
    assert verify_file(sealed, head=head).ok
    with sqlite3.connect(sealed) as db:  # delete the last 5 ledger entries (and the deals they committed)
        last = db.execute("SELECT MAX(idx) FROM ledger").fetchone()[0]
        db.execute("DELETE FROM deals WHERE ledger_index > ?", (last - 5,))
        db.execute("DELETE FROM ledger WHERE idx > ?", (last - 5,))
    assert verify_file(sealed).ok  # the finding: alone, the file cannot tell
    report = verify_file(sealed, head=head)
    assert not report.ok and f"recorded head {head} is not in the ledger" in str(report.problem)


def test_a_replaced_unsealed_deal_with_a_recomputed_chain_is_found_with_the_head(sealed: Path) -> None:
    head = noted(sealed)
    with sqlite3.connect(sealed) as db:
        deal_id, idx = db.execute("SELECT deal_id, ledger_index FROM deals WHERE deal_id = 25").fetchone()
        other = random_deal(random.Random(999)).to_bytes()
        salt = os.urandom(16)
        com = commitment(salt, other)
        body = db.execute("SELECT body FROM ledger WHERE idx=?", (idx,)).fetchone()[0]
        entry = Entry.decode(body)
        entry.data["c"] = com.hex()
        entry.data["order"] = sha256(salt + bytes(range(52))).hexdigest()
        new = entry.encode()
        db.execute("UPDATE ledger SET body=?, hash=? WHERE idx=?", (new, sha256(new).digest(), idx))
        db.execute("UPDATE deals SET canonical=?, salt=?, commitment=? WHERE deal_id=?", (other, salt, com, deal_id))
        rechain(db, idx + 1)
    assert verify_file(sealed).ok  # the finding
    report = verify_file(sealed, head=head)
    assert not report.ok and "is not in the ledger" in str(report.problem)


REG = regulation(boards=3, share=10)  # 3 deals from a bank of 30


def _draw(bank: SqliteBank, label: str, value: str) -> list[int]:
    director = Director(bank)
    full_draw(director, label, REG, value=value, reveal=False)
    return [d.deal.deal_id for d in director.drawn_deals(label)]


def test_an_erased_and_rerun_draw_is_found_with_the_head_and_with_the_bundle(sealed: Path, tmp_path: Path) -> None:
    with unlocked(SqliteBank(sealed)) as bank:
        bank.seal()
        first = _draw(bank, "S1", "12345612/65432165")
        latest = bank.latest_seal()
        assert latest is not None and latest.size == bank.ledger_size() - 1
        director = Director(bank)
        director.reveal("S1")
        bundle = tmp_path / "S1.json"
        bundle.write_text(json.dumps(director.bundle("S1")))
        commit_index = bank.get_draw("S1").commit_index
    head = noted(sealed)
    assert verify_file(sealed, head=head, since=Since.load(bundle)).ok
    with sqlite3.connect(sealed) as db:  # erase the draw and everything after it
        db.execute("DELETE FROM ledger WHERE idx >= ?", (commit_index,))
        db.execute("DELETE FROM draws")
        db.execute("UPDATE deals SET state='bank', session=NULL")
    with unlocked(SqliteBank(sealed)) as bank:  # and run it again with a new K
        second = _draw(bank, "S1", "12345612/65432165")
        Director(bank).reveal("S1")
    assert second != first
    assert verify_file(sealed).ok  # the finding: the file alone looks fine
    by_head = verify_file(sealed, head=head)
    assert not by_head.ok and "is not in the ledger" in str(by_head.problem)
    by_bundle = verify_file(sealed, since=Since.load(bundle))
    assert not by_bundle.ok and "erased or redone" in str(by_bundle.problem)


def test_the_cli_checks_head_and_sealed_record(sealed: Path) -> None:
    cwd = sealed.parent
    r = dealer(cwd, "bank", "seal", "--bank", str(sealed), "--json")
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)
    (cwd / "seal.json").write_text(r.stdout)
    size, head = record["head"].split(":")
    assert Since.load(cwd / "seal.json").checkpoint["size"] == int(size) - 1
    r = dealer(cwd, "bank", "verify", "--bank", str(sealed), "--head", f"{size}:{head[:16]}", "--since", "seal.json")
    assert r.returncode == 0 and "head" in r.stdout, r.stderr
    r = dealer(cwd, "bank", "verify", "--bank", str(sealed), "--head", "0123456789abcdef")
    assert r.returncode == 1 and "not in the ledger" in r.stderr and "Traceback" not in r.stderr
    r = dealer(cwd, "bank", "verify", "--bank", str(sealed), "--head", "[/]")
    assert r.returncode == 1 and "SIZE:HASH" in r.stderr and "Traceback" not in r.stderr


def test_hostile_since_files_are_refused_with_a_reason(tmp_path: Path) -> None:
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "text.json").write_bytes("[/] ﻿".encode("utf-16"))
    (tmp_path / "shape.json").write_text(json.dumps({"seal": {"checkpoint": 5, "signature": "x"}}))
    reasons = {
        "zero.json": "not a regular file",
        "nested.json": "RecursionError",
        "text.json": "not a draw bundle",
        "shape.json": "seal.checkpoint must be an object",
        "missing.json": "not a regular file",
    }
    for name, reason in reasons.items():
        with pytest.raises(AnchorError) as err:
            Since.load(tmp_path / name)
        assert reason in str(err.value), (name, err.value)


# -- item 3: every kind of damage is a finding --------------------------------------------------------------------
def _bank_file(tmp_path: Path) -> bytes:
    path = tmp_path / "src" / "bank.sqlite"
    with unlocked(SqliteBank(path)) as bank:
        fill(bank, 30, seed=5)
        bank.seal()
        _draw(bank, "S1", "11223344/55663322")
        bank.void_deal("jam", "A")
    assert not (path.parent / "bank.sqlite-wal").exists() or path.with_name("bank.sqlite-wal").stat().st_size == 0
    return path.read_bytes()


def test_a_bit_flip_sweep_gives_a_report_every_time(tmp_path: Path) -> None:
    clean = _bank_file(tmp_path)
    rng = random.Random(19)
    outcomes = {"ok": 0, "finding": 0}
    kinds: set[str] = set()
    for n in range(200):
        data = bytearray(clean)
        bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
        path = tmp_path / f"flip{n}.sqlite"
        path.write_bytes(bytes(data))
        report = verify_file(path)  # must return, never raise
        outcomes["ok" if report.ok else "finding"] += 1
        if not report.ok:
            assert report.problem
            kinds.add(report.problem.split(":")[0].split(" ")[0])
        path.unlink()
    assert outcomes["finding"] > 0 and sum(outcomes.values()) == 200
    assert verify_file(_write(tmp_path / "again.sqlite", clean)).ok


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("damage", "expect"),
    [
        ("DROP TABLE draws", "the draws table is missing"),
        ("DROP TABLE meta", "the meta table is missing"),
        ("UPDATE ledger SET kind = CAST(X'C3FF' AS TEXT) WHERE idx = 3", "ledger entry 3"),
        ("UPDATE deals SET source = CAST(X'FF' AS TEXT) WHERE deal_id = 2", "deal"),
        ("UPDATE ledger SET body = CAST(X'5B5B5B5B' AS BLOB) WHERE idx = 4", "ledger entry 4"),
    ],
)
def test_missing_tables_and_bad_encodings_are_findings(tmp_path: Path, damage: str, expect: str) -> None:
    path = _write(tmp_path / "b.sqlite", _bank_file(tmp_path))
    with sqlite3.connect(path) as db:
        db.execute(damage)
    report = verify_file(path)
    assert not report.ok and expect in str(report.problem), report.problem


def test_deeply_nested_entry_and_non_database_files_are_findings(tmp_path: Path) -> None:
    path = _write(tmp_path / "b.sqlite", _bank_file(tmp_path))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE ledger SET body = ? WHERE idx = 2", (b"[" * 100_000 + b"]" * 100_000,))
    report = verify_file(path)
    assert not report.ok and "ledger entry 2" in str(report.problem)
    for name, data in (("random", random.Random(1).randbytes(8192)), ("empty", b""), ("zeros", bytes(4096))):
        report = verify_file(_write(tmp_path / name, data))
        assert not report.ok and report.problem, name
    assert not (tmp_path / "empty").stat().st_size  # verify never writes: an empty file stays empty


def test_the_cli_reports_a_damaged_file_without_a_traceback(tmp_path: Path) -> None:
    clean = _bank_file(tmp_path)
    data = bytearray(clean)
    with sqlite3.connect(_write(tmp_path / "clean.sqlite", clean)) as db:  # a page of ledger rows, at its end:
        (end,) = db.execute(  # where SQLite keeps the rows' content (it fills a page from its end)
            "SELECT pgoffset + pgsize FROM dbstat WHERE name = 'ledger' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1"
        ).fetchone()
    data[end - 64 : end] = bytes(64)
    _write(tmp_path / "bad.sqlite", bytes(data))
    _write(tmp_path / "junk.sqlite", b"SQLite format 3\x00" + bytes(100) + b"[/]")
    for name in ("bad.sqlite", "junk.sqlite"):
        r = dealer(tmp_path, "bank", "verify", "--bank", name)
        assert r.returncode == 1 and "error:" in r.stderr and "Traceback" not in r.stderr, r.stderr


# -- item 6: seal only with the bank's own key -----------------------------------------------------------------------
def test_seal_refuses_a_key_that_is_not_the_banks_and_says_where_the_right_one_is(tmp_path: Path) -> None:
    """A copy of the bank without the chief judge's custody record signs nothing; another custody key is refused
    before it signs; the right record (--keys) seals it."""
    home = tmp_path / "var"
    path = home / "bank.sqlite"
    write_custody(home)
    with unlocked(SqliteBank(path)) as bank:
        fill(bank, 5)
        bank.seal()
        size = bank.ledger_size()
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(path, copy / "bank.sqlite")
    r = dealer(tmp_path, "bank", "seal", "--bank", "copy/bank.sqlite")
    assert r.returncode == 1 and "no custody record" in r.stderr and "custody init" in r.stderr, r.stderr
    assert not [p.name for p in copy.iterdir() if p.name != "bank.sqlite"]  # no key or record was made
    write_custody(tmp_path / "other", Keyring.generate())
    r = dealer(tmp_path, "bank", "seal", "--bank", "var/bank.sqlite", "--keys", "other")
    assert r.returncode == 1 and "did not sign the bank's seals" in r.stderr.replace("\n", " "), r.stderr
    for bank_file in (path, copy / "bank.sqlite"):
        with SqliteBank(bank_file) as bank:
            assert bank.ledger_size() == size  # nothing was appended
    r = dealer(tmp_path, "bank", "seal", "--bank", "copy/bank.sqlite", "--keys", "var")
    assert r.returncode == 0, r.stderr
    assert verify_file(copy / "bank.sqlite").ok
