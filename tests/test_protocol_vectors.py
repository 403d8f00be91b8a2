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


# The error cases PROTOCOL.md names, with the outcome derived by hand from the text (§1 text and str16, §1
# positions, §3 sizes, §5.1 steps 2 and 5g/5h), not from the codec: "ok" is a decoded message.
NAMED_CASES = {
    "text: invalid UTF-8 (0xC3 0x28)": ["bad_field"],  # 0xC3 needs a continuation byte 0x80..0xBF
    "text: overlong UTF-8 (0xC0 0xAF for '/')": ["bad_field"],  # RFC 3629: no overlong forms
    "text: a UTF-16 surrogate (0xED 0xA0 0x80)": ["bad_field"],  # U+D800: no surrogates
    "text: above U+10FFFF (0xF4 0x90 0x80 0x80)": ["bad_field"],  # U+110000
    "text: 121 bytes, one over max_text": ["bad_field"],
    "text: exactly 120 bytes (60 two-byte code points) is fine": ["ok"],
    "NAK detail of 121 bytes (unanswered type, still bad_field)": ["bad_field"],
    "str16: a 0x00 followed by a non-0x00 byte": ["bad_field"],
    "str16: a byte outside 0x20..0x7E (0x7F)": ["bad_field"],
    "str16: all 16 bytes printable, no padding, is fine": ["ok"],
    "position 52 out of range": ["bad_field"],
    "position 0xFF (none) decodes": ["ok"],
    "FAULT shorter than its fixed fields": ["bad_payload"],  # 7 bytes, the fixed part is 8
    # 4 + 240 + 4 = 248 bytes decoded, 249 encoded: the buffer holds it; type 0x55 is unknown (step 5f)
    "maximum-length frame: 240-byte payload, 248 decoded, 249 encoded (unknown type 0x55)": ["unknown_type"],
    # 249 decoded bytes encode to 250: the 250th byte meets a full buffer (step 2); the next frame is intact
    "249/250 boundary: 241-byte payload encodes to 250 bytes: oversize, then a frame": ["oversize", "ok"],
}


def test_every_error_case_the_text_names_has_a_vector_with_the_outcome_the_text_gives() -> None:
    data = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    streams = {s["name"]: s for s in data["streams"]}
    for name, want in NAMED_CASES.items():
        got = [e.get("error", "ok") for e in streams[name]["events"]]
        assert got == want, name


def test_the_boundary_vectors_have_the_sizes_their_names_say() -> None:
    data = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
    streams = {s["name"]: bytes.fromhex(s["stream"]) for s in data["streams"]}
    longest = streams["maximum-length frame: 240-byte payload, 248 decoded, 249 encoded (unknown type 0x55)"]
    assert len(longest) == 249 + 1 and longest.index(0) == 249
    over = streams["249/250 boundary: 241-byte payload encodes to 250 bytes: oversize, then a frame"]
    assert over.index(0) == 250
    text120 = streams["text: exactly 120 bytes (60 two-byte code points) is fine"]
    assert len(text120) == 1 + 4 + 8 + 120 + 4 + 1  # COBS byte, header, FAULT's fixed fields, text, CRC, 0x00
