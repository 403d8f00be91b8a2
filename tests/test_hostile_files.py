"""Hostile input files through every reader, ``dealer convert`` and ``dealer bank import`` (issue #19, 5 and 7).

Nested, huge, markup-laden, binary, UTF-16, empty and NUL-filled files, symbolic links to devices and
directories: every reader answers with records, reported problems or a ``FormatError`` (never another
exception); the commands exit 0 or 1 with a message (never a traceback); a file with no deals is an error
naming the reason, and the bank is left exactly as it was (no ``import`` entry for nothing).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bank_support import random_deal

from dealer.bank.store import SqliteBank
from dealer.bank_import.importer import SkippedFile, import_files, read_files
from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.formats import formats, load_all
from dealer.formats.base import MAX_JSON_DEPTH, BoardRecord, ExportMeta, FormatError
from dealer.fsutil import read_input

ROOT = Path(__file__).resolve().parents[1]
load_all()
READERS = sorted(name for name, f in formats().items() if f.can_read)


def _deals(n: int, seed: int = 5) -> list[BoardRecord]:
    rng = random.Random(seed)
    return [BoardRecord(random_deal(rng), board=b) for b in range(1, n + 1)]


GOOD_PBN = formats()["pbn"].write(_deals(3), ExportMeta(event="good")).decode("latin-1")


def hostile() -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the hostile corpus; the same bytes go to every reader whatever the extension."""
    rng = random.Random(19)
    yield "empty", b""
    yield "blank", b" \r\n\t\r\n"
    yield "nul", b"\x00" * 4096
    yield "random", bytes(rng.randrange(256) for _ in range(8192))
    yield "utf16-garbage", "hello world\r\n".encode("utf-16")
    yield "utf16-pbn", GOOD_PBN.encode("utf-16")
    yield "utf32", GOOD_PBN.encode("utf-32")
    yield "nested-array", b"[" * 200_000
    yield "nested-object", b'{"a":' * 50_000
    yield (
        "nested-shallow",
        json.dumps({"format": "bridge-dealer/deals", "version": 1, "boards": [[[[[]]]]] * 2}).encode(),
    )
    deep: object = []
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = [deep]
    yield "nested-over-limit", json.dumps({"format": "bridge-dealer/deals", "version": 1, "boards": deep}).encode()
    yield "json-int-5000", b'{"format": "bridge-dealer/deals", "version": ' + b"9" * 5000 + b', "boards": []}'
    yield "json-nan", b'{"format": "bridge-dealer/deals", "version": NaN, "boards": []}'
    yield "json-version-markup", b'{"format": "bridge-dealer/deals", "version": "[/]", "boards": []}'
    yield "json-huge-string", json.dumps({"format": "bridge-dealer/deals", "version": 1, "x": "a" * 200_000}).encode()
    yield "pbn-markup", GOOD_PBN.replace('[Board "2"]', '[Board "[/]"]').replace("N:", "[/][bold]N:", 1).encode()
    yield "pbn-markup-deal", b'[Board "1"]\n[Deal "N:[/] [red]x[/red]"]\n'
    yield "long-line", b"[" * 300_000
    yield "long-line-text", b"A" * 300_000 + b"\n"
    yield "csv-field", b'"' + b"x" * 200_000 + b'"\n'
    yield "csv-open-quote", b'"AKQ,"' + b"x\n" * 1000
    yield "unterminated-comment", b"{" + b"x" * 100_000
    yield "many-tags", b'[Board "1"]' * 20_000
    yield "escaped-quotes", b'[Event "' + b'\\"' * 50_000 + b'"]\n'
    # numbers past Python's 4,300-digit conversion limit where each format keeps a board number
    big = "9" * 5000
    for fmt_name in ("pbn", "csv", "lin", "dlm"):
        text = formats()[fmt_name].write(_deals(2), ExportMeta()).decode("latin-1")
        swaps = {'Board "1"': f'Board "{big}"', '"1",': f'"{big}",', "Board 1": f"Board {big}", "qx|o1": f"qx|o{big}"}
        swaps["Board 01="] = f"Board {big}="
        for k, (old, new) in enumerate(swaps.items()):
            if old in text:
                yield f"{fmt_name}-digits-{k}", text.replace(old, new, 1).encode("latin-1")
    yield (
        "dlm-to-board",
        formats()["dlm"].write(_deals(2), ExportMeta()).replace(b"To board=2", b"To board=" + big.encode()),
    )


