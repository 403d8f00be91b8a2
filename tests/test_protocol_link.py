"""The sans-I/O reliable link: exactly-once in-order delivery over a lossy line, retries, NAKs, sessions."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.codec import encode_raw
from firmware_protocol.link import Acked, Delivered, GaveUp, Link, LinkEvent, Refused
from firmware_protocol.messages import CardRead, Heartbeat, Hello, HelloReply, Message, Nak, NakReason, StartDeal


class Line:
    """Two links joined by a line that drops, damages and duplicates frames (seeded), on a fake clock."""

    def __init__(self, seed: int, loss: float, damage: float, dup: float) -> None:
        self.rng = random.Random(seed)
        self.loss, self.damage, self.dup = loss, damage, dup
        self.now = 0.0
        self.host = Link(ack_timeout=0.1, retry_limit=50)
        self.device = Link(ack_timeout=0.1, retry_limit=50, device=True)
        self.got: dict[str, list[Message]] = {"host": [], "device": []}
        self.events: list[object] = []

    def _carry(self, data: bytes) -> bytes:
        out = bytearray()
        for frame in data.split(b"\x00")[:-1]:
            r = self.rng.random()
            if r < self.loss:
                continue
            if r < self.loss + self.damage and frame:
                b = bytearray(frame)
                b[self.rng.randrange(len(b))] ^= 1 << self.rng.randrange(8)
                frame = bytes(b)
            out += frame + b"\x00"
            if self.rng.random() < self.dup:
                out += frame + b"\x00"
        return bytes(out)

    def step(self) -> None:
        for name, src, dst, who in (
            ("device", self.host, self.device, "device"),
            ("host", self.device, self.host, "host"),
        ):
            data = self._carry(src.data_to_send())
            for ev in dst.receive(data, self.now):
                self.events.append(ev)
                if isinstance(ev, Delivered):
                    self.got[who].append(ev.message)
            del name
        for link in (self.host, self.device):
            self.events += link.poll(self.now)
        self.now += 0.03


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.floats(0, 0.3), st.floats(0, 0.2), st.floats(0, 0.3))
def test_exactly_once_in_order_over_a_bad_line(seed: int, loss: float, damage: float, dup: float) -> None:
    line = Line(seed, loss, damage, dup)
    line.host.reset()
    line.host.send(Hello(1, 1), line.now)
    while line.host.pending:  # HELLO acknowledged: the session is open
        line.step()
    for _ in range(20):  # let any retransmitted HELLO still on the line arrive
        line.step()
    assert line.got["device"][:1] == [Hello(1, 1)]
    cmds = [StartDeal(i) for i in range(15)]
    cards = [CardRead(1, i, i, i % 4, 200) for i in range(30)]
    for c in cmds:
        line.host.send(c, line.now)
    for card in cards:
        line.device.send(card, line.now)
    for _ in range(5000):
        line.step()
        if line.host.pending == 0 and line.device.pending == 0:
            break
    assert not any(isinstance(e, GaveUp) for e in line.events)
    # HELLO is never treated as a duplicate (a restarted host must get through), so a retransmitted
    # HELLO may open the session twice before anything else is sent; everything else arrives exactly once.
    assert [m for m in line.got["device"] if not isinstance(m, Hello)] == cmds
    assert line.got["host"] == cards


def test_gives_up_after_retry_limit() -> None:
    link = Link(ack_timeout=0.1, retry_limit=3)
    link.send(Heartbeat(1), 0.0)
    sent = [link.data_to_send()]
    events: list[LinkEvent] = []
    t = 0.0
    while not events:
        t += 0.1
        events = link.poll(t)
        sent.append(link.data_to_send())
    assert events == [GaveUp(Heartbeat(1), 4)]
    assert len([s for s in sent if s]) == 4  # first try + 3 retries, all with the same frame
    assert len({s for s in sent if s}) == 1
    assert link.pending == 0


def test_duplicate_gets_the_same_answer_and_is_not_delivered() -> None:
    device = Link(device=True, judge=lambda m: (NakReason.BAD_STATE, "busy") if isinstance(m, StartDeal) else None)
    host = Link()
    host.send(StartDeal(4), 0.0)
    frame = host.data_to_send()
    assert device.receive(frame, 0.0) == []  # refused, not delivered
    first = device.data_to_send()
    assert device.receive(frame, 0.1) == []
    assert device.data_to_send() == first
    assert device.duplicates == 1
    (ev,) = host.receive(first, 0.1)
    assert isinstance(ev, Refused) and ev.reason == NakReason.BAD_STATE and ev.detail == "busy"


def test_unknown_type_is_nakked_with_its_seq() -> None:
    device = Link(device=True)
    device.receive(encode_raw(1, 0x55, 9, b""), 0.0)
    host = Link()
    events = host.receive(device.data_to_send(), 0.0)
    nak = [e for e in host.decoder.feed(b"")] + events
    del nak
    # decode the answer directly
    from firmware_protocol.codec import Decoder, Received

    device.receive(encode_raw(1, 0x56, 10, b""), 0.0)
    (answer,) = Decoder().feed(device.data_to_send())
    assert isinstance(answer, Received) and isinstance(answer.message, Nak)
    assert (answer.message.nacked_seq, answer.message.nacked_type, answer.message.reason) == (
        10,
        0x56,
        NakReason.UNKNOWN_TYPE,
    )


def test_hello_always_opens_a_new_session() -> None:
    device = Link(device=True)
    host = Link()
    for _ in range(2):  # the same seq twice: a host that restarted must still get through
        host.reset()
        host.send(Hello(1, 1), 0.0)
        events = device.receive(host.data_to_send(), 0.0)
        assert [type(e) for e in events] == [Delivered]
        device.send(HelloReply(1, 1, 1), 0.0)
        got = host.receive(device.data_to_send(), 0.0)
        assert any(isinstance(e, Acked) for e in got)
        assert any(isinstance(e, Delivered) and e.message == HelloReply(1, 1, 1) for e in got)
