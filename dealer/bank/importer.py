"""Import public deals from files of any readable registered format into the bank, in bounded batches.

Every deal a file holds is either imported or reported (file, line, reason): unreadable records come from
the format's ``ReadResult.problems``; deals already in the bank, or seen earlier in the same import, are
reported as duplicates naming the deal they repeat. Every file is read and parsed before anything is written:
a file that cannot be read at all, or holds no deal (empty, wrong encoding, wrong format), stops the import
with nothing written, naming every such file and why (or, with ``skip_bad``, is left out and listed).

The deals are then committed in batches of at most ``BATCH_DEALS``, each its own short transaction closed by
an ``import`` ledger entry naming the files it holds deals of (``part`` k of ``parts``), so a long import
never holds the bank's write lock for more than a fraction of a second: a station dealing meanwhile commits
between two batches. If an import is stopped part way, the batches already committed stay (each complete and
in the ledger) and the rest is not written; running the same import again adds only the missing deals.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, count, repeat
from operator import ne, not_
from pathlib import Path
from typing import NamedTuple

from dealer.core.errors import DealerError
from dealer.formats import by_path, load_all
from dealer.formats.base import FormatError, ReadProblem, no_deals_reason
from dealer.formats.pbn_scan import DealCache, ScannedDeals, scan
from dealer.fsutil import MAX_INPUT_BYTES, InputFileError, read_input

from . import bulk
from .bulk import source_json
from .store import SqliteBank, base_name


class Duplicate(NamedTuple):  # a tuple: an import of a large collection makes tens of thousands of them
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
    sha256: str  # "" for a file whose deals all came earlier in the import (the ledger never names it)
    records: int = 0
    imported: int = 0
    duplicates: list[Duplicate] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)


BATCH_DEALS = 1000  # deals a transaction commits at most (about 0.05 s of write lock on a 2-core laptop)


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str  # English, without the path
    error: DealerError | None = None  # the error itself, for a reader in another language


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


def _deals_of(fmt_name: str, data: bytes, path: str, cache: DealCache) -> ScannedDeals:
    """A file's deals as columns: PBN through its fast import scan, other formats through their reader."""
    if fmt_name == "pbn":
        return scan(data, path, cache)
    from dealer.formats import by_name

    result = by_name(fmt_name).read(data, path)
    out = ScannedDeals(problems=list(result.problems))
    for rec in result.records:
        out.lines.append(rec.line)
        out.boards.append(rec.board)
        out.deals.append(rec.deal.to_bytes())
    return out


_Parsed = tuple[str, str, ScannedDeals] | None  # format, SHA-256 ("" if not needed), deals; None: cannot import
PARALLEL_BYTES = 4 << 20  # a collection this large is parsed by two processes (when a second core is idle)


def _read_one(path: str, max_bytes: int, cache: DealCache) -> tuple[str, bytes, ScannedDeals]:
    fmt = by_path(path)
    if not fmt.can_read:
        raise FormatError("format {name} can be written but not read", name=fmt.name)
    data = read_input(Path(path), max_bytes)
    deals = _deals_of(fmt.name, data, path, cache)
    if not deals.deals:
        raise FormatError("no deals: {reason}", reason=no_deals_reason(data, deals.problems, fmt.name))
    return fmt.name, data, deals


def _parse_part(paths: Sequence[str], max_bytes: int, progress: Callable[[int], None] | None = None) -> list[_Parsed]:
    """The files in order, with one deal cache; SHA-256 for each file adding deals to those before it here
    (a superset of those that add deals to the whole import's files before it: the ledger names only those)."""
    out: list[_Parsed] = []
    cache = DealCache()  # a deal value met again (other room, other file) is not parsed again
    seen: set[bytes] = set()
    for done, path in enumerate(paths, start=1):
        try:
            fmt_name, data, deals = _read_one(path, max_bytes, cache)
        except (FormatError, InputFileError):
            out.append(None)
        else:
            sha = ""
            if not seen.issuperset(deals.deals):
                seen.update(deals.deals)
                sha = hashlib.sha256(data).hexdigest()
            out.append((fmt_name, sha, deals))
        if progress is not None:
            progress(done)
    return out


