"""LIN: the FORMATS.md layout, BBO records with other keys skipped, and round trips."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import deals
from test_pbn_format import BOARD1, DEAL1, DEAL2

from dealer.core import Deal, Seat, Vulnerability
from dealer.formats import by_path, load_all
from dealer.formats.base import BoardRecord
from dealer.formats.lin import LIN, parse_md


def test_writer_matches_formats_md_layout() -> None:
    data = LIN.write([BoardRecord(DEAL1, 1), BoardRecord(DEAL2, 2)])
    first, second = data.decode().splitlines()
    assert first == ("qx|o1|md|3SQT6543HATDJTCT62,S872H83DA542CQJ84,SAJ9HK9542DQCAK93|rh||ah|Board 1|sv|0|pg||")
    assert second.startswith("qx|o2|md|4") and second.endswith("|ah|Board 2|sv|n|pg||")
    load_all()
    assert by_path("deals.lin") is LIN
    assert BOARD1.startswith("N:AJ9")


def test_reads_bbo_record_skipping_unknown_keys() -> None:
    text = (
        "pn|Alice,Bob,Carol,Dave|st||qx|c12|md|1SQT6543HATDJTCT62,S872H83DA542CQJ84,SAJ9HK9542DQCAK93,SKHQJ76DK98763C75|"
        "rh||ah|Board 12|sv|b|mb|1S|an|Alert!|mb|p|pc|SA|pc|S2|nt|hello|zz|unknown key|\n"
        "qx|o13|md|2S872H83DA542CQJ84,SAJ9HK9542DQCAK93,SKHQJ76DK98763C75,|sv|e|\n"
        "qx|o14|md|9S872|sv|0|\n"
    )
    result = LIN.read(text.encode())
    a, b = result.records
    assert (a.deal, a.board, a.dealer, a.vulnerability, a.line) == (DEAL1, 12, Seat.S, Vulnerability.ALL, 1)
    assert (b.board, b.dealer, b.vulnerability, b.line) == (13, Seat.W, Vulnerability.EW, 2)
    assert b.deal.hand(Seat.S) == DEAL1.hand(Seat.W) and b.deal.hand(Seat.N) == DEAL1.hand(Seat.E)
    assert [(p.board, p.line) for p in result.problems] == [(14, 3)]
    assert "1..4" in result.problems[0].reason


def test_parse_md_errors_name_the_problem() -> None:
    for md, fragment in [
        ("3SAK,SQ,SJ", "has 2 cards"),
        ("5SAK", "1..4"),
        ("3S2X", "expected 3 or 4"),
        ("3S2X,S3,S4", "unexpected"),
    ]:
        try:
            parse_md(md)
        except ValueError as exc:
            assert fragment in str(exc)
        else:
            raise AssertionError(md)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(deals(), st.integers(1, 400), st.sampled_from(list(Seat)), st.sampled_from(list(Vulnerability))),
        min_size=1,
        max_size=6,
    )
)
def test_write_then_read_round_trip(boards: list[tuple[Deal, int, Seat, Vulnerability]]) -> None:
    recs = [BoardRecord(d, b, s, v) for d, b, s, v in boards]
    back = LIN.read(LIN.write(recs))
    assert back.problems == []
    assert [(r.deal, r.board, r.dealer, r.vulnerability) for r in back.records] == [
        (r.deal, r.board, r.dealer, r.vulnerability) for r in recs
    ]
