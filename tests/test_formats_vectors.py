"""FORMATS.md test vectors (Big Deal 1.2 sample), reproduced byte for byte, and read back."""

from __future__ import annotations

import pytest

from dealer.core import Deal, Seat, Vulnerability
from dealer.formats import BoardRecord, ExportMeta, by_name, load_all

load_all()

BOARD1 = Deal.from_pbn("N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84")
BOARD2 = Deal.from_pbn("N:AKQ984.KQT7..Q83 7.J63.AJT82.A754 532.854.Q43.KT62 JT6.A92.K9765.J9")
BRI1 = b"010406151923242629404145510216172122283233343538474903050910111214183031444852" + b" " * 32 + b"\0" * 18
BER1 = b"1231314433334312231422114142133222244241144314232413"
BHG1 = "ADFOSWXZcnosyBPQUVbfghiluwCEIJKLNRdervzGHMTYajkmpqtx"


def records(*deals: Deal) -> list[BoardRecord]:
    return [BoardRecord(d, i + 1) for i, d in enumerate(deals)]


def test_bri_vector() -> None:
    data = by_name("bri").write(records(BOARD1))
    assert data == BRI1
    assert [r.deal for r in by_name("bri").read(data).records] == [BOARD1]


def test_ber_vector() -> None:
    data = by_name("ber").write(records(BOARD1, BOARD2))
    assert data[:52] == BER1
    assert len(data) == 104
    assert [r.deal for r in by_name("ber").read(data).records] == [BOARD1, BOARD2]


def test_bhg_vector() -> None:
    data = by_name("bhg").write(records(BOARD1))
    assert data == ("\r\n" + BHG1 + "\r\n").encode()
    back = by_name("bhg").read(data).records
    assert [r.deal for r in back] == [BOARD1] and back[0].dealer is Seat.N


def test_dlm_vectors_and_header_checksum() -> None:
    data = by_name("dlm").write(records(BOARD1, BOARD2), ExportMeta(copies=1)).decode()
    lines = data.split("\r\n")
    assert "Board 01=biipkkobgdfamncjfhnmdodghc030" in lines
    assert "Board 02=admboclaeobkhhjhhpkfiomgfc020" in lines
    assert "Checksum=3" in lines
    assert lines[:10] == [
        "[Document]",
        "Headline=bridge-dealer",
        "Status=Show",
        "Duplicates=1",
        "From board=1",
        "To board=2",
        "Next board to duplimate=0",
        "PrintOuts=0",
        "Crypto key=0",
        "Checksum=3",
    ]
    assert sum(1 for line in lines if line.startswith("Board ")) == 99
    assert sum(1 for line in lines if line.startswith("Duplicates ")) == 99
    assert lines[lines.index("Duplicates 03=0") + 1].startswith("Board 03=aaaaaabffffffkkkkkklpppppp")
    back = by_name("dlm").read(data.encode())
    assert not back.problems
    assert [(r.board, r.deal) for r in back.records] == [(1, BOARD1), (2, BOARD2)]


def test_a_russian_dlm_headline_is_written_in_latin_letters_by_the_passport_rule() -> None:
    """The DLM file is Latin-1: «Кубок Москвы № 3 — «Щёлково»» was «????? ??????»; now the rule of Russian passports
    (ICAO Doc 9303), the expected text transliterated by hand."""
    meta = ExportMeta(event="Кубок Москвы № 3 — «Щёлково», Юрьев-Польский, Ёлка", copies=1)
    lines = by_name("dlm").write(records(BOARD1), meta).decode("latin-1").split("\r\n")
    assert lines[1] == 'Headline=Kubok Moskvy No. 3 - "Shchelkovo", Iurev-Polskii, Elka'


def test_dlm_sealed_status_and_checksum() -> None:
    data = by_name("dlm").write(records(BOARD1, BOARD2), ExportMeta(sealed=True, copies=4)).decode()
    assert "Status=Sealed" in data.split("\r\n")
    assert f"Checksum={4 ^ 1 ^ 2 ^ 0}" in data.split("\r\n")
    assert not by_name("dlm").read(data.encode()).problems


def test_dup_layout() -> None:
    data = by_name("dup").write(records(BOARD1, BOARD2))
    assert len(data) == 2 * 156
    assert data[:78] == BRI1[:78]
    assert data[78 : 78 + 68] == by_name("dge").write(records(BOARD1))[:68]
    assert data[146:156] == b"YN1  0 2  "
    assert [r.deal for r in by_name("dup").read(data).records] == [BOARD1, BOARD2]


def test_dge_layout() -> None:
    data = by_name("dge").write(records(BOARD1))
    north = b"\x06AJ9\x03K9542\x04Q\x05AK93"
    east = b"\x06K\x03QJ76\x04K98763\x0575"
    assert data.startswith(north + east)
    assert len(data) == 128 and data.endswith(b"\0" * 60)


def test_csv_layout() -> None:
    data = by_name("csv").write(records(BOARD1, BOARD2)).decode()
    first = data.split("\r\n")[0]
    assert first.startswith('"AJ9","K9542","Q","AK93","K","QJ76","K98763","75",')
    assert first.endswith('"1","N/-"')
    assert data.split("\r\n")[1].endswith('"2","E/NS"')
    assert '"AKQ984","KQT7","","Q83"' in data


@pytest.mark.parametrize("name", ["bri", "dge", "dup", "ber", "bhg", "dlm", "csv", "json"])
def test_law2_on_read(name: str) -> None:
    deals = [Deal.from_rank(i * 7919) for i in range(1, 6)]
    back = by_name(name).read(by_name(name).write(records(*deals))).records
    assert [r.board for r in back] == [1, 2, 3, 4, 5]
    assert [r.vulnerability for r in back][:4] == [
        Vulnerability.NONE,
        Vulnerability.NS,
        Vulnerability.EW,
        Vulnerability.ALL,
    ]
    assert [r.dealer for r in back] == [Seat.N, Seat.E, Seat.S, Seat.W, Seat.N]
