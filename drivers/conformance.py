"""``dealer machine conformance``: check a device against PROTOCOL.md 1.2 and write a report a maker can attach.

The tester plays the host, but deliberately: it withholds ACKs, repeats frames, sends broken ones and noise,
and goes silent, and checks each answer against the text. Every check either passes or fails with the
deviation named and the section it breaks. It talks to the device through any :mod:`drivers.transport`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from cobs import cobs

from dealer.core.errors import Phrase
from firmware_protocol.cards import pack_seats, unpack_seats
from firmware_protocol.codec import (
    CRC,
    HEADER,
    TRUSTED_HEADER,
    Decoder,
    ErrorReason,
    FrameError,
    Received,
    crc32,
    encode,
    encode_raw,
)
from firmware_protocol.link import is_reliable
from firmware_protocol.messages import (
    Abort,
    Ack,
    BoardDone,
    Capability,
    CardRead,
    DealEnd,
    DealKind,
    DealStart,
    DeviceInfo,
    Fault,
    GetInfo,
    GetStatus,
    Heartbeat,
    Hello,
    HelloReply,
    MakeBoard,
    Message,
    Nak,
    NakReason,
    Reset,
    StartDeal,
    Status,
)
from firmware_protocol.table import load_table

from .transport import Transport, TransportClosed

_TABLE = load_table()
ANSWER_WAIT = 1.0  # how long an answer is waited for at all (its lateness is judged by the timer checks)
ANSWER_LIMIT_MS = _TABLE.answer_delay_ms  # §5.4: ACK/NAK within 50 ms of the frame's 0x00
TIMER_SLACK_MS = 25.0  # the tester's own scheduling and the link's transit, on top of every timer of the text
RETRY_MS = _TABLE.ack_timeout_ms  # §5.4: the retransmission timer
SESSION_MS = _TABLE.session_timeout_ms  # §5.6: the lost-host timer
QUIET_WAIT = 0.6  # how long "no answer" is watched for
REPLY_WAIT = _TABLE.reply_timeout_ms / 1000  # §5.4 timer table: a request's data after its ACK
OPERATION_WAIT = _TABLE.report_timeout_ms / 1000  # longest pause between two reports of a deal (a slow mechanism)
WRAP_MESSAGES = 520  # each way: every sequence number twice over (§5.2)
WRAP_PATIENCE = 60.0  # 520 exchanges at §5.5's lowest rate (18 messages a second each way) take under 60 s


class Deviation(Exception):
    """The device broke a rule; the message names it and the section."""


@dataclass
class CheckResult:
    name: str
    title: Phrase
    ok: bool
    detail: str
    seconds: float


@dataclass
class Report:
    target: str
    results: list[CheckResult] = field(default_factory=list)
    info: DeviceInfo | None = None
    max_answer_ms: float = 0.0
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.results) and all(r.ok for r in self.results)

    def render(self, say: Callable[[Phrase], str] = str) -> str:
        """The report as text; ``say`` puts each phrase in the reader's language (the CLI passes its own;
        ``str`` is English). The checks' details name protocol fields and sections and stay as written."""
        lines = [
            say(Phrase("Conformance report — open dealing-machine protocol, version 1 (text revision 1.2)")),
            say(Phrase("target: {target}", target=self.target)),
            say(Phrase("date: {date}", date=time.strftime("%Y-%m-%d %H:%M:%S %Z"))),
        ]
        if self.info is not None:
            i = self.info
            caps = [c.name for c in Capability if i.has(c)]
            lines.append(
                say(
                    Phrase(
                        "device: {model} (serial {serial}, firmware {firmware}, {pockets} pockets, capabilities "
                        "{caps})",
                        model=i.model,
                        serial=i.serial,
                        firmware=i.firmware,
                        pockets=i.pockets,
                        caps="+".join(caps) or say(Phrase("none")),
                    )
                )
            )
        lines.append("")
        for r in self.results:
            word = say(Phrase("PASS")) if r.ok else say(Phrase("FAIL"))
            seconds = say(Phrase("{seconds} s", seconds=round(r.seconds, 1)))
            lines.append(f"{word}  {r.name:<16} {say(r.title)} ({seconds})")
            if r.detail:
                lines.append(f"      {r.detail}")
        lines.append("")
        lines.append(say(Phrase("slowest answer seen: {ms} ms (the text allows 50 ms)", ms=round(self.max_answer_ms))))
        lines.append(
            say(
                Phrase(
                    "not checkable from the host: BOOT (power-cycle the device while `dealer machine info` runs and "
                    "watch for the restart) and FAULT (open the cover or jam the feed during `dealer machine deal`)"
                )
            )
        )
        if self.dropped:
            dropped = ", ".join(f"{k} {v}" for k, v in self.dropped.items())
            lines.append(say(Phrase("frames from the device the tester dropped: {dropped}", dropped=dropped)))
        passed = sum(r.ok for r in self.results)
        verdict = say(Phrase("CONFORMS")) if self.ok else say(Phrase("DOES NOT CONFORM"))
        lines.append(
            say(
                Phrase(
                    "result: {verdict} — {passed} of {total} checks passed",
                    verdict=verdict,
                    passed=passed,
                    total=len(self.results),
                )
            )
        )
        return "\n".join(lines) + "\n"


