"""The sans-I/O connections (firmware_protocol.connection) follow PROTOCOL.md 1.1 §5-§6, on a fake clock."""

from __future__ import annotations

from firmware_protocol.codec import Decoder, ErrorReason, FrameError, Received, encode, encode_raw
from firmware_protocol.connection import (
    Answered,
    ConnectionLost,
    DeviceConnection,
    HelloReceived,
    HostConnection,
    HostState,
    MessageReceived,
    PeerRestarted,
    SessionOpened,
    SessionRefused,
)
from firmware_protocol.messages import (
    Ack,
    Boot,
    CardRead,
    Fault,
    GetInfo,
    GetStatus,
    Heartbeat,
    HelloReply,
    Message,
    Nak,
    NakReason,
)


def frames(data: bytes) -> list[tuple[int, int, Message]]:
    out = []
    for ev in Decoder().feed(data):
        assert isinstance(ev, Received), ev
        out.append((ev.version, ev.seq, ev.message))
    return out


def handshake(device: DeviceConnection | None = None) -> tuple[HostConnection, DeviceConnection]:
    host, dev = HostConnection(), device or DeviceConnection()
    host.open(0.0)
    got = dev.receive(host.data_to_send(), 0.0)
    assert [type(e) for e in got] == [HelloReceived]
    events = host.receive(dev.data_to_send(), 0.0)
    assert any(isinstance(e, SessionOpened) and e.version == 1 for e in events)
    dev.receive(host.data_to_send(), 0.0)  # the ACK of HELLO_REPLY
    return host, dev


def test_handshake_then_the_first_command_is_not_a_duplicate() -> None:
    host, dev = handshake()
    assert host.state is HostState.OPEN and dev.session
    seq = host.send(GetInfo(), 0.1)
    assert seq == 1  # HELLO was seq 0 (PROTOCOL.md §5.2)
    got = dev.receive(host.data_to_send(), 0.1)
    assert got == [MessageReceived(GetInfo(), 1)]
    assert host.receive(dev.data_to_send(), 0.1) == [Answered(1, GetInfo())]


def test_no_common_version_refuses_the_session_and_the_device_stays_without_one() -> None:
    host = HostConnection(min_version=1, max_version=1)
    dev = DeviceConnection(min_version=2, max_version=3)
    host.open(0.0)
    (hello_event,) = dev.receive(host.data_to_send(), 0.0)
    assert isinstance(hello_event, HelloReceived) and hello_event.version == 0
    events = host.receive(dev.data_to_send(), 0.0)
    assert [type(e) for e in events] == [Answered, SessionRefused]
    refused = events[1]
    assert isinstance(refused, SessionRefused) and "host 1..1, device 2..3" in refused.detail
    assert host.state is HostState.CLOSED and not dev.session
    dev.receive(encode(GetStatus(), 1), 0.1)
    ((_, _, nak),) = frames(dev.data_to_send())
    assert isinstance(nak, Nak) and nak.reason == NakReason.NO_SESSION


def test_ack_is_matched_by_seq_and_a_stale_one_is_ignored() -> None:
    host, _ = handshake()
    host.send(Heartbeat(1), 0.1)
    host.data_to_send()
    assert host.receive(encode(Ack(7), 0), 0.1) == []  # names another message
    assert host.pending == 1
    assert host.receive(encode(Ack(1), 0), 0.1) == [Answered(1, Heartbeat(1))]


def test_boot_during_a_session_is_a_restart_and_resets_the_duplicate_memory() -> None:
    host, dev = handshake()
    card = CardRead(1, 0, 5, 0, 255)
    dev.send(card, 0.1)
    assert host.receive(dev.data_to_send(), 0.1) == [MessageReceived(card, 1)]
    events = host.receive(encode(Boot(1, 1), 0), 0.2)
    assert events == [PeerRestarted("the device restarted (power loss)", Boot(1, 1))]
    host.open(0.3)
    host.data_to_send()
    # a restarted device numbers from 0 again; seq 1 after the new HELLO_REPLY is not a duplicate
    host.receive(encode(HelloReply(1, 1, 1), 0), 0.3)
    assert host.receive(encode(card, 1), 0.3) == [MessageReceived(card, 1)]