def _second_core_idle() -> bool:
    """Whether a second process would run beside this one: Linux (fork is safe there), no other thread (one could
    hold a lock the child needs), two cores or more and a load average leaving one free. On a busy machine the
    two processes only share this one's time (measured: slower than one), so one reads everything."""
    cores = os.cpu_count() or 1
    if cores < 2 or sys.platform != "linux" or threading.active_count() != 1:
        return False
    try:
        return os.getloadavg()[0] < cores - 0.5
    except OSError:
        return False


def _parse_files(
    paths: Sequence[str], max_bytes: int, progress: Callable[[int], None] | None, workers: int | None
) -> list[_Parsed]:
    """``_parse_part`` of all the files; a large collection split in two by size, the first part parsed in a
    forked process while this one parses the second (the result is the same: each file's deals depend on its
    bytes only). The child sends back only what it parsed without a problem carrying an error object (those
    few files, and any file it could not read, are parsed here again); if the child fails, all of its part."""
    if workers is None:
        workers = 2 if _second_core_idle() else 1
    sizes = []
    if workers > 1 and len(paths) > 1:
        for path in paths:
            try:
                sizes.append(os.stat(path).st_size)
            except OSError:
                sizes.append(0)
    if workers <= 1 or len(paths) < 2 or sum(sizes) < PARALLEL_BYTES:
        return _parse_part(paths, max_bytes, progress)
    half, acc, cut = sum(sizes) / 2, 0, 1
    for cut, size in enumerate(sizes, start=1):  # noqa: B007 (cut is used after the loop)
        acc += size
        if acc >= half:
            break
    cut = min(cut, len(paths) - 1)
    first, second = paths[:cut], paths[cut:]
    scale = len(paths) / len(second)
    own_progress = None if progress is None else (lambda done: progress(round(done * scale)))
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, send, leave without running the parent's clean-ups
        code = 1
        try:
            os.close(reader)
            mine = [
                r if r is None or all(p.error is None for p in r[2].problems) else None
                for r in _parse_part(first, max_bytes)
            ]
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(pickle.dumps(mine, protocol=pickle.HIGHEST_PROTOCOL))
            code = 0
        finally:
            os._exit(code)
    os.close(writer)
    try:
        second_part = _parse_part(second, max_bytes, own_progress)
    finally:
        with os.fdopen(reader, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(pid, 0)
    first_part: list[_Parsed] | None = None
    if status == 0:
        try:
            first_part = pickle.loads(payload)
        except Exception:  # a damaged payload: the part is parsed here
            first_part = None
    if first_part is None or len(first_part) != len(first):
        first_part = _parse_part(first, max_bytes)
    else:
        redo = [k for k, r in enumerate(first_part) if r is None]
        for k, r in zip(redo, _parse_part([first[k] for k in redo], max_bytes), strict=True):
            first_part[k] = r
    return first_part + second_part


def read_files(
    paths: Sequence[Path | str],
    *,
    max_bytes: int = MAX_INPUT_BYTES,
    skip_bad: bool = False,
    skipped: list[SkippedFile] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> list[tuple[FileReport, ScannedDeals]]:
    """Read and parse every file (nothing written); ``progress(files_done)`` as files are done.

    A file that cannot be read, or holds no deal, is a FormatError naming every such file and the reason;
    with ``skip_bad`` such files are left out instead and appended to ``skipped``.
    """
    if all(os.fspath(p).lower().endswith(".pbn") for p in paths):
        import dealer.formats.pbn  # noqa: F401  (registers PBN; the other readers are not needed)
    else:
        load_all()
    names = [os.fspath(p) for p in paths]
    parsed = _parse_files(names, max_bytes, progress, workers)
    out = []
    bad: list[SkippedFile] = []
    seen: set[bytes] = set()  # deals of the files before: a file adding none needs no SHA-256
    for path, result in zip(names, parsed, strict=True):
        if result is None:  # the file cannot be imported: read it again here, for its error
            try:
                _read_one(path, max_bytes, DealCache())
            except (FormatError, InputFileError) as exc:
                bad.append(SkippedFile(path, str(exc).removeprefix(f"{path}: "), exc))
                continue
            raise AssertionError(f"{path}: read in one process but not in another")  # pragma: no cover
        fmt_name, sha, deals = result
        fresh = not seen.issuperset(deals.deals)
        if fresh:
            seen.update(deals.deals)
        report = FileReport(path, fmt_name, sha if fresh else "", len(deals.deals))
        report.problems.extend(deals.problems)
        out.append((report, deals))
    if bad and not skip_bad:
        shown = "\n".join(f"  {b.path}: {b.reason}" for b in bad[:20])
        more = f"\n  … and {len(bad) - 20} more files" if len(bad) > 20 else ""
        if len(bad) == 1:
            first = bad[0]
            if first.error is not None and str(first.error).startswith(f"{first.path}: "):
                raise FormatError("{error}\nnothing was imported", error=first.error)
            reason: object = first.error if first.error is not None else first.reason
            raise FormatError("{path}: {reason}\nnothing was imported", path=first.path, reason=reason)
        raise FormatError(
            "{count} files cannot be imported:\n{files}\nnothing was imported", count=len(bad), files=shown + more
        )
    if skipped is not None:
        skipped.extend(bad)
    return out


def import_files(
    bank: SqliteBank,
    paths: Sequence[Path | str],
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import every deal of ``paths``; ``progress(done, total)`` is called as deals are processed."""
    return import_parsed(bank, read_files(paths), progress)


def import_parsed(
    bank: SqliteBank,
    parsed: Sequence[tuple[FileReport, ScannedDeals]],
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = BATCH_DEALS,
) -> ImportReport:
    """Import files already read by ``read_files``, in transactions of at most ``batch_size`` deals.

    A deal repeated within the import is recognised here, in memory, and never reaches the bank; only the
    first occurrence of each deal goes to the bank, which reports those it already holds. Records are kept
    as columns over the whole import (position = index in the files' records one after another).
    """
    reports = [report for report, _ in parsed]
    deals: list[bytes] = []
    owner: list[int] = []  # position -> index of its file in ``reports``
    lines: list[int | None] = []
    boards: list[int | None] = []
    starts = [0]  # position of each file's first record (and the end)
    for k, (_, scanned) in enumerate(parsed):
        deals.extend(scanned.deals)
        owner.extend([k] * len(scanned.deals))
        lines.extend(scanned.lines)
        boards.extend(scanned.boards)
        starts.append(len(deals))
    total = len(deals)
    # each deal's first occurrence, a record at a time in C (map, compress): no Python code per record
    first: dict[bytes, int] = {}
    firsts = list(map(first.setdefault, deals, count()))
    repeated = list(map(ne, firsts, count()))
    unique = list(compress(count(), map(not_, repeated)))
    repeats = list(compress(count(), repeated))  # positions of the later occurrences, in order
    earliers = list(compress(firsts, repeated))  # and the position of the first occurrence of each
    del first, firsts, repeated
    names = [(base_name(r.path), r.sha256) for r in reports]  # the public ledger: base name and SHA-256 only
    parts = max(1, -(-len(unique) // batch_size))
    deal_of: dict[int, int] = {}  # position of a first occurrence -> deal id (new, or the bank's)
    new: set[int] = set()
    found: list[tuple[int, int, str]] = []  # (position, deal id repeated, where it was first seen)
    indices: list[int] = []
    for part, start in enumerate(range(0, len(unique), batch_size), start=1):
        chunk = unique[start : start + batch_size]
        sources = []
        for position in chunk:
            name, sha = names[owner[position]]
            sources.append(source_json(name, sha, boards[position], lines[position]))
        batch: dict[str, object] = {
            "part": part,
            "parts": parts,
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
            batch["repeated_within_import"] = len(repeats)
        base = len(repeats) + start
        step = None if progress is None else (lambda done, base=base: progress(base + done, total))
        outcome = bulk.import_canonical(bank, [deals[p] for p in chunk], sources, batch, step)
        indices.append(outcome.batch_index)
        for k, deal_id in outcome.imported:
            deal_of[chunk[k]] = deal_id
            new.add(chunk[k])
            reports[owner[chunk[k]]].imported += 1
        for k, deal_id in outcome.duplicates:
            deal_of[chunk[k]] = deal_id
            found.append((chunk[k], deal_id, "bank"))
    seen_at = {e: f"{reports[owner[e]].path}:{lines[e]}" if e in new else "bank" for e in set(earliers)}
    dup_ids = list(map(deal_of.__getitem__, earliers))
    dup_seen = list(map(seen_at.__getitem__, earliers))
    if found:  # deals the bank held before: merged with the repeats in position order
        merged = sorted([*found, *zip(repeats, dup_ids, dup_seen, strict=True)])
        repeats = [m[0] for m in merged]
        dup_ids = [m[1] for m in merged]
        dup_seen = [m[2] for m in merged]
    make = partial(tuple.__new__, Duplicate)
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
    return ImportReport(
        reports,
        indices[-1] if indices else -1,
        ids[0] if ids else None,
        ids[-1] if ids else None,
        indices,
    )


def _totals(report: ImportReport) -> dict[str, object]:
    """The head of the import's JSON report: its totals and the files left out."""
    return {
        "files": len(report.files),
        "records": report.records,
        "imported": report.imported,
        "duplicates": report.duplicates,
        "unreadable": report.problems,
        "files_left_out": len(report.skipped),
        "first_deal": report.first_deal,
        "last_deal": report.last_deal,
        "ledger_entries": report.batch_indices,
        "left_out": [{"file": s.path, "reason": s.reason} for s in report.skipped],
    }


def import_json(report: ImportReport) -> dict[str, object]:
    """The import's outcome for machines: totals, then every file left out, unreadable record and duplicate."""
    return {
        **_totals(report),
        "problems": [
            {"file": f.path, "line": p.line, "board": p.board, "reason": p.reason}
            for f in report.files
            for p in f.problems
        ],
        "duplicate_records": [
            {"file": d.file, "line": d.line, "board": d.board, "repeats": d.repeats, "first_seen": d.first_seen}
            for f in report.files
            for d in f.duplicates
        ],
    }


def import_json_text(report: ImportReport) -> str:
    """``json.dumps(import_json(report))``, written directly: an import of a large collection reports over a
    hundred thousand duplicates, and one dict per record costs more than the whole commit. A test holds the
    two byte for byte."""
    dumps = json.dumps
    totals = _totals(report)
    parts = [dumps(totals)[:-1], ', "problems": [']
    problems = [
        dumps({"file": f.path, "line": p.line, "board": p.board, "reason": p.reason})
        for f in report.files
        for p in f.problems
    ]
    parts += [", ".join(problems), '], "duplicate_records": [']
    first_seen: dict[str, str] = {}  # where a deal was first seen -> its JSON string
    nulls: dict[object, str] = {None: "null"}  # nulls.get(x, x): "null" for None, else x itself
    records: list[str] = []
    for f in report.files:  # a file's duplicates at once, formatted in C (map, str.__mod__): no Python per record
        if not f.duplicates:
            continue
        _, lines, boards, repeats, seen = zip(*f.duplicates, strict=True)
        for where in set(seen).difference(first_seen):
            first_seen[where] = dumps(where)
        head = ('{"file": ' + dumps(f.path)).replace("%", "%%")
        template = head + ', "line": %s, "board": %s, "repeats": %s, "first_seen": %s}'
        columns = zip(
            map(nulls.get, lines, lines),
            map(nulls.get, boards, boards),
            repeats,
            map(first_seen.__getitem__, seen),
            strict=True,
        )
        records.extend(map(template.__mod__, columns))
    parts += [", ".join(records), "]}"]
    return "".join(parts)
