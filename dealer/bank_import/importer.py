"""Import public deals from files of any readable registered format into the bank, in bounded batches.

Every deal a file holds is either imported or reported (file, line, reason): unreadable records come from
the format's ``ReadResult.problems``; deals already in the bank, or seen earlier in the same import, are
reported as duplicates naming the deal they repeat. Every file is read and parsed before anything is written:
a file that cannot be read at all, or holds no deal (empty, wrong encoding, wrong format), stops the import
with nothing written, naming every such file and why (or, with ``skip_bad``, is left out and listed).

The deals are then committed in batches of at most the bank's ``import_batch``, each its own short transaction closed by
an ``import`` ledger entry naming the files it holds deals of (``part`` k of ``parts``), so a long import
never holds the bank's write lock for more than a fraction of a second: a station dealing meanwhile commits
between two batches. If an import is stopped part way, the batches already committed stay (each complete and
in the ledger) and the rest is not written; running the same import again adds only the missing deals.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, count, repeat
from operator import ne, not_
from pathlib import Path

from dealer.bank import bulk
from dealer.bank.bulk import source_text
from dealer.bank.deals import ImportOutcome, base_name
from dealer.bank.protocols import Imports
from dealer.formats.pbn_scan import ScannedDeals

from .file_reading import Duplicate, FileReport, SkippedFile, read_files

__all__ = ["Duplicate", "FileReport", "ImportReport", "SkippedFile", "import_files", "import_parsed", "read_files"]


@dataclass(slots=True)
class ImportReport:
    files: list[FileReport]
    batch_index: int  # the last batch's ledger entry (-1: nothing to commit)
    first_deal: int | None
    last_deal: int | None
    batch_indices: list[int] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

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


def import_files(
    bank: Imports,
    paths: Sequence[Path | str],
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import every deal of ``paths``; ``progress(done, total)`` is called as deals are processed."""
    return import_parsed(bank, read_files(paths), progress)


@dataclass(slots=True)
class ImportPlan:
    """An import's records as columns over all its files (position = index in the files' records one after
    another), and which are first occurrences: only those go to the bank."""

    reports: list[FileReport]
    deals: list[bytes]
    owner: list[int]  # position -> index of its file in ``reports``
    lines: list[int | None]
    boards: list[int | None]
    starts: list[int]  # position of each file's first record (and the end)
    unique: list[int]  # positions of first occurrences, in order
    repeats: list[int]  # positions of the later occurrences, in order
    earliers: list[int]  # and the position of the first occurrence each repeats

    def where(self, position: int) -> str:
        """``file:line`` of a record: where a duplicate's deal was first seen in this import."""
        return f"{self.reports[self.owner[position]].path}:{self.lines[position]}"


def plan_import(parsed: Sequence[tuple[FileReport, ScannedDeals]]) -> ImportPlan:
    """The columns of ``parsed`` and its first occurrences, a record at a time in C (map, compress): no Python
    code per record."""
    reports = [report for report, _ in parsed]
    deals: list[bytes] = []
    owner: list[int] = []
    lines: list[int | None] = []
    boards: list[int | None] = []
    starts = [0]
    for k, (_, scanned) in enumerate(parsed):
        deals.extend(scanned.deals)
        owner.extend([k] * len(scanned.deals))
        lines.extend(scanned.lines)
        boards.extend(scanned.boards)
        starts.append(len(deals))
    first: dict[bytes, int] = {}
    firsts = list(map(first.setdefault, deals, count()))
    repeated = list(map(ne, firsts, count()))
    unique = list(compress(count(), map(not_, repeated)))
    repeats = list(compress(count(), repeated))
    earliers = list(compress(firsts, repeated))
    return ImportPlan(reports, deals, owner, lines, boards, starts, unique, repeats, earliers)


Batch = tuple[int, int, ImportOutcome]  # a committed batch: its first and end index in ``unique``, its outcome


