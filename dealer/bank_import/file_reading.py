"""Reading the files of an import: each file's format, SHA-256 and deals, in one process or, for a large
collection on a machine with a core to spare, in two.

Two processes share the work through a queue of jobs: the collection is cut into runs of consecutive files of
about equal size, and the runs' numbers are written into a pipe before a second process is forked; each
process takes the next number from the pipe (a 4-byte read: the kernel hands each to one reader) until the
pipe is empty, so the two finish together whatever each costs and whatever else runs. Meanwhile the parent
may do other work first (``prepare``: loading what the writing half needs), and the child simply takes
more runs. Each takes the runs in order, so its own files come in order: what ``_parse_into`` needs for its
SHA-256 rule. The child sends back what it parsed; a run it did not send (it failed, or was killed) and a
file whose problems carry an error object are parsed again here. The result is the same as one process
reading everything: each file's deals depend on its bytes only.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from dealer.core.errors import DealerError, Lines, Phrase
from dealer.formats import by_path, load_all
from dealer.formats.base import FormatError, ReadProblem, no_deals_reason
from dealer.formats.pbn_scan import DealCache, ScannedDeals, learn_every_holding, scan
from dealer.fsutil import MAX_INPUT_BYTES, InputFileError, read_input

Parsed = tuple[str, str, ScannedDeals] | None  # format, SHA-256 ("" if not needed), deals; None: cannot import
PARALLEL_BYTES = 4 << 20  # a collection this large is read by two processes (when a second core is idle)
RUNS = 128  # runs of files the collection is cut into (the two processes end within about one run's time)
_TOKEN = 4  # bytes of a run's number in the pipe
LOADAVG = "/proc/loadavg"  # "0.52 0.58 0.59 2/370 12345": load averages, runnable/all scheduling entities, last pid


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


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str  # English, without the path
    error: DealerError | None = None  # the error itself, for a reader in another language


def _skipped_line(skipped: SkippedFile) -> object:
    """A file left out, as a line of the refusal: its path and why, in the reader's language."""
    error = skipped.error
    if error is not None and str(error).startswith(f"{skipped.path}: "):
        return error  # it names the file itself
    return Phrase("{path}: {exc}", path=skipped.path, exc=error if error is not None else skipped.reason)


def deals_of(fmt_name: str, data: bytes, path: str, cache: DealCache) -> ScannedDeals:
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


def read_one(path: str, max_bytes: int, cache: DealCache) -> tuple[str, bytes, ScannedDeals]:
    """One file's format name, bytes and deals; FormatError or InputFileError if it cannot be imported."""
    fmt = by_path(path)
    if not fmt.can_read:
        raise FormatError("format {name} can be written but not read", name=fmt.name)
    data = read_input(Path(path), max_bytes)
    deals = deals_of(fmt.name, data, path, cache)
    if not deals.deals:
        raise FormatError("no deals: {reason}", reason=no_deals_reason(data, deals.problems, fmt.name))
    return fmt.name, data, deals


def _parse_into(
    out: list[Parsed],
    paths: Sequence[str],
    max_bytes: int,
    cache: DealCache,
    seen: set[bytes],
    progress: Callable[[int], None] | None = None,
) -> None:
    """Append the files' results in order. ``seen``: the deals of the files this process read before (in the
    collection's order); a file adding deals to those gets its SHA-256: a superset of the files that add deals
    to all the files before them in the collection (the ledger names only those)."""
    for path in paths:
        try:
            fmt_name, data, deals = read_one(path, max_bytes, cache)
        except (FormatError, InputFileError):
            out.append(None)
        else:
            sha = ""
            if not seen.issuperset(deals.deals):
                seen.update(deals.deals)
                sha = hashlib.sha256(data).hexdigest()
            out.append((fmt_name, sha, deals))
        if progress is not None:
            progress(len(out))


def parse_part(paths: Sequence[str], max_bytes: int, progress: Callable[[int], None] | None = None) -> list[Parsed]:
    """The files in order, in this process, with one deal cache (a deal value met again, in the other room or
    another file, is not parsed again)."""
    out: list[Parsed] = []
    _parse_into(out, paths, max_bytes, DealCache(), set(), progress)
    return out


def second_core_idle() -> bool:
    """Whether a second process would run beside this one: Linux (fork is safe there), no other thread (one could
    hold a lock the child needs), two cores or more, and a core free: by the processes running now (the
    kernel's count in /proc/loadavg, less this one) or by the last minute's load average, whichever is lower
    (the average lags: a job that just ended still counts; the count alone would heed one passing process).
    On a busy machine the two processes only share this one's time (measured: slower than one), so one
    reads everything."""
    cores = os.cpu_count() or 1
    if cores < 2 or sys.platform != "linux" or threading.active_count() != 1:
        return False
    try:
        with open(LOADAVG, "rb") as f:
            fields = f.read().split()
        average = float(fields[0])
        others = int(fields[3].split(b"/")[0]) - 1  # runnable now, this process included
    except (OSError, ValueError, IndexError):
        return False
    return min(average, others) < cores - 0.5


def runs_of(sizes: Sequence[int], runs: int = RUNS) -> list[tuple[int, int]]:
    """``[start, end)`` of consecutive files, about ``sum(sizes) / runs`` bytes each (one file at least)."""
    total = sum(sizes)
    step = max(total / runs, 1.0)
    out: list[tuple[int, int]] = []
    start = acc = 0
    for k, size in enumerate(sizes):
        acc += size
        if acc >= step * (len(out) + 1) or k == len(sizes) - 1:
            out.append((start, k + 1))
            start = k + 1
    return out


