"""vectors.json agrees with the codec and covers every message type and every error reason."""

from __future__ import annotations

import json

from firmware_protocol.codec import ErrorReason
from firmware_protocol.messages import MsgType
from firmware_protocol.vectors import VECTORS_PATH, build_vectors, check_vectors


def test_vectors_check_against_codec() -> None:
    data = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    assert check_vectors(data) == []


def test_vectors_file_is_current() -> None:
    """Regenerate with `python -m firmware_protocol.vectors` after changing the table."""
    assert json.loads(VECTORS_PATH.read_text(encoding="utf-8")) == json.loads(json.dumps(build_vectors()))


def test_vectors_cover_every_type_and_error() -> None:
    data = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    assert {v["type"] for v in data["frames"]} == {t.name for t in MsgType}
    reasons = {e["error"] for s in data["streams"] for e in s["events"] if "error" in e}
    assert reasons == {r.value for r in ErrorReason}


def test_a_corrupted_vector_is_caught() -> None:
    data = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    frame = data["frames"][14]
    frame["fields"]["card"] = 1
    assert any(frame["name"] in p for p in check_vectors(data))
