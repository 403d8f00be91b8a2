"""PROTOCOL.md's reference is generated from messages.json and is current; fault codes map onto FaultKind."""

from __future__ import annotations

import re

from dealer.core.events import FaultKind
from drivers.machine import fault_kind
from firmware_protocol.codec import encode
from firmware_protocol.doc import PROTOCOL_MD, render
from firmware_protocol.messages import FaultCode, Hello, MsgType


def test_reference_section_is_current() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    assert render(text) == text, "run: python -m firmware_protocol.doc"


def test_every_message_is_documented() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    for t in MsgType:
        assert f"#### `0x{t.value:02X}` {t.name}" in text


def test_worked_example_matches_the_codec() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    line = next(li for li in text.splitlines() if "HELLO seq 0 (min 1, max 1)" in li)
    frame = bytes.fromhex(re.sub(r"host →|HELLO.*", "", line))
    assert frame == encode(Hello(1, 1), 0)


def test_fault_codes_map_to_fault_kinds() -> None:
    for code in FaultCode:
        assert fault_kind(code) is FaultKind[code.name]
    assert fault_kind(200) is FaultKind.OTHER