def write_batches(
    bank: Imports,
    plan: ImportPlan,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int | None = None,
    after: Callable[[Batch], None] | None = None,
    meanwhile: Callable[[Batch], None] | None = None,
) -> list[Batch]:
    """Commit the plan's first occurrences in transactions of at most ``batch_size`` deals (the bank's
    ``import_batch``); ``after(batch)`` once each is committed, ``meanwhile(batch)`` while its rows are being
    written (``Imports.import_canonical``: it is the batch that commits, unless the import fails). A deal the bank
    already holds comes back as a duplicate in its batch's outcome. While a batch's deals are written, the next
    batch's sources, salts and commitments are made (on PostgreSQL, the server writes meanwhile)."""
    batch_size = batch_size or bank.import_batch
    reports, owner, boards, lines = plan.reports, plan.owner, plan.boards, plan.lines
    names = [(base_name(r.path), r.sha256) for r in reports]  # the public ledger: base name and SHA-256 only
    unique = plan.unique
    total = len(plan.deals)
    chunks = [unique[start : start + batch_size] for start in range(0, len(unique), batch_size)]

    def prepare(chunk: list[int]) -> bulk.Salted:
        # a deal's source names its file by its position in the batch's "files" (listed in order of appearance)
        position = {k: n for n, k in enumerate(dict.fromkeys(owner[p] for p in chunk))}
        sources = [source_text(position[owner[p]], boards[p], lines[p]) for p in chunk]
        return bulk.salted([plan.deals[p] for p in chunk], sources)

    done: list[Batch] = []
    ours: int | None = 0  # the bank held no deal at the start (if so), then only this import's, up to this id
    upcoming: list[bulk.Salted] = []  # the next batch's rows, once made
    start = 0
    for part, chunk in enumerate(chunks, start=1):
        rows = upcoming.pop() if upcoming else prepare(chunk)
        end = start + len(chunk)
        batch: dict[str, object] = {
            "part": part,
            "parts": len(chunks),
            "files": [
                {
                    "file": names[k][0],
                    "format": reports[k].format,
                    "sha256": names[k][1],
                    "records": reports[k].records,
                    "problems": len(reports[k].problems),
                }
                for k in dict.fromkeys(owner[position] for position in chunk)
            ],
        }
        if part == 1:  # deals repeated within the files themselves (open and closed room), not sent to the bank
            batch["repeated_within_import"] = len(plan.repeats)
        base = len(plan.repeats) + start
        step = None if progress is None else (lambda done, base=base: progress(base + done, total))
        sent = None if meanwhile is None else (lambda outcome, start=start, end=end: meanwhile((start, end, outcome)))
        following = chunks[part] if part < len(chunks) else None
        then = None if following is None else (lambda following=following: upcoming.append(prepare(following)))
        outcome = bank.import_canonical(rows.deals, rows.sources, batch, step, ours, sent, then, rows)
        new = outcome.imported
        # it still holds only ours if this batch's first new deal came right after them (no one else's between)
        ours = new[-1][1] if ours is not None and new and new[0][1] == ours + 1 else None
        done.append((start, end, outcome))
        if after is not None:
            after(done[-1])
        start = end
    return done


def import_parsed(
    bank: Imports,
    parsed: Sequence[tuple[FileReport, ScannedDeals]],
    progress: Callable[[int, int], None] | None = None,
    batch_size: int | None = None,
) -> ImportReport:
    """Import files already read by ``read_files``, in transactions of at most ``batch_size`` deals.

    A deal repeated within the import is recognised here, in memory, and never reaches the bank; only the
    first occurrence of each deal goes to the bank, which reports those it already holds.
    """
    plan = plan_import(parsed)
    return report_of(plan, write_batches(bank, plan, progress, batch_size))


def report_of(plan: ImportPlan, batches: Sequence[Batch]) -> ImportReport:
    """The import's report: each file's new deals counted and its duplicates listed (what each repeats, and
    where it was first seen: in this import, or the bank)."""
    reports, owner, unique = plan.reports, plan.owner, plan.unique
    deal_of: dict[int, int] = {}  # position of a first occurrence -> deal id (new, or the bank's)
    new: set[int] = set()
    found: list[tuple[int, int, str]] = []  # (position, deal id repeated, where it was first seen)
    for start, _, outcome in batches:
        for k, deal_id in outcome.imported:
            deal_of[unique[start + k]] = deal_id
            new.add(unique[start + k])
            reports[owner[unique[start + k]]].imported += 1
        for k, deal_id in outcome.duplicates:
            deal_of[unique[start + k]] = deal_id
            found.append((unique[start + k], deal_id, "bank"))
    repeats, earliers, lines, boards = plan.repeats, plan.earliers, plan.lines, plan.boards
    seen_at = {e: plan.where(e) if e in new else "bank" for e in set(earliers)}
    dup_ids = list(map(deal_of.__getitem__, earliers))
    dup_seen = list(map(seen_at.__getitem__, earliers))
    if found:  # deals the bank held before: merged with the repeats in position order
        merged = sorted([*found, *zip(repeats, dup_ids, dup_seen, strict=True)])
        repeats = [m[0] for m in merged]
        dup_ids = [m[1] for m in merged]
        dup_seen = [m[2] for m in merged]
    make = partial(tuple.__new__, Duplicate)
    starts = plan.starts
    for k, report in enumerate(reports):
        lo = bisect_left(repeats, starts[k])
        hi = bisect_left(repeats, starts[k + 1], lo)
        if lo == hi:
            continue
        at = repeats[lo:hi]
        report.duplicates.extend(
            map(
                make,
                zip(
                    repeat(report.path),
                    map(lines.__getitem__, at),
                    map(boards.__getitem__, at),
                    dup_ids[lo:hi],
                    dup_seen[lo:hi],
                ),
            )
        )
    ids = sorted(deal_of[p] for p in new)
    indices = [outcome.batch_index for _, _, outcome in batches]
    return ImportReport(
        reports,
        indices[-1] if indices else -1,
        ids[0] if ids else None,
        ids[-1] if ids else None,
        indices,
    )
