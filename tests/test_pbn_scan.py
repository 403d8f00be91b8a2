"""The import's fast PBN scan against two independent readers: ``PBN.read`` (the strict, full reader) on real and
generated files, and endplay's PBN parser on the real championship files it can read."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from bank_support import random_deal
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import deals

from dealer.bank import compact
from dealer.bank.errors import BankError
from dealer.core import Deal, Seat
from dealer.formats.base import MAX_LINE_CHARS as LIMIT
from dealer.formats.base import FormatError, may_hold_a_long_line
from dealer.formats.pbn import PBN, decode_text
from dealer.formats.pbn_scan import _LONG_LINE_B, DealCache, ScannedDeals, _scan_text, canonical_of, scan
from dealer.integrity.ledger import Entry, EntryKind, canonical_json

SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pbn"
HALF = LIMIT // 2


def _files() -> list[Path]:
    if not SAMPLE.is_dir():
        return []
    return sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn")


def _same_as_reader(data: bytes) -> None:
    """The scan (its byte path, or what that leaves to the text path), and the text path alone on every file, read
    the games ``PBN.read`` reads: the same lines, boards and deals, the same problems."""
    full = PBN.read(data)
    expected = [(r.line, r.board, r.deal.to_bytes()) for r in full.records]
    for fast in (scan(data), _scan_text(decode_text(data, normalise=False), DealCache())):
        assert list(zip(fast.lines, fast.boards, fast.deals, strict=True)) == expected
        assert fast.problems == full.problems


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is not beside this checkout")
def test_real_files_scan_as_the_full_reader_reads_them() -> None:
    files = _files()
    assert len(files) > 50
    for path in files:
        _same_as_reader(path.read_bytes())


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is not beside this checkout")
def test_archive_like_files_scan_as_the_full_reader_reads_them_mostly_on_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's varied corpus (commentary, auctions and play, tag orders, encodings, BOMs, CRLF, several events
    a file, what some publishers' programs write): every file as the strict reader reads it, on both paths, and the
    reader's own token scan needed for very few of them."""
    from bench.corpus import make_varied
    from dealer.formats import pbn_scan

    slow: list[int] = []
    by_games = pbn_scan._by_games

    def counted(text: str, cache: DealCache) -> ScannedDeals:
        slow.append(len(text))
        return by_games(text, cache)

    decoded: list[int] = []
    scan_text = pbn_scan._scan_text

    def text_path(text: str, cache: DealCache) -> ScannedDeals:
        decoded.append(len(text))
        return scan_text(text, cache)

    files = make_varied(_files(), tmp_path, 40, seed=5)
    monkeypatch.setattr(pbn_scan, "_by_games", counted)
    monkeypatch.setattr(pbn_scan, "_scan_text", text_path)
    for path in files:
        scan(path.read_bytes())
    monkeypatch.undo()
    for path in files:
        _same_as_reader(path.read_bytes())
    # the publishers' ways (DOS paths in "%" lines, escaped quotes, brackets in names, two tags on a line, indented
    # tags, lone CR) as the rest: only a commentary of two paragraphs right after a ``[Table "…"]`` tag needs the
    # reader's token scan (the reader takes the lines after a "…Table" tag as its rows, a "{" there included)
    assert len(slow) <= len(files) // 20, f"{len(slow)} of {len(files)} files took the reader's token scan"
    # commentary, BOMs, Latin-1 and CRLF are read on the file's bytes: the text path only for the odd file
    assert len(decoded) <= len(files) // 10, f"{len(decoded)} of {len(files)} files were decoded"


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is not beside this checkout")
def test_real_files_give_the_deals_endplay_reads() -> None:
    from endplay.parsers import pbn as ep_pbn

    compared = 0
    for path in _files():
        data = path.read_bytes()
        try:
            boards = ep_pbn.load(io.StringIO(data.decode("latin-1")))
        except Exception:  # endplay refuses many real files (non-numeric Board, "^" escapes): ours reads them
            continue
        theirs = [Deal.from_pbn(b.deal.to_pbn()).to_bytes() for b in boards]
        assert scan(data).deals == theirs, path
        compared += len(theirs)
    assert compared > 1000


@given(deals(), st.sampled_from(list(Seat)))
def test_canonical_of_is_the_deals_canonical_form(deal: Deal, first: Seat) -> None:
    assert canonical_of(deal.to_pbn(first)) == deal.to_bytes()


