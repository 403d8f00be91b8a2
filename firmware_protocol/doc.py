"""Generate PROTOCOL.md's message reference from messages.json (so the prose cannot drift from the table).

``python -m firmware_protocol.doc`` rewrites the part of PROTOCOL.md between the two marker lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .table import load_table

PROTOCOL_MD = Path(__file__).with_name("PROTOCOL.md")
BEGIN = "<!-- BEGIN GENERATED: python -m firmware_protocol.doc -->"
END = "<!-- END GENERATED -->"

_DIRECTION = {"host": "host → device", "device": "device → host", "both": "both directions"}


def reference() -> str:
    t = load_table()
    lines: list[str] = []
    lines.append("### Field types\n")
    lines.append("| type | bytes | meaning |")
    lines.append("|---|---|---|")
    for name, ft in t.raw["field_types"].items():
        size = "rest" if ft["size"] is None else str(ft["size"])
        lines.append(f"| `{name}` | {size} | {ft['doc']} |")
    lines.append("")
    lines.append("### Messages\n")
    lines.append("| type | name | direction | reliable | answer after the ACK | payload bytes |")
    lines.append("|---|---|---|---|---|---|")
    for m in t.messages:
        size = f"{m.fixed_size}" + (" + text" if m.has_text else "")
        reply = m.reply or "—"
        lines.append(
            f"| `0x{m.type:02X}` | {m.name} | {_DIRECTION[m.direction]} | {'yes' if m.reliable else 'no'} "
            f"| {reply} | {size} |"
        )
    lines.append("")
    for m in t.messages:
        lines.append(f"#### `0x{m.type:02X}` {m.name}\n")
        lines.append(f"{_DIRECTION[m.direction]}; {'reliable (acknowledged)' if m.reliable else 'not acknowledged'}.")
        lines.append(f"{m.doc}\n")
        if not m.fields:
            lines.append("Empty payload.\n")
            continue
        lines.append("| offset | field | type | bytes | meaning |")
        lines.append("|---|---|---|---|---|")
        offset = 0
        for f in m.fields:
            size = t.raw["field_types"][f.type]["size"]
            lines.append(f"| {offset} | `{f.name}` | `{f.type}` | {size if size is not None else 'rest'} | {f.doc} |")
            offset += size or 0
        lines.append("")
    lines.append("### Enumerations\n")
    for name, enum in t.raw["enums"].items():
        values = ", ".join(f"{k} = {v}" for k, v in enum["values"].items())
        lines.append(f"- **{name}** ({enum['doc']}): {values}.")
    lines.append("")
    lines.append("### Messages each state accepts\n")
    lines.append(t.raw["states"]["doc"] + "\n")
    host_msgs = [m.name for m in t.messages if m.direction == "host"]
    lines.append("| state | " + " | ".join(host_msgs) + " |")
    lines.append("|---|" + "---|" * len(host_msgs))
    for state, accepted in t.states.items():
        cells = " | ".join("✓" if n in accepted else "BAD_STATE" for n in host_msgs)
        lines.append(f"| {state} | {cells} |")
    return "\n".join(lines) + "\n"


def render(text: str) -> str:
    head, sep, rest = text.partition(BEGIN)
    if not sep:
        raise ValueError(f"{PROTOCOL_MD}: marker {BEGIN!r} missing")
    _, sep2, tail = rest.partition(END)
    if not sep2:
        raise ValueError(f"{PROTOCOL_MD}: marker {END!r} missing")
    return head + BEGIN + "\n\n" + reference() + "\n" + END + tail


def main(argv: list[str]) -> int:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    new = render(text)
    if "--check" in argv:
        return 0 if new == text else 1
    PROTOCOL_MD.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
