"""``dealer scanner calibrate`` and ``dealer scanner read`` as real processes on the virtual camera."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from dealer.core.cards import ALL_CARDS

ROOT = Path(__file__).resolve().parents[1]


def _dealer(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), LANG="en_GB.UTF-8")
    return subprocess.run(
        [sys.executable, "-m", "dealer", "scanner", *args], capture_output=True, text=True, env=env, timeout=240
    )


def test_calibrate_then_read_prints_one_json_object_per_card(tmp_path: Path) -> None:
    out = tmp_path / "deck.npz"
    done = _dealer("calibrate", "--source", "virtual:deck=synthetic-4c-fr,hold=4,slide=2,gap=1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert out.exists() and "52 cards" in done.stdout
    assert "the rank above the suit, a standard index, in two opposite corners" in done.stdout  # the learnt layout
    picture = out.with_suffix(".png")
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # and drawn for the judge

    source = "virtual:deck=synthetic-4c-fr,order=shuffled,seed=5,level=mild,hold=5,slide=2,gap=0"
    done = _dealer("read", "--source", source, "--calibration", str(out), "--deal-id", "3")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    expected = [ALL_CARDS[i].code for i in np.random.default_rng(5).permutation(52)]
    got = [x["card"] for x in lines]
    assert len(got) == 52 and got.count("unreadable") <= 2
    assert [g if g == "unreadable" else e for g, e in zip(got, expected, strict=True)] == got  # never a wrong card
    assert [x["position"] for x in lines] == list(range(52))
    assert all(0.0 <= x["confidence"] <= 1.0 and isinstance(x["frame"], int) for x in lines)
    times = [x["time"] for x in lines]
    assert times == sorted(times)


def test_read_with_a_bad_calibration_file_fails_with_a_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_text("nope")
    done = _dealer("read", "--source", "virtual:order=shuffled", "--calibration", str(bad))
    assert done.returncode == 1
    assert "not an NPZ calibration file" in done.stderr and str(bad) in done.stderr


def test_calibrate_refuses_an_incomplete_pass(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    done = _dealer("calibrate", "--source", str(folder), "--out", str(tmp_path / "x.npz"))
    assert done.returncode == 1 and "no image files" in done.stderr
    assert not (tmp_path / "x.npz").exists()
