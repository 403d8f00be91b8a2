"""Malformed deal files and regulation files: truncated, bit-flipped, with garbage inserted or pieces dropped.

Readers and the importer may answer only with a ``DealerError`` or with reported problems; never with another
exception. Every record a reader returns holds a valid deal. A failed import leaves the bank exactly as it was
(same deal count, same ledger head), also when the bad file comes after good ones in the same import.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from bank_support import random_deal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealer.app.config import parse_config
from dealer.bank.store import SqliteBank
from dealer.bank_import.importer import import_files
from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.formats import formats, load_all
from dealer.formats.base import BoardRecord, ExportMeta
from dealer.regulation import parse_regulation

ROOT = Path(__file__).resolve().parents[1]
load_all()
READABLE = sorted(name for name, f in formats().items() if f.can_read and f.can_write)
EXAMPLES = int(os.environ.get("DEALER_FUZZ_EXAMPLES", "60"))  # raise it for a longer hunt
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def valid_file(fmt_name: str, seed: int = 7, n: int = 6) -> bytes:
    rng = random.Random(seed)
    boards = [BoardRecord(random_deal(rng), board=b) for b in range(1, n + 1)]
    return formats()[fmt_name].write(boards, ExportMeta(event="fuzz"))


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """A few mutations of ``data``: truncation, bit flips, inserted garbage, dropped or repeated slices."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "drop", "repeat", "byte"]))
        if not out:
            out += draw(st.binary(min_size=1, max_size=8))
            continue
        i = draw(st.integers(0, len(out) - 1))
        if kind == "truncate":
            del out[i:]
        elif kind == "flip":
            out[i] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            garbage = draw(st.one_of(st.binary(min_size=1, max_size=16), st.text(max_size=8).map(str.encode)))
            out[i:i] = garbage
        elif kind == "drop":
            del out[i : i + draw(st.integers(1, 64))]
        elif kind == "repeat":
            j = min(len(out), i + draw(st.integers(1, 64)))
            out[j:j] = out[i:j]
        else:
            out[i] = draw(st.integers(0, 255))
    return bytes(out)


@pytest.mark.parametrize("fmt_name", READABLE)
def test_valid_file_reads_back(fmt_name: str) -> None:
    """The seed the mutations start from is itself a good file (so the fuzz starts from real structure)."""
    result = formats()[fmt_name].read(valid_file(fmt_name), f"seed.{fmt_name}")
    assert len(result.records) == 6 and not result.problems


@pytest.mark.parametrize("fmt_name", READABLE)
def test_reader_survives_malformed_files(fmt_name: str) -> None:
    fmt = formats()[fmt_name]
    seed = valid_file(fmt_name)

    @FUZZ
    @given(mutated(seed))
    def check(data: bytes) -> None:
        try:
            result = fmt.read(data, f"fuzz.{fmt_name}")
        except DealerError:
            return
        for rec in result.records:
            assert isinstance(rec.deal, Deal)
            Deal.from_bytes(rec.deal.to_bytes())  # a complete, valid deal: 13 cards a seat
        for problem in result.problems:
            assert problem.reason

    check()


@pytest.mark.parametrize("fmt_name", READABLE)
def test_reader_survives_arbitrary_bytes(fmt_name: str) -> None:
    fmt = formats()[fmt_name]

    @FUZZ
    @given(st.binary(max_size=600))
    def check(data: bytes) -> None:
        try:
            result = fmt.read(data, f"junk.{fmt_name}")
        except DealerError as exc:
            assert str(exc)  # a refusal says what is wrong
            return
        assert all(len(rec.deal.to_bytes()) == 13 for rec in result.records)

    check()


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SqliteBank, Path]]:
    tmp = tmp_path_factory.mktemp("fuzzbank")
    b = SqliteBank(tmp / "bank.sqlite")
    good = tmp / "first.pbn"
    good.write_bytes(valid_file("pbn", seed=1, n=10))
    import_files(b, [good])
    try:
        yield b, tmp
    finally:
        b.close()


IMPORT_FORMATS = [name for name in ("pbn", "dlm", "dup", "lin") if name in READABLE]