class Probe:
    """A deliberately controllable host end: raw frames out, decoded frames in, ACKs only when told."""

    def __init__(self, transport: Transport, report: Report) -> None:
        self.transport = transport
        self.report = report
        self.decoder = Decoder(_TABLE.versions_supported)
        self.inbox: list[tuple[float, Received]] = []
        self.arrived = asyncio.Event()
        self.seq = 0
        self.auto_ack = True
        self.crc_swapped = 0
        self.rx_last: int | None = None
        self._reader: asyncio.Task[None] | None = None
        self._sent_at = 0.0
        # rules checked on every frame the device sends, whatever the check (raised at the next expect)
        self.violations: list[str] = []
        self.tracking = False  # the device's numbering is followed from its HELLO_REPLY on (§5.2)
        self.rx_message: Message | None = None
        self._rx_seq: int | None = None
        self._last_rx: tuple[int, Message] | None = None
        self.sent: dict[int, tuple[float, str]] = {}  # our reliable frames: seq -> (time sent, name)
        self.awaiting: tuple[int, str, str] | None = None  # (seq, request, reply type) until its ACK/NAK
        self.latencies: list[float] = []  # ms from our frame to its ACK/NAK
        self.ack_delay = 0.0  # a slow host: ACKs held this long (flow control)
        self._late: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self.transport.open()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        with contextlib.suppress(Exception):
            await self.transport.close()

    async def _read(self) -> None:
        while True:
            try:
                data = await self.transport.read()
            except TransportClosed:
                return
            for ev in self.decoder.feed(data):
                if isinstance(ev, FrameError):
                    self.report.dropped[ev.reason.value] = self.report.dropped.get(ev.reason.value, 0) + 1
                    if ev.reason in TRUSTED_HEADER:  # the CRC was good: no line noise did this
                        self._violate(
                            f"the device sent a malformed frame ({ev.reason.value}: {ev.detail}; bytes "
                            f"{ev.frame.hex(' ')}) (§5.1, §9)"
                        )
                    if ev.reason is ErrorReason.BAD_CRC and _crc_swapped(ev.frame):
                        self.crc_swapped += 1
                    continue
                await self._on_frame(ev)

    async def _on_frame(self, ev: Received) -> None:
        now = time.monotonic()
        m = ev.message
        if isinstance(m, Ack | Nak):
            seq = m.acked_seq if isinstance(m, Ack) else m.nacked_seq
            sent = self.sent.pop(seq, None)
            if sent is not None:
                ms = (now - sent[0]) * 1000
                self.latencies.append(ms)
                self.report.max_answer_ms = max(self.report.max_answer_ms, ms)
            if self.awaiting is not None and self.awaiting[0] == seq:
                self.awaiting = None
        elif is_reliable(m):
            repeat = self._last_rx == (ev.seq, m)  # a retransmission of the last message, maybe of an old session
            self._last_rx = (ev.seq, m)
            self._follow(ev)
            if self.awaiting is not None and m.TYPE.name == self.awaiting[2] and not repeat:
                self._violate(
                    f"{m.TYPE.name} arrived before the ACK of {self.awaiting[1]} (seq {self.awaiting[0]}); the "
                    "answer's data is a separate message sent after the ACK (§5.4)"
                )
                self.awaiting = None
            if self.auto_ack:
                duplicate = ev.seq == self.rx_last
                self.rx_last = ev.seq
                if self.ack_delay > 0:
                    task = asyncio.get_running_loop().create_task(self._ack_later(ev.seq))
                    self._late.add(task)
                    task.add_done_callback(self._late.discard)
                else:
                    await self.write(encode(Ack(ev.seq), 0))
                if duplicate:
                    return
        self.inbox.append((now, ev))
        self.arrived.set()

    def _follow(self, ev: Received) -> None:
        """§5.2: each new reliable device message carries the previous number + 1; the same number only on a
        retransmission of the same message."""
        if isinstance(ev.message, HelloReply):
            self.tracking, self.rx_message = True, ev.message
            self._rx_seq = ev.seq
            return
        if not self.tracking:
            return
        last = self._rx_seq
        if last is not None and ev.seq == last and ev.message != self.rx_message:
            self._violate(
                f"{ev.message.TYPE.name} reuses sequence number {ev.seq} of the message before it "
                f"({_name(self.rx_message)}); a new message takes {(last + 1) & 0xFF} (§5.2)"
            )
        elif last is not None and ev.seq not in (last, (last + 1) & 0xFF):
            self._violate(
                f"{ev.message.TYPE.name} has sequence number {ev.seq} after {last}; the next is {(last + 1) & 0xFF} "
                "(§5.2)"
            )
        self._rx_seq, self.rx_message = ev.seq, ev.message

    def _violate(self, text: str) -> None:
        self.violations.append(text)
        self.arrived.set()  # a waiting expect() reports it now

    async def _ack_later(self, seq: int) -> None:
        await asyncio.sleep(self.ack_delay)
        with contextlib.suppress(TransportClosed):
            await self.write(encode(Ack(seq), 0))

    def check_rules(self) -> None:
        if self.violations:
            first, more = self.violations[0], len(self.violations) - 1
            self.violations.clear()
            raise Deviation(first + (f" (and {more} more)" if more else ""))

    async def write(self, data: bytes) -> None:
        self._sent_at = time.monotonic()
        await self.transport.write(data)

    def next_seq(self) -> int:
        seq = self.seq
        self.seq = (self.seq + 1) & 0xFF
        return seq

    async def send(self, msg: Message, seq: int | None = None, version: int = 1) -> int:
        seq = self.next_seq() if seq is None else seq
        spec = _TABLE.by_type[int(msg.TYPE)]
        self.sent[seq] = (time.monotonic(), spec.name)
        if spec.reply is not None:
            self.awaiting = (seq, spec.name, spec.reply)
        await self.write(encode(msg, seq, version))
        return seq

    async def expect(self, want: Callable[[Received], bool], what: str, timeout: float = ANSWER_WAIT) -> Received:
        deadline = time.monotonic() + timeout
        while True:
            self.check_rules()
            for i, (_, ev) in enumerate(self.inbox):
                if want(ev):
                    del self.inbox[i]
                    return ev
            left = deadline - time.monotonic()
            if left <= 0:
                self.check_rules()
                hint = ""
                if self.crc_swapped:
                    hint = f"; {self.crc_swapped} frame(s) had the CRC in big-endian byte order (§4: little-endian)"
                seen = ", ".join(_describe(e) for _, e in self.inbox[-5:]) or "nothing"
                raise Deviation(f"expected {what} within {timeout:g} s; got {seen}{hint}")
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self.arrived.wait()

    async def answer(self, seq: int, what: str, timeout: float = ANSWER_WAIT) -> Ack | Nak:
        ev = await self.expect(
            lambda e: (
                (isinstance(e.message, Ack) and e.message.acked_seq == seq)
                or (isinstance(e.message, Nak) and e.message.nacked_seq == seq)
            ),
            f"an ACK or NAK naming seq {seq} ({what})",
            timeout,
        )
        if ev.version != 1:
            raise Deviation(f"answer to {what} has header version {ev.version}; ACK and NAK always carry 1 (§6.3)")
        assert isinstance(ev.message, Ack | Nak)
        return ev.message

    async def ack(self, msg: Message, what: str) -> None:
        got = await self.answer(await self.send(msg), what)
        if isinstance(got, Nak):
            raise Deviation(f"{what} was refused: NAK {_reason(got.reason)} {got.detail!r}")

    async def nak(self, raw_or_msg: bytes | Message, seq: int, want: NakReason, what: str, rule: str) -> Nak:
        self.sent[seq] = (time.monotonic(), what)
        await self.write(raw_or_msg if isinstance(raw_or_msg, bytes) else encode(raw_or_msg, seq))
        try:
            got = await self.answer(seq, what)
        except Deviation as exc:
            raise Deviation(f"{what}: no NAK {want.name} ({rule}); {exc}") from None
        if isinstance(got, Ack):
            raise Deviation(f"{what}: ACKed, but {rule} requires NAK {want.name}")
        if got.reason != want:
            raise Deviation(f"{what}: NAK {_reason(got.reason)}, but {rule} requires NAK {want.name}")
        return got

    async def silence(self, what: str, seconds: float = QUIET_WAIT) -> None:
        before = len(self.inbox)
        await asyncio.sleep(seconds)
        if len(self.inbox) > before:
            got = [_describe(e) for _, e in self.inbox[before:]]
            more = f" … ({len(got)} in all)" if len(got) > 5 else ""
            raise Deviation(f"{what}; got {', '.join(got[:5])}{more}")

    async def hello(self, lo: int = 1, hi: int = 1) -> HelloReply:
        self.inbox.clear()
        self.seq = 0
        self.rx_last = None
        self.tracking = False  # leftovers of the old session may still arrive
        self.awaiting = None
        await self.write(b"\x00")
        await self.send(Hello(lo, hi), seq=0)
        self.seq = 1  # HELLO is seq 0; the next command seq 1 (§5.2)
        got = await self.answer(0, f"HELLO({lo}, {hi})")
        if isinstance(got, Nak):
            raise Deviation(f"HELLO was refused with NAK {_reason(got.reason)}; HELLO is always accepted (§6.2)")
        ev = await self.expect(lambda e: isinstance(e.message, HelloReply), "HELLO_REPLY after the ACK of HELLO")
        if ev.version != 1 or ev.seq != 0:
            raise Deviation(f"HELLO_REPLY has header version {ev.version}, seq {ev.seq}; must be 1 and 0 (§6.2)")
        assert isinstance(ev.message, HelloReply)
        return ev.message

    async def session(self) -> None:
        reply = await self.hello()
        if reply.version != 1:
            raise Deviation(f"HELLO(1, 1) answered with version {reply.version}, expected 1 (§6.2)")