CORPUS = list(hostile())


@pytest.mark.parametrize("fmt_name", READERS)
def test_every_reader_survives_the_hostile_corpus(fmt_name: str) -> None:
    fmt = formats()[fmt_name]
    for name, data in CORPUS:
        try:
            result = fmt.read(data, f"{name}.{fmt_name}")
        except DealerError:
            continue
        except Exception as exc:  # any other exception is the failure sought
            pytest.fail(f"{fmt_name} reader on {name}: {type(exc).__name__}: {str(exc)[:200]}")
        for rec in result.records:
            assert isinstance(rec.deal, Deal)
        assert all(p.reason for p in result.problems)


def test_utf16_pbn_with_its_mark_is_read_as_text() -> None:
    result = formats()["pbn"].read(GOOD_PBN.encode("utf-16"))
    assert [r.deal for r in result.records] == [r.deal for r in _deals(3)]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("empty", "empty"),
        ("blank", "blank space"),
        ("nul", "NUL bytes"),
        ("random", "binary"),
        ("utf16-garbage", "encoding"),
        ("utf32", "encoding"),
        ("pbn-markup-deal", "no deal could be read"),
    ],
)
def test_a_file_with_no_deals_is_an_error_naming_the_reason(tmp_path: Path, name: str, reason: str) -> None:
    data = dict(CORPUS)[name]
    path = tmp_path / f"{name}.pbn"
    path.write_bytes(data)
    with SqliteBank(tmp_path / "bank.sqlite") as bank:
        before = (bank.deal_count(), bank.ledger_head())
        with pytest.raises(FormatError, match=reason) as info:
            import_files(bank, [path])
        assert str(path) in str(info.value) and "nothing was imported" in str(info.value)
        assert (bank.deal_count(), bank.ledger_head()) == before
        assert bank.entries_of_kind("import") == []


def test_files_with_no_deals_are_all_named_or_skipped_on_request(tmp_path: Path) -> None:
    good = tmp_path / "good.pbn"
    good.write_bytes(GOOD_PBN.encode())
    bad = [tmp_path / "a.pbn", tmp_path / "b.pbn"]
    bad[0].write_bytes(b"")
    bad[1].write_bytes(b"\x00" * 10)
    with pytest.raises(FormatError) as info:
        read_files([good, *bad])
    assert "2 files cannot be imported" in str(info.value) and all(str(p) in str(info.value) for p in bad)
    skipped: list[SkippedFile] = []
    parsed = read_files([good, *bad], skip_bad=True, skipped=skipped)
    assert [r.path for r, _ in parsed] == [str(good)]
    assert [s.path for s in skipped] == [str(p) for p in bad]


def test_devices_fifos_directories_and_big_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "zero.pbn").symlink_to("/dev/zero")
    (tmp_path / "dir.pbn").mkdir()
    os.mkfifo(tmp_path / "fifo.pbn")  # opening it must not block waiting for a writer
    for name in ("zero.pbn", "dir.pbn", "fifo.pbn"):
        with pytest.raises(OSError, match="not a regular file"):
            read_input(tmp_path / name)
    (tmp_path / "big.pbn").write_bytes(b"x" * 2048)
    with pytest.raises(OSError, match="over the limit of 1024 bytes"):
        read_input(tmp_path / "big.pbn", max_bytes=1024)
    assert read_input(tmp_path / "big.pbn", max_bytes=2048) == b"x" * 2048
    with pytest.raises(FormatError, match="--max-size"):
        read_files([tmp_path / "big.pbn"], max_bytes=1024)


