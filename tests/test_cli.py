"""The CLI as a user runs it: a real subprocess, exit codes and messages on the right stream."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dealer import __version__

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84"


def dealer(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", "dealer", *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_version() -> None:
    r = dealer("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"dealer {__version__}"


def test_deal_show_diagram_with_hcp() -> None:
    r = dealer("deal", "show", SAMPLE)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any("North  HCP 17" in line for line in lines)
    assert any("West  HCP 7" in line and "East  HCP 9" in line for line in lines)
    assert any("South  HCP 7" in line for line in lines)
    assert "♠ A J 9" in r.stdout and "♠ Q 10 6 5 4 3" in r.stdout
    # North's block sits above West/East, South's below
    north = next(i for i, line in enumerate(lines) if "North" in line)
    south = next(i for i, line in enumerate(lines) if "South" in line)
    assert north < south


def test_deal_show_russian() -> None:
    r = dealer("deal", "show", "--lang", "ru", SAMPLE)
    assert r.returncode == 0 and "Север" in r.stdout and "♠ Т В 9" in r.stdout


def test_rank_unrank_round_trip() -> None:
    r = dealer("deal", "rank", SAMPLE)
    assert r.returncode == 0
    u = dealer("deal", "unrank", r.stdout.strip())
    assert u.returncode == 0 and u.stdout.strip() == SAMPLE


def test_board() -> None:
    r = dealer("board", "7")
    assert r.returncode == 0 and r.stdout.strip() == "Board 7: dealer S, vulnerable All"


def test_regulation_check_default() -> None:
    r = dealer("regulation", "check")
    assert r.returncode == 0 and "32" in r.stdout and "480" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("deal", "show", SAMPLE.replace("QJ84", "QJX4")), "unknown card token '♣X' at position"),
        (("deal", "show", SAMPLE.replace("QJ84", "QJ8A")), "duplicate card CA: in N and W"),
        (("deal", "show", SAMPLE.replace("AK93", "AK9")), "hand N has 12 cards, expected 13"),
        (("deal", "unrank", "12a"), "not a whole number"),
        (("board", "0"), "board number 0 is out of range"),
    ],
)
def test_failures_exit_1_with_message_on_stderr(args: tuple[str, ...], message: str) -> None:
    r = dealer(*args)
    assert r.returncode == 1
    assert message in r.stderr and r.stdout == ""


def test_regulation_failure_names_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "r.toml"
    bad.write_text("[dealing]\nvariant = 3\nopen_cards = 30\n")
    r = dealer("regulation", "check", str(bad))
    assert r.returncode == 1 and "dealing.open_cards" in r.stderr and "r.toml" in r.stderr


@pytest.mark.parametrize("args", [("nonsense",), ("board",), ("board", "x"), ("deal", "show")])
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    r = dealer(*args)
    assert r.returncode == 2 and r.stderr


@pytest.mark.parametrize("args", [(), ("deal",), ("deal", "show"), ("board",), ("regulation", "check")])
def test_help_on_every_command(args: tuple[str, ...]) -> None:
    r = dealer(*args, "--help")
    assert r.returncode == 0 and "Usage" in r.stdout
