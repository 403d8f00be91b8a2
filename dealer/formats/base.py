"""What every deal-file format offers, and the registry by name and extension.

A format reads bytes into board records plus the problems it met (never silently dropping a deal), and
writes board records to bytes. Each format is one module in ``dealer/formats/`` that calls ``register``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dealer.core import Deal, Seat, Vulnerability
from dealer.core.errors import DealerError


class FormatError(DealerError, ValueError):
    """A file cannot be read at all (structure broken); names the file, board and line or byte offset."""


@dataclass(frozen=True, slots=True)
class BoardRecord:
    deal: Deal
    board: int | None = None
    dealer: Seat | None = None
    vulnerability: Vulnerability | None = None
    line: int | None = None  # 1-based line where the record starts (text formats)
    offset: int | None = None  # byte offset of the record (binary formats)
    tags: Mapping[str, str] = field(default_factory=dict)  # e.g. Event, Site, DoubleDummyTricks


@dataclass(frozen=True, slots=True)
class ReadProblem:
    reason: str
    board: int | None = None
    line: int | None = None
    offset: int | None = None

    def where(self) -> str:
        parts = []
        if self.board is not None:
            parts.append(f"board {self.board}")
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        return ", ".join(parts) or "file"


@dataclass(slots=True)
class ReadResult:
    records: list[BoardRecord] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ExportMeta:
    event: str = ""
    site: str = ""
    date: str = ""  # YYYY.MM.DD as PBN has it
    sealed: bool = False  # DLM: Status=Sealed
    copies: int = 1


class DealFormat(Protocol):
    name: str  # short name used on the command line: "pbn", "dlm", ...
    extensions: tuple[str, ...]  # without the dot, lower case
    description: str
    can_read: bool
    can_write: bool

    def read(self, data: bytes, source: str = "<input>") -> ReadResult: ...

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes: ...


_REGISTRY: dict[str, DealFormat] = {}


def register(fmt: DealFormat) -> DealFormat:
    _REGISTRY[fmt.name] = fmt
    return fmt


def formats() -> dict[str, DealFormat]:
    return dict(_REGISTRY)


def by_name(name: str) -> DealFormat:
    key = name.lower().lstrip(".")
    if key in _REGISTRY:
        return _REGISTRY[key]
    for fmt in _REGISTRY.values():
        if key in fmt.extensions:
            return fmt
    known = ", ".join(sorted(_REGISTRY))
    raise FormatError(f"unknown format {name!r}: known formats are {known}")


def by_path(path: str) -> DealFormat:
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    for fmt in _REGISTRY.values():
        if suffix in fmt.extensions:
            return fmt
    raise FormatError(f"cannot tell the format of {path!r} from its extension: give --from/--to")