def parse_files(
    paths: Sequence[str],
    max_bytes: int,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    prepare: Callable[[], object] | None = None,
) -> list[Parsed]:
    """``parse_part`` of all the files, by two processes where it pays (see the module's note); ``prepare`` is
    called here while the other process reads (any error it raises is left for whoever needs its work)."""
    if workers is None:
        workers = 2 if second_core_idle() else 1
    sizes: list[int] = []
    if workers > 1 and len(paths) > 1:
        for path in paths:
            try:
                sizes.append(os.stat(path).st_size)
            except OSError:
                sizes.append(0)
    if workers <= 1 or len(paths) < 2 or sum(sizes) < PARALLEL_BYTES:
        return parse_part(paths, max_bytes, progress)
    learn_every_holding()  # once here, not once in each process
    runs = runs_of(sizes)
    tokens_r, tokens_w = os.pipe()
    os.write(tokens_w, b"".join(k.to_bytes(_TOKEN, "little") for k in range(len(runs))))  # 512 bytes: one write
    os.close(tokens_w)
    results_r, results_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: take runs, send what it read, leave without running the parent's clean-ups
        code = 1
        try:
            os.close(results_r)
            taken = _take_runs(tokens_r, runs, paths, max_bytes)
            clean = {
                k: [r if r is None or all(p.error is None for p in r[2].problems) else None for r in results]
                for k, results in taken.items()
            }
            with os.fdopen(results_w, "wb") as pipe:
                pipe.write(pickle.dumps(clean, protocol=pickle.HIGHEST_PROTOCOL))
            code = 0
        finally:
            os._exit(code)
    os.close(results_w)
    try:
        if prepare is not None:
            with suppress(Exception):  # a warm-up only: the same work done later raises its error there
                prepare()
        mine = _take_runs(tokens_r, runs, paths, max_bytes, progress)
    finally:
        os.close(tokens_r)
        with os.fdopen(results_r, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(pid, 0)
    theirs: dict[int, list[Parsed]] = {}
    if status == 0:
        with suppress(Exception):  # a damaged payload: those runs are read here
            theirs = pickle.loads(payload)
    out: list[Parsed] = []
    for k, (start, end) in enumerate(runs):
        got = mine.get(k)
        if got is None:
            got = theirs.get(k)
            if got is None or len(got) != end - start:
                got = parse_part(paths[start:end], max_bytes)  # its own `seen`: SHA-256 wherever needed
            else:
                redo = [i for i, r in enumerate(got) if r is None]
                for i, r in zip(redo, parse_part([paths[start + i] for i in redo], max_bytes), strict=True):
                    got[i] = r
        out += got
    if progress is not None:
        progress(len(paths))
    return out


def _take_runs(
    tokens: int,
    runs: Sequence[tuple[int, int]],
    paths: Sequence[str],
    max_bytes: int,
    progress: Callable[[int], None] | None = None,
) -> dict[int, list[Parsed]]:
    """Read runs, each the next number in the pipe, until it is empty. ``progress``: the files before the run
    this process takes next (all of them taken already, by one process or the other)."""
    cache = DealCache()
    seen: set[bytes] = set()
    done: dict[int, list[Parsed]] = {}
    shown = 0
    while True:
        token = os.read(tokens, _TOKEN)
        if len(token) != _TOKEN:  # empty: all taken (a part of a number never comes: each was written whole)
            return done
        k = int.from_bytes(token, "little")
        if k >= len(runs):  # cannot happen (see above); whatever is not sent back is read again by the parent
            return done
        if progress is not None:
            taken = runs[k][0]
            if taken > shown:
                shown = taken
                progress(shown)
        results: list[Parsed] = []
        _parse_into(results, paths[runs[k][0] : runs[k][1]], max_bytes, cache, seen)
        done[k] = results


def read_files(
    paths: Sequence[Path | str],
    *,
    max_bytes: int = MAX_INPUT_BYTES,
    skip_bad: bool = False,
    skipped: list[SkippedFile] | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    prepare: Callable[[], object] | None = None,
) -> list[tuple[FileReport, ScannedDeals]]:
    """Read and parse every file (nothing written); ``progress(files_done)`` as files are done.

    A file that cannot be read, or holds no deal, is a FormatError naming every such file and the reason;
    with ``skip_bad`` such files are left out instead and appended to ``skipped``. ``prepare`` (work that
    writes nothing, such as loading the bank's modules) is done while a second process reads, if one does.
    """
    if all(os.fspath(p).lower().endswith(".pbn") for p in paths):
        import dealer.formats.pbn  # noqa: F401  (registers PBN; the other readers are not needed)
    else:
        load_all()
    names = [os.fspath(p) for p in paths]
    parsed = parse_files(names, max_bytes, progress, workers, prepare)
    out = []
    bad: list[SkippedFile] = []
    seen: set[bytes] = set()  # deals of the files before: a file adding none needs no SHA-256
    for path, result in zip(names, parsed, strict=True):
        if result is None:  # the file cannot be imported: read it again here, for its error
            try:
                read_one(path, max_bytes, DealCache())
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
        lines: list[object] = [_skipped_line(b) for b in bad[:20]]
        if len(bad) > 20:
            lines.append(Phrase("… and {n} more files", n=len(bad) - 20))
        if len(bad) == 1:
            first = bad[0]
            if first.error is not None and str(first.error).startswith(f"{first.path}: "):
                raise FormatError("{error}\nnothing was imported", error=first.error)
            reason: object = first.error if first.error is not None else first.reason
            raise FormatError("{path}: {reason}\nnothing was imported", path=first.path, reason=reason)
        raise FormatError(
            "{count} files cannot be imported:\n{files}\nnothing was imported",
            count=len(bad),
            files=Lines(lines, indent="  "),
        )
    if skipped is not None:
        skipped.extend(bad)
    return out