def test_after_enough_holdings_learnt_one_by_one_every_one_is_known_and_deals_read_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dealer.formats import pbn_scan

    monkeypatch.setattr(pbn_scan, "_HOLDINGS", [{}, {}, {}, {}])  # nothing learnt yet
    rng = random.Random(12)
    dealt = [random_deal(rng) for _ in range(400)]
    for deal in dealt:
        assert canonical_of(deal.to_pbn(Seat.E)) == deal.to_bytes()
    assert all(len(known) >= 8192 for known in pbn_scan._HOLDINGS)  # every suit passed its bound: all put in
    text = dealt[0].to_pbn(Seat.N)
    hands = text[2:].split()
    suits = hands[0].split(".")
    suits[0] = suits[0][::-1]  # a holding written in another order: not among those put in, learnt when met
    assert canonical_of(text[:2] + " ".join([".".join(suits), *hands[1:]])) == dealt[0].to_bytes()


def test_canonical_of_leaves_everything_unusual_to_the_reference_parser() -> None:
    rng = random.Random(5)
    text = random_deal(rng).to_pbn()
    hands = text[2:].split()
    assert canonical_of(text.lower()) is None
    assert canonical_of("N:" + " ".join([hands[0], hands[0], hands[2], hands[3]])) is None  # a hand twice
    assert canonical_of("N:" + " ".join([hands[0], hands[1], hands[2], "-"])) is None
    assert canonical_of("X:" + text[2:]) is None
    swapped = hands[0].replace("A", "Z", 1) if "A" in hands[0] else hands[0].replace("K", "Z", 1)
    assert canonical_of("N:" + " ".join([swapped, *hands[1:]])) is None


@given(
    st.integers(0, 10**4),
    st.integers(0, 10**9),
    st.one_of(st.none(), st.integers(0, 10**20)),
    st.one_of(st.none(), st.integers(1, 10**7)),
    st.integers(0, 10**6),
    st.integers(1, 10**6),
    st.binary(min_size=32, max_size=32),
)
def test_a_compact_deals_entry_bytes_are_the_ledger_entrys_canonical_bytes(
    position: int, batch: int, board: int | None, line: int | None, index: int, deal_id: int, com: bytes
) -> None:
    source = compact.compact_source(position, board, line)
    assert compact.parse_source(source) == (position, board, line)
    public: dict[str, object] = {"batch": batch, "file_index": position, "kind": "import", "shown": 0}
    public.update({k: v for k, v in (("board", board), ("line", line)) if v is not None})
    src = compact.src_json(batch, source)
    assert src == canonical_json(public).decode()
    assert compact.public_source(batch, source) == public
    ts = "2026-11-30T18:00:00.123456+00:00"
    prev = "cd" * 32
    expected = Entry(index, EntryKind.DEAL, ts, prev, {"c": com.hex(), "id": deal_id, "src": public})
    assert compact.entry_body(index, f'"{ts}"', prev, com, deal_id, src) == expected.encode()


@pytest.mark.parametrize("text", ["", "1", "1,2", "1,2,3,4", ",2,3", "01,2,3", "1,-2,3", "1,2,x", "1,２,3", "{}"])
def test_a_compact_source_in_any_other_form_is_refused(text: str) -> None:
    with pytest.raises(BankError):
        compact.parse_source(text)


# -- generated files: every path of the reader, the scan's fast one and its fall-backs -----------------------

_rng_deals = [random_deal(random.Random(k)) for k in range(6)]


@st.composite
def _deal_value(draw: st.DrawFn) -> str:
    deal = draw(st.sampled_from(_rng_deals))
    first = draw(st.sampled_from(list(Seat)))
    text = deal.to_pbn(first)
    kind = draw(st.sampled_from(["plain", "plain", "plain", "lower", "ten", "unknown", "bad", "hash", "short"]))
    if kind == "lower":
        return text.lower()
    if kind == "ten":
        return text.replace("T", "10")
    if kind == "unknown":
        hands = text[2:].split()
        hands[draw(st.integers(0, 3))] = "-"
        return text[:2] + " ".join(hands)
    if kind == "bad":
        return text[:-1] + text[2]  # a card twice, one missing
    if kind == "hash":
        return "#"
    if kind == "short":
        return text[:20]
    return text


_OTHER_TAGS = ["Event", "Site", "Dealer", "Vulnerable", "West", "Declarer", "Table", "OptimumResultTable", "Room"]