def _crc_swapped(frame: bytes) -> bool:
    with contextlib.suppress(cobs.DecodeError):
        raw = cobs.decode(frame)
        return len(raw) >= 8 and struct.unpack_from(">I", raw, len(raw) - 4)[0] == crc32(raw[:-4])
    return False


def _name(msg: Message | None) -> str:
    return "nothing" if msg is None else msg.TYPE.name


def _reason(code: int) -> str:
    try:
        return NakReason(code).name
    except ValueError:
        return f"reason {code}"


def _describe(ev: Received) -> str:
    m = ev.message
    if isinstance(m, Ack):
        return f"ACK {m.acked_seq}"
    if isinstance(m, Nak):
        return f"NAK {m.nacked_seq} {_reason(m.reason)}"
    return f"{m.TYPE.name} seq {ev.seq}"


# -- the checks ------------------------------------------------------------------------------------------
Check = Callable[[Probe, Report], Awaitable[str]]


async def check_handshake(p: Probe, report: Report) -> str:
    reply = await p.hello(1, 1)
    if reply.version != 1:
        common = 1 if reply.min_version <= 1 <= reply.max_version else 0
        raise Deviation(
            f"HELLO_REPLY chose version {reply.version}; the highest common version of host 1..1 and device "
            f"{reply.min_version}..{reply.max_version} is {common} (§6.2)"
        )
    if not reply.min_version <= 1 <= reply.max_version:
        raise Deviation(f"HELLO_REPLY agreed 1 but says the device speaks {reply.min_version}..{reply.max_version}")
    await p.ack(GetInfo(), "GET_INFO")
    ev = await p.expect(lambda e: isinstance(e.message, DeviceInfo), "DEVICE_INFO after the ACK of GET_INFO")
    assert isinstance(ev.message, DeviceInfo)
    info = ev.message
    report.info = info
    scanner = info.capabilities == Capability.READER  # the READER-only profile (§8.1)
    if scanner and info.pockets != 0:
        raise Deviation(f"DEVICE_INFO of a READER-only device says {info.pockets} pockets; a scanner has 0 (§8.1)")
    if not scanner and info.pockets != 4:
        raise Deviation(f"DEVICE_INFO says {info.pockets} pockets; a bridge machine has 4 (§8.1, §9)")
    if not info.serial or not info.model:
        raise Deviation("DEVICE_INFO has an empty serial or model (§9): makers must identify the device")
    return f"version 1 agreed; device speaks {reply.min_version}..{reply.max_version}; {info.model} {info.serial}"


