"""``dealer bank import --json`` through the lean front door: the same line, the same bank, never run twice.

Each case runs twice from the same start (the same files, a copy of the same bank, in two working directories):
as officials and scripts run it (the front door takes it) and with ``DEALER_CLI_FULL=1`` (typer runs it). The
output, the error and the exit code must be equal, and so must the two banks afterwards (the same deals under the
same ids, the same ledger entries but for their times). What the front door must leave to typer goes to typer.
An error after the import began to write is never handed over: a second run would report the batches already
committed as duplicates.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_cli_fast import _run

DEALS = [
    "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT8643.T3.AJ4.Q6 752.A8.T52.JT842",
    "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432",
    "E:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432",
    "N:2.AKQJT9876543.. AKQJT9876543.2.. ..AKQJT98765432. ...AKQJT98765432",
]


def _game(board: int, deal: str) -> str:
    return f'[Event "Test"]\n[Board "{board}"]\n[Dealer "N"]\n[Deal "{deal}"]\n\n'


def _desk(tmp: Path) -> Path:
    """Files to import (repeats within and across files, an unreadable record, a file with no deal) and a bank
    that already holds one of their deals."""
    from dealer.bank.api import DealSource
    from dealer.bank.store import SqliteBank
    from dealer.formats.pbn import parse_deal_value

    tmp.mkdir()
    (tmp / "a.pbn").write_text(_game(1, DEALS[0]) + _game(1, DEALS[0]) + _game(2, DEALS[1]), encoding="utf-8")
    (tmp / "b.PBN").write_text(
        _game(3, DEALS[1]) + _game(4, "N:AKQ.AKQ.AKQ.AKQJ") + _game(5, DEALS[2]), encoding="utf-8"
    )
    (tmp / "c.pbn").write_text(_game(6, DEALS[3]), encoding="utf-8")
    (tmp / "empty.pbn").write_text('[Event "nothing here"]\n', encoding="utf-8")
    (tmp / "notes.pbn").write_bytes(b"\x00\x01 not a deal file\n")
    with SqliteBank(tmp / "held.sqlite") as bank:
        bank.commit_deal(parse_deal_value(DEALS[3]), DealSource("import", file="old.pbn", board=6, line=1))
    (tmp / "garbage.sqlite").write_bytes(b"this is not a database, whatever its name says\n" * 64)
    return tmp


def _bank_rows(path: Path) -> tuple[list[tuple[object, ...]], list[str]]:
    """The deals (id, canonical form, source) and the ledger's entries, without what differs in any two runs
    (times, a new bank's id, the salted commitments)."""
    if not path.exists():
        return [], []
    db = sqlite3.connect(path)
    try:
        deals = db.execute("SELECT deal_id, canonical, source, state FROM deals ORDER BY deal_id").fetchall()
        entries = []
        for (body,) in db.execute("SELECT body FROM ledger ORDER BY idx"):
            entry = json.loads(body)
            data = {k: v for k, v in entry["d"].items() if k not in ("bank", "c")}  # a new bank's id, salted hashes
            entries.append(json.dumps({"k": entry["k"], "i": entry["i"], "d": data}, sort_keys=True))
    finally:
        db.close()
    return deals, entries


def _both(tmp: Path, args: list[str], extra: dict[str, str], fast: bool) -> tuple[bytes, bytes, int]:
    """Run ``args`` in two copies of the desk, by typer and as officials do; equal outputs and banks."""
    full_dir, fast_dir = tmp / "full", tmp / "fast"
    _desk(full_dir)
    shutil.copytree(full_dir, fast_dir)
    full = _run(full_dir, args, {**extra, "DEALER_CLI_FULL": "1"})
    got = _run(fast_dir, args, extra)
    assert full[3], "DEALER_CLI_FULL=1 runs typer"
    assert (got[0].decode(), got[1].decode(), got[2]) == (full[0].decode(), full[1].decode(), full[2]), args
    assert got[3] != fast, f"dealer {' '.join(args)}: front door expected {fast}\n{got[1].decode()}"
    for bank in ("bank.sqlite", "held.sqlite", "var/bank.sqlite"):
        assert _bank_rows(fast_dir / bank) == _bank_rows(full_dir / bank), bank
    return got[0], got[1], got[2]


LANGS: list[dict[str, str]] = [{}, {"LANG": "en_US.UTF-8"}]


@pytest.mark.parametrize("env", LANGS)
@pytest.mark.parametrize(
    "args",
    [
        ["bank", "import", "--json", "a.pbn", "b.PBN", "--bank", "bank.sqlite"],
        ["bank", "import", "a.pbn", "--bank=held.sqlite", "c.pbn", "b.PBN", "--json", "--show", "0"],
        ["--lang", "en", "bank", "import", "--json", "c.pbn", "--bank", "held.sqlite", "--max-size=1"],
        ["bank", "import", "--json", "--skip-bad", "empty.pbn", "a.pbn", "notes.pbn", "--bank", "bank.sqlite"],
        ["bank", "import", "--json", "a.pbn"],  # the default bank, var/bank.sqlite, made here
    ],
)
def test_imports_print_and_write_what_typer_does(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    out, err, code = _both(tmp_path, args, env, fast=True)
    assert (code, err) == (0, b"")
    report = json.loads(out)
    # every record accounted for, counted by hand from the files _desk writes
    records = {"a.pbn": 3, "b.PBN": 3, "c.pbn": 1}
    given = [a for a in args if a in records]
    assert report["records"] + report["unreadable"] == sum(records[name] for name in given)
    assert report["records"] == report["imported"] + report["duplicates"]


@pytest.mark.parametrize("env", LANGS)
@pytest.mark.parametrize(
    "args",
    [
        ["bank", "import", "--json", "a.pbn", "empty.pbn", "--bank", "bank.sqlite"],  # a file with no deal
        ["bank", "import", "--json", "missing.pbn", "--bank", "bank.sqlite"],
        ["bank", "import", "--json", "a.pbn", "notes.pbn", "empty.pbn", "--bank", "bank.sqlite"],
        ["bank", "import", "--json", "--skip-bad", "empty.pbn", "--bank", "bank.sqlite"],  # nothing left
        ["bank", "import", "--json", "a.pbn", "--bank", "garbage.sqlite"],  # fails once writing began
    ],
)
def test_errors_are_typers_and_write_nothing_twice(tmp_path: Path, args: list[str], env: dict[str, str]) -> None:
    out, err, code = _both(tmp_path, args, env, fast=True)
    assert (out, code) == (b"", 1)
    assert err.startswith((b"error: ", "ошибка: ".encode()))


@pytest.mark.parametrize(
    "args",
    [
        ["bank", "import", "a.pbn", "--bank", "bank.sqlite"],  # the people's summary is typer's
        ["bank", "import", "--json", "--bank", "bank.sqlite"],  # no file: typer's usage error
        ["bank", "import", "--json", "a.pbn", "--max-size", "0"],
        ["bank", "import", "--json", "a.pbn", "--show", "x"],
        ["bank", "import", "--json", "a.pbn", "--json"],
        ["bank", "import", "--json", "a.pbn", "--bogus"],
        ["bank", "import", "--json", "--", "a.pbn"],
        ["bank", "import", "--help"],
    ],
)
def test_anything_else_goes_to_typer(tmp_path: Path, args: list[str]) -> None:
    _both(tmp_path, args, {}, fast=False)


def test_an_unexpected_error_after_writing_is_raised_not_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bank commits a batch, then something unforeseen breaks: the front door raises it and typer never
    runs (it would report the committed batch's deals as duplicates of themselves)."""
    from dealer.bank import bulk
    from dealer.cli import fast, root

    desk = _desk(tmp_path / "desk")
    monkeypatch.chdir(desk)
    inner = bulk.import_canonical
    calls = []

    def commit_then_break(*args: Any, **kwargs: Any) -> Any:
        calls.append(inner(*args, **kwargs))
        raise RuntimeError("unforeseen")

    monkeypatch.setattr(bulk, "import_canonical", commit_then_break)
    monkeypatch.setattr(root, "run_full", lambda: pytest.fail("typer ran the import again"))
    with pytest.raises(RuntimeError, match="unforeseen"):
        fast.run_light(["bank", "import", "--json", "a.pbn", "--bank", "bank.sqlite"])
    assert capsys.readouterr().out == ""
    deals, entries = _bank_rows(desk / "bank.sqlite")
    assert len(calls) == 1 and len(deals) == 2  # a.pbn's two distinct deals, in the one batch committed
    assert [json.loads(e)["k"] for e in entries] == ["genesis", "import"]  # the deals' entries: compact, not stored


def test_before_writing_an_unexpected_error_goes_to_typer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While only reading, anything unforeseen is typer's to run and show (nothing was written)."""
    from dealer.bank_import import file_reading
    from dealer.cli import fast

    desk = _desk(tmp_path / "desk")
    monkeypatch.chdir(desk)

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("unforeseen while reading")

    monkeypatch.setattr(file_reading, "read_files", broken)
    assert fast.run_light(["bank", "import", "--json", "a.pbn", "--bank", "bank.sqlite"]) is None
    assert not (desk / "bank.sqlite").exists()
