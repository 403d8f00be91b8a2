"""The import's report for machines (``bank import --json``): totals, every file left out, every unreadable record
and every duplicate, as one line of JSON.

A collection of championship files repeats most of its deals, so the report lists tens of thousands of
duplicates, and formatting them costs about a third of what committing the new deals does. They are formatted
file by file while the batches commit: what a duplicate repeats is known once the batch holding the first
occurrence of its deal is committed, so a file can be written as soon as the batches reach past its last
record. On a large import into a SQLite bank, with a core to spare, a forked process does it, fed each committed
batch's outcome through a pipe, writing the text into an anonymous in-memory file the parent reads at the end;
if it fails, the same code formats everything here. Not for a PostgreSQL bank: a server near by works on the
other core while the batches commit, and the helper there slowed the import (0.96 s against 0.89 s for 20,080
new deals); there each batch's records are formatted here while the server writes its ledger rows
(``bulk.import_canonical``'s ``while_ledger``), when the client would otherwise wait. The text is
``json.dumps(import_json(report))`` byte for byte (a test holds the two together), written directly: one dict
per record would cost more than the commit.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
from bisect import bisect_left
from collections.abc import Sequence
from contextlib import suppress
from typing import BinaryIO

from dealer.bank.protocols import Imports
from dealer.formats.pbn_scan import ScannedDeals

from .file_reading import second_core_idle
from .importer import Batch, FileReport, ImportPlan, ImportReport, SkippedFile, plan_import, write_batches

FORK_DUPLICATES = 5000  # duplicates worth a second process (it costs a few milliseconds to start and feed)
_NULLS: dict[object, str] = {None: "null"}  # _NULLS.get(x, x): "null" for None, else x itself
_DUMPS = json.dumps


def import_json(report: ImportReport) -> dict[str, object]:
    """The import's outcome for machines: totals, then every file left out, unreadable record and duplicate."""
    return {
        **_totals(
            len(report.files),
            report.records,
            report.imported,
            report.duplicates,
            report.problems,
            report.skipped,
            report.first_deal,
            report.last_deal,
            report.batch_indices,
        ),
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


def _totals(
    files: int,
    records: int,
    imported: int,
    duplicates: int,
    unreadable: int,
    skipped: Sequence[SkippedFile],
    first_deal: int | None,
    last_deal: int | None,
    ledger_entries: list[int],
) -> dict[str, object]:
    """The head of the import's JSON report: its totals and the files left out (one order of keys for both ways
    of writing it)."""
    return {
        "files": files,
        "records": records,
        "imported": imported,
        "duplicates": duplicates,
        "unreadable": unreadable,
        "files_left_out": len(skipped),
        "first_deal": first_deal,
        "last_deal": last_deal,
        "ledger_entries": ledger_entries,
        "left_out": [{"file": s.path, "reason": s.reason} for s in skipped],
    }


def import_with_json(
    bank: Imports,
    parsed: Sequence[tuple[FileReport, ScannedDeals]],
    skipped: Sequence[SkippedFile] = (),
    batch_size: int | None = None,
) -> str:
    """Import files already read by ``read_files`` (as ``import_parsed``) and return the JSON report."""
    plan = plan_import(parsed)
    helper = None
    if len(plan.repeats) >= FORK_DUPLICATES and bank.in_process:
        helper = _FormattingProcess.start(plan)
    # without a helper, a batch's duplicates are formatted here while the server writes its rows: the import's
    # report is printed only once every batch has committed
    records = None if helper is not None else DuplicateRecords(plan)
    try:
        batches = write_batches(
            bank,
            plan,
            batch_size=batch_size,
            after=None if helper is None else helper.send,
            meanwhile=None if records is None else records.add,
        )
        duplicates = helper.text() if helper is not None else None
    finally:
        if helper is not None:
            helper.close()
    if duplicates is None:
        if records is None:  # the helper failed: everything here
            records = DuplicateRecords(plan)
            for batch in batches:
                records.add(batch)
        duplicates = records.text()
    return json_text(plan, batches, skipped, duplicates)


def json_text(plan: ImportPlan, batches: Sequence[Batch], skipped: Sequence[SkippedFile], duplicates: str) -> str:
    """The whole report, ``duplicates`` being ``DuplicateRecords.text()``."""
    ids = [deal_id for _, _, outcome in batches for _, deal_id in outcome.imported]
    reports = plan.reports
    totals = _totals(
        len(reports),
        len(plan.deals),
        len(ids),
        len(plan.repeats) + sum(len(outcome.duplicates) for _, _, outcome in batches),
        sum(len(r.problems) for r in reports),
        skipped,
        min(ids) if ids else None,
        max(ids) if ids else None,
        [outcome.batch_index for _, _, outcome in batches],
    )
    problems = [
        _DUMPS({"file": f.path, "line": p.line, "board": p.board, "reason": p.reason})
        for f in reports
        for p in f.problems
    ]
    return "".join(
        (_DUMPS(totals)[:-1], ', "problems": [', ", ".join(problems), '], "duplicate_records": [', duplicates, "]}")
    )


class DuplicateRecords:
    """The report's duplicate records, file by file, as the batches' outcomes come (``add`` each in order)."""

    def __init__(self, plan: ImportPlan) -> None:
        self._plan = plan
        self._deal_of: dict[int, int] = {}  # position of a first occurrence -> its deal id (new, or the bank's)
        self._new: set[int] = set()  # first occurrences imported by this import
        self._found: list[tuple[int, int]] = []  # first occurrences the bank held: (position, its id), in order
        self._seen: dict[int, str] = {}  # position of a first occurrence -> JSON of where it was first seen
        self._paths = [_DUMPS(r.path)[:-1] for r in plan.reports]  # each file's JSON string without its end quote
        self._parts: list[str] = []
        self._taken = 0  # parts already handed out by ``take``
        self._file = 0  # the next file to write
        self._repeat = 0  # index in ``plan.repeats`` of that file's first repeat
        self._bank = 0  # index in ``_found`` of its first deal held by the bank

    def add(self, batch: Batch) -> None:
        start, end, outcome = batch
        unique = self._plan.unique
        for k, deal_id in outcome.imported:
            position = unique[start + k]
            self._deal_of[position] = deal_id
            self._new.add(position)
        for k, deal_id in outcome.duplicates:
            position = unique[start + k]
            self._deal_of[position] = deal_id
            self._found.append((position, deal_id))
        # every record before the next first occurrence is settled: its deal's first occurrence is committed
        self._write_until(unique[end] if end < len(unique) else len(self._plan.deals))

    def finish(self) -> None:
        """Write the files left (every batch added)."""
        self._write_until(len(self._plan.deals))

    def text(self) -> str:
        """The records, comma-separated (every batch added)."""
        self.finish()
        return ", ".join(self._parts)

    def take(self) -> str:
        """The records written since the last ``take``, with the comma that joins them to those before: every
        ``take`` one after another (the last after ``finish``) make ``text()``."""
        new = self._parts[self._taken :]
        if not new:
            return ""
        lead = ", " if self._taken else ""
        self._taken = len(self._parts)
        return lead + ", ".join(new)

    def _write_until(self, settled: int) -> None:
        """Write every file whose records all lie before position ``settled``."""
        plan = self._plan
        starts = plan.starts
        while self._file < len(plan.reports) and starts[self._file + 1] <= settled:
            self._write_file(self._file)
            self._file += 1

    def _write_file(self, k: int) -> None:
        plan = self._plan
        end = plan.starts[k + 1]
        lo = self._repeat
        hi = self._repeat = bisect_left(plan.repeats, end, lo)
        first = self._bank
        while self._bank < len(self._found) and self._found[self._bank][0] < end:
            self._bank += 1
        if lo == hi and first == self._bank:
            return
        earliers = plan.earliers[lo:hi]
        self._learn_where(earliers)
        at = plan.repeats[lo:hi]
        ids = list(map(self._deal_of.__getitem__, earliers))
        seen = list(map(self._seen.__getitem__, earliers))
        if first != self._bank:  # deals the bank held before: merged with the repeats in position order
            held = self._found[first : self._bank]
            merged = sorted([*((p, i, '"bank"') for p, i in held), *zip(at, ids, seen, strict=True)])
            at = [m[0] for m in merged]
            ids = [m[1] for m in merged]
            seen = [m[2] for m in merged]
        lines = [plan.lines[p] for p in at]
        boards = [plan.boards[p] for p in at]
        head = ('{"file": ' + self._paths[k] + '"').replace("%", "%%")
        template = head + ', "line": %s, "board": %s, "repeats": %s, "first_seen": %s}'
        columns = zip(map(_NULLS.get, lines, lines), map(_NULLS.get, boards, boards), ids, seen, strict=True)
        self._parts.extend(map(template.__mod__, columns))

    def _learn_where(self, earliers: Sequence[int]) -> None:
        """Where each of these first occurrences was first seen, as JSON: ``"file:line"``, or ``"bank"``. (The
        file's JSON string with ``:line`` before its end quote is the JSON of ``file:line``: a colon and digits,
        or ``None``, need no escape.)"""
        plan = self._plan
        for e in set(earliers).difference(self._seen):
            if e in self._new:
                self._seen[e] = f'{self._paths[plan.owner[e]]}:{plan.lines[e]}"'
            else:
                self._seen[e] = '"bank"'


class _FormattingProcess:
    """``DuplicateRecords`` in a forked process: ``send`` each committed batch, then ``text`` (None: it failed,
    format here). It writes the text as it goes into an anonymous in-memory file, and at the end its length
    into a pipe: the text is then read in one go (through a pipe alone, 64 KiB at a time, the last batch's
    wait was 25 ms). Never in the way of the import: a write to a process that is gone just drops it."""

    def __init__(self, pid: int, feed: BinaryIO, done: int, memory: int) -> None:
        self._pid = pid
        self._feed: BinaryIO | None = feed
        self._done = done
        self._memory = memory

    @classmethod
    def start(cls, plan: ImportPlan) -> _FormattingProcess | None:
        if not second_core_idle():
            return None
        memory = os.memfd_create("dealer-import-json", os.MFD_CLOEXEC)
        feed_r, feed_w = os.pipe()
        done_r, done_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: format as batches come, leave without the parent's clean-ups
            code = 1
            try:
                os.close(feed_w)
                os.close(done_r)
                records = DuplicateRecords(plan)
                size = 0
                with os.fdopen(feed_r, "rb") as feed, os.fdopen(memory, "wb") as out:
                    while True:
                        try:
                            records.add(pickle.load(feed))
                        except EOFError:
                            break
                        size += out.write(records.take().encode("ascii"))
                    records.finish()
                    size += out.write(records.take().encode("ascii"))
                os.write(done_w, size.to_bytes(8, "little"))
                code = 0
            finally:
                os._exit(code)
        os.close(feed_r)
        os.close(done_w)
        return cls(pid, os.fdopen(feed_w, "wb"), done_r, memory)

    def send(self, batch: Batch) -> None:
        if self._feed is None:
            return
        try:
            pickle.dump(batch, self._feed, protocol=pickle.HIGHEST_PROTOCOL)
            self._feed.flush()
        except OSError:  # the process is gone: the text is made here instead
            self._stop()

    def text(self) -> str | None:
        """The records once every batch is sent, or None if the process failed."""
        if self._feed is None:
            return None
        try:
            self._feed.close()  # the end of the batches
        except OSError:
            self._stop()
            return None
        self._feed = None
        said = os.read(self._done, 8)  # its length, once it is all written; nothing: it failed
        if len(said) != 8:
            return None
        size = int.from_bytes(said, "little")
        chunks: list[bytes] = []
        at = 0
        while at < size and (chunk := os.pread(self._memory, size - at, at)):
            chunks.append(chunk)
            at += len(chunk)
        return None if at != size else b"".join(chunks).decode("ascii")

    def close(self) -> None:
        """Stop the process if it still runs (an error in the import), reap it, and release the files."""
        self._stop()
        for fd in (self._done, self._memory):
            if fd >= 0:
                os.close(fd)
        self._done = self._memory = -1

    def _stop(self) -> None:
        if self._feed is not None:
            with suppress(OSError):
                self._feed.close()
            self._feed = None
        if self._pid:
            with suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            self._pid = 0
