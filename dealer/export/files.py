"""Write a session's boards as deal files for other software (atomically: nothing half-written)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dealer.formats import ExportMeta, ReadResult, by_name, by_path, load_all
from dealer.formats.base import FormatError, no_deals_reason
from dealer.fsutil import MAX_INPUT_BYTES, InputFileError, read_input, write_atomic

from .at_rest import AtRest
from .boards import SessionBoard, records_of

# What closed commercial machines' own software deals from.
MACHINE_FORMATS = ("dlm", "dup", "pbn")


def render(boards: Sequence[SessionBoard], fmt_name: str, meta: ExportMeta) -> bytes:
    load_all()
    fmt = by_name(fmt_name)
    if not fmt.can_write:
        raise FormatError("format {name} can be read but not written", name=fmt.name)
    return fmt.write(records_of(boards), meta)


def write_session_files(
    boards: Sequence[SessionBoard],
    out_dir: Path,
    stem: str,
    formats: Sequence[str],
    meta: ExportMeta,
    at_rest: AtRest | None = None,
) -> list[Path]:
    """Render every format first (so a bad one writes nothing), then write each file atomically; sealed under the
    chief judge's key when ``at_rest`` is given (the service's folder, before play)."""
    load_all()
    rendered: list[tuple[Path, bytes]] = []
    for name in formats:
        fmt = by_name(name)
        rendered.append((out_dir / f"{stem}.{fmt.extensions[0]}", render(boards, fmt.name, meta)))
    write = write_atomic if at_rest is None else at_rest.write
    for path, data in rendered:
        write(path, data)
    return [p for p, _ in rendered]


def read_deal_file(path: Path, fmt_name: str | None = None, max_bytes: int = MAX_INPUT_BYTES) -> ReadResult:
    """Read any readable deal file; the format from ``fmt_name`` or the file's extension."""
    load_all()
    fmt = by_name(fmt_name) if fmt_name else by_path(str(path))
    if not fmt.can_read:
        raise FormatError("format {name} can be written but not read", name=fmt.name)
    try:
        data = read_input(path, max_bytes)
    except InputFileError as exc:
        raise FormatError("{path}: {exc}", path=path, exc=exc) from exc
    result = fmt.read(data, source=str(path))
    if not result.records and not result.problems:
        raise FormatError(
            "{path}: no deals: {no_deals_reason}",
            path=path,
            no_deals_reason=no_deals_reason(data, result.problems, fmt.name),
        )
    return result
