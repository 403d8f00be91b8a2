"""``bank import --json``'s report, written while the batches commit (by a forked process on a large import),
is ``json.dumps`` of the report the in-process import gives (``import_json(import_parsed(...))``), byte for
byte: with a deal the bank held before, problems, files left out, many small batches, another writer between
the batches, and a helper process that dies. An error in the import stops the helper (no process left).

Each case runs on SQLite and PostgreSQL (skipped, saying why, where no server answers): two banks with the
same content, one for each way.
"""

from __future__ import annotations

import json
import os
import random
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from bank_engines import bank_target, engine, open_test_bank  # noqa: F401 (fixtures)
from bank_support import random_deal, station_source
from test_bank_import_repeats import _corpus

from dealer.bank import bulk
from dealer.bank.composed import Bank
from dealer.bank.errors import BankUnavailableError
from dealer.bank_import import import_json
from dealer.bank_import.import_json import import_with_json
from dealer.bank_import.importer import SkippedFile, import_parsed, read_files
from dealer.formats.pbn import PBN

BATCH = 3  # small batches: many of them, the files settled a few at a time


@pytest.fixture
def banks(engine: str, tmp_path: Path) -> Iterator[tuple[Bank, Bank]]:  # noqa: F811
    """Two banks of ``engine``, each already holding the same deal of the corpus (one the import repeats)."""
    with ExitStack() as stack:
        pair = []
        for name in ("a", "b"):
            target = stack.enter_context(bank_target(engine, tmp_path / name))
            bank = open_test_bank(target, tmp_path / name)
            stack.callback(bank.close)
            pair.append(bank)
        yield pair[0], pair[1]


def _files(tmp_path: Path) -> list[Path]:
    files = _corpus(tmp_path, random.Random(23))
    empty = tmp_path / "empty.pbn"  # left out (--skip-bad): named in the report
    empty.write_bytes(b"")
    return [*files[:4], empty, *files[4:]]


def _held(files: list[Path]) -> list[Any]:
    """Deals the banks hold before the import: one in the middle of m4, and the first deal that is the last
    record of a file and met nowhere before it (the record that settles that file is the bank's duplicate)."""
    seen: set[Any] = set()
    last = None
    for path in files:
        deals = [r.deal for r in PBN.read(path.read_bytes()).records]
        if deals and last is None and deals[-1] not in seen and deals[-1] not in deals[:-1]:
            last = deals[-1]
        seen.update(deals)
    assert last is not None
    return [PBN.read(files[5].read_bytes()).records[3].deal, last]  # files[5]: m4 (the empty file is 4th)


def _both_ways(a: Bank, b: Bank, files: list[Path], batch: int = BATCH) -> tuple[str, str]:
    """The report's JSON from the in-process import into ``a``, and ``import_with_json``'s into ``b``."""
    for bank in (a, b):
        for deal in _held(files):
            bank.commit_deal(deal, station_source())
    skipped_a: list[SkippedFile] = []
    report = import_parsed(a, read_files(files, skip_bad=True, skipped=skipped_a), batch_size=batch)
    report.skipped.extend(skipped_a)
    skipped_b: list[SkippedFile] = []
    text = import_with_json(b, read_files(files, skip_bad=True, skipped=skipped_b), skipped_b, batch_size=batch)
    return json.dumps(import_json.import_json(report)), text


pids: list[int] = []  # every helper process started (each must be reaped)


