"""Round trip of every format on random deals, and strict readers that name board and offset."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import deals as shared_deals

from dealer.core import DEAL_COUNT, Deal, board_dealer, board_vulnerability
from dealer.formats import BoardRecord, ExportMeta, FormatError, by_name, by_path, load_all

load_all()

OURS = ["dlm", "dup", "bri", "dge", "ber", "bhg", "csv", "json"]
ALL = [*OURS, "pbn", "lin"]  # pbn and lin come from branch bank

deals = shared_deals()


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=25, deadline=None)
@given(st.lists(deals, min_size=1, max_size=12))
def test_round_trip(name: str, drawn: list[Deal]) -> None:
    fmt = by_name(name)
    records = [BoardRecord(d, i + 1) for i, d in enumerate(drawn)]
    result = fmt.read(fmt.write(records, ExportMeta(event="Test")), source=f"x.{name}")
    assert not result.problems
    assert [r.deal for r in result.records] == drawn
    assert [r.board for r in result.records] == list(range(1, len(drawn) + 1))
    assert [r.dealer for r in result.records] == [board_dealer(i + 1) for i in range(len(drawn))]
    assert [r.vulnerability for r in result.records] == [board_vulnerability(i + 1) for i in range(len(drawn))]


@pytest.mark.parametrize("name", ["dlm", "dup", "csv", "json", "pbn", "lin"])
@settings(max_examples=20, deadline=None)
@given(st.lists(deals, min_size=1, max_size=8), st.integers(min_value=2, max_value=60))
def test_round_trip_keeps_board_numbers(name: str, drawn: list[Deal], first: int) -> None:
    """Formats that carry board numbers keep a session continuing from board ``first``."""
    fmt = by_name(name)
    records = [BoardRecord(d, first + i) for i, d in enumerate(drawn)]
    if name == "dlm" and first + len(drawn) - 1 > 99:
        with pytest.raises(FormatError, match=r"1\.\.99"):
            fmt.write(records)
        return
    back = fmt.read(fmt.write(records)).records
    assert [(r.board, r.deal, r.dealer) for r in back] == [
        (first + i, d, board_dealer(first + i)) for i, d in enumerate(drawn)
    ]


def _records(n: int) -> list[BoardRecord]:
    rng = random.Random(n)
    return [BoardRecord(Deal.from_rank(rng.randrange(DEAL_COUNT)), i + 1) for i in range(n)]


@pytest.mark.parametrize(("name", "size"), [("bri", 128), ("dge", 128), ("dup", 156)])
def test_binary_record_size_is_checked(name: str, size: int) -> None:
    data = by_name(name).write(_records(3))
    with pytest.raises(FormatError, match=rf"{size}-byte .* at byte {2 * size}"):
        by_name(name).read(data[:-5], source="cut")


def test_bri_bad_card_names_board_and_offset() -> None:
    data = bytearray(by_name("bri").write(_records(3)))
    data[128 + 10 : 128 + 12] = b"77"
    result = by_name("bri").read(bytes(data))
    assert [r.board for r in result.records] == [1, 3]
    (problem,) = result.problems
    assert problem.board == 2 and problem.offset == 128
    assert "board 2, byte 138" in problem.reason and "77" in problem.reason


def test_bri_duplicate_card_is_a_problem() -> None:
    data = bytearray(by_name("bri").write(_records(1)))
    data[2:4] = data[0:2]
    (problem,) = by_name("bri").read(bytes(data)).problems
    assert "appears twice" in problem.reason and "byte 2" in problem.reason


def test_dup_parts_must_agree() -> None:
    a, b = _records(2)
    data = bytearray(by_name("dup").write([a, b]))
    data[78:146] = by_name("dge").write([b])[:68]
    result = by_name("dup").read(bytes(data))
    assert [r.board for r in result.records] == [2]
    assert "different deals" in result.problems[0].reason and result.problems[0].offset == 0


def test_dup_numbers_from_lowest_board() -> None:
    recs = [BoardRecord(r.deal, 17 + i) for i, r in enumerate(_records(4))]
    data = by_name("dup").write(recs, ExportMeta(copies=3))
    assert data[146:156] == b"YN17 3 20 "
    assert [r.board for r in by_name("dup").read(data).records] == [17, 18, 19, 20]


def test_dlm_bad_board_checksum() -> None:
    text = by_name("dlm").write(_records(3)).decode()
    lines = text.split("\r\n")
    i = next(k for k, line in enumerate(lines) if line.startswith("Board 02="))
    good = lines[i]
    lines[i] = good[:-3] + f"{(int(good[-3:]) + 1) % 1000:03d}"
    result = by_name("dlm").read("\n".join(lines).encode())
    assert [r.board for r in result.records] == [1, 3]
    (problem,) = result.problems
    assert problem.board == 2 and problem.line == i + 1 and "checksum" in problem.reason


def test_dlm_header_checksum_and_tolerance() -> None:
    text = by_name("dlm").write(_records(2)).decode().replace("Checksum=3", "Checksum=9")
    # real files vary: LF line ends, a comment, keys in another case and order
    text = "; made elsewhere\n" + text.replace("\r\n", "\n").replace("From board=1", "FROM BOARD = 1")
    result = by_name("dlm").read(text.encode())
    assert len(result.records) == 2
    assert result.problems[0].line is not None and "header checksum is 9, expected 3" in result.problems[0].reason


def test_dlm_missing_key() -> None:
    text = by_name("dlm").write(_records(2)).decode().replace("To board=2\r\n", "")
    with pytest.raises(FormatError, match="no 'to board' line"):
        by_name("dlm").read(text.encode(), source="s.dlm")


def test_dlm_refuses_board_100() -> None:
    with pytest.raises(FormatError, match="board 100 does not fit"):
        by_name("dlm").write([BoardRecord(Deal.from_rank(5), 100)])


def test_ber_tolerates_line_breaks_and_rejects_short_record() -> None:
    data = by_name("ber").write(_records(2))
    assert len(by_name("ber").read(data[:52] + b"\r\n" + data[52:] + b"\r\n").records) == 2
    with pytest.raises(FormatError, match="board 2, byte 103: the file ends"):
        by_name("ber").read(data[:-1])


def test_bhg_line_length_checked() -> None:
    data = by_name("bhg").write(_records(2))
    with pytest.raises(FormatError, match=r"line 3 .board 2.*51 characters"):
        by_name("bhg").read(data[:-3] + b"\r\n")


def test_bhg_refuses_boards_a_reader_would_misnumber() -> None:
    with pytest.raises(FormatError, match="consecutively from 1"):
        by_name("bhg").write([BoardRecord(r.deal, 2 + i) for i, r in enumerate(_records(2))])


def test_csv_tolerant_reader() -> None:
    deal = _records(1)[0].deal
    row = by_name("csv").write([BoardRecord(deal, 5)]).decode().strip()
    cells = row.replace('"', "").split(",")
    cells = [c if c else "-" for c in cells[:16]] + cells[16:]
    text = "N S,N H,N D,N C,E S,E H,E D,E C,S S,S H,S D,S C,W S,W H,W D,W C,Board,Dealer/Vul\n" + ";".join(cells)
    text = text.replace(",", ";").replace("T", "10")
    (rec,) = by_name("csv").read(text.encode()).records
    assert rec.deal == deal and rec.board == 5 and rec.dealer == board_dealer(5)


def test_json_canonical_must_match() -> None:
    data = by_name("json").write(_records(1)).decode()
    import json

    doc = json.loads(data)
    doc["boards"][0]["canonical"] = Deal.from_rank(1).to_bytes().hex()
    (problem,) = by_name("json").read(json.dumps(doc).encode()).problems
    assert problem.board == 1 and "does not match" in problem.reason
    doc["boards"][0]["canonical"] = "00" * 13
    (problem,) = by_name("json").read(json.dumps(doc).encode()).problems
    assert "is not a deal" in problem.reason and "hand N has 52 cards" in problem.reason
    with pytest.raises(FormatError, match="line 1, column"):
        by_name("json").read(b"{oops")


def test_registry_by_path() -> None:
    for name in OURS:
        ext = by_name(name).extensions[0]
        assert by_path(f"session/file.{ext.upper()}").name == name
    with pytest.raises(FormatError, match=r"'noext' from its extension \(known: .*\.lin, \.pbn\)"):
        by_path("noext")


def test_documented_json_example_reads() -> None:
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text(encoding="utf-8")
    example = re.search(r"```json\n(.*?)```", doc, re.S)
    assert example is not None
    (rec,) = by_name("json").read(example.group(1).encode()).records
    assert rec.board == 1 and rec.deal.to_pbn().startswith("N:AJ9.K9542.Q.AK93")