@st.composite
def _game(draw: st.DrawFn) -> list[str]:
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(f'[Board "{draw(st.sampled_from(["1", "2", "17", "#", "x12", "", "EW 10"]))}"]')
    for name in draw(st.lists(st.sampled_from(_OTHER_TAGS), max_size=4)):
        value = draw(st.sampled_from(["N", "#", "None", "a b", "x;y", "50%", "IMP"]))
        lines.append(f'[{name} "{value}"]')
        if name.endswith("Table") and draw(st.booleans()):
            lines.append("N 3NT 9")
    if draw(st.integers(0, 9)) > 0:
        space = draw(st.sampled_from([" ", "", "  ", "\t"]))
        lines.append(f'[Deal{space}"{draw(_deal_value())}"]')
    extra = draw(
        st.lists(
            st.sampled_from(
                [
                    "Pass 1NT Pass 3NT",
                    "{a comment}",
                    '{a comment\n\nwith an empty line [Deal "N:- - - -"]}',
                    '; a comment [Board "9"]',
                    "% a directive",
                    "[Deal N:AKQ]",
                    "[Dealer N]",
                    '[deal "x"]',
                    '[ Deal "N:- - - -"]',
                    '[Event "a "quoted" name"]',
                    '[Note "back\\\\slash \\"q\\""]',
                    'text [Board "4"] in a line',
                    '[Board "3"]',
                    "*",
                    "{a comment over\ntwo lines}",
                    '{a comment [Deal "N:- - - -"] with a tag in it}',
                    "{an unclosed comment",
                    '{c}[Board "5"]',
                    '[Event "a{b"]',
                    '[Site "a;b"]',
                    '[Event "Deal of the day"] ; a board',
                    "1C {alert: a deal} 1H ; a board",
                    '%[Deal "N:- - - -"]',
                    '[Table "2"]\n{rows\n[Deal "N:- - - -"]\nend}',
                    '[Table "2"]\n{a comment\nof two lines}',
                    '[ScoreTable "Pair;Score"]\n1 {top} 50\n2 ; 40',
                    '[Table "3"]\n{a\n\nb}',
                    "{a; b} ; c {d}",
                    '[Event "x"] {c} ; d',
                    '[Site "a;b"] {c}',
                    "{a\nb} ; c {d}",
                    "% a {directive}",
                    "%{x}",
                    "{Sørensen: the deal of the board}",
                    "; Łukasz {",
                    '[West "Gaëlle"] ; Zoë',
                    "{x}{y}\n{z",
                    '[Deal "N:é"]',
                    '[Board "١٢"]',
                    '[Board "12é"]',
                    "% C:\\PBN\\EURO97.PBN",
                    "{NS 620 \\ EW -620}",
                    "; a \\ b",
                    '  [West "indented"]',
                    '\t[Board "6"]',
                    '  [Deal "N:- - - -"]',
                    '[Dealer "N"] [Vulnerable "None"]',
                    '[Event "x"][Board "7"]',
                    '[Board "8"] [Deal "N:- - - -"]',
                    '[Event "Open [A]"]',
                    '[Event "[Deal \\"N:- - - -\\"]"]',
                    '[Event "x ][Board"]',
                    '[Event "the \\"Open\\""] ; c',
                    '[Event "a\\" [Deal "N:- - - -"]',
                    '[Event "a\\"]',
                    '[Board "9\\\\"]',
                    '[Deal "N:\\"-"]',
                    '[West "a"] x [Board "10"]',
                    '[West "a"] text',
                    '%[Event "x"] [Board "11"]',
                    'x [Event "y"]',
                ]
            ),
            max_size=2,
        )
    )
    for item in extra:
        lines.insert(draw(st.integers(0, len(lines))), item)
    return lines