async def check_versions(p: Probe, report: Report) -> str:
    reply = await p.hello(9, 12)
    if reply.version != 0:
        raise Deviation(f"HELLO(9, 12) answered with version {reply.version}; no common version means 0 (§6.2)")
    # without a session: everything but HELLO gets NO_SESSION; an unknown type still gets UNKNOWN_TYPE first
    await p.nak(GetStatus(), p.next_seq(), NakReason.NO_SESSION, "GET_STATUS after HELLO_REPLY version 0", "§6.2")
    seq = p.next_seq()
    await p.nak(encode_raw(1, 0x55, seq, b""), seq, NakReason.UNKNOWN_TYPE, "type 0x55 without a session", "§5.1")
    reply = await p.hello(1, 200)
    if reply.version != 1:
        raise Deviation(f"HELLO(1, 200) answered with version {reply.version}; the highest common one is 1 (§6.2)")
    seq = p.next_seq()
    wrong = encode(GetStatus(), seq, 2)
    await p.nak(wrong, seq, NakReason.UNSUPPORTED_VERSION, "GET_STATUS with header version 2", "§6.3")
    return "version 0 without overlap, NO_SESSION after it, highest common version chosen, wrong header refused"


async def check_messages(p: Probe, report: Report) -> str:
    await p.session()
    await p.ack(Reset(), "RESET")
    await p.ack(Heartbeat(1), "HEARTBEAT")
    await p.ack(GetStatus(), "GET_STATUS")
    ev = await p.expect(lambda e: isinstance(e.message, Status), "STATUS after the ACK of GET_STATUS")
    assert isinstance(ev.message, Status)
    if ev.message.state != 0 or ev.message.fault != 0:
        raise Deviation(
            f"STATUS after RESET is state {ev.message.state} fault {ev.message.fault}; expected IDLE, 0 (§7)"
        )
    await p.ack(Abort(), "ABORT in IDLE")
    # the wrong direction: a device->host message sent to the device is never acted on (§5.1)
    seq = p.next_seq()
    await p.write(encode(CardRead(7, 0, 0, 0, 9), seq))
    got = await p.answer(seq, "a CARD_READ sent to the device")
    if isinstance(got, Nak) and got.reason != NakReason.BAD_STATE:
        raise Deviation(f"a CARD_READ sent to the device got NAK {_reason(got.reason)}; ACK or BAD_STATE (§5.1)")
    await p.silence("a message of the wrong direction is never acted on (§5.1)")
    return "HELLO, GET_INFO, HEARTBEAT, GET_STATUS, RESET, ABORT answered as §7 and §9 say; CARD_READ not acted on"