@pytest.mark.parametrize("fmt_name", IMPORT_FORMATS)
def test_import_of_malformed_files_is_all_or_nothing(bank: tuple[SqliteBank, Path], fmt_name: str) -> None:
    b, tmp = bank
    seed = valid_file(fmt_name, seed=hash(fmt_name) & 0xFFFF)
    counter = iter(range(10**6))

    @settings(max_examples=max(5, EXAMPLES // 2), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(mutated(seed), st.booleans())
    def check(data: bytes, with_good_first: bool) -> None:
        k = next(counter)
        path = tmp / f"m{k}.{fmt_name}"
        path.write_bytes(data)
        paths = [path]
        if with_good_first:  # a good file first: nothing of it may stay when the bad one fails
            good = tmp / f"g{k}.pbn"
            good.write_bytes(valid_file("pbn", seed=1000 + k, n=3))
            paths = [good, path]
        before = (b.deal_count(), b.ledger_head())
        try:
            report = import_files(b, paths)
        except DealerError:
            assert (b.deal_count(), b.ledger_head()) == before  # nothing half-written
            return
        # accepted: every deal read is imported or reported as a duplicate; problems are named
        assert b.deal_count() == before[0] + report.imported
        for f in report.files:
            assert f.imported + len(f.duplicates) == f.records
            assert all(p.reason for p in f.problems)

    check()


def test_import_stops_before_writing_when_a_later_file_is_unreadable(bank: tuple[SqliteBank, Path]) -> None:
    b, tmp = bank
    good = tmp / "fresh.pbn"
    good.write_bytes(valid_file("pbn", seed=4242, n=5))
    missing = tmp / "absent.pbn"
    before = (b.deal_count(), b.ledger_head())
    with pytest.raises(DealerError, match="absent.pbn"):
        import_files(b, [good, missing])
    assert (b.deal_count(), b.ledger_head()) == before
    assert import_files(b, [good]).imported == 5  # the good file alone imports in full


REGULATION = (ROOT / "config" / "regulation.toml").read_bytes()
SERVICE = (ROOT / "config" / "service.toml").read_bytes()


@FUZZ
@given(mutated(REGULATION))
def test_regulation_parser_survives_malformed_files(data: bytes) -> None:
    try:
        parse_regulation(data.decode("utf-8", "replace"), "fuzz.toml")
    except DealerError as exc:
        assert "fuzz.toml" in str(exc)


@FUZZ
@given(mutated(SERVICE))
def test_service_config_parser_survives_malformed_files(data: bytes) -> None:
    try:
        parse_config(data.decode("utf-8", "replace"), "fuzz.toml")
    except DealerError as exc:
        assert "fuzz.toml" in str(exc)


# -- crashes the fuzz found: str.isdigit() accepts "²" and "³" (Latin-1 files hold them), int() does not --------


@pytest.mark.parametrize(
    ("fmt_name", "old", "new"),
    [
        ("csv", b'"2","E/NS"', '"²","E/NS"'.encode("latin-1")),
        ("dlm", b"Board 01=", "Board ²=".encode("latin-1")),
        ("dlm", b"From board=1", "From board=³".encode("latin-1")),
        ("dlm", b"014\r\n", "01²\r\n".encode("latin-1")),
    ],
)
def test_superscript_digits_are_problems_not_crashes(fmt_name: str, old: bytes, new: bytes) -> None:
    data = valid_file(fmt_name, n=2)
    assert old in data
    try:
        result = formats()[fmt_name].read(data.replace(old, new, 1), f"odd.{fmt_name}")
    except DealerError:
        return
    assert result.problems or len(result.records) == 2


def test_superscript_digits_in_a_deal_number_or_port_are_dealer_errors() -> None:
    from dealer.core.numbering import parse_deal_number
    from drivers.transport import open_transport

    with pytest.raises(DealerError, match="not a whole number"):
        parse_deal_number("12²")
    with pytest.raises(DealerError, match="PORT in 1..65535"):
        open_transport("tcp://localhost:8²")


def test_a_new_bank_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """Found in review: the bank file (every deal's cards, the draw secrets) was created world-readable."""
    b = SqliteBank(tmp_path / "shared" / "bank.sqlite")
    try:
        import_files(b, [_write(tmp_path / "x.pbn", valid_file("pbn", n=2))])
    finally:
        b.close()
    for f in (tmp_path / "shared").iterdir():
        if f.name.startswith("bank.sqlite"):
            assert f.stat().st_mode & 0o077 == 0, f"{f.name} is {oct(f.stat().st_mode)}"


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
