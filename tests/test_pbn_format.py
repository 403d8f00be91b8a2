"""PBN: tolerant reading of real-file quirks, the exact PBN 2.1 export layout, and round trips."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import deals

from dealer.core import Deal, Seat, Vulnerability
from dealer.formats import by_name, by_path, load_all
from dealer.formats.base import BoardRecord, ExportMeta
from dealer.formats.pbn import MANDATORY_TAGS, PBN

BOARD1 = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT6543.AT.JT.T62 872.83.A542.QJ84"
DEAL1 = Deal.from_pbn(BOARD1)
BOARD2 = "N:AKQ984.KQT7..Q83 7.J63.AJT82.A754 532.854.Q43.KT62 JT6.A92.K9765.J9"
DEAL2 = Deal.from_pbn(BOARD2)


def test_registered() -> None:
    load_all()
    assert by_name("pbn") is PBN and by_path("x/ROUND01.PBN") is PBN


def test_real_file_quirks() -> None:
    text = (
        '% PBN 1.0\n% EXPORT\n%[Deal "N:not a deal"]\n'
        '{ a comment with [Deal "N:junk"] and\n\nan empty line }\n'
        '[Event"Cap Gemini"]\n[Site "Den Haag ^Holland; NL"]\n[Board "1"]\n[Dealer "N"]\n'
        '[Vulnerable "Love"]\n[Deal "'
        + BOARD1
        + '"] ; the deal\n[Room "Open"]\n[Result "^7"]\n[Auction "N"]\n1S Pass ;note\n*\n'
        '[Play "E"]\nC6 ^R CT S4 SA\n*\n\n'
        '[Event "#"]\n[Board "1"]\n[Vulnerable "-"]\n[Deal "#"]\n[Room "Closed"]\n\n'
        '[Board "2"]\n[Dealer "E"]\n[Vulnerable "Both"]\n[Deal "W:' + _from_west(DEAL2) + '"]\n'
    ).encode("latin-1") + '[Note "Jürgen"]\n'.encode("latin-1")
    result = PBN.read(text)
    assert result.problems == []
    r1, r2, r3 = result.records
    assert (r1.deal, r1.board, r1.dealer, r1.vulnerability) == (DEAL1, 1, Seat.N, Vulnerability.NONE)
    assert r1.tags["Event"] == "Cap Gemini" and r1.tags["Site"] == "Den Haag ^Holland; NL"
    assert r1.tags["Result"] == "^7" and r1.tags["Play"] == "E"
    assert (r2.deal, r2.tags["Event"], r2.tags["Room"], r2.vulnerability) == (
        DEAL1,
        "Cap Gemini",
        "Closed",
        Vulnerability.NONE,
    )
    assert (r3.deal, r3.board, r3.vulnerability, r3.dealer) == (DEAL2, 2, Vulnerability.ALL, Seat.E)
    assert r3.tags["Note"] == "Jürgen"
    lines = text.decode("latin-1").split("\n")
    assert r1.line == lines.index('[Event"Cap Gemini"]') + 1
    assert r3.line == lines.index('[Board "2"]') + 1


def _from_west(deal: Deal) -> str:
    return deal.to_pbn(Seat.W)[2:]


def test_crlf_missing_empty_line_unknown_hand_and_ten() -> None:
    partial = DEAL1.to_pbn(Seat.E)
    hands = partial[2:].split()
    hands[3] = "-"  # North unknown: filled from the other three
    hands[0] = hands[0].replace("T", "10")
    text = f'[Board "7"]\r\n[Deal "E:{" ".join(hands)}"]\r\n[Board "8"]\r\n[Deal "{BOARD2}"]\r\n'
    result = PBN.read(text.encode())
    assert [(r.board, r.deal) for r in result.records] == [(7, DEAL1), (8, DEAL2)]
    assert [r.line for r in result.records] == [1, 3]


def test_bad_deals_are_reported_not_dropped() -> None:
    text = (
        '[Board "1"]\n[Deal "N:AKQ.AKQ.AKQ.AKQ - - -"]\n\n[Board "2"]\n[Deal "N:'
        + BOARD1[2:].replace("A", "X", 1)
        + '"]\n\n[Board "3"]\n[Deal "N:broken]\n'
    )
    result = PBN.read(text.encode())
    assert result.records == []
    assert [(p.board, p.line) for p in result.problems] == [(1, 1), (2, 4), (3, 7)]
    assert "malformed Deal tag" in result.problems[2].reason


def test_non_latin1_text_is_written_as_utf8_with_bom() -> None:
    data = PBN.write([BoardRecord(DEAL1, 1, tags={"Event": "Чемпионат России"})])
    assert data.startswith(b"\xef\xbb\xbf% PBN 2.1\r\n")
    assert PBN.read(data).records[0].tags["Event"] == "Чемпионат России"
    assert PBN.write([BoardRecord(DEAL1, 1, tags={"Event": "Jürgen"})]).count("Jürgen".encode("latin-1")) == 1


def test_export_layout_is_pbn_21() -> None:
    recs = [
        BoardRecord(DEAL1, 1, tags={"DoubleDummyTricks": "0123456789abcdef0123"}),
        BoardRecord(
            DEAL2,
            2,
            tags={"OptimumResultTable": "Declarer;Denomination\\2R;Result\\2R\nN NT 9\nN S 10", "Event": 'Say "hi"'},
        ),
    ]
    data = PBN.write(recs, ExportMeta(event="Club", site="Moscow", date="2026.11.29"))
    assert data.endswith(b"\r\n") and b"\n" not in data.replace(b"\r\n", b"")
    lines = data.decode().split("\r\n")
    assert lines[:3] == ["% PBN 2.1", "% EXPORT", ""]
    game1 = lines[3:19]
    assert [line.split(" ", 1)[0][1:] for line in game1[:15]] == list(MANDATORY_TAGS)
    assert game1 == [
        '[Event "Club"]', '[Site "Moscow"]', '[Date "2026.11.29"]', '[Board "1"]',
        '[West "?"]', '[North "?"]', '[East "?"]', '[South "?"]',
        '[Dealer "N"]', '[Vulnerable "None"]', f'[Deal "{BOARD1}"]',
        '[Scoring ""]', '[Declarer ""]', '[Contract ""]', '[Result ""]',
        '[DoubleDummyTricks "0123456789abcdef0123"]',
    ]  # fmt: skip
    game2 = lines[20:]
    assert game2[0] == '[Event "Say \\"hi\\""]'
    assert game2[8:11] == ['[Dealer "E"]', '[Vulnerable "NS"]', f'[Deal "{DEAL2.to_pbn(Seat.E)}"]']
    assert game2[15:19] == ['[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]', "N NT 9", "N S 10", ""]
    back = PBN.read(data).records
    assert back[1].tags["OptimumResultTable"] == recs[1].tags["OptimumResultTable"]
    assert back[1].tags["Event"] == 'Say "hi"'


# printable ASCII, Latin-1 letters, Cyrillic (written as UTF-8 with a BOM); not the Latin-1 symbols 0x80-0xBF
# that could make Latin-1 bytes look like UTF-8 (see the module's docstring), and not the value "#" alone: PBN
# has no literal "#", it means "the previous game's value" (§4.8, read so in test_real_file_quirks)
tag_text = st.text(
    st.one_of(
        st.characters(min_codepoint=32, max_codepoint=126),
        st.characters(min_codepoint=0xC0, max_codepoint=0xFF),
        st.characters(min_codepoint=0x410, max_codepoint=0x44F),
    ),
    max_size=20,
).filter(lambda value: value != "#")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            deals(),
            st.integers(1, 999),
            st.sampled_from([None, *Seat]),
            st.sampled_from([None, *Vulnerability]),
            st.dictionaries(
                st.from_regex(r"[A-Z][A-Za-z]{0,10}", fullmatch=True).filter(
                    lambda t: t not in MANDATORY_TAGS and not t.endswith("Table")
                ),
                tag_text,
                max_size=3,
            ),
            tag_text,
        ),
        min_size=1,
        max_size=5,
    )
)
def test_write_then_read_round_trip(
    boards: list[tuple[Deal, int, Seat | None, Vulnerability | None, dict[str, str], str]],
) -> None:
    recs = [BoardRecord(d, b, s, v, tags={**t, "Event": e} if e.strip() else t) for d, b, s, v, t, e in boards]
    result = PBN.read(PBN.write(recs))
    assert result.problems == []
    assert len(result.records) == len(recs)
    for rec, back in zip(recs, result.records, strict=True):
        assert back.deal == rec.deal and back.board == rec.board
        assert rec.board is not None
        assert back.dealer == (rec.dealer if rec.dealer is not None else Seat((rec.board - 1) % 4))
        for name, value in rec.tags.items():
            assert back.tags[name] == value
