"""The director's guide (docs/director.md) from the command line, exactly as written there: import, seal, draw
with three witnesses' dice, the drawn deals to a secret file, files for the boxes, boards on the simulator, reveal,
bundle, and verification in another directory with no database."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from bank_support import random_deal
from draw_support import pbn_as_shown, shown_deals

from dealer.formats.base import BoardRecord
from dealer.formats.pbn import PBN

ROOT = Path(__file__).resolve().parents[1]


def dealer(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env["DEALER_PASSPHRASE_FILE"] = str(cwd / "chief-judge.txt")  # the chief judge's own file (docs/custody.md)
    r = subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def test_the_directors_day_from_the_guide(tmp_path: Path) -> None:
    import random

    rng = random.Random(9)
    deals = [random_deal(rng) for _ in range(60)]
    (tmp_path / "public.pbn").write_bytes(PBN.write([BoardRecord(d, board=i + 1) for i, d in enumerate(deals)]))
    (tmp_path / "regulation.toml").write_text(
        "[dealing]\nvariant = 2\nopen_cards = 32\n[bank]\ntarget = 60\n[draw]\nshare_percent = 5\n"
        "[session]\nboards = 3\ncopies = 2\n",
        encoding="utf-8",
    )
    assert "imported 60 of 60 deals" in dealer(tmp_path, "bank", "import", "public.pbn").stdout
    (tmp_path / "chief-judge.txt").write_text("the chief judge's passphrase\n", encoding="utf-8")
    assert "custody record written" in dealer(tmp_path, "--lang", "en", "custody", "init").stdout
    assert "sealed" in dealer(tmp_path, "bank", "seal").stdout
    dealer(
        tmp_path,
        "draw",
        "prepare",
        "Round 1",
        "--regulation",
        "regulation.toml",
        *["--witness", "Anna", "--witness", "Boris", "--witness", "Vera"],
        "--rolls",
        "6",
    )
    dealer(tmp_path, "draw", "publish", "Round 1")
    v = dealer(tmp_path, "draw", "public-value", "Round 1", "--dice", "315264", "--dice", "526152", "--dice", "535163")
    assert v.stdout == "315264/526152/535163\n"
    assert "3 deals drawn" in dealer(tmp_path, "draw", "run", "Round 1").stdout
    shown = dealer(tmp_path, "draw", "show", "Round 1", "--out", "round1.pbn").stdout
    secret_file = tmp_path / "round1.pbn"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    drawn = PBN.read(secret_file.read_bytes()).records
    assert [r.board for r in drawn] == [1, 2, 3]
    assert shown_deals(shown) == [pbn_as_shown(r.deal.to_pbn(), "en") for r in drawn]
    assert all(r.deal in deals for r in drawn)
    dealer(
        tmp_path,
        "export",
        "files",
        "round1.pbn",
        "--out",
        "boxes",
        "--name",
        "round1",
        "--regulation",
        "regulation.toml",
    )
    assert {p.name for p in (tmp_path / "boxes").iterdir()} == {"round1.dlm", "round1.dup", "round1.pbn"}
    made = dealer(
        tmp_path,
        "export",
        "boards",
        "round1.pbn",
        "--simulate",
        "--out",
        "boxes",
        "--name",
        "round1",
        "--regulation",
        "regulation.toml",
    ).stdout
    assert "6 copies made" in made
    dealer(tmp_path, "draw", "reveal", "Round 1")
    dealer(tmp_path, "draw", "bundle", "Round 1", "--out", "round1-bundle.json")
    elsewhere = tmp_path / "verifier"
    elsewhere.mkdir()
    (elsewhere / "b.json").write_bytes((tmp_path / "round1-bundle.json").read_bytes())
    assert "all 15 checks passed" in dealer(elsewhere, "draw", "verify", "b.json").stdout
    assert dealer(tmp_path, "bank", "verify").stdout.startswith("ok:")
