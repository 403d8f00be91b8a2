"""A bank made by the code before the bank split (tests/data/bank_v1, made 2026-11-30 at fe6c9e3) opens, verifies
and takes new writes with today's code: the database format is unchanged (same tables, columns and states)."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from bank_support import random_deal, station_source

from dealer.bank.store import SqliteBank
from dealer.custody.files import plain_key
from dealer.draw.verify import verify_bank

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "data" / "bank_v1"
# figures noted when the fixture was made (the old code's own verify report and anchor)
ANCHOR = (79, "ff2ce6bb7e55c3d819a22b6cc96c4b662a75dc4f7f150c786a110f07281537c8")
COLUMNS = {
    "meta": ["key", "value"],
    "ledger": ["idx", "kind", "body", "hash"],
    "deals": [
        "deal_id",
        "ledger_index",
        "canonical",
        "salt",
        "commitment",
        "source",
        "dealing_order",
        "created",
        "state",
        "session",
    ],
    "draws": ["label", "state", "commit_index", "secret", "public_value", "drawn"],
}


@pytest.fixture
def old_bank(tmp_path: Path) -> Path:
    """The old bank rebuilt from its SQL dump (no database file is committed) beside its signing key."""
    shutil.copy(FIXTURE / "bank-ed25519.pem", tmp_path / "bank-ed25519.pem")
    (tmp_path / "bank-ed25519.pem").chmod(0o600)
    path = tmp_path / "bank.sqlite"
    db = sqlite3.connect(path)
    try:
        db.executescript((FIXTURE / "bank.sql").read_text(encoding="utf-8"))
    finally:
        db.close()
    return path


def _columns(path: Path) -> dict[str, list[str]]:
    db = sqlite3.connect(path)
    try:
        return {t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")] for t in COLUMNS}
    finally:
        db.close()


def test_a_bank_of_the_old_code_reads_as_it_was(old_bank: Path) -> None:
    with SqliteBank(old_bank, read_only=True) as bank:
        assert bank.anchor() == ANCHOR
        report = verify_bank(bank)
        assert (report.ok, report.entries, report.deals, report.seals, report.draws) == (True, 79, 61, 3, 3)
        assert bank.state_counts() == {"bank": 57, "drawn": 2, "played": 2}
        assert [(d.label, d.state) for d in bank.draws()] == [("S1", "revealed"), ("S2", "void"), ("S3", "drawn")]
        assert bank.eligible_ranges(bank.latest_seal().last_deal) == [[1, 12], [15, 20], [22, 40], [42, 61]]  # type: ignore[union-attr]
        assert bank.get_deal(61).dealing_order == bytes(range(52))
        assert bank.get_deal(61).source == {"kind": "station", "shown": 2, "station": "A", "variant": 3}


def test_today_s_code_writes_into_an_old_bank_in_its_format(old_bank: Path) -> None:
    before = _columns(old_bank)
    assert before == COLUMNS
    keyring = plain_key(old_bank.parent)  # the bank's plain key file of before custody
    assert keyring is not None
    with SqliteBank(old_bank, key_dir=old_bank.parent) as bank:
        bank.unlock(keyring)
        committed = bank.commit_deal(random_deal(random.Random(99)), station_source())
        assert committed.deal_id == 62
        seal = bank.seal()
        assert (seal.size, seal.last_deal) == (80, 62)  # 79 entries + the new deal, sealed
        report = verify_bank(bank)
        assert report.ok, report.problem
    assert _columns(old_bank) == COLUMNS


def test_custody_init_adopts_an_old_bank_s_key_file_and_deletes_it(old_bank: Path) -> None:
    """The upgrade path: ``dealer custody init`` seals the bank's plain key under the chief judge's passphrase and
    removes the file; the next seal needs the passphrase and is signed by the same key as the old seals."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DEALER_PASSPHRASE_FILE": str(old_bank.parent / "pp.txt")}
    env.pop("COLUMNS", None)
    (old_bank.parent / "pp.txt").write_text("a passphrase of the chief judge\n")
    pem = (old_bank.parent / "bank-ed25519.pem").read_bytes()

    def dealer(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "dealer", "--lang", "en", *args, "--bank", str(old_bank)]
        return subprocess.run(command, env=env, capture_output=True, text=True, cwd=old_bank.parent)

    r = dealer("custody", "init")
    assert r.returncode == 0, r.stderr
    assert not (old_bank.parent / "bank-ed25519.pem").exists()
    text = (old_bank.parent / "custody.json").read_text()
    assert pem.decode() not in text and "PRIVATE" not in text
    with SqliteBank(old_bank, read_only=True) as bank:
        old_key = bank.latest_seal().public_key  # type: ignore[union-attr]
    assert json.loads(text)["public_key"] == old_key
    (old_bank.parent / "pp.txt").write_text("not the passphrase at all\n")
    r = dealer("bank", "seal")
    assert r.returncode == 1 and "passphrase is wrong" in r.stderr
    (old_bank.parent / "pp.txt").write_text("a passphrase of the chief judge\n")
    r = dealer("bank", "seal")
    assert r.returncode == 0 and old_key in r.stdout, r.stderr
    r = dealer("custody", "init")
    assert r.returncode == 1 and "set up already" in r.stderr