def test_nak_no_session_during_a_session_is_a_restart() -> None:
    host, _ = handshake()
    host.send(GetStatus(), 0.1)
    events = host.receive(encode(Nak(1, 0x04, NakReason.NO_SESSION, ""), 0), 0.1)
    assert isinstance(events[-1], PeerRestarted) and host.state is HostState.CLOSED


def test_leftovers_before_hello_reply_are_acked_ignored_and_not_remembered() -> None:
    host = HostConnection()
    host.open(0.0)
    host.data_to_send()
    assert host.receive(encode(CardRead(1, 3, 7, 3, 9), 0), 0.0) == []
    ((_, _, ack),) = frames(host.data_to_send())
    assert ack == Ack(0)
    events = host.receive(encode(HelloReply(1, 1, 1), 0), 0.0)  # seq 0 again: not taken for a duplicate
    assert isinstance(events[-1], SessionOpened)


def test_nak_rules_ranges_and_precedence() -> None:
    dev = DeviceConnection()
    # unknown reliable-range type: NAK UNKNOWN_TYPE naming seq and type
    dev.receive(encode_raw(1, 0x55, 9, b""), 0.0)
    assert frames(dev.data_to_send()) == [(1, 0, Nak(9, 0x55, NakReason.UNKNOWN_TYPE, "type 0x55"))]
    # unacknowledged range (0xA0..0xFF), known or not, broken or not: never answered (no NAK loops)
    for raw in (encode_raw(1, 0xA7, 3, b""), encode_raw(1, 0xF1, 0, b"\x01\x02\x03\xff"), encode_raw(1, 0xF0, 0, b"")):
        dev.receive(raw, 0.0)
        assert dev.data_to_send() == b""
    # wrong length field with a good CRC: NAK BAD_LENGTH (PROTOCOL.md §5.1 step 5d)
    body = bytes([1, 0x04, 4, 3])
    from cobs import cobs

    from firmware_protocol.codec import CRC, crc32

    dev.receive(cobs.encode(body + CRC.pack(crc32(body))) + b"\x00", 0.0)
    ((_, _, nak),) = frames(dev.data_to_send())
    assert isinstance(nak, Nak) and (nak.nacked_seq, nak.nacked_type, nak.reason) == (4, 0x04, NakReason.BAD_LENGTH)
    # a bad field wins over "no session" (5h before 11)
    dev.receive(encode_raw(1, 0x91, 5, bytes([1, 0, 0, 0, 3, 60, 2, 9])), 0.0)
    ((_, _, nak),) = frames(dev.data_to_send())
    assert isinstance(nak, Nak) and nak.reason == NakReason.BAD_FIELD


def test_device_drops_the_session_after_host_silence() -> None:
    _, dev = handshake()
    assert dev.next_deadline() == 5.0
    assert dev.poll(4.9) == []
    assert dev.poll(5.0) == [ConnectionLost("no frame from the host for 5 s")]
    dev.receive(encode(GetStatus(), 1), 5.1)
    ((_, _, nak),) = frames(dev.data_to_send())
    assert isinstance(nak, Nak) and nak.reason == NakReason.NO_SESSION


def test_host_heartbeats_after_a_second_of_silence() -> None:
    host, _ = handshake()
    assert host.next_deadline() == 1.0
    host.poll(0.99)
    assert host.data_to_send() == b""
    host.poll(1.0)
    assert frames(host.data_to_send()) == [(1, 1, Heartbeat(1))]


def test_text_limits_and_invalid_utf8_are_bad_fields() -> None:
    for detail in (b"x" * 121, b"\xc0\xaf", b"\xed\xa0\x80"):
        (ev,) = Decoder().feed(encode_raw(1, 0x94, 1, bytes([1, 0, 0, 0, 1, 255, 255, 255]) + detail))
        assert isinstance(ev, FrameError) and ev.reason is ErrorReason.BAD_FIELD, detail
    (ev,) = Decoder().feed(encode(Fault(1, 1, None, None, None, "é" * 60), 1))
    assert isinstance(ev, Received)