@given(
    st.lists(_game(), max_size=8),
    st.lists(st.sampled_from(["\n\n", "\n", "\n \n", "\n\n\n"]), min_size=8, max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
    st.sampled_from(["utf-8", "utf-8-bom", "latin-1", "bom-latin-1"]),
)
@settings(max_examples=1200, deadline=None)
def test_generated_files_scan_as_the_full_reader_reads_them(
    games: list[list[str]], gaps: list[str], eol: str, header: bool, encoding: str
) -> None:
    """Every shape of game in every encoding the reader takes: UTF-8 with or without its mark, Latin-1, and a
    mark before Latin-1 bytes (not UTF-8 then: the reader keeps the mark as three Latin-1 characters)."""
    parts = ["% PBN 2.1\n% EXPORT\n"] if header else []
    for k, game in enumerate(games):
        parts.append("\n".join(game))
        parts.append(gaps[k])
    text = "".join(parts).replace("\n", eol)
    # Latin-1 ends with an "é" alone: not UTF-8
    data = text.encode("latin-1", errors="replace") + b"\xe9" if encoding.endswith("latin-1") else text.encode()
    _same_as_reader((b"\xef\xbb\xbf" if "bom" in encoding else b"") + data)


def test_a_shared_cache_gives_each_file_the_same_deals() -> None:
    rng = random.Random(9)
    from dealer.formats.base import BoardRecord

    one = PBN.write([BoardRecord(random_deal(rng), k + 1) for k in range(5)])
    cache = DealCache()
    first = scan(one, cache=cache)
    assert scan(one, cache=cache).deals == first.deals == scan(one).deals
    assert len(cache.known) == 5


# -- the long-line check: a cheap look first, the exact search only where a line may be too long ----------------


@given(
    st.lists(
        st.sampled_from([0, 1, 80, HALF - 1, HALF, HALF + 1, LIMIT - 1, LIMIT, LIMIT + 1, 2 * LIMIT + 3]),
        min_size=1,
        max_size=5,
    ),
    st.sampled_from([b"\n", b"\r\n"]),
    st.integers(0, 3),
)
@settings(max_examples=300, deadline=None)
def test_the_cheap_look_never_misses_a_line_over_the_limit(lengths: list[int], eol: bytes, shift: int) -> None:
    """Lines of lengths around the limit and its half, anywhere: where the exact search (the reader's own
    pattern) finds a line over the limit, the cheap look says "may hold one"."""
    data = b"x" * shift + eol + eol.join(b"y" * n for n in lengths)
    text = data.decode()  # the text path's check looks the same way at the decoded text
    if _LONG_LINE_B.search(data) is not None:
        assert may_hold_a_long_line(data) and may_hold_a_long_line(text)
    if max(lengths) < HALF - 2 * len(eol) - shift:  # no line close to the limit: no exact search needed
        assert not may_hold_a_long_line(data) and not may_hold_a_long_line(text)


@pytest.mark.parametrize("at", [0, 1, 7])
def test_a_line_over_the_limit_is_refused_as_the_reader_refuses_it(at: int) -> None:
    games = [f'[Board "{k + 1}"]\n[Deal "{random_deal(random.Random(k)).to_pbn(Seat.N)}"]\n' for k in range(8)]
    games.insert(at, "% " + "z" * LIMIT + "\n")
    data = "\n".join(games).encode()
    with pytest.raises(FormatError) as by_reader:
        PBN.read(data)
    with pytest.raises(FormatError) as by_scan:
        scan(data)
    assert str(by_scan.value) == str(by_reader.value)
    shorter = data.replace(b"z" * LIMIT, b"z" * (LIMIT - 2))  # "% " and the z's: exactly the limit, allowed
    _same_as_reader(shorter)


@pytest.mark.parametrize(("tail", "games"), [(b"", 2), (b"\xe9", 1)])
def test_a_byte_order_mark_is_dropped_only_from_utf8(tail: bytes, games: int) -> None:
    """After a UTF-8 mark, a first line ``% x {`` is a "%" line (the brace in it opens nothing) when the rest is
    UTF-8; when it is not (an "é" in Latin-1), the reader keeps the mark as three characters: the line is no "%"
    line then, and its brace opens a comment that hides the first game."""
    deal = [random_deal(random.Random(k)).to_pbn(Seat.N) for k in range(2)]
    data = (
        b"\xef\xbb\xbf% x {\n"
        + f'[Board "1"]\n[Deal "{deal[0]}"]\n}}\n\n[Board "2"]\n[Deal "{deal[1]}"]\n'.encode()
        + tail
    )
    assert len(scan(data)) == games
    _same_as_reader(data)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_values_beyond_ascii_are_read_on_the_text_path_as_the_reader_reads_them(
    encoding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board numbered in other digits, a board with an accent, a deal value that is not one: the file's bytes
    leave them to the text path, which decodes them from its text (not by the reader's token scan)."""
    from dealer.formats import pbn_scan

    deal = [random_deal(random.Random(k)).to_pbn(Seat.N) for k in range(2)]
    board = "١٢" if encoding == "utf-8" else "12é"
    text = f'[Board "{board}"]\n[Deal "{deal[0]}"]\n\n[Board "#"]\n[Deal "N:é {deal[1][2:]}"]\n\n[Deal "{deal[1]}"]\n'
    data = text.encode(encoding)
    slow: list[str] = []
    monkeypatch.setattr(pbn_scan, "_by_games", lambda text, cache: slow.append(text))
    fast = scan(data)
    assert not slow
    assert (fast.lines, fast.boards) == ([1, 7], [12, None])
    assert [(p.line, p.board, p.reason.startswith("Deal 'N:é ")) for p in fast.problems] == [(4, 12, True)]
    monkeypatch.undo()
    _same_as_reader(data)