def _with_helper(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make every import fork its helper (whatever the size and the load); the helpers started, to look at."""
    monkeypatch.setattr(import_json, "FORK_DUPLICATES", 0)
    monkeypatch.setattr(import_json, "second_core_idle", lambda: True)
    monkeypatch.setattr(Bank, "in_process", True)  # on PostgreSQL too: a fork beside its connection
    started: list[Any] = []
    start = import_json._FormattingProcess.start

    def recording(plan: Any) -> Any:
        helper = start(plan)
        assert helper is not None
        started.append(helper)
        pids.append(helper._pid)
        return helper

    monkeypatch.setattr(import_json._FormattingProcess, "start", staticmethod(recording))
    return started


@pytest.mark.parametrize("batch", [1, BATCH])  # 1: a batch ends before every first occurrence
@pytest.mark.parametrize("helper", [True, False], ids=["helper-process", "in-process"])
def test_the_json_is_the_reports_json(
    banks: tuple[Bank, Bank], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool, batch: int
) -> None:
    started = _with_helper(monkeypatch) if helper else []
    if not helper:
        monkeypatch.setattr(import_json, "FORK_DUPLICATES", 10**9)
    expected, text = _both_ways(*banks, _files(tmp_path), batch)
    assert text == expected
    doc = json.loads(text)
    assert doc["files_left_out"] == 1 and doc["unreadable"] == 4 and len(doc["ledger_entries"]) > 5
    assert any(d["first_seen"] == "bank" for d in doc["duplicate_records"])  # the deal the bank held
    assert any(":" in d["first_seen"] for d in doc["duplicate_records"])  # and deals first seen in the files
    assert [h is not None and h._pid == 0 for h in started] == ([True] if helper else [])  # ran and was reaped
    _reaped()
    assert banks[0].deal_count() == banks[1].deal_count()


@pytest.mark.parametrize("helper", [True, False], ids=["helper-process", "in-process"])
def test_another_writer_between_the_batches(
    banks: tuple[Bank, Bank], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    """A station commits a deal before each batch: the new deals' ids are not consecutive, and each batch's
    records, formatted while its rows are written (in-process), name the ids it got."""
    if helper:
        _with_helper(monkeypatch)
    else:
        monkeypatch.setattr(import_json, "FORK_DUPLICATES", 10**9)
    commit = Bank.import_canonical
    rngs: dict[int, random.Random] = {}

    def station_first(bank: Bank, *args: Any, **kwargs: Any) -> Any:
        rng = rngs.setdefault(id(bank), random.Random(5))  # the same deals, in the same order, in both banks
        bank.commit_deal(random_deal(rng), station_source())
        return commit(bank, *args, **kwargs)

    monkeypatch.setattr(Bank, "import_canonical", station_first)
    expected, text = _both_ways(*banks, _files(tmp_path))
    assert text == expected
    ids = [d["repeats"] for d in json.loads(text)["duplicate_records"]]
    assert len(set(ids)) > 10


def test_a_helper_that_dies_leaves_the_json_to_this_process(
    banks: tuple[Bank, Bank], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _with_helper(monkeypatch)
    send = import_json._FormattingProcess.send
    sent: list[int] = []

    def killing(self: Any, batch: Any) -> None:
        sent.append(1)
        if len(sent) == 3:
            os.kill(self._pid, signal.SIGKILL)
        send(self, batch)

    monkeypatch.setattr(import_json._FormattingProcess, "send", killing)
    expected, text = _both_ways(*banks, _files(tmp_path))
    assert text == expected
    assert len(sent) > 3 and started[0]._pid == 0
    _reaped()


def test_an_error_in_the_import_stops_the_helper(
    banks: tuple[Bank, Bank], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _with_helper(monkeypatch)
    commit = bulk.import_canonical
    calls: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 4:
            raise BankUnavailableError("{path}: the bank could not write ({reason})", path="x", reason="test")
        return commit(*args, **kwargs)

    monkeypatch.setattr(bulk, "import_canonical", failing)
    _, b = banks
    with pytest.raises(BankUnavailableError):
        import_with_json(b, read_files(_files(tmp_path), skip_bad=True), batch_size=BATCH)
    helper = started[0]
    assert helper is not None and helper._pid == 0 and helper._done == -1
    _reaped()


def _reaped() -> None:
    """Every helper started is gone, reaped: not running, not a zombie."""
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_the_helper_only_for_a_bank_in_this_process(
    banks: tuple[Bank, Bank],
    engine: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A PostgreSQL server works on the other core while the batches commit: no helper there."""
    monkeypatch.setattr(import_json, "FORK_DUPLICATES", 0)
    monkeypatch.setattr(import_json, "second_core_idle", lambda: True)
    forks: list[int] = []
    start = import_json._FormattingProcess.start

    def counting(plan: Any) -> Any:
        forks.append(1)
        return start(plan)

    monkeypatch.setattr(import_json._FormattingProcess, "start", staticmethod(counting))
    import_with_json(banks[1], read_files(_files(tmp_path), skip_bad=True), batch_size=BATCH)
    assert len(forks) == (1 if engine == "sqlite" else 0)
