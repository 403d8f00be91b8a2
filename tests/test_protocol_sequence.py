"""The host never trusts the device's sequence numbers (PROTOCOL.md §5.2, §5.3): after the device's message
number s, a new message must carry s + 1 (mod 256); the same number again is only a duplicate when it is the
same message. Anything else closes the session with the reason, unanswered and undelivered. Pure: frames made
by hand with the codec, a fake clock."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from firmware_protocol.codec import encode
from firmware_protocol.connection import HostConnection, HostState, MessageReceived, PeerMisbehaved, SessionOpened
from firmware_protocol.messages import CardRead, DeviceInfo, HelloReply, Status


def opened() -> HostConnection:
    host = HostConnection()
    host.open(0.0)
    host.data_to_send()
    events = host.receive(encode(HelloReply(1, 1, 1), 0), 0.0)
    assert any(isinstance(e, SessionOpened) for e in events)
    host.data_to_send()
    return host


def card(position: int) -> CardRead:
    return CardRead(7, position, position, position % 4, 200)


def test_numbers_that_follow_one_another_are_delivered_across_the_wrap() -> None:
    host = opened()
    got = []
    for n in range(1, 300):  # 1..255, then 0, 1, … (the wrap, §5.2)
        got += host.receive(encode(card(n % 52), n & 0xFF), 0.0)
    assert [e.seq for e in got if isinstance(e, MessageReceived)] == [n & 0xFF for n in range(1, 300)]
    assert host.state is HostState.OPEN


def test_a_true_duplicate_is_answered_again_and_not_delivered() -> None:
    host = opened()
    assert host.receive(encode(card(0), 1), 0.0) == [MessageReceived(card(0), 1)]
    first_ack = host.data_to_send()
    assert host.receive(encode(card(0), 1), 0.1) == []
    assert host.data_to_send() == first_ack
    assert host.state is HostState.OPEN


def test_the_last_number_on_a_different_message_is_a_device_fault_not_a_duplicate() -> None:
    """The seq-stuck-at-255 device: the host used to take the new card for a duplicate and stall."""
    host = opened()
    for n in range(1, 256):
        host.receive(encode(card(n % 52), n), 0.0)
    host.data_to_send()
    events = host.receive(encode(card(5), 255), 0.0)
    assert events == [
        PeerMisbehaved(
            "the device reused sequence number 255 for a new CARD_READ; the next number was 0 (PROTOCOL.md §5.2)"
        )
    ]
    assert host.state is HostState.CLOSED
    assert host.data_to_send() == b""  # neither ACKed nor NAKed


@given(st.integers(0, 255).filter(lambda s: s not in (1, 2)))
def test_a_number_that_skips_is_a_device_fault(seq: int) -> None:
    host = opened()
    host.receive(encode(DeviceInfo(7, 4, 1, 0, 0, "S", "M"), 1), 0.0)
    host.data_to_send()
    (event,) = host.receive(encode(Status(0, None, 0, 0), seq), 0.0)
    assert event == PeerMisbehaved(
        f"the device sent STATUS with sequence number {seq}; the next number was 2 (PROTOCOL.md §5.2)"
    )
    assert host.state is HostState.CLOSED