def test_a_file_that_grows_while_read_is_read_to_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The buffer is the size fstat gave; a file grown since (fstat made to say so) is read on, to the limit."""
    path = tmp_path / "growing.pbn"
    path.write_bytes(b"y" * 3000)
    real = os.fstat

    def smaller(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((st.st_mode, *st[1:6], 1000, *st[7:]))  # st_size: 1000 bytes at open

    monkeypatch.setattr("dealer.fsutil.os.fstat", smaller)
    assert read_input(path, max_bytes=4096) == b"y" * 3000
    with pytest.raises(OSError, match="grew over the limit of 2048 bytes"):
        read_input(path, max_bytes=2048)


def _dealer(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    return subprocess.run(
        [sys.executable, "-c", "from dealer.cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_commands_answer_the_corpus_without_a_traceback(tmp_path: Path) -> None:
    """Each hostile file through ``dealer convert`` and ``dealer bank import``: exit 0 or 1, never a traceback.

    Files go in under hostile names too (rich markup in the name). One import of all of them with
    ``--skip-bad`` and one convert per file keep the number of processes small.
    """
    folder = tmp_path / "a["  # every path holds "a[/b]…": a closing tag rich would choke on
    folder.mkdir()
    names: list[Path] = []
    for name, data in CORPUS:
        for ext in ("pbn", "json", "csv", "lin", "dlm"):
            path = folder / f"b]{name}[red].{ext}"
            path.write_bytes(data)
            names.append(path)
    zero = folder / "b]zero.pbn"
    zero.symlink_to("/dev/zero")
    names.append(zero)
    bank = tmp_path / "bank.sqlite"
    r = _dealer(tmp_path, "bank", "import", "--bank", str(bank), *map(str, names))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "nothing was imported" in r.stderr and not bank.exists()
    r = _dealer(tmp_path, "bank", "import", "--bank", str(bank), "--skip-bad", "--show", "0", *map(str, names))
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-3000:]
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"{zero}: left out: is a device" in r.stdout  # the name printed as it is
    assert "imported 3 of" in r.stdout  # the UTF-16 PBN's three deals; everything else left out or reported
    for path in [*names[::3], zero, folder / "b]pbn-markup[red].pbn"]:
        r = _dealer(tmp_path, "convert", str(path), str(tmp_path / "out.lin"))
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr, (path.name, r.stderr[-3000:])
        if r.returncode == 1:
            assert "error:" in r.stderr


def test_files_that_cannot_be_imported_are_each_named_in_russian_with_their_reason(tmp_path: Path) -> None:
    """Each file's reason in the reader's language, not the English one inside a Russian sentence; past 20 files,
    the rest counted with a Russian plural. The texts are the catalogue's, written out here by hand."""
    from dealer.i18n import error_text

    notes, empty = tmp_path / "notes.txt", tmp_path / "empty.pbn"
    notes.write_text("read me")
    empty.write_bytes(b"")
    with pytest.raises(FormatError) as info:
        read_files([notes, empty])
    lines = error_text(info.value, "ru").splitlines()
    assert lines[0] == "2 файла нельзя импортировать:"
    assert lines[1].startswith(f"  {notes}: формат '{notes}' не определить по расширению (известны: ")
    assert ".pbn" in lines[1] and ".lin" in lines[1] and "--from" not in lines[1]
    assert lines[2] == f"  {empty}: нет сдач: файл пуст"
    assert lines[3] == "ничего не импортировано"

    many = [tmp_path / f"bad{i}.xyz" for i in range(23)]
    for path in many:
        path.write_text("x")
    with pytest.raises(FormatError) as info:
        read_files(many)
    lines = error_text(info.value, "ru").splitlines()
    assert lines[0] == "23 файла нельзя импортировать:" and len(lines) == 1 + 20 + 1 + 1
    assert lines[21] == "  … и ещё 3 файла" and lines[22] == "ничего не импортировано"
    assert str(info.value).splitlines()[21] == "  … and 3 more files"
