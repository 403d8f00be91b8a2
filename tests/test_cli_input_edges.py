"""Hostile inputs to the command line (#32 item 5): each a clear error naming the file, exit 1, no traceback, no
hang, nothing sent raw to the terminal. Original findings: ``[`` × 200,000 gave ``RecursionError`` in ``dealer draw
verify`` and ``dealer audit``; ``dealer audit`` passed a file with no deals as "consistent with random dealing",
raised ``MemoryError`` on a link to ``/dev/zero`` and hung on a FIFO; a file name holding terminal escapes was
printed raw by ``dealer convert`` and ``dealer bank import``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PBN = (
    '[Board "1"]\n[Dealer "N"]\n[Vulnerable "None"]\n'
    '[Deal "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84"]\n'
)
ESCAPED = "a\x1b[31mRED\x1b]0;title\x07\x9b2J\u202e.pbn"  # colour, window title, bell, C1 CSI, right-to-left


def dealer(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
    return subprocess.run(
        [sys.executable, "-m", "dealer", "--lang", "en", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def refused(r: subprocess.CompletedProcess[str], *words: str) -> None:
    assert r.returncode == 1, (r.returncode, r.stdout[-500:], r.stderr[-500:])
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-2000:]
    for word in words:
        assert word in r.stderr, r.stderr[-500:]


@pytest.mark.parametrize("command", [["audit"], ["draw", "verify"]])
def test_json_nested_200000_deep_is_a_clear_error_not_a_recursion_error(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "deep.json").write_text("[" * 200_000)
    r = dealer(tmp_path, *command, "deep.json")
    refused(r, "deep.json", "nested")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.pbn", ""),
        ("words.pbn", "hello\n"),
        ("none.json", "[]"),
        ("none.lin", "qx|o1|\n"),
        ("d.json", '{"deals": []}'),
    ],
)
def test_the_audit_refuses_a_file_with_no_deals(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / name).write_text(content)
    r = dealer(tmp_path, "audit", name)
    refused(r, name, "no deals to audit")
    assert "consistent with random dealing" not in r.stdout


def test_the_audit_refuses_a_filter_that_leaves_no_deals(tmp_path: Path) -> None:
    (tmp_path / "one.pbn").write_text(PBN)
    r = dealer(tmp_path, "audit", "one.pbn", "--station", "Z")
    refused(r, "one.pbn", "no deals left to audit")


@pytest.mark.parametrize("command", [["audit"], ["draw", "verify"]])
def test_a_link_to_dev_zero_and_a_fifo_are_refused_unread(tmp_path: Path, command: list[str]) -> None:
    if not Path("/dev/zero").exists() or not hasattr(os, "mkfifo"):
        pytest.skip("needs /dev/zero and FIFOs")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.json")  # nobody writes: reading it would wait for ever
    for name in ("zero.json", "fifo.json"):
        r = dealer(tmp_path, *command, name, timeout=60)
        refused(r, name, "not a regular file")


def test_a_file_name_with_terminal_escapes_is_printed_escaped_by_convert_and_import(tmp_path: Path) -> None:
    (tmp_path / ESCAPED).write_text(PBN)
    runs = [
        dealer(tmp_path, "convert", ESCAPED, "out\x1b[2J.lin"),
        dealer(tmp_path, "bank", "import", "--bank", "b.sqlite", ESCAPED),
        dealer(tmp_path, "bank", "import", "--bank", "b.sqlite", ESCAPED),  # now a duplicate: named in a warning
        dealer(tmp_path, "convert", "missing\x1b[1m.pbn", "o.lin"),  # an error naming the file
        dealer(tmp_path, "audit", "missing\x1b[1m.pbn"),
    ]
    for r in runs:
        shown = r.stdout + r.stderr
        assert "Traceback" not in shown, shown
        for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert raw not in shown, repr(shown)
    assert "a\\x1b[31mRED\\x1b]0;title\\x07\\x9b2J\\u202e.pbn" in runs[0].stdout, runs[0].stdout
    assert "out\\x1b[2J.lin" in runs[0].stdout
    assert runs[1].returncode == 0 and runs[3].returncode == 1 and "missing\\x1b[1m.pbn" in runs[3].stderr
    assert (tmp_path / "out\x1b[2J.lin").is_file()  # the file itself has the name asked for
