"""An import runs without the cyclic garbage collector (``light.collector_paused``), and turns it back on after.

Each case sets a tiny collection threshold, so that the same work outside the pause collects many times (checked
first: the count can fail), then counts the collections ``gc.callbacks`` reports while the command's body runs.
The JSON case counts from the moment the reading starts: the collector counts allocations of every thread, so under
pytest-xdist another thread of the worker can bring a collection due in the few instructions before the pause
begins (seen once in a full run, and reproduced with a thread allocating beside the import: 1 in 20).
"""

from __future__ import annotations

import gc
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_bank_import_repeats import _corpus

from dealer.bank_import.file_reading import read_files
from dealer.cli import bank_cmds, light


@contextmanager
def _counted() -> Iterator[list[int]]:
    """The generations of the collections that run inside, one item each, with a threshold of 30 allocations
    counted from a collection just before (so that setting up the pause itself does not reach it)."""
    seen: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(int(info["generation"]))

    threshold = gc.get_threshold()
    gc.collect()
    gc.set_threshold(30)
    gc.callbacks.append(count)
    try:
        yield seen
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    return _corpus(tmp_path, random.Random(41))


def test_the_threshold_makes_the_same_reading_collect(files: list[Path]) -> None:
    with _counted() as seen:
        read_files(files)
    assert len(seen) > 3


def test_the_json_import_collects_nothing_and_turns_the_collector_back_on(
    files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = tmp_path / "bank.sqlite"
    frozen = gc.get_freeze_count()
    reading = light.import_read
    before_reading: list[int] = []

    def marked_read(*args: Any) -> Any:
        before_reading.append(len(seen))
        return reading(*args)

    monkeypatch.setattr(light, "import_read", marked_read)
    with _counted() as seen:
        text = light.bank_import_json(files, bank, None, 64, skip_bad=False)
    assert len(before_reading) == 1
    assert seen[before_reading[0] :] == []
    assert gc.isenabled()
    assert gc.get_freeze_count() > frozen  # what it made is out of later collections' way
    assert json.loads(text)["imported"] > 0


def test_the_import_for_people_collects_nothing_until_it_prints(
    files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bank = tmp_path / "bank.sqlite"
    at_summary: list[int] = []
    summary = bank_cmds._import_summary

    def counted_summary(*args: Any) -> None:
        at_summary.append(len(seen))
        summary(*args)

    monkeypatch.setattr(bank_cmds, "_import_summary", counted_summary)
    with _counted() as seen:
        bank_cmds.import_cmd(files, bank, None, 20, 64, skip_bad=False, as_json=False, register=None)
    assert at_summary == [0]
    assert gc.isenabled()
    assert "m0.pbn" in capsys.readouterr().out  # its table of problems and duplicates names the files


def test_an_import_that_stops_turns_the_collector_back_on(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pbn"
    empty.write_bytes(b"")
    with pytest.raises(light.NothingToImport):
        light.import_read([empty], 64, skip_bad=True, bank=tmp_path / "bank.sqlite")
    assert gc.isenabled()
    assert not (tmp_path / "bank.sqlite").exists()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with light.collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
