"""The sans-I/O codec: encode/decode identity, never raising on any bytes, resynchronisation, error reasons."""

from __future__ import annotations

import dataclasses
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.cards import pack_seats, unpack_seats
from firmware_protocol.codec import (
    MAX_ENCODED,
    MAX_FRAME,
    MAX_PAYLOAD,
    Decoder,
    EncodeError,
    ErrorReason,
    FrameError,
    Received,
    encode,
    encode_raw,
)
from firmware_protocol.messages import MESSAGE_CLASSES, CardRead, Fault, Hello, Message, MsgType, StartDeal
from firmware_protocol.table import load_table

TABLE = load_table()

_FIELD = {
    "u8": st.integers(0, 0xFF),
    "u16": st.integers(0, 0xFFFF),
    "u32": st.integers(0, 0xFFFFFFFF),
    "deal_id": st.none() | st.integers(0, 0xFFFFFFFE),
    "card": st.none() | st.integers(0, 51),
    "pocket": st.none() | st.integers(0, 3),
    "position": st.none() | st.integers(0, 51),
    "deal": st.binary(min_size=13, max_size=13),
    "str16": st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=16),
    # up to max_text bytes of UTF-8, the boundary included: cut the encoding, not the characters
    "text": st.text(max_size=TABLE.max_text).map(
        lambda s: s.encode("utf-8")[: TABLE.max_text].decode("utf-8", "ignore")
    ),
}


def _message_strategy(spec_name: str) -> st.SearchStrategy[Message]:
    spec = TABLE.by_name[spec_name]
    cls = MESSAGE_CLASSES[MsgType[spec_name]]
    return st.builds(cls, **{f.name: _FIELD[f.type] for f in spec.fields})


messages = st.one_of([_message_strategy(m.name) for m in TABLE.messages])


@settings(max_examples=250)
@given(messages, st.integers(0, 255))
def test_encode_decode_identity(msg: Message, seq: int) -> None:
    frame = encode(msg, seq)
    assert frame.endswith(b"\x00") and b"\x00" not in frame[:-1]
    assert len(frame) - 1 <= MAX_ENCODED
    events = Decoder().feed(frame)
    assert events == [Received(1, seq, msg)]


@settings(max_examples=200)
@given(st.lists(st.tuples(messages, st.integers(0, 255)), min_size=1, max_size=8), st.data())
def test_stream_split_anywhere(items: list[tuple[Message, int]], data: st.DataObject) -> None:
    stream = b"".join(encode(m, s) for m, s in items)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = Decoder()
    got = []
    start = 0
    for cut in [*cuts, len(stream)]:
        got += decoder.feed(stream[start:cut])
        start = cut
    assert [(e.message, e.seq) for e in got if isinstance(e, Received)] == items
    assert decoder.stats.error_total == 0


@settings(max_examples=1000)
@given(st.lists(st.binary(max_size=400), max_size=6))
def test_decode_never_raises(chunks: list[bytes]) -> None:
    decoder = Decoder()
    for chunk in chunks:
        for ev in decoder.feed(chunk):
            assert isinstance(ev, Received | FrameError)
    assert decoder.stats.bytes == sum(map(len, chunks))


@settings(max_examples=300)
@given(st.binary(max_size=600), messages, st.integers(0, 255))
def test_resync_after_garbage(garbage: bytes, msg: Message, seq: int) -> None:
    decoder = Decoder()
    decoder.feed(garbage)
    events = decoder.feed(b"\x00" + encode(msg, seq))
    assert events[-1] == Received(1, seq, msg)
    assert all(isinstance(e, FrameError) for e in events[:-1])


@settings(max_examples=300)
@given(messages, st.integers(0, 255), st.data())
def test_any_single_corruption_is_rejected(msg: Message, seq: int, data: st.DataObject) -> None:
    """A flipped bit, dropped or inserted byte never yields a different valid message."""
    frame = bytearray(encode(msg, seq)[:-1])
    what = data.draw(st.sampled_from(["flip", "drop", "insert"]))
    i = data.draw(st.integers(0, len(frame) - 1))
    if what == "flip":
        frame[i] ^= 1 << data.draw(st.integers(0, 7))
    elif what == "drop":
        del frame[i]
    else:
        frame.insert(i, data.draw(st.integers(0, 255)))
    events = Decoder().feed(bytes(frame) + b"\x00")
    for ev in events:
        if isinstance(ev, Received):
            assert ev.message == msg and ev.seq == seq  # e.g. an inserted 0x00 before the frame


