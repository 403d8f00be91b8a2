"""Import public deals from files of any readable registered format into the bank, in one transaction.

Every deal a file holds is either imported or reported (file, line, reason): unreadable records come from
the format's ``ReadResult.problems``; deals already in the bank, or seen earlier in the same import, are
reported as duplicates naming the deal they repeat. A file that cannot be read at all stops the import before
anything is written.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dealer.formats import by_path, load_all
from dealer.formats.base import BoardRecord, FormatError, ReadProblem

from .api import DealSource
from .repository import BankRepository
from .store import ImportItem, base_name


@dataclass(frozen=True, slots=True)
class Duplicate:
    file: str
    line: int | None
    board: int | None
    repeats: int  # deal id in the bank
    first_seen: str  # where the repeated deal came from: "file:line" of this import, or "bank"

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        board = f" board {self.board}" if self.board is not None else ""
        return f"{where}:{board} duplicate of deal {self.repeats} ({self.first_seen})"


@dataclass(slots=True)
class FileReport:
    path: str
    format: str
    sha256: str
    records: int = 0
    imported: int = 0
    duplicates: list[Duplicate] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)


@dataclass(slots=True)
class ImportReport:
    files: list[FileReport]
    batch_index: int
    first_deal: int | None
    last_deal: int | None

    @property
    def imported(self) -> int:
        return sum(f.imported for f in self.files)

    @property
    def duplicates(self) -> int:
        return sum(len(f.duplicates) for f in self.files)

    @property
    def problems(self) -> int:
        return sum(len(f.problems) for f in self.files)

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)


def read_files(paths: Sequence[Path | str]) -> list[tuple[FileReport, list[BoardRecord]]]:
    """Read and parse every file (nothing written). Raises FormatError naming a file that cannot be read."""
    load_all()
    out = []
    for p in paths:
        path = os.fspath(p)
        fmt = by_path(path)
        if not fmt.can_read:
            raise FormatError(f"{path}: format {fmt.name} can be written but not read")
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise FormatError(f"{path}: cannot read: {exc.strerror or exc}") from exc
        result = fmt.read(data, path)
        report = FileReport(path, fmt.name, hashlib.sha256(data).hexdigest(), len(result.records))
        report.problems.extend(result.problems)
        out.append((report, result.records))
    return out


def import_files(
    bank: BankRepository,
    paths: Sequence[Path | str],
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import every deal of ``paths``; ``progress(done, total)`` is called as deals are processed."""
    return import_parsed(bank, read_files(paths), progress)


def import_parsed(
    bank: BankRepository,
    parsed: Sequence[tuple[FileReport, list[BoardRecord]]],
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import files already read by ``read_files`` (one transaction)."""
    items: list[ImportItem] = []
    owners: list[tuple[FileReport, BoardRecord]] = []
    for report, records in parsed:
        for rec in records:
            source = DealSource("import", file=report.path, board=rec.board, line=rec.line, file_sha256=report.sha256)
            items.append(ImportItem(rec.deal, source))
            owners.append((report, rec))
    total = len(items)
    batch = {
        "files": [
            {
                "file": base_name(r.path),  # the public ledger: base name and SHA-256, never a local path
                "format": r.format,
                "sha256": r.sha256,
                "records": r.records,
                "problems": len(r.problems),
            }
            for r, _ in parsed
        ]
    }
    outcome = bank.import_deals(items, batch, None if progress is None else (lambda done: progress(done, total)))
    origin: dict[int, str] = {}
    for position, deal_id in outcome.imported:
        report, rec = owners[position]
        report.imported += 1
        origin[deal_id] = f"{report.path}:{rec.line}"
    for position, deal_id in outcome.duplicates:
        report, rec = owners[position]
        report.duplicates.append(Duplicate(report.path, rec.line, rec.board, deal_id, origin.get(deal_id, "bank")))
    ids = [deal_id for _, deal_id in outcome.imported]
    return ImportReport(
        [r for r, _ in parsed], outcome.batch_index, min(ids) if ids else None, max(ids) if ids else None
    )