async def check_naks(p: Probe, report: Report) -> str:
    await p.session()
    seq = p.next_seq()
    await p.nak(encode_raw(1, 0x55, seq, b""), seq, NakReason.UNKNOWN_TYPE, "unknown type 0x55", "§5.1 step 5f")
    seq = p.next_seq()
    body = HEADER.pack(1, 0x04, seq, 3)  # GET_STATUS whose length field says 3 but has no payload
    bad_length = cobs.encode(body + CRC.pack(crc32(body))) + b"\x00"
    await p.nak(bad_length, seq, NakReason.BAD_LENGTH, "a length field that disagrees (CRC good)", "§5.1 step 5d")
    seq = p.next_seq()
    await p.nak(
        encode_raw(1, 0x04, seq, b"\x01"), seq, NakReason.BAD_LENGTH, "GET_STATUS with 1 payload byte", "§5.1 step 5g"
    )
    await p.nak(StartDeal(None), p.next_seq(), NakReason.BAD_FIELD, "START_DEAL with deal_id 0xFFFFFFFF", "§9")
    deal = bytearray(pack_seats([c // 13 for c in range(52)]))
    deal[0] = 0x55  # four cards moved to E: not 13 a pocket
    await p.nak(MakeBoard(77, 1, 1, bytes(deal)), p.next_seq(), NakReason.BAD_FIELD, "MAKE_BOARD with a bad deal", "§9")
    await p.nak(
        MakeBoard(77, 0, 1, pack_seats([c // 13 for c in range(52)])),
        p.next_seq(),
        NakReason.BAD_FIELD,
        "MAKE_BOARD board 0",
        "§9",
    )
    # never answered: the unacknowledged range, a broken NAK, a stale ACK
    await p.write(encode_raw(1, 0xA7, p.next_seq(), b""))
    await p.write(encode_raw(1, 0xF1, 0, b"\x01\x02\x03\xc0\xaf"))
    await p.write(encode(Ack(200), 0))
    await p.silence("frames of types 0xA0..0xFF must never be answered (§5)")
    return "UNKNOWN_TYPE, BAD_LENGTH (length field and payload size), BAD_FIELD; 0xA0..0xFF never answered"


async def check_duplicates(p: Probe, report: Report) -> str:
    await p.session()
    seq = p.next_seq()
    frame = encode(GetStatus(), seq)
    await p.write(frame)
    first = await p.answer(seq, "GET_STATUS")
    await p.expect(lambda e: isinstance(e.message, Status), "STATUS after GET_STATUS")
    await p.write(frame)  # the same frame again: its ACK was "lost"
    again = await p.answer(seq, "the repeated GET_STATUS")
    if again != first:
        raise Deviation(f"a duplicate got {again}, the first copy {first}; the same answer is due (§5.3)")
    try:
        await p.expect(lambda e: isinstance(e.message, Status), "", QUIET_WAIT)
    except Deviation:
        pass  # right: no second STATUS
    else:
        raise Deviation(f"no duplicate detection: a repeated GET_STATUS (seq {seq}) was acted on twice (§5.3)")
    # a NAKed frame is remembered too
    seq = p.next_seq()
    unknown = encode_raw(1, 0x56, seq, b"")
    await p.write(unknown)
    await p.write(unknown)
    n1 = await p.answer(seq, "type 0x56")
    n2 = await p.answer(seq, "type 0x56 repeated")
    if n1 != n2:
        raise Deviation("a repeated refused frame got a different answer (§5.3)")
    return "a repeated command is answered again and not acted on twice"


async def check_retransmission(p: Probe, report: Report) -> str:
    await p.session()
    p.auto_ack = False
    try:
        await p.ack(GetStatus(), "GET_STATUS")
        first = await p.expect(lambda e: isinstance(e.message, Status), "STATUS")
        t_first = time.monotonic()
        again = await p.expect(lambda e: isinstance(e.message, Status), "STATUS sent again when not ACKed", 2.0)
        gap = (time.monotonic() - t_first) * 1000
    finally:
        p.auto_ack = True
    if again.seq != first.seq or again.message != first.message:
        raise Deviation(f"the retransmission has seq {again.seq} (first {first.seq}); it must be the same frame (§5.4)")
    if not RETRY_MS - TIMER_SLACK_MS <= gap <= RETRY_MS + 4 * TIMER_SLACK_MS:
        raise Deviation(f"STATUS was sent again after {gap:.0f} ms; the retransmission timer is {RETRY_MS} ms (§5.4)")
    await p.write(encode(Ack(first.seq), 0))
    await p.silence("after the ACK nothing more may be retransmitted (§5.4)")
    return f"an unanswered message is retransmitted after {gap:.0f} ms with the same seq and stops after the ACK"


async def check_lost_host(p: Probe, report: Report) -> str:
    await p.session()
    p.auto_ack = False
    sends = 0
    try:
        await p.ack(GetStatus(), "GET_STATUS")
        t0 = time.monotonic()
        while True:
            try:
                await p.expect(lambda e: isinstance(e.message, Status), "STATUS", 1.5)
            except Deviation:
                break
            sends += 1
            if sends > 30:
                break
    finally:
        p.auto_ack = True
    want = _TABLE.retry_limit + 1
    if sends != want:
        raise Deviation(f"an unanswered STATUS was sent {sends} times; the text says {want} (§5.4)")
    elapsed = time.monotonic() - t0
    p.rx_last = None
    await p.nak(GetStatus(), p.next_seq(), NakReason.NO_SESSION, "GET_STATUS after exhausted retries", "§5.4")
    await p.session()
    quiet = (SESSION_MS - 600) / 1000
    await asyncio.sleep(quiet)  # not yet lost: the session must still be open
    got = await p.answer(await p.send(GetStatus()), f"GET_STATUS after {quiet:g} s of host silence")
    if isinstance(got, Nak):
        raise Deviation(
            f"after {quiet:g} s of host silence GET_STATUS got NAK {_reason(got.reason)}; the session lasts "
            f"{SESSION_MS} ms without a frame (§5.6)"
        )
    await p.expect(lambda e: isinstance(e.message, Status), "STATUS")
    await asyncio.sleep(SESSION_MS / 1000 + 0.5)
    await p.nak(GetStatus(), p.next_seq(), NakReason.NO_SESSION, "GET_STATUS after 5.5 s of host silence", "§5.6")
    return f"{sends} sends in {elapsed:.1f} s, then no session; the session outlives {quiet:g} s of silence, not 5.5 s"


async def check_noise(p: Probe, report: Report) -> str:
    await p.session()
    garbage = random.Random(16).randbytes(120).replace(b"\x00", b"\x01")  # reproducible noise
    await p.write(garbage + b"\x00")
    await p.write(b"\x55" * 300 + b"\x00")  # oversize
    cut = encode(GetStatus(), 250)
    await p.write(cut[:5] + b"\x00")  # cut short
    body = HEADER.pack(1, 0x04, 251, 0)
    await p.write(cobs.encode(body + CRC.pack(crc32(body) ^ 1)) + b"\x00")  # bad CRC
    await p.silence("garbage, oversize, cut and bad-CRC frames must not be answered (§5.1 steps 1-5c)")
    await p.ack(GetStatus(), "GET_STATUS after the noise")
    await p.expect(lambda e: isinstance(e.message, Status), "STATUS after the noise")
    await p.write(b"\x00\x00\x00")
    await p.ack(Heartbeat(2), "HEARTBEAT after idle fill")
    # a pause inside a frame shorter than the inter-byte timeout must not lose it (§5.6: MAY discard after 100 ms)
    seq = p.next_seq()
    frame = encode(Heartbeat(3), seq)
    await p.write(frame[:6])
    await asyncio.sleep(_TABLE.inter_byte_timeout_ms / 2000)
    await p.write(frame[6:])
    got = await p.answer(seq, "a HEARTBEAT with a 50 ms pause inside")
    if isinstance(got, Nak):
        raise Deviation(f"a HEARTBEAT with a 50 ms pause inside got NAK {_reason(got.reason)}")
    return (
        "garbage, oversize runs, cut frames and bad CRCs dropped silently; resynchronised on 0x00; a 50 ms pause "
        "inside a frame tolerated"
    )


async def _operation(p: Probe, deal_id: int, board: tuple[int, int, bytes] | None) -> str:
    start = await p.expect(lambda e: isinstance(e.message, DealStart | Fault), "DEAL_START", REPLY_WAIT)
    if isinstance(start.message, Fault):
        raise Deviation(f"the device faulted instead of dealing: {start.message}")
    assert isinstance(start.message, DealStart)
    kind = DealKind.BOARD if board else DealKind.RANDOM
    want_start = DealStart(deal_id, int(kind), board[0] if board else 0, board[1] if board else 0)
    if start.message != want_start:
        raise Deviation(f"{start.message} differs from {want_start} (§8)")
    seats: dict[int, int] = {}
    counts = [0, 0, 0, 0]
    for position in range(52):
        ev = await p.expect(
            lambda e: isinstance(e.message, CardRead | Fault | DealEnd | BoardDone),
            f"CARD_READ {position}",
            OPERATION_WAIT,
        )
        m = ev.message
        if not isinstance(m, CardRead):
            raise Deviation(f"expected CARD_READ position {position}, got {_describe(ev)} (§8)")
        if m.deal_id == deal_id and m.position is not None and m.position > position:
            raise Deviation(
                f"CARD_READ positions {position}..{m.position - 1} never came (position {m.position} did): a device "
                "queues its reports or pauses its mechanism, it never drops one (§5.5, §8)"
            )
        if m.deal_id != deal_id or m.position != position:
            raise Deviation(
                f"CARD_READ deal {m.deal_id} position {m.position}; expected deal {deal_id} position {position} (§8)"
            )
        if m.card is None or m.pocket is None or m.card in seats:
            raise Deviation(f"CARD_READ position {position}: card {m.card} pocket {m.pocket} (unreadable or repeated)")
        seats[m.card] = m.pocket
        counts[m.pocket] += 1
        if board and unpack_seats(board[2])[m.card] != m.pocket:
            raise Deviation(f"card {m.card} went into pocket {m.pocket}; the board's deal says otherwise (§8)")
    if counts != [13, 13, 13, 13]:
        raise Deviation(f"pockets got {counts} cards; 13 each expected")
    end = await p.expect(
        lambda e: isinstance(e.message, DealEnd | BoardDone | Fault), "the end of the operation", OPERATION_WAIT
    )
    m = end.message
    record = pack_seats([seats[c] for c in range(52)])
    if board:
        if not isinstance(m, BoardDone) or (m.deal_id, m.board, m.copy, m.cards, m.record) != (
            deal_id,
            board[0],
            board[1],
            52,
            record,
        ):
            raise Deviation(
                f"expected BOARD_DONE({deal_id}, {board[0]}, {board[1]}, 52, record of the reads), got {m} (§8)"
            )
    elif not isinstance(m, DealEnd) or (m.deal_id, m.cards, m.record) != (deal_id, 52, record):
        raise Deviation(f"expected DEAL_END({deal_id}, 52, record of the reads), got {m} (§8)")
    await p.silence(f"after the end of deal {deal_id} nothing more about it may come: 52 cards a deal (§8)")
    return record.hex()


async def check_deal(p: Probe, report: Report) -> str:
    await p.session()
    info = report.info
    if info is not None and not (info.has(Capability.SHUFFLER) and info.has(Capability.READER)):
        await p.nak(StartDeal(901), p.next_seq(), NakReason.NOT_CAPABLE, "START_DEAL without SHUFFLER+READER", "§9")
        return "no SHUFFLER/READER: START_DEAL refused with NOT_CAPABLE"
    await p.ack(StartDeal(901), "START_DEAL")
    record = await _operation(p, 901, None)
    # BAD_STATE while dealing: hold the ACKs so the deal cannot finish, then refuse a second START_DEAL
    await p.ack(StartDeal(902), "START_DEAL")
    p.auto_ack = False
    try:
        await p.expect(lambda e: isinstance(e.message, DealStart), "DEAL_START", OPERATION_WAIT)
        await p.nak(StartDeal(903), p.next_seq(), NakReason.BAD_STATE, "START_DEAL while dealing", "§7")
        await p.ack(Abort(), "ABORT while dealing")
    finally:
        p.auto_ack = True
    await p.session()  # a clean slate (the aborted deal's unanswered messages were dropped by HELLO)
    return f"a full deal of 52 cards with its record ({record}); BAD_STATE and ABORT while dealing"


async def check_board(p: Probe, report: Report) -> str:
    await p.session()
    deal = pack_seats([(3 * c + 1) % 4 for c in range(52)])  # 13 cards a pocket
    info = report.info
    if info is not None and not (info.has(Capability.DUPLICATOR) and info.has(Capability.READER)):
        await p.nak(
            MakeBoard(911, 3, 1, deal), p.next_seq(), NakReason.NOT_CAPABLE, "MAKE_BOARD without DUPLICATOR", "§9"
        )
        return "no DUPLICATOR: MAKE_BOARD refused with NOT_CAPABLE"
    await p.ack(MakeBoard(911, 3, 1, deal), "MAKE_BOARD")
    await _operation(p, 911, (3, 1, deal))
    return "board 3 copy 1 made with every card in its pocket and BOARD_DONE"


async def check_answer_timer(p: Probe, report: Report) -> str:
    await p.session()
    before = len(p.latencies)
    for n in range(20):
        await p.ack(Heartbeat(100 + n), "HEARTBEAT")
    times = sorted(p.latencies[before:])
    limit = ANSWER_LIMIT_MS + TIMER_SLACK_MS
    late = [t for t in times if t > limit]
    median = times[len(times) // 2] if times else 0.0
    if len(late) > 2 or median > limit:
        raise Deviation(
            f"{len(late)} of {len(times)} ACKs came later than {ANSWER_LIMIT_MS} ms (median {median:.0f} ms, slowest "
            f"{times[-1]:.0f} ms); the answer is due within {ANSWER_LIMIT_MS} ms of the frame (§5.4)"
        )
    return f"{len(times)} ACKs: median {median:.1f} ms, slowest {times[-1]:.1f} ms (limit {ANSWER_LIMIT_MS} ms)"


async def check_wrap(p: Probe, report: Report) -> str:
    await p.session()
    t0 = time.monotonic()
    for n in range(WRAP_MESSAGES):  # STATUS and DEVICE_INFO by turns: a number reused is never a true repeat
        if n % 2:
            await p.ack(GetInfo(), f"GET_INFO number {n + 1}")
            await p.expect(lambda e: isinstance(e.message, DeviceInfo), f"DEVICE_INFO number {n + 1}")
        else:
            await p.ack(GetStatus(), f"GET_STATUS number {n + 1}")
            await p.expect(lambda e: isinstance(e.message, Status), f"STATUS number {n + 1}")
        if time.monotonic() - t0 > WRAP_PATIENCE:
            raise Deviation(
                f"only {n + 1} command/answer exchanges in {WRAP_PATIENCE:g} s; with answers within 50 ms a device "
                "carries at least 18 messages a second each way (§5.4, §5.5)"
            )
    return (
        f"{WRAP_MESSAGES} commands and {WRAP_MESSAGES} answers: both sides' sequence numbers wrapped twice, every "
        "number the next one (§5.2)"
    )


async def _dealing(p: Probe, deal_id: int) -> None:
    """Start a deal and hold the ACKs so that it cannot end: the device stays in DEALING."""
    await p.ack(StartDeal(deal_id), "START_DEAL")
    p.auto_ack = False
    await p.expect(lambda e: isinstance(e.message, DealStart), "DEAL_START", REPLY_WAIT)


async def check_precedence(p: Probe, report: Report) -> str:
    """§5.1: when several reasons apply, the first in the order 5d, 5e, 5f, 5g, 5h, 11-15 is the one sent."""
    done = []
    await p.session()
    seq = p.next_seq()
    body = HEADER.pack(2, 0x04, seq, 3)  # length field wrong (5d) and header version 2 (5e)
    await p.nak(cobs.encode(body + CRC.pack(crc32(body))) + b"\x00", seq, NakReason.BAD_LENGTH,
                "a wrong length field with header version 2", "§5.1: step 5d before 5e")  # fmt: skip
    seq = p.next_seq()
    await p.nak(encode_raw(2, 0x55, seq, b""), seq, NakReason.UNSUPPORTED_VERSION,
                "unknown type 0x55 with header version 2", "§5.1: step 5e before 5f")  # fmt: skip
    done.append("BAD_LENGTH > UNSUPPORTED_VERSION > UNKNOWN_TYPE")
    info = report.info
    if info is not None and not info.has(Capability.DUPLICATOR):
        board0 = MakeBoard(912, 0, 1, pack_seats([c // 13 for c in range(52)]))
        await p.nak(board0, p.next_seq(), NakReason.NOT_CAPABLE, "MAKE_BOARD board 0 without DUPLICATOR",
                    "§5.1: step 13 before 14")  # fmt: skip
        done.append("NOT_CAPABLE > BAD_FIELD")
    if info is None or (info.has(Capability.SHUFFLER) and info.has(Capability.READER)):
        try:
            await _dealing(p, 904)
            await p.nak(StartDeal(None), p.next_seq(), NakReason.BAD_STATE,
                        "START_DEAL with deal_id none while dealing", "§5.1: step 12 before 14")  # fmt: skip
            await p.ack(Abort(), "ABORT while dealing")
        finally:
            p.auto_ack = True
        done.append("BAD_STATE > BAD_FIELD")
    reply = await p.hello(9, 12)  # no common version: no session
    if reply.version != 0:
        raise Deviation(f"HELLO(9, 12) answered with version {reply.version}; no common version means 0 (§6.2)")
    seq = p.next_seq()
    await p.nak(encode_raw(1, 0x04, seq, b"\x01"), seq, NakReason.BAD_LENGTH,
                "GET_STATUS with 1 payload byte without a session", "§5.1: step 5g before 11")  # fmt: skip
    await p.nak(StartDeal(None), p.next_seq(), NakReason.NO_SESSION,
                "START_DEAL with deal_id none without a session", "§5.1: step 11 before 14")  # fmt: skip
    done.append("BAD_LENGTH > NO_SESSION > BAD_FIELD")
    await p.session()
    return "; ".join(done)


async def check_flow_control(p: Probe, report: Report) -> str:
    await p.session()
    info = report.info
    if info is not None and not (info.has(Capability.SHUFFLER) and info.has(Capability.READER)):
        return "no SHUFFLER/READER: nothing to deal"
    p.ack_delay = 0.1  # a host slower than the mechanism: the device must queue or pause, never drop
    try:
        await p.ack(StartDeal(905), "START_DEAL")
        # a command while the device's messages wait for the slow host: answered with its data, or NAK BUSY
        got = await p.answer(await p.send(GetStatus()), "GET_STATUS while dealing to a slow host")
        if isinstance(got, Nak) and got.reason != NakReason.BUSY:
            raise Deviation(f"GET_STATUS while dealing got NAK {_reason(got.reason)}; DEALING accepts it (§7, §9)")
        await _operation(p, 905, None)
        busy = isinstance(got, Nak)
        if not busy:
            await p.expect(
                lambda e: isinstance(e.message, Status),
                "STATUS for the GET_STATUS ACKed during the deal (no room for it is NAK BUSY, §5.5)",
                REPLY_WAIT,
            )
    finally:
        p.ack_delay = 0.0
    answer = "NAK BUSY" if busy else "ACK and STATUS"
    return f"a deal with every ACK held 100 ms: 52 cards in order, none lost; GET_STATUS meanwhile: {answer} (§5.5)"


async def check_resumption(p: Probe, report: Report) -> str:
    """A deal cut by a lost session is void and never resumed: after the new HELLO nothing of it comes (§5.4, §8)."""
    await p.session()
    info = report.info
    if info is not None and not (info.has(Capability.SHUFFLER) and info.has(Capability.READER)):
        return "no SHUFFLER/READER: no deal to cut"
    await p.ack(StartDeal(906), "START_DEAL")
    p.auto_ack = False  # the host falls silent: the device's retransmissions run out (§5.4)
    try:
        await p.expect(lambda e: isinstance(e.message, DealStart), "DEAL_START", REPLY_WAIT)
        await asyncio.sleep((_TABLE.retry_limit + 2) * RETRY_MS / 1000)
    finally:
        p.auto_ack = True
    p.inbox.clear()
    await p.session()
    await p.silence("nothing of deal 906 may come after a new session: a deal cut by a lost session is void (§5.4, §8)")
    await p.ack(GetStatus(), "GET_STATUS after the new session")
    ev = await p.expect(lambda e: isinstance(e.message, Status), "STATUS after the new session")
    assert isinstance(ev.message, Status)
    if ev.message.state != 0 or ev.message.deal_id is not None:
        raise Deviation(
            f"STATUS after the session was lost mid-deal says state {ev.message.state} deal {ev.message.deal_id}; "
            "the deal stopped: IDLE, no deal (§7)"
        )
    return "deal 906 cut by exhausted retransmissions: nothing of it after the new HELLO, STATUS IDLE"


CHECKS: list[tuple[str, Phrase, Check]] = [
    ("handshake", Phrase("HELLO, HELLO_REPLY, GET_INFO, DEVICE_INFO (§6)"), check_handshake),
    ("versions", Phrase("version negotiation and header versions (§6.2, §6.3)"), check_versions),
    ("messages", Phrase("every host message type answered (§7, §9)"), check_messages),
    ("naks", Phrase("NAK reasons and the unanswered range (§5.1)"), check_naks),
    ("duplicates", Phrase("duplicate frames answered, not acted on (§5.3)"), check_duplicates),
    ("retransmission", Phrase("retransmission of unanswered messages (§5.4)"), check_retransmission),
    ("noise", Phrase("garbage, oversize, cut frames, bad CRC (§3, §5.1)"), check_noise),
    ("answer_timer", Phrase("ACK within 50 ms (§5.4)"), check_answer_timer),
    ("precedence", Phrase("the order of NAK reasons (§5.1)"), check_precedence),
    ("wrap", Phrase("sequence numbers wrap twice each way (§5.2)"), check_wrap),
    ("deal", Phrase("a full random deal (§8)"), check_deal),
    ("flow_control", Phrase("a slow host loses no card (§5.5)"), check_flow_control),
    ("board", Phrase("a board copy (§8)"), check_board),
    ("lost_host", Phrase("retries exhausted and host silence end the session (§5.4, §5.6)"), check_lost_host),
    ("resumption", Phrase("a deal cut by a lost session is never resumed (§5.4, §8)"), check_resumption),
]


async def run_conformance(
    transport: Transport, target: str, only: set[str] | None = None, progress: Callable[[str], None] | None = None
) -> Report:
    report = Report(target)
    probe = Probe(transport, report)
    try:
        await probe.start()
    except TransportClosed as exc:
        report.results.append(CheckResult("open", Phrase("open the link"), False, str(exc), 0.0))
        return report
    try:
        for name, title, check in CHECKS:
            if only is not None and name not in only:
                continue
            t0 = time.monotonic()
            probe.violations.clear()
            try:
                detail = await check(probe, report)
                probe.check_rules()
                ok = True
            except Deviation as exc:
                detail, ok = str(exc), False
            except TransportClosed as exc:
                detail, ok = f"the link closed: {exc}", False
            result = CheckResult(name, title, ok, detail, time.monotonic() - t0)
            report.results.append(result)
            if progress is not None:
                progress(f"{'PASS' if ok else 'FAIL'} {name}")
            if name == "handshake" and not ok:
                break  # nothing else can be checked without a session
    finally:
        await probe.stop()
    return report
