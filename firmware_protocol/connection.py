"""Sans-I/O protocol connections, one per side (PROTOCOL.md §5-§6; h11's ``Connection`` is the model).

:class:`HostConnection` and :class:`DeviceConnection` hold all protocol state of their side: the session
(handshake, negotiated version), sequence numbers, duplicate memory, retransmission, heartbeat and the lost-
host timer. The caller feeds received bytes with ``receive(data, now)``, calls ``poll(now)`` when
``next_deadline()`` passes, writes what ``data_to_send()`` returns and acts on the returned events. Nothing
here reads a clock, sleeps or does I/O, so every rule is testable with a fake clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .codec import FrameError
from .link import (
    DEFAULT_ACK_TIMEOUT,
    DEFAULT_RETRY_LIMIT,
    Acked,
    Corrupt,
    Delivered,
    GaveUp,
    Judge,
    Link,
    LinkEvent,
    OutOfSequence,
)
from .link import Refused as LinkRefused
from .messages import Boot, BootReason, Heartbeat, Hello, HelloReply, Message, NakReason
from .table import load_table

_TABLE = load_table()
HEARTBEAT_INTERVAL = _TABLE.heartbeat_interval_ms / 1000
SESSION_TIMEOUT = _TABLE.session_timeout_ms / 1000
MIN_VERSION = min(_TABLE.versions_supported)
MAX_VERSION = max(_TABLE.versions_supported)


def negotiate(host_min: int, host_max: int, dev_min: int, dev_max: int) -> int:
    """The highest version in both ranges, 0 if they do not overlap (PROTOCOL.md §6.2)."""
    common = min(host_max, dev_max)
    return common if common >= max(host_min, dev_min, 1) else 0


# -- events ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageReceived:
    """A message from the peer, accepted (and ACKed if reliable)."""

    message: Message
    seq: int


@dataclass(frozen=True, slots=True)
class Answered:
    """The peer ACKed our message number ``seq``."""

    seq: int
    message: Message


@dataclass(frozen=True, slots=True)
class Refused:
    """The peer NAKed our message number ``seq``."""

    seq: int
    message: Message
    reason: int
    detail: str


@dataclass(frozen=True, slots=True)
class SessionOpened:
    version: int
    reply: HelloReply | None = None  # the device's reply (host side)


@dataclass(frozen=True, slots=True)
class SessionRefused:
    """No common version: HELLO_REPLY version 0 (or a version outside the host's range)."""

    reply: HelloReply
    detail: str


@dataclass(frozen=True, slots=True)
class PeerRestarted:
    """Host: the device sent BOOT or NAK NO_SESSION during the session; the deal in progress is void."""

    detail: str
    boot: Boot | None = None


@dataclass(frozen=True, slots=True)
class HelloReceived:
    """Device: a HELLO arrived; the connection has ACKed it and queued HELLO_REPLY. ``version`` 0 = no session.
    The device stops any operation in progress (the deal is void)."""

    hello: Hello
    version: int


@dataclass(frozen=True, slots=True)
class ConnectionLost:
    """Retransmissions exhausted (or, on a device, the host silent for session_timeout): the session is gone,
    the queue dropped; the deal in progress is void."""

    detail: str


@dataclass(frozen=True, slots=True)
class PeerMisbehaved:
    """Host: the device broke a rule the connection checks (its sequence numbers, §5.2). The session is closed
    (the deal in progress is void); the caller reports it and opens a new session with HELLO."""

    detail: str


@dataclass(frozen=True, slots=True)
class FrameDropped:
    error: FrameError


Event = (
    MessageReceived
    | Answered
    | Refused
    | SessionOpened
    | SessionRefused
    | PeerRestarted
    | HelloReceived
    | ConnectionLost
    | PeerMisbehaved
    | FrameDropped
)


class ConnectionStateError(RuntimeError):
    """A call the connection's state does not allow (a bug in the caller)."""


class HostState(Enum):
    CLOSED = "closed"
    HELLO_SENT = "hello_sent"
    OPEN = "open"


class _Base:
    link: Link

    def data_to_send(self) -> bytes:
        return self.link.data_to_send()

    @property
    def pending(self) -> int:
        return self.link.pending

    def _common(self, ev: LinkEvent, out: list[Event]) -> bool:
        """Translate the link events every side handles alike; False if ``ev`` is left to the caller."""
        if isinstance(ev, Acked):
            out.append(Answered(ev.seq, ev.message))
        elif isinstance(ev, LinkRefused):
            out.append(Refused(ev.seq, ev.message, ev.reason, ev.detail))
        elif isinstance(ev, Corrupt):
            out.append(FrameDropped(ev.error))
        else:
            return False
        return True


class HostConnection(_Base):
    """The host's side: CLOSED → (open) HELLO_SENT → (HELLO_REPLY) OPEN; table in PROTOCOL.md §6.6."""

    def __init__(
        self,
        *,
        min_version: int = MIN_VERSION,
        max_version: int = MAX_VERSION,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        retry_limit: int = DEFAULT_RETRY_LIMIT,
        heartbeat: float = HEARTBEAT_INTERVAL,
    ) -> None:
        self.min_version = min_version
        self.max_version = max_version
        self.heartbeat = heartbeat
        self.link = Link(ack_timeout=ack_timeout, retry_limit=retry_limit, check_sequence=True)
        self.state = HostState.CLOSED
        self.version = 0
        self.heartbeats = 0
        self._last_tx = 0.0

    # -- calls -----------------------------------------------------------------------------------------
    def open(self, now: float) -> int:
        """Send HELLO (seq 0), forgetting everything of an earlier session; returns HELLO's seq."""
        self.link.reset()
        self.version = 0
        self.state = HostState.HELLO_SENT
        self.link.send_delimiter()
        seq = self.link.send(Hello(self.min_version, self.max_version), now)
        self._last_tx = now
        return seq

    def close(self) -> None:
        self.link.reset()
        self.state = HostState.CLOSED
        self.version = 0

    def send(self, message: Message, now: float) -> int:
        """Queue a message; returns its seq (the ACK or NAK naming it comes back as Answered/Refused)."""
        if self.state is not HostState.OPEN:
            raise ConnectionStateError(f"cannot send {message.TYPE.name}: connection is {self.state.value}")
        seq = self.link.send(message, now)
        self._touch(now)
        return seq

    def next_deadline(self) -> float | None:
        deadline = self.link.next_deadline()
        if self.state is HostState.OPEN:
            beat = self._last_tx + self.heartbeat
            deadline = beat if deadline is None else min(deadline, beat)
        return deadline

    def poll(self, now: float) -> list[Event]:
        out: list[Event] = []
        for ev in self.link.poll(now):
            self._on_link(ev, out)
        if self.state is HostState.OPEN and self.link.pending == 0 and now - self._last_tx >= self.heartbeat:
            self.heartbeats = (self.heartbeats + 1) & 0xFFFFFFFF
            self.link.send(Heartbeat(self.heartbeats), now)
        self._touch(now)
        return out

    def receive(self, data: bytes, now: float) -> list[Event]:
        out: list[Event] = []
        for ev in self.link.receive(data, now):
            self._on_link(ev, out)
        self._touch(now)
        return out

    # -- internals -------------------------------------------------------------------------------------
    def _touch(self, now: float) -> None:
        if self.link.has_output():
            self._last_tx = now

    def _on_link(self, ev: LinkEvent, out: list[Event]) -> None:
        if isinstance(ev, GaveUp):
            self.state = HostState.CLOSED
            out.append(ConnectionLost(f"no answer from the device after {ev.attempts} tries"))
            return
        if isinstance(ev, LinkRefused) and ev.reason == NakReason.NO_SESSION and self.state is HostState.OPEN:
            self._common(ev, out)
            self.state = HostState.CLOSED
            out.append(PeerRestarted("the device lost its session (restarted without notice)"))
            return
        if isinstance(ev, OutOfSequence):
            if self.state is HostState.OPEN:
                self.state = HostState.CLOSED
                self.link.drop_queue()
                if ev.reused:
                    what = f"reused sequence number {ev.seq} for a new {ev.message.TYPE.name}"
                else:
                    what = f"sent {ev.message.TYPE.name} with sequence number {ev.seq}"
                out.append(PeerMisbehaved(f"the device {what}; the next number was {ev.expected} (PROTOCOL.md §5.2)"))
            return
        if self._common(ev, out):
            return
        assert isinstance(ev, Delivered)
        msg = ev.message
        if isinstance(msg, Boot):
            if self.state is HostState.OPEN:
                self.state = HostState.CLOSED
                try:
                    why = BootReason(msg.reason).name.lower().replace("_", " ")
                except ValueError:
                    why = f"reason {msg.reason}"
                out.append(PeerRestarted(f"the device restarted ({why})", msg))
            return
        if self.state is HostState.HELLO_SENT:
            if isinstance(msg, HelloReply):
                self._on_reply(msg, out)
            else:
                self.link.forget_rx()  # a leftover of the old session: ACKed, ignored, not remembered
            return
        if self.state is HostState.OPEN and not isinstance(msg, HelloReply):
            out.append(MessageReceived(msg, ev.seq))

    def _on_reply(self, reply: HelloReply, out: list[Event]) -> None:
        ranges = f"host {self.min_version}..{self.max_version}, device {reply.min_version}..{reply.max_version}"
        if reply.version == 0:
            self.state = HostState.CLOSED
            out.append(SessionRefused(reply, f"no common protocol version: {ranges}"))
            return
        if not (self.min_version <= reply.version <= self.max_version and reply.version <= reply.max_version):
            self.state = HostState.CLOSED
            out.append(SessionRefused(reply, f"the device chose version {reply.version} outside {ranges}"))
            return
        self.version = reply.version
        self.link.version = reply.version
        self.state = HostState.OPEN
        out.append(SessionOpened(reply.version, reply))


class DeviceConnection(_Base):
    """The device's side: NO_SESSION ⇄ SESSION; table in PROTOCOL.md §6.6.

    ``judge`` decides on commands in a session (BAD_STATE, NOT_CAPABLE, BAD_FIELD, BUSY); the connection
    itself answers HELLO and NAKs everything else with NO_SESSION outside a session.
    """

    def __init__(
        self,
        *,
        judge: Judge | None = None,
        min_version: int = MIN_VERSION,
        max_version: int = MAX_VERSION,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        retry_limit: int = DEFAULT_RETRY_LIMIT,
        session_timeout: float | None = SESSION_TIMEOUT,
    ) -> None:
        self.min_version = min_version
        self.max_version = max_version
        self.session_timeout = session_timeout
        self._judge_command = judge
        self.link = Link(ack_timeout=ack_timeout, retry_limit=retry_limit, judge=self._judge, device=True)
        self.session = False

    @property
    def version(self) -> int:
        return self.link.version if self.session else 0

    def boot(self, reason: BootReason, now: float) -> None:
        """Power-up: forget everything, send 0x00 and BOOT (PROTOCOL.md §6.1)."""
        del now
        self.link.reset()
        self.session = False
        self.link.send_delimiter()
        self.link.send_unreliable(Boot(int(reason), self.max_version))

    def power_off(self) -> None:
        self.link.reset()
        self.session = False

    def send(self, message: Message, now: float) -> int | None:
        """Queue a message for the host; None (dropped) without a session."""
        if not self.session:
            return None
        return self.link.send(message, now)

    def next_deadline(self) -> float | None:
        deadline = self.link.next_deadline()
        if self.session and self.session_timeout is not None and self.link.last_heard is not None:
            idle = self.link.last_heard + self.session_timeout
            deadline = idle if deadline is None else min(deadline, idle)
        return deadline

    def poll(self, now: float) -> list[Event]:
        out: list[Event] = []
        for ev in self.link.poll(now):
            self._on_link(ev, now, out)
        heard, limit = self.link.last_heard, self.session_timeout
        if self.session and limit is not None and heard is not None and now - heard >= limit:
            self._lose(f"no frame from the host for {limit:g} s", out)
        return out

    def receive(self, data: bytes, now: float) -> list[Event]:
        out: list[Event] = []
        for ev in self.link.receive(data, now):
            self._on_link(ev, now, out)
        return out

    def _judge(self, msg: Message) -> tuple[NakReason, str] | None:
        if isinstance(msg, Hello):
            return None
        if not self.session:
            return NakReason.NO_SESSION, "no session: send HELLO first"
        return self._judge_command(msg) if self._judge_command is not None else None

    def _lose(self, detail: str, out: list[Event]) -> None:
        self.session = False
        self.link.drop_queue()
        out.append(ConnectionLost(detail))

    def _on_link(self, ev: LinkEvent, now: float, out: list[Event]) -> None:
        if isinstance(ev, GaveUp):
            if self.session:
                self._lose(f"no answer from the host after {ev.attempts} tries", out)
            return
        if self._common(ev, out):
            return
        assert isinstance(ev, Delivered)
        msg = ev.message
        if isinstance(msg, Hello):
            version = negotiate(msg.min_version, msg.max_version, self.min_version, self.max_version)
            # the link has reset itself and ACKed the HELLO; HELLO_REPLY is the device's message seq 0
            self.link.send(HelloReply(version, self.min_version, self.max_version), now)
            self.session = version > 0
            self.link.version = version if version else 1
            self.link.last_heard = now
            out.append(HelloReceived(msg, version))
            return
        out.append(MessageReceived(msg, ev.seq))
