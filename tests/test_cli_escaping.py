"""#19 item 5 (the CLI part): everything the CLI prints that came from a file, a name or a user is printed as
text, never as rich markup. Original inputs: `dealer convert 'a[/b]c.pbn' o.lin`, `"version":"[/]"` in a JSON
deal file, `[/]` inside a PBN deal — each ended in `rich.errors.MarkupError` with a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def dealer(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)


def _clean(r: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in r.stderr and "MarkupError" not in r.stderr, r.stderr


def test_a_file_name_with_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "a[").mkdir()
    (tmp_path / "a[" / "b]c.pbn").write_text('[Board "1"]\n[Dealer "N"]\n[Deal "N:[/] x"]\n')
    r = dealer(tmp_path, "convert", "a[/b]c.pbn", "o.lin")
    _clean(r)
    assert r.returncode == 1 and "a[/b]c.pbn: board 1" in r.stderr and "'[/]'" in r.stderr
    assert not (tmp_path / "o.lin").exists()


def test_markup_inside_a_pbn_deal_is_printed_as_text(tmp_path: Path) -> None:
    (tmp_path / "d.pbn").write_text('[Board "1"]\n[Dealer "N"]\n[Deal "N:AKQJ.T98.765.432 [/] [bold]x[/bold]"]\n')
    for args in (("convert", "d.pbn", "o.lin"), ("bank", "import", "d.pbn")):
        r = dealer(tmp_path, *args)
        _clean(r)
        assert "[/]" in r.stdout + r.stderr and "[bold]" in r.stdout + r.stderr


@pytest.mark.parametrize("version", ["[/]", "[bold red]x[/]"])
def test_markup_in_a_json_version_is_printed_as_text(tmp_path: Path, version: str) -> None:
    (tmp_path / "v.json").write_text(json.dumps({"format": "bridge-dealer/deals", "version": version, "boards": []}))
    r = dealer(tmp_path, "convert", "v.json", "o.lin")
    _clean(r)
    assert r.returncode == 1 and f"version {version!r}" in r.stderr


def test_a_bank_path_and_a_bundle_name_with_markup(tmp_path: Path) -> None:
    r = dealer(tmp_path, "bank", "status", "--bank", "[/]bank.sqlite")
    _clean(r)
    assert r.returncode == 1 and "[/]bank.sqlite" in r.stderr
    (tmp_path / "[red]b[").mkdir()
    (tmp_path / "[red]b[" / "].json").write_text("[/]")
    r = dealer(tmp_path, "draw", "verify", "[red]b[/].json")
    _clean(r)
    assert r.returncode == 1 and "[red]b[/].json" in r.stderr
