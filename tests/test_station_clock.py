"""The station's runner stamps events with a steady clock: a laptop's clock set back (by hand, or by a time sync)
moves no retry and no pace, while ledger times still read as wall time."""

from __future__ import annotations

import time

import pytest

from dealer.app import station


def test_the_clock_reads_as_wall_time() -> None:
    before = time.time()
    read = station._clock()
    after = time.time()
    # the wall clock and the monotonic one drift apart by microseconds over a test run, not by a second
    assert before - 1.0 < read < after + 1.0


def test_a_wall_clock_set_back_an_hour_does_not_move_the_stations_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    first = station._clock()
    wall = time.time
    monkeypatch.setattr(time, "time", lambda: wall() - 3600.0)
    second = station._clock()
    assert time.time() < first - 3000.0  # the patched wall clock really went back
    assert first <= second < first + 60.0
