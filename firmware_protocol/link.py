"""Sans-I/O reliable link: sequence numbers, ACK/NAK, retransmission, duplicate detection (PROTOCOL.md §5).

The layer under :mod:`firmware_protocol.connection` (which adds sessions, versions and liveness). The caller
passes the time (``now``) in, takes bytes out with :meth:`Link.data_to_send` and writes them; nothing here
sleeps or does I/O.

Rules: stop-and-wait per direction (at most one reliable message in flight). A reliable message is
retransmitted unchanged (same seq) every ``ack_timeout`` until an ACK or NAK *naming its seq* arrives, at
most ``retry_limit`` times; then the link gives up. A received reliable frame whose seq equals the last one
answered is a duplicate: the remembered answer (ACK or NAK) is sent again and the message is not delivered.
Frames of types 0xA0..0xFF (BOOT, ACK, NAK and any future unacknowledged type) are never answered.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .codec import (
    DELIMITER,
    FIRST_UNANSWERED_TYPE,
    FROZEN_TYPES,
    TRUSTED_HEADER,
    Decoder,
    ErrorReason,
    FrameError,
    Received,
    encode,
    truncate_text,
)
from .messages import Ack, Boot, Hello, Message, MsgType, Nak, NakReason
from .table import load_table

_TABLE = load_table()
_RELIABLE = {MsgType(m.type) for m in _TABLE.messages if m.reliable}
DEFAULT_ACK_TIMEOUT = _TABLE.ack_timeout_ms / 1000
DEFAULT_RETRY_LIMIT = _TABLE.retry_limit
# The NAK reason of each drop after a good CRC (PROTOCOL.md §5.1 steps 5d-5h).
NAK_FOR_DROP = {
    ErrorReason.BAD_LENGTH: NakReason.BAD_LENGTH,
    ErrorReason.UNSUPPORTED_VERSION: NakReason.UNSUPPORTED_VERSION,
    ErrorReason.UNKNOWN_TYPE: NakReason.UNKNOWN_TYPE,
    ErrorReason.BAD_PAYLOAD: NakReason.BAD_LENGTH,
    ErrorReason.BAD_FIELD: NakReason.BAD_FIELD,
}
MAX_QUEUE = 200  # reliable messages queued at most: seq numbers stay unique among them (< 256)


def is_reliable(message: Message) -> bool:
    return message.TYPE in _RELIABLE


class QueueFull(RuntimeError):
    """More reliable messages queued than sequence numbers can tell apart: a caller ignoring back-pressure."""


@dataclass(frozen=True, slots=True)
class Delivered:
    """A message from the peer, accepted (reliable ones have been ACKed)."""

    message: Message
    seq: int


@dataclass(frozen=True, slots=True)
class Acked:
    """The peer ACKed our message number ``seq``."""

    message: Message
    seq: int


@dataclass(frozen=True, slots=True)
class Refused:
    """The peer NAKed our message number ``seq``."""

    message: Message
    seq: int
    reason: int
    detail: str


@dataclass(frozen=True, slots=True)
class GaveUp:
    """Retries exhausted: the link is dead; every queued message has been dropped."""

    message: Message
    attempts: int
    seq: int = 0


@dataclass(frozen=True, slots=True)
class OutOfSequence:
    """A reliable frame whose ``seq`` is neither the next one nor a true duplicate (the same number on a
    different message): a sender that broke PROTOCOL.md §5.2. Neither answered nor delivered; reported only by
    a link made with ``check_sequence`` (the host's: it never trusts the device's numbering)."""

    message: Message
    seq: int
    expected: int
    reused: bool  # the last number again, on a different message


@dataclass(frozen=True, slots=True)
class Corrupt:
    """A frame was dropped (noise, bad CRC, unknown type …)."""

    error: FrameError


LinkEvent = Delivered | Acked | Refused | GaveUp | Corrupt | OutOfSequence

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
        check_sequence: bool = False,
    ) -> None:
        self.ack_timeout = ack_timeout
        self.retry_limit = retry_limit
        self.judge = judge
        self.device = device
        self.check_sequence = check_sequence
        self.decoder = Decoder(_TABLE.versions_supported)
        self.duplicates = 0
        self.retransmissions = 0
        self.nak_sent = 0
        self.last_heard: float | None = None  # time of the last intact frame from the peer
        self._version = 1
        self._out = bytearray()
        self._queue: deque[tuple[Message, int]] = deque()
        self._inflight: _InFlight | None = None
        self._tx_seq = 0
        self._rx_last: int | None = None
        self._rx_answer: bytes | None = None
        self._rx_message: Message | None = None  # the message remembered with _rx_last (None: NAKed undecoded)

    @property
    def version(self) -> int:
        """Header version of the session (1 outside one); frames of other types must carry it."""
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        self._version = value
        self.decoder.session_version = value

    # -- sending ---------------------------------------------------------------------------------------
    def send(self, message: Message, now: float) -> int:
        """Queue a reliable message (sent when the one in flight is answered) and return its seq, or send an
        unreliable one now (returns 0)."""
        if not is_reliable(message):
            self._out += self._frame(message, 0)
            return 0
        if len(self._queue) >= MAX_QUEUE:
            raise QueueFull(f"{len(self._queue)} reliable messages queued")
        seq = self._tx_seq
        self._tx_seq = (self._tx_seq + 1) & 0xFF
        self._queue.append((message, seq))
        self._pump(now)
        return seq

    def send_unreliable(self, message: Message, seq: int = 0) -> None:
        self._out += self._frame(message, seq)

    def send_delimiter(self) -> None:
        """A lone 0x00: flushes a half-received frame at the other end (PROTOCOL.md §3)."""
        self._out += DELIMITER

    @property
    def pending(self) -> int:
        """Reliable messages not yet answered (queued or in flight)."""
        return len(self._queue) + (self._inflight is not None)

    @property
    def in_flight_seq(self) -> int | None:
        return None if self._inflight is None else self._inflight.seq

    def has_output(self) -> bool:
        return bool(self._out)

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
        self.forget_rx()
        self.version = 1
        self._out.clear()

    def drop_queue(self) -> None:
        """Drop every reliable message queued or in flight (the link is lost); keep the rest."""
        self._queue.clear()
        self._inflight = None

    def forget_rx(self) -> None:
        """Forget the peer's numbering: the next reliable frame is never a duplicate (PROTOCOL.md §5.3)."""
        self._rx_last = None
        self._rx_answer = None
        self._rx_message = None

    def _frame(self, message: Message, seq: int) -> bytes:
        version = 1 if message.TYPE in FROZEN_TYPES else self._version
        return encode(message, seq, version)

    def _pump(self, now: float) -> None:
        if self._inflight is None and self._queue:
            message, seq = self._queue.popleft()
            self._inflight = _InFlight(message, seq, now, 1)
            self._out += self._frame(message, seq)

    # -- time ------------------------------------------------------------------------------------------
    def poll(self, now: float) -> list[LinkEvent]:
        """Retransmit or give up when the answer is overdue."""
        f = self._inflight
        if f is None or now < f.sent_at + self.ack_timeout:
            return []
        if f.attempts > self.retry_limit:
            self.drop_queue()
            return [GaveUp(f.message, f.attempts, f.seq)]
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
                if ev.reason in TRUSTED_HEADER and ev.msg_type is not None and ev.msg_type < FIRST_UNANSWERED_TYPE:
                    assert ev.seq is not None
                    self._answer(ev.seq, Nak(ev.seq, ev.msg_type, int(NAK_FOR_DROP[ev.reason]), ev.detail))
                    self._rx_message = None
                continue
            self.last_heard = now
            self._on_message(ev, now, events)
        return events

    def _answer(self, seq: int, answer: Ack | Nak) -> None:
        if isinstance(answer, Nak):
            answer = Nak(answer.nacked_seq, answer.nacked_type, answer.reason, truncate_text(answer.detail))
            self.nak_sent += 1
        frame = encode(answer, 0, 1)
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
                events.append(Acked(f.message, f.seq))
            else:
                events.append(Refused(f.message, f.seq, msg.reason, msg.detail))
            self._pump(now)
            return
        if isinstance(msg, Boot):
            self.forget_rx()  # the peer restarted: its numbering starts over
            events.append(Delivered(msg, ev.seq))
            return
        if not is_reliable(msg):
            events.append(Delivered(msg, ev.seq))
            return
        if isinstance(msg, Hello) and self.device:
            # A new session: everything queued is void; HELLO is never treated as a duplicate.
            self.reset()
        elif ev.seq == self._rx_last and self._rx_answer is not None:
            if self.check_sequence and self._rx_message is not None and msg != self._rx_message:
                events.append(OutOfSequence(msg, ev.seq, (ev.seq + 1) & 0xFF, reused=True))
                return
            self.duplicates += 1
            self._out += self._rx_answer
            return
        elif self.check_sequence and self._rx_last is not None and ev.seq != (self._rx_last + 1) & 0xFF:
            events.append(OutOfSequence(msg, ev.seq, (self._rx_last + 1) & 0xFF, reused=False))
            return
        self._rx_message = msg
        verdict = self.judge(msg) if self.judge is not None else None
        if verdict is None:
            self._answer(ev.seq, Ack(ev.seq))
            events.append(Delivered(msg, ev.seq))
        else:
            self._answer(ev.seq, Nak(ev.seq, int(msg.TYPE), int(verdict[0]), verdict[1]))
