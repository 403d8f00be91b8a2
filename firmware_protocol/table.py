"""The machine-readable message table (``messages.json``): the one source of truth for frame layouts.

The codec builds its struct layouts from here; :mod:`firmware_protocol.messages` checks at import that its
typed classes and enums agree with the table, so a drift fails loudly instead of corrupting frames.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

# struct code of each fixed-size field type; "text" is variable and always last.
_STRUCT_CODES = {
    "u8": "B",
    "u16": "H",
    "u32": "I",
    "deal_id": "I",
    "card": "B",
    "pocket": "B",
    "position": "B",
    "deal": "13s",
    "str16": "16s",
}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str
    type: str
    doc: str


@dataclass(frozen=True, slots=True)
class MessageSpec:
    type: int
    name: str
    direction: str
    reliable: bool
    reply: str | None
    doc: str
    fields: tuple[FieldSpec, ...]
    fixed: struct.Struct
    has_text: bool

    @property
    def fixed_size(self) -> int:
        return self.fixed.size


@dataclass(frozen=True, slots=True)
class Table:
    raw: dict[str, Any]
    version: int
    versions_supported: frozenset[int]
    header_size: int
    crc_size: int
    max_payload: int
    max_frame: int
    max_encoded: int
    ack_timeout_ms: int
    retry_limit: int
    heartbeat_interval_ms: int
    answer_delay_ms: int
    session_timeout_ms: int
    inter_byte_timeout_ms: int
    busy_retry_ms: int
    busy_retry_limit: int
    max_text: int
    min_send_queue: int
    reply_timeout_ms: int
    report_timeout_ms: int
    messages: tuple[MessageSpec, ...]
    by_type: dict[int, MessageSpec]
    by_name: dict[str, MessageSpec]
    enums: dict[str, dict[str, int]]
    states: dict[str, tuple[str, ...]]


def _message(raw: dict[str, Any]) -> MessageSpec:
    fields = tuple(FieldSpec(f["name"], f["type"], f["doc"]) for f in raw["fields"])
    codes = []
    has_text = False
    for i, f in enumerate(fields):
        if f.type == "text":
            if i != len(fields) - 1:
                raise ValueError(f"messages.json: {raw['name']}.{f.name}: a text field must be the last field")
            has_text = True
        elif f.type in _STRUCT_CODES:
            codes.append(_STRUCT_CODES[f.type])
        else:
            raise ValueError(f"messages.json: {raw['name']}.{f.name}: unknown field type {f.type!r}")
    return MessageSpec(
        type=int(raw["type"]),
        name=str(raw["name"]),
        direction=str(raw["direction"]),
        reliable=bool(raw["reliable"]),
        reply=raw["reply"],
        doc=str(raw["doc"]),
        fields=fields,
        fixed=struct.Struct("<" + "".join(codes)),
        has_text=has_text,
    )


@cache
def load_table() -> Table:
    text = resources.files("firmware_protocol").joinpath("messages.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    messages = tuple(_message(m) for m in raw["messages"])
    by_type = {m.type: m for m in messages}
    if len(by_type) != len(messages):
        raise ValueError("messages.json: two messages share a type code")
    states = {k: tuple(v) for k, v in raw["states"].items() if k != "doc"}
    return Table(
        raw=raw,
        version=int(raw["version"]),
        versions_supported=frozenset(int(v) for v in raw["versions_supported"]),
        header_size=int(raw["header_size"]),
        crc_size=int(raw["crc_size"]),
        max_payload=int(raw["max_payload"]),
        max_frame=int(raw["max_frame"]),
        max_encoded=int(raw["max_encoded"]),
        ack_timeout_ms=int(raw["ack_timeout_ms"]),
        retry_limit=int(raw["retry_limit"]),
        heartbeat_interval_ms=int(raw["heartbeat_interval_ms"]),
        answer_delay_ms=int(raw["answer_delay_ms"]),
        session_timeout_ms=int(raw["session_timeout_ms"]),
        inter_byte_timeout_ms=int(raw["inter_byte_timeout_ms"]),
        busy_retry_ms=int(raw["busy_retry_ms"]),
        busy_retry_limit=int(raw["busy_retry_limit"]),
        max_text=int(raw["max_text"]),
        min_send_queue=int(raw["min_send_queue"]),
        reply_timeout_ms=int(raw["reply_timeout_ms"]),
        report_timeout_ms=int(raw["report_timeout_ms"]),
        messages=messages,
        by_type=by_type,
        by_name={m.name: m for m in messages},
        enums={k: dict(v["values"]) for k, v in raw["enums"].items()},
        states=states,
    )
