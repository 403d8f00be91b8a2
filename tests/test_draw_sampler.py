"""Rivest's sampler against the published vectors (cjerdonek/rivest-sampler-tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealer.draw.sampler import sample_with_replacement, sample_without_replacement

VECTORS = json.loads((Path(__file__).parent / "data" / "rivest_sampler_tests.json").read_text())["tests"]


@pytest.mark.parametrize("case", VECTORS, ids=lambda c: f"{c['data']['seed']}-{c['data']['total']}")
def test_published_vectors(case: dict[str, Any]) -> None:
    data = case["data"]
    assert sample_with_replacement(data["seed"], data["total"], data["count"]) == case["expected"]


def test_vectors_file_is_complete() -> None:
    assert len(VECTORS) == 6


@given(st.text(max_size=10), st.integers(1, 60), st.data())
def test_without_replacement_skips_repeats_of_the_same_stream(seed: str, total: int, data: st.DataObject) -> None:
    count = data.draw(st.integers(0, total))
    picks = sample_without_replacement(seed, total, count)
    assert len(set(picks)) == count and all(1 <= p <= total for p in picks)
    stream = sample_with_replacement(seed, total, 20 * total + 50)
    first_seen = list(dict.fromkeys(stream))
    assert picks == first_seen[:count]


def test_refuses_impossible_requests() -> None:
    with pytest.raises(ValueError):
        sample_without_replacement("x", 3, 4)
    with pytest.raises(ValueError):
        sample_with_replacement("x", 0, 1)
