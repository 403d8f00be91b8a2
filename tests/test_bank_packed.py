"""The packed batch of bank format 3 (``dealer.bank.packed``): round trip of any batch, bytes by hand for small
ones, and a damaged value refused (never read as another batch)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealer.bank import packed
from dealer.bank.errors import BankError

sources = st.tuples(st.integers(0, 5000), st.none() | st.integers(0, 10**6), st.none() | st.integers(0, 10**9))
batches = st.integers(0, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.binary(min_size=13, max_size=13), min_size=n, max_size=n),
        st.lists(st.binary(min_size=16, max_size=16), min_size=n, max_size=n),
        st.lists(sources, min_size=n, max_size=n),
    )
)


@given(batches)
def test_any_batch_packs_and_unpacks_to_itself(batch: tuple[list[bytes], list[bytes], list[packed.Source]]) -> None:
    cards, salts, srcs = batch
    blob = packed.pack(cards, salts, srcs)
    assert packed.unpack(blob) == (cards, salts, srcs)
    assert packed.count(blob) == len(cards) and packed.cards_of(blob) == b"".join(cards)


@given(batches, st.data())
def test_a_cut_or_lengthened_batch_is_refused(
    batch: tuple[list[bytes], list[bytes], list[packed.Source]], data: st.DataObject
) -> None:
    blob = packed.pack(*batch)
    cut = data.draw(st.integers(0, len(blob) - 1))
    with pytest.raises(BankError):
        packed.unpack(blob[:cut])
    with pytest.raises(BankError):
        packed.unpack(blob + b"\x00")


def test_the_bytes_of_a_small_batch_by_hand() -> None:
    card1, card2 = bytes(range(13)), bytes(range(13, 26))
    salt1, salt2 = b"\xaa" * 16, b"\xbb" * 16
    blob = packed.pack([card1, card2], [salt1, salt2], [(3, 7, 200), (300, None, 190)])
    # count 2; the cards; the salts; (3, board 7 -> 8, line 200: zigzag(200) + 1 = 401 = 0x91 0x03);
    # (300 = 0xac 0x02, no board -> 0, line 190: delta -10 -> zigzag 19 + 1 = 20 = 0x14)
    assert blob == b"\x02" + card1 + card2 + salt1 + salt2 + b"\x03\x08\x91\x03" + b"\xac\x02\x00\x14"
    assert packed.pack([], [], []) == b"\x00"
    assert packed.unpack(b"\x01" + card1 + salt1 + b"\x00\x00\x00") == ([card1], [salt1], [(0, None, None)])


@pytest.mark.parametrize(
    "blob",
    [
        b"",  # no count
        b"\x80",  # a count that runs past the end
        b"\x80\x00",  # a count not in its shortest form
        b"\x01" + bytes(29) + b"\x00\x00",  # a source cut
        b"\x01" + bytes(29) + b"\x00\x00\x02",  # line 0 - 1 (zigzag 1, + 1): negative
    ],
)
def test_a_damaged_batch_is_refused(blob: bytes) -> None:
    with pytest.raises(BankError):
        packed.unpack(blob)
