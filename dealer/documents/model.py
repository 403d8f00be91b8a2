"""What a printed document says, independent of how it is drawn: a title, a number, a date, the tournament,
blocks of fields, tables and text, and the signature lines. Pure data; kept as JSON next to each issued PDF so
a day's record can be printed again from exactly what was issued.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from dealer.core.json_types import JsonObject


@dataclass(frozen=True, slots=True)
class Fields:
    """Label: value lines under a heading."""

    heading: str
    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Table:
    heading: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    widths: tuple[float, ...] = ()  # relative column widths; equal when empty
    empty: str = ""  # what to print when there are no rows


@dataclass(frozen=True, slots=True)
class Text:
    heading: str
    text: str


Block = Fields | Table | Text


@dataclass(frozen=True, slots=True)
class Signature:
    role: str  # «Главный судья», «Свидетель», …
    name: str  # the official's name ("" leaves a blank line to write it by hand)


@dataclass(frozen=True, slots=True)
class Document:
    kind: str  # bank, draw, draw-annex, boards, equipment
    lang: str
    title: str
    number: int
    number_label: str  # «Акт № 7»
    issued: str  # the issue moment, ISO 8601 (UTC)
    issued_text: str  # the same in the document's language
    tournament: str
    blocks: tuple[Block, ...]
    signatures: tuple[Signature, ...]
    labels: dict[str, str] = field(default_factory=dict)  # page, signature, name, date: the renderer's words
    event: str = ""  # the venue and the competition's dates, under the tournament's title ("" when not given)

    def to_dict(self) -> JsonObject:
        out = asdict(self)
        out["blocks"] = [{"type": type(b).__name__.lower(), **asdict(b)} for b in self.blocks]
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> Document:
        blocks: list[Block] = []
        for raw in data["blocks"]:
            b = dict(raw)
            kind = b.pop("type")
            if kind == "fields":
                blocks.append(Fields(b["heading"], tuple((str(k), str(v)) for k, v in b["items"])))
            elif kind == "table":
                blocks.append(
                    Table(
                        b["heading"],
                        tuple(b["columns"]),
                        tuple(tuple(str(c) for c in r) for r in b["rows"]),
                        tuple(float(w) for w in b.get("widths", ())),
                        str(b.get("empty", "")),
                    )
                )
            elif kind == "text":
                blocks.append(Text(b["heading"], b["text"]))
            else:
                raise ValueError(f"unknown document block type {kind!r}")
        return cls(
            kind=data["kind"],
            lang=data["lang"],
            title=data["title"],
            number=int(data["number"]),
            number_label=data["number_label"],
            issued=data["issued"],
            issued_text=data["issued_text"],
            tournament=data["tournament"],
            blocks=tuple(blocks),
            signatures=tuple(Signature(s["role"], s["name"]) for s in data["signatures"]),
            labels=dict(data.get("labels", {})),
            event=str(data.get("event", "")),
        )
