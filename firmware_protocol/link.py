"""Sans-I/O reliable link: sequence numbers, ACK/NAK, retransmission, duplicate detection, sessions.

Both ends (host driver and device firmware/simulator) use it. The caller passes the time (``now``) in, takes
bytes out with :meth:`Link.data_to_send` and writes them; nothing here sleeps or does I/O.

Rules (PROTOCOL.md §5): stop-and-wait per direction: at most one reliable message in flight. A reliable
message is retransmitted unchanged (same seq) every ``ack_timeout`` until ACKed or NAKed, at most
``retry_limit`` times; then the link gives up. A received reliable message whose seq equals the last one
accepted is a duplicate: the cached answer (ACK or NAK) is sent again and the message is not delivered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .codec import TRUSTED_HEADER, Decoder, FrameError, Received, encode
from .messages import Ack, Boot, Hello, Message, MsgType, Nak, NakReason
from .table import load_table

_TABLE = load_table()
_RELIABLE = {MsgType(m.type) for m in _TABLE.messages if m.reliable}
_VERSION_1_TYPES = {MsgType.HELLO, MsgType.HELLO_REPLY, MsgType.BOOT}
DEFAULT_ACK_TIMEOUT = _TABLE.ack_timeout_ms / 1000
DEFAULT_RETRY_LIMIT = _TABLE.retry_limit


def is_reliable(message: Message) -> bool:
    return message.TYPE in _RELIABLE


@dataclass(frozen=True, slots=True)
class Delivered:
    """A message from the peer, accepted (reliable ones have been ACKed)."""

    message: Message
    seq: int


@dataclass(frozen=True, slots=True)
class Acked:
    message: Message


@dataclass(frozen=True, slots=True)
class Refused:
    """The peer NAKed our message."""

    message: Message
    reason: int
    detail: str


@dataclass(frozen=True, slots=True)
class GaveUp:
    """Retries exhausted: the link is dead; every queued message has been dropped."""

    message: Message
    attempts: int


@dataclass(frozen=True, slots=True)
class Corrupt:
    """A frame was skipped (noise, bad CRC, unknown type …)."""

    error: FrameError


LinkEvent = Delivered | Acked | Refused | GaveUp | Corrupt

# judge(message) -> None to accept, or (reason, detail) to NAK it.
Judge = Callable[[Message], "tuple[NakReason, str] | None"]


@dataclass(slots=True)
class _InFlight:
    message: Message
    seq: int
    sent_at: float
    attempts: int


class Link:
    def __init__(
        self,
        *,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        retry_limit: int = DEFAULT_RETRY_LIMIT,
        judge: Judge | None = None,
        device: bool = False,
    ) -> None:
        self.ack_timeout = ack_timeout
        self.retry_limit = retry_limit
        self.judge = judge
        self.device = device
        self.version = 1
        self.decoder = Decoder(_TABLE.versions_supported)
        self.duplicates = 0
        self.retransmissions = 0
        self._out = bytearray()
        self._queue: deque[Message] = deque()
        self._inflight: _InFlight | None = None
        self._tx_seq = 0
        self._rx_last: int | None = None
        self._rx_answer: bytes | None = None

    # -- sending ---------------------------------------------------------------------------------------
    def send(self, message: Message, now: float) -> None:
        """Queue a reliable message (sent when the one in flight is answered) or send an unreliable one now."""
        if is_reliable(message):
            self._queue.append(message)
            self._pump(now)
        else:
            self._out += self._frame(message, 0)

    def send_unreliable(self, message: Message, seq: int = 0) -> None:
        self._out += self._frame(message, seq)

    @property
    def pending(self) -> int:
        """Reliable messages not yet answered (queued or in flight)."""
        return len(self._queue) + (self._inflight is not None)

    def data_to_send(self) -> bytes:
        data = bytes(self._out)
        self._out.clear()
        return data

    def next_deadline(self) -> float | None:
        return None if self._inflight is None else self._inflight.sent_at + self.ack_timeout

    def reset(self) -> None:
        """Forget everything in both directions (a new session). Unsent bytes are dropped too."""
        self._queue.clear()
        self._inflight = None
        self._tx_seq = 0
        self._rx_last = None
        self._rx_answer = None
        self.version = 1
        self._out.clear()

    def start_session(self, hello: Hello, now: float) -> None:
        """Host: reset and send HELLO first."""
        self.reset()
        self.send(hello, now)

    def _frame(self, message: Message, seq: int) -> bytes:
        version = 1 if message.TYPE in _VERSION_1_TYPES else self.version
        return encode(message, seq, version)

    def _pump(self, now: float) -> None:
        if self._inflight is None and self._queue:
            message = self._queue.popleft()
            seq = self._tx_seq
            self._tx_seq = (self._tx_seq + 1) & 0xFF
            self._inflight = _InFlight(message, seq, now, 1)
            self._out += self._frame(message, seq)

    # -- time ------------------------------------------------------------------------------------------
    def poll(self, now: float) -> list[LinkEvent]:
        """Retransmit or give up when the answer is overdue."""
        f = self._inflight
        if f is None or now < f.sent_at + self.ack_timeout:
            return []
        if f.attempts > self.retry_limit:
            self._queue.clear()
            self._inflight = None
            return [GaveUp(f.message, f.attempts)]
        f.attempts += 1
        f.sent_at = now
        self.retransmissions += 1
        self._out += self._frame(f.message, f.seq)
        return []

    # -- receiving -------------------------------------------------------------------------------------
    def receive(self, data: bytes, now: float) -> list[LinkEvent]:
        events: list[LinkEvent] = []
        for ev in self.decoder.feed(data):
            if isinstance(ev, FrameError):
                events.append(Corrupt(ev))
                if ev.reason in TRUSTED_HEADER and ev.msg_type not in (MsgType.ACK, MsgType.NAK, MsgType.BOOT):
                    reason = {
                        "unsupported_version": NakReason.UNSUPPORTED_VERSION,
                        "unknown_type": NakReason.UNKNOWN_TYPE,
                        "bad_payload": NakReason.BAD_LENGTH,
                        "bad_field": NakReason.BAD_FIELD,
                    }[ev.reason.value]
                    assert ev.seq is not None and ev.msg_type is not None
                    self._answer(ev.seq, Nak(ev.seq, ev.msg_type, reason, ev.detail[:120]))
                continue
            self._on_message(ev, now, events)
        return events

    def _answer(self, seq: int, answer: Ack | Nak) -> None:
        frame = encode(answer, 0, self.version)
        self._rx_last = seq
        self._rx_answer = frame
        self._out += frame

    def _on_message(self, ev: Received, now: float, events: list[LinkEvent]) -> None:
        msg = ev.message
        if isinstance(msg, Ack | Nak):
            f = self._inflight
            wanted = msg.acked_seq if isinstance(msg, Ack) else msg.nacked_seq
            if f is None or wanted != f.seq:
                return  # stale answer to a retransmission
            self._inflight = None
            if isinstance(msg, Ack):
                events.append(Acked(f.message))
            else:
                events.append(Refused(f.message, msg.reason, msg.detail))
            self._pump(now)
            return
        if isinstance(msg, Boot):
            # The peer restarted: its sequence numbering starts over.
            self._rx_last = None
            self._rx_answer = None
            events.append(Delivered(msg, ev.seq))
            return
        if isinstance(msg, Hello) and self.device:
            # A new session: everything queued is void; HELLO is never treated as a duplicate.
            self.reset()
        elif ev.seq == self._rx_last and self._rx_answer is not None:
            self.duplicates += 1
            self._out += self._rx_answer
            return
        verdict = self.judge(msg) if self.judge is not None else None
        if verdict is None:
            self._answer(ev.seq, Ack(ev.seq))
            events.append(Delivered(msg, ev.seq))
        else:
            self._answer(ev.seq, Nak(ev.seq, int(msg.TYPE), int(verdict[0]), verdict[1][:120]))
