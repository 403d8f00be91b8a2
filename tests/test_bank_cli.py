"""The ``dealer bank …`` and ``dealer draw …`` commands, run as a director would, in real processes."""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from bank_support import random_deal
from draw_support import pbn_as_shown, shown_deals

from dealer.cli.options import PASSPHRASE_ENV
from dealer.core import Deal
from dealer.formats.base import BoardRecord
from dealer.formats.lin import LIN
from dealer.formats.pbn import PBN

ROOT = Path(__file__).resolve().parents[1]


PASSPHRASE = "passphrase.txt"


def dealer(cwd: Path, *args: str, columns: int = 200) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns)}
    env.pop(PASSPHRASE_ENV, None)
    if (cwd / PASSPHRASE).exists():
        env[PASSPHRASE_ENV] = str(cwd / PASSPHRASE)
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_director_session_from_the_command_line(tmp_path: Path) -> None:
    rng = random.Random(3)
    deals = [random_deal(rng) for _ in range(300)]
    (tmp_path / "a.pbn").write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[:200])]))
    (tmp_path / "b.lin").write_bytes(LIN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[150:])]))

    r = dealer(tmp_path, "bank", "import", "a.pbn", "b.lin")
    assert r.returncode == 0, r.stderr
    assert "imported 300 of 350 deals as deals 1..300; 50 duplicates" in r.stdout
    assert "b.lin:1: board 1: duplicate of deal 151 (a.pbn:" in r.stdout
    assert (tmp_path / "var" / "bank.sqlite").exists()

    r = dealer(tmp_path, "bank", "seal")  # the key is the chief judge's, under custody: nothing is signed without it
    assert r.returncode == 1 and "dealer custody init" in r.stderr
    (tmp_path / PASSPHRASE).write_text("short\n")
    r = dealer(tmp_path, "custody", "init")
    assert r.returncode == 1 and "at least 12" in r.stderr and not (tmp_path / "var" / "custody.json").exists()
    (tmp_path / PASSPHRASE).write_text("the chief judge's own words\n")
    r = dealer(tmp_path, "custody", "init")
    assert r.returncode == 0, r.stderr
    record = json.loads((tmp_path / "var" / "custody.json").read_text())
    assert "the chief judge's own words" not in (tmp_path / "var" / "custody.json").read_text()
    assert record["kdf"]["n_log2"] == 17 and len(record["public_key"]) == 64
    assert dealer(tmp_path, "custody", "status").returncode == 0

    (tmp_path / "reg.toml").write_text(
        "[dealing]\nvariant = 3\n[draw]\nshare_percent = 5\n[session]\nboards = 15\n"
    )  # 15 deals at 5 %: a 300-deal bank
    (tmp_path / "big.toml").write_text("[dealing]\nvariant = 3\n[session]\nboards = 20\n")  # target 400
    dice = ("--witness", "Ann", "--witness", "Bo", "--rolls", "8")
    r = dealer(tmp_path, "draw", "prepare", "S1", "--regulation", "reg.toml", *dice)
    assert r.returncode == 1 and "no seal" in r.stderr
    sealed = dealer(tmp_path, "bank", "seal", "--regulation", "big.toml")
    assert sealed.returncode == 0 and "warning: sealed 300 deals, below the regulation's target of 400" in sealed.stderr
    r = dealer(tmp_path, "draw", "prepare", "S1", "--regulation", "big.toml", *dice)
    assert r.returncode == 1 and "holds 300 deals, below the regulation's target of 400" in r.stderr
    r = dealer(tmp_path, "draw", "prepare", "S1", "--regulation", "reg.toml", "--witness", "Ann", "--rolls", "4")
    assert r.returncode == 1 and "carries 10.3 bits" in r.stderr
    r = dealer(tmp_path, "draw", "prepare", "S1", "--regulation", "reg.toml", *dice, columns=40)
    assert r.returncode == 0, r.stderr
    published = json.loads(r.stdout)  # plain JSON even on a 40-column terminal
    assert published["commitment"]["n"] == 15
    assert len(published["signature"]) == 128 and published["signature"] in r.stdout
    r = dealer(tmp_path, "draw", "public-value", "S1", "--dice", "12345612", "--dice", "65432165")
    assert r.returncode == 1 and "not been shown to the hall" in r.stderr
    shown = dealer(tmp_path, "draw", "publish", "S1", columns=40)
    assert shown.returncode == 0 and json.loads(shown.stdout)["witnesses"] == ["Ann", "Bo"]
    assert dealer(tmp_path, "draw", "public-value", "S1", "--dice", "1234", "--dice", "99").returncode == 1
    r = dealer(tmp_path, "draw", "public-value", "S1", "--dice", "1234 5612", "--dice", "6543,2165", "--dry-run")
    assert r.returncode == 0 and r.stdout == "12345612/65432165\n" and "not stored" in r.stderr
    r = dealer(tmp_path, "draw", "public-value", "S1", "--dice", "1234 5612", "--dice", "6543,2165")
    assert r.returncode == 0 and r.stdout == "12345612/65432165\n"
    r = dealer(tmp_path, "draw", "run", "S1")
    assert r.returncode == 0 and "15 deals drawn" in r.stdout and "deal " not in r.stdout  # the count, never which
    r = dealer(tmp_path, "draw", "show", "S1")
    drawn_shown = shown_deals(r.stdout)
    assert r.returncode == 0 and len(drawn_shown) == 15 and r.stdout.count("deal ") == 15
    status = dealer(tmp_path, "bank", "status", "--json", columns=40)
    assert status.returncode == 0
    st = json.loads(status.stdout)
    assert (st["deals"], st["drawn"], st["drawn_total"], st["eligible"]) == (300, 0, 15, 285)
    for hands in drawn_shown:  # nothing of the result in the public status
        assert not any(hand[3:] in status.stdout for hand in hands)
    assert dealer(tmp_path, "draw", "bundle", "S1", "-o", "b.json").returncode == 1
    assert dealer(tmp_path, "draw", "reveal", "S1").returncode == 0
    assert dealer(tmp_path, "draw", "bundle", "S1", "-o", "b.json").returncode == 0
    bundle = json.loads((tmp_path / "b.json").read_text())
    assert sorted(pbn_as_shown(Deal.from_pbn(d["pbn"]).to_pbn(), "en") for d in bundle["drawn"]) == sorted(drawn_shown)
    r = dealer(tmp_path, "draw", "verify", "b.json")
    assert r.returncode == 0 and "all 15 checks passed" in r.stdout
    noted = re.search(r"ledger head (\d+):([0-9a-f]{16}) ", sealed.stdout + sealed.stderr)  # as `bank seal` printed it
    assert noted is not None, sealed.stdout + sealed.stderr
    r = dealer(tmp_path, "draw", "verify", "b.json", "--head", noted.group(0).split()[-1])
    assert r.returncode == 0 and "is the one right after the seal" in r.stdout, r.stdout + r.stderr
    key = dealer(tmp_path, "bank", "export-key")
    assert key.returncode == 0 and bundle["public_key"] in key.stdout
    r = dealer(tmp_path, "bank", "verify")
    assert r.returncode == 0 and "ok: " in r.stdout and "1 draw verified" in r.stdout

    db = sqlite3.connect(tmp_path / "var" / "bank.sqlite")
    (blob,) = db.execute("SELECT packed FROM batches WHERE first_deal = 1 AND deals = 300").fetchone()
    at = 2 + 13 * 300 + 16 * 41  # deal 42's salt in the packed batch: a 2-byte count, 300 deals, 41 salts before
    db.execute("UPDATE batches SET packed = ? WHERE first_deal = 1", (blob[:at] + bytes(16) + blob[at + 16 :],))
    db.commit()
    db.close()
    r = dealer(tmp_path, "bank", "verify")
    # deal 42 is a compact deal (its entry rebuilt from its row): the batch's import entry no longer chains on
    assert r.returncode == 1 and "ledger entry 301: chain broken" in r.stderr
    assert "the compact deals 1…300 of its batch are not those it chained onto" in r.stderr


def test_import_of_an_unreadable_file_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.pbn").write_bytes(PBN.write([BoardRecord(random_deal(random.Random(1)), 1)]))
    r = dealer(tmp_path, "bank", "import", "a.pbn", "missing.pbn")
    assert r.returncode == 1 and "missing.pbn" in r.stderr
    assert not (tmp_path / "var").exists()
    for command in (["bank", "status"], ["bank", "seal"], ["draw", "run", "S1"]):
        r = dealer(tmp_path, *command)
        assert r.returncode == 1 and "no bank there" in r.stderr
    assert not (tmp_path / "var").exists()


def test_docs_examples_are_true() -> None:
    text = (ROOT / "docs" / "bundle.md").read_text()
    deal = Deal.from_pbn("N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84")
    assert f"`{deal.to_bytes().hex()}`" in text
    assert "905, 573, 160" in text