def test_crc_is_crc32_iso_hdlc() -> None:
    assert zlib.crc32(b"123456789") == 0xCBF43926
    assert TABLE.raw["crc"]["check"] == "0xCBF43926"


@pytest.mark.parametrize(
    ("stream", "reason"),
    [
        (b"\x55" * (MAX_ENCODED + 1) + b"\x00", ErrorReason.OVERSIZE),
        (b"\x09\x01\x00", ErrorReason.COBS),
        (b"\x04\x01\x02\x03\x00", ErrorReason.TOO_SHORT),
        (encode_raw(7, 0x03, 0, b"\x00" * 4), ErrorReason.UNSUPPORTED_VERSION),
        (encode_raw(1, 0x42, 0, b""), ErrorReason.UNKNOWN_TYPE),
        (encode_raw(1, 0x10, 0, b"\x01\x02"), ErrorReason.BAD_PAYLOAD),
        (encode_raw(1, 0x91, 0, bytes([1, 0, 0, 0, 52, 0, 0, 9])), ErrorReason.BAD_FIELD),
    ],
)
def test_error_reasons_counted(stream: bytes, reason: ErrorReason) -> None:
    decoder = Decoder()
    events = decoder.feed(stream)
    assert [e.reason for e in events if isinstance(e, FrameError)] == [reason]
    assert decoder.stats.errors[reason] == 1
    good = encode(StartDeal(3), 1)
    assert decoder.feed(good) == [Received(1, 1, StartDeal(3))]


def test_oversize_without_delimiter_is_dropped_once_and_resyncs() -> None:
    decoder = Decoder()
    events = []
    for _ in range(10):
        events += decoder.feed(b"\x11" * 100)
    assert [e.reason for e in events if isinstance(e, FrameError)] == [ErrorReason.OVERSIZE]
    assert decoder.feed(b"\x00" + encode(Hello(1, 1), 0)) == [Received(1, 0, Hello(1, 1))]


def test_trusted_header_on_semantic_errors() -> None:
    (ev,) = Decoder().feed(encode_raw(1, 0x55, 17, b""))
    assert isinstance(ev, FrameError) and (ev.msg_type, ev.seq, ev.version) == (0x55, 17, 1)


def test_encode_rejects_out_of_range() -> None:
    with pytest.raises(EncodeError, match="card"):
        encode(CardRead(1, 0, 52, 0, 0), 0)
    with pytest.raises(EncodeError, match="sequence"):
        encode(StartDeal(1), 256)
    with pytest.raises(EncodeError, match="at most 120"):
        encode(Fault(1, 1, None, None, None, "x" * 121), 0)


def test_table_limits_are_consistent() -> None:
    assert TABLE.header_size + MAX_PAYLOAD + TABLE.crc_size == MAX_FRAME
    biggest = max(TABLE.messages, key=lambda m: m.fixed_size)
    assert biggest.fixed_size <= MAX_PAYLOAD
    for spec in TABLE.messages:
        cls = MESSAGE_CLASSES[MsgType[spec.name]]
        assert [f.name for f in dataclasses.fields(cls)] == [f.name for f in spec.fields]
    for state, names in TABLE.states.items():
        assert set(names) <= {m.name for m in TABLE.messages if m.direction == "host"}, state


@given(st.lists(st.integers(0, 3), min_size=52, max_size=52))
def test_deal_record_roundtrip(seats: list[int]) -> None:
    record = pack_seats(seats)
    assert len(record) == 13 and unpack_seats(record) == bytes(seats)


def test_deal_record_matches_core_canonical_bytes() -> None:
    from dealer.core import Deal

    deal = Deal.from_rank(123456789)
    assert pack_seats(deal.seats) == deal.to_bytes()
