"""A virtual dealing machine: the firmware behaviour of PROTOCOL.md in software.

It speaks the protocol through a sans-I/O :class:`DeviceConnection` (sessions, versions, sequence numbers,
duplicates, retransmission, the lost-host timer), so it holds no protocol state of its own. An endpoint (pty,
TCP, USB backend) attaches a ``write`` function and feeds received bytes to :meth:`VirtualMachine.receive`.
Everything runs on one asyncio loop. ``history`` keeps the ground truth of every operation (which card
physically went where) for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cobs import cobs

from firmware_protocol.cards import pack_seats, unpack_seats
from firmware_protocol.codec import CRC, FIRST_UNANSWERED_TYPE, crc32
from firmware_protocol.connection import (
    SESSION_TIMEOUT,
    Answered,
    ConnectionLost,
    DeviceConnection,
    Event,
    HelloReceived,
    MessageReceived,
    Refused,
)
from firmware_protocol.link import DEFAULT_ACK_TIMEOUT, DEFAULT_RETRY_LIMIT, Link
from firmware_protocol.messages import (
    Abort,
    Ack,
    BoardDone,
    BootReason,
    Capability,
    CardRead,
    DealEnd,
    DealKind,
    DealStart,
    DeviceInfo,
    Fault,
    FaultCode,
    GetInfo,
    GetStatus,
    MakeBoard,
    Message,
    MsgType,
    NakReason,
    Reset,
    StartDeal,
    State,
    Status,
)
from firmware_protocol.table import load_table

from .faults import FaultPlan, NoiseConfig, ProtocolQuirk, SimFault
from .noise import LineNoise

Shuffler = Callable[[Sequence[int]], list[int]]
"""Takes the 52 card indices, returns them in the order the machine will feed them."""

DEVICE_MIN_VERSION = 1
DEVICE_MAX_VERSION = 1
_ACCEPTS = load_table().states


_MARK_52 = 1  # the confidence of the CARD_READ apply_quirks turns into position 52


class _SeqStuck:
    """The sequence-number wrap bug: once 255 went out, every new reliable frame carries 255 again, until a
    HELLO_REPLY (seq 0) restarts the count."""

    def __init__(self) -> None:
        self.stuck = False

    def rewrite(self, raw: bytearray) -> None:
        if raw[1] == MsgType.HELLO_REPLY:
            self.stuck = False
        elif raw[1] < FIRST_UNANSWERED_TYPE:
            if self.stuck:
                raw[2] = 0xFF
            self.stuck = self.stuck or raw[2] == 0xFF


def apply_quirks(data: bytes, quirks: set[ProtocolQuirk], seq: _SeqStuck | None = None) -> bytes:
    """Rewrite outgoing frames the way a buggy firmware would send them."""
    out = bytearray()
    acks = bytearray()
    for part in data.split(b"\x00")[:-1]:
        if not part:
            out += b"\x00"
            continue
        raw = bytearray(cobs.decode(part))
        if ProtocolQuirk.DATA_BEFORE_ACK in quirks and raw[1] == MsgType.ACK:
            acks += part + b"\x00"
            continue
        if seq is not None and ProtocolQuirk.SEQ_STUCK in quirks:
            seq.rewrite(raw)
            raw[-4:] = CRC.pack(crc32(bytes(raw[:-4])))
        if ProtocolQuirk.POSITION_52 in quirks and raw[1] == MsgType.CARD_READ and raw[11] == _MARK_52:
            raw[8] = 52  # position: the encoder refuses 52, as it should
            raw[-4:] = CRC.pack(crc32(bytes(raw[:-4])))
        if ProtocolQuirk.BAD_SERIAL in quirks and raw[1] == MsgType.DEVICE_INFO:
            raw[4 + 5 + 2] = 0  # serial "SI\0-000001": a str16 the receiver must refuse (§1)
            raw[-4:] = CRC.pack(crc32(bytes(raw[:-4])))
        if ProtocolQuirk.NO_NAK in quirks and raw[1] == MsgType.NAK:
            continue
        if ProtocolQuirk.WRONG_VERSION in quirks and raw[1] == MsgType.HELLO_REPLY:
            raw[4:7] = bytes([2, 1, 2])
            raw[-4:] = CRC.pack(crc32(bytes(raw[:-4])))
        if ProtocolQuirk.CRC_BIG_ENDIAN in quirks:
            raw[-4:] = raw[-4:][::-1]
        out += cobs.encode(bytes(raw)) + b"\x00"
    return bytes(out + acks)


def acks_bad_crc(data: bytes) -> list[int]:
    """The seqs a firmware that answers before checking the CRC would ACK in ``data`` (whole frames only)."""
    seqs = []
    for part in data.split(b"\x00")[:-1]:
        with contextlib.suppress(cobs.DecodeError):
            raw = cobs.decode(part)
            if len(raw) >= 8 and raw[1] < FIRST_UNANSWERED_TYPE and CRC.unpack(raw[-4:])[0] != crc32(raw[:-4]):
                seqs.append(raw[2])
    return seqs


def csprng_shuffle(cards: Sequence[int]) -> list[int]:
    """Uniform shuffle driven by the OS CSPRNG (``secrets`` / os.urandom)."""
    deck = list(cards)
    secrets.SystemRandom().shuffle(deck)
    return deck


_STOP_FAULTS = {
    SimFault.JAM: FaultCode.JAM,
    SimFault.MISFEED: FaultCode.MISFEED,
    SimFault.COVER_OPEN: FaultCode.COVER_OPEN,
    SimFault.HOPPER_EMPTY: FaultCode.HOPPER_EMPTY,
    SimFault.BOARD_MISSING: FaultCode.BOARD_MISSING,
    SimFault.POCKET_FULL: FaultCode.POCKET_FULL,
}


@dataclass(slots=True)
class DealTruth:
    """What really happened in one operation (ground truth, for tests)."""

    operation: int
    deal_id: int
    kind: DealKind
    board: int = 0
    copy: int = 0
    dealt: list[tuple[int, int]] = field(default_factory=list)  # (card, pocket) physically, in feed order
    fault: SimFault | None = None
    fault_position: int | None = None
    completed: bool = False
    interrupted: str | None = None  # "abort", "reset", "hello", "host lost", "power loss"


class VirtualMachine:
    def __init__(
        self,
        *,
        pace: float = 6.0,
        shuffler: Shuffler = csprng_shuffle,
        faults: FaultPlan | None = None,
        serial: str = "SIM-000001",
        model: str = "OpenDealer Sim",
        capabilities: int = Capability.READER | Capability.SHUFFLER | Capability.DUPLICATOR,
        pockets: int = 4,  # 0 for a card scanner (READER only, PROTOCOL.md §8.1)
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        retry_limit: int = DEFAULT_RETRY_LIMIT,
        power_outage: float = 0.5,
        cable_outage: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        history_limit: int | None = 10_000,
        session_timeout: float | None = SESSION_TIMEOUT,
        min_version: int = DEVICE_MIN_VERSION,
        max_version: int = DEVICE_MAX_VERSION,
    ) -> None:
        self.pace = pace
        self.shuffler = shuffler
        self.faults = faults if faults is not None else FaultPlan()
        self.serial = serial
        self.model = model
        self.capabilities = capabilities
        self.pockets = pockets
        self.power_outage = power_outage
        self.cable_outage = cable_outage
        self.clock = clock
        self.conn = DeviceConnection(
            judge=self._judge,
            min_version=min_version,
            max_version=max_version,
            ack_timeout=ack_timeout,
            retry_limit=retry_limit,
            session_timeout=session_timeout,
        )
        self.noise_out = LineNoise(self.faults.noise, self.faults.rng)
        self.noise_in = LineNoise(NoiseConfig(corrupt_rate=self.faults.noise.corrupt_rate), self.faults.rng)
        self.state = State.IDLE
        self.fault_code = 0
        self.powered = True
        # the last ``history_limit`` operations (None: all); bounded so a long-running simulator keeps flat memory
        self.history: deque[DealTruth] = deque(maxlen=history_limit)
        self.operations = 0
        self.completed = 0
        self.unplug: Callable[[float], None] | None = None  # set by the endpoint: pull the cable for N s
        self._wire: Callable[[bytes], None] | None = None
        self._op: asyncio.Task[None] | None = None
        self._current: DealTruth | None = None
        self._cards_done = 0
        self._wake: asyncio.Event | None = None
        self._answered: asyncio.Event | None = None
        self._runner: asyncio.Task[None] | None = None
        self._seq_quirk = _SeqStuck()

    # -- wiring ----------------------------------------------------------------------------------------
    def attach(self, write: Callable[[bytes], None]) -> None:
        self._wire = write

    def detach(self) -> None:
        self._wire = None

    @property
    def link(self) -> Link:
        return self.conn.link

    @property
    def session(self) -> bool:
        return self.conn.session

    def receive(self, data: bytes) -> None:
        if not self.powered:
            return
        if ProtocolQuirk.NO_DUPLICATE_DETECTION in self.faults.quirks:
            self.conn.link.forget_rx()  # the bug: every frame looks new
        data = self.noise_in.apply(data)
        if ProtocolQuirk.ACK_BAD_CRC in self.faults.quirks:
            for seq in acks_bad_crc(data):
                self.conn.link.send_unreliable(Ack(seq))
        events = self.conn.receive(data, self.clock())
        self._handle(events)
        self.flush()

    def flush(self, wake: bool = True) -> None:
        data = self.conn.data_to_send()
        if data and self.faults.quirks:
            data = apply_quirks(data, self.faults.quirks, self._seq_quirk)
        if data and self._wire is not None and self.powered:
            if ProtocolQuirk.LATE_ANSWER in self.faults.quirks:
                asyncio.get_running_loop().call_later(0.4, self._late_write, self.noise_out.apply(data))
            else:
                self._wire(self.noise_out.apply(data))
        if wake and self._wake is not None:
            self._wake.set()  # the retransmission deadline may have changed

    def _late_write(self, data: bytes) -> None:
        if self._wire is not None and self.powered:
            self._wire(data)

    async def run(self) -> None:
        """The firmware main loop: boot, then serve retransmission timers until cancelled."""
        self._wake = asyncio.Event()
        self._answered = asyncio.Event()
        self._boot(BootReason.POWER_ON)
        try:
            while True:
                deadline = self.conn.next_deadline()
                timeout = None if deadline is None else max(0.0, deadline - self.clock())
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._wake.wait()
                self._wake.clear()
                self._handle(self.conn.poll(self.clock()))
                self.flush(wake=False)
        finally:
            if self._op is not None:
                self._op.cancel()

    def _boot(self, reason: BootReason) -> None:
        self.conn.boot(reason, self.clock())
        self.flush()

    # -- protocol --------------------------------------------------------------------------------------
    def _judge(self, msg: Message) -> tuple[NakReason, str] | None:
        """Commands in a session (the connection handles HELLO and NO_SESSION)."""
        name = msg.TYPE.name
        if ProtocolQuirk.BAD_FIELD_FIRST in self.faults.quirks and isinstance(msg, StartDeal) and msg.deal_id is None:
            return NakReason.BAD_FIELD, "deal_id must not be 0xFFFFFFFF"
        if name not in _ACCEPTS[self.state.name]:
            return NakReason.BAD_STATE, f"{name} is not accepted in state {self.state.name}"
        if isinstance(msg, StartDeal):
            if not self.capabilities & Capability.SHUFFLER:
                return NakReason.NOT_CAPABLE, "this machine has no shuffler"
            if msg.deal_id is None:
                return NakReason.BAD_FIELD, "deal_id must not be 0xFFFFFFFF"
        if isinstance(msg, MakeBoard):
            if not self.capabilities & Capability.DUPLICATOR:
                return NakReason.NOT_CAPABLE, "this machine is no duplicator"
            if msg.deal_id is None or msg.board < 1 or msg.copy < 1:
                return NakReason.BAD_FIELD, "deal_id, board and copy must be set (board, copy ≥ 1)"
            if any(unpack_seats(msg.deal).count(s) != 13 for s in range(4)):
                return NakReason.BAD_FIELD, "the deal does not give 13 cards to each pocket"
        return None

    def _handle(self, events: list[Event]) -> None:
        for ev in events:
            if isinstance(ev, MessageReceived):
                self._on_message(ev.message)
            elif isinstance(ev, HelloReceived):
                if ProtocolQuirk.RESUMES not in self.faults.quirks:
                    self._stop_operation("hello")
            elif isinstance(ev, Answered | Refused):
                if self._answered is not None:
                    self._answered.set()
            elif isinstance(ev, ConnectionLost):
                # The host is gone: the connection dropped the session; the deal in progress is void.
                if ProtocolQuirk.RESUMES not in self.faults.quirks:
                    self._stop_operation("host lost")
                if self._answered is not None:
                    self._answered.set()

    def _send(self, msg: Message) -> None:
        self.conn.send(msg, self.clock())

    def _on_message(self, msg: Message) -> None:
        if isinstance(msg, GetInfo):
            self._send(
                DeviceInfo(self.capabilities, self.pockets, 1, 0, 0, self.serial[:16], self.model[:16]),
            )
        elif isinstance(msg, GetStatus):
            if ProtocolQuirk.NO_BUSY in self.faults.quirks and self.state is State.DEALING:
                return  # ACKed by the connection already; no room while dealing, and no BUSY either: STATUS lost
            deal_id = self._current.deal_id if self._current is not None and self._op is not None else None
            self._send(Status(int(self.state), deal_id, self._cards_done, self.fault_code))
        elif isinstance(msg, StartDeal):
            assert msg.deal_id is not None
            self._op = asyncio.get_running_loop().create_task(self._operate(msg.deal_id, DealKind.RANDOM, 0, 0, None))
        elif isinstance(msg, MakeBoard):
            assert msg.deal_id is not None
            self._op = asyncio.get_running_loop().create_task(
                self._operate(msg.deal_id, DealKind.BOARD, msg.board, msg.copy, unpack_seats(msg.deal))
            )
        elif isinstance(msg, Abort):
            self._stop_operation("abort")
        elif isinstance(msg, Reset):
            self._stop_operation("reset")
            self.state = State.IDLE
            self.fault_code = 0

    def _stop_operation(self, why: str) -> None:
        if self._op is not None and not self._op.done() and self._op is not asyncio.current_task():
            self._op.cancel()
            if self._current is not None and not self._current.completed:
                self._current.interrupted = why
        self._op = None
        if self.state in (State.DEALING, State.DUPLICATING):
            self.state = State.IDLE

    def _fault(self, code: FaultCode, deal_id: int, position: int | None, card: int | None, pocket: int | None) -> None:
        self.state = State.FAULT
        self.fault_code = int(code)
        self._send(Fault(deal_id, int(code), position, card, pocket, f"simulated {code.name.lower()}"))

    # -- the mechanism ---------------------------------------------------------------------------------
    async def _drain(self) -> None:
        """Back-pressure: wait until the message in flight is answered."""
        assert self._answered is not None
        while self.link.pending > 1 and self.session:
            self._answered.clear()
            await self._answered.wait()

    async def _operate(self, deal_id: int, kind: DealKind, board: int, copy: int, target: bytes | None) -> None:
        self.operations += 1
        truth = DealTruth(self.operations, deal_id, kind, board, copy)
        self.history.append(truth)
        self._current = truth
        self._cards_done = 0
        order = self.shuffler(range(52))
        if sorted(order) != list(range(52)):
            self._fault(FaultCode.OTHER, deal_id, None, None, None)
            return
        pockets = [i % 4 for i in range(52)] if target is None else [target[c] for c in order]
        self.state = State.DEALING if target is None else State.DUPLICATING
        self._send(DealStart(deal_id, int(kind), board, copy))
        self.flush()
        drawn = self.faults.draw(self.operations)
        fault, at = drawn if drawn is not None else (None, -1)
        truth.fault, truth.fault_position = fault, (at if fault is not None else None)
        reported = 0
        rng = self.faults.rng
        for i, card in enumerate(order):
            await asyncio.sleep(self.pace / 52 if self.pace > 0 else 0)
            pocket = pockets[i]
            report: int | None = card
            if i == at and fault is not None:
                if fault in _STOP_FAULTS:
                    self._fault(_STOP_FAULTS[fault], deal_id, reported, None, None)
                    self.flush()
                    return
                if fault is SimFault.UNREADABLE:
                    truth.dealt.append((card, pocket))
                    self._send(CardRead(deal_id, reported, None, pocket, 0))
                    self._fault(FaultCode.UNREADABLE_CARD, deal_id, reported, None, pocket)
                    self.flush()
                    return
                if fault is SimFault.POWER_LOSS:
                    await self._power_loss()
                    return
                if fault is SimFault.CABLE_PULLED and self.unplug is not None:
                    self.unplug(self.cable_outage)
                if fault is SimFault.DUPLICATE_READ:
                    report = order[i - 1] if i > 0 else order[1]
                if fault is SimFault.WRONG_POCKET:
                    pocket = (pocket + 1 + rng.randrange(3)) % 4
                if fault is SimFault.MISSING_CARD:
                    truth.dealt.append((card, pocket))
                    self._cards_done += 1
                    continue
            truth.dealt.append((card, pocket))
            self._cards_done += 1
            quirks = self.faults.quirks
            if ProtocolQuirk.STALLS in quirks and i == 20:
                await asyncio.Event().wait()  # stuck for good: only ABORT, RESET or HELLO cancels it
            told = reported - 1 if ProtocolQuirk.REPEATED_POSITION in quirks and i == 10 else reported
            if ProtocolQuirk.WRONG_DEAL_ID in quirks and i == 5:
                self._send(CardRead(deal_id + 1, told, report, pocket, 255))
                reported += 1
                self.flush()
                await self._drain()
                continue
            if ProtocolQuirk.DROPS_WHEN_BUSY in quirks:
                if self.link.pending == 0:  # a one-message buffer: a card while it is full is lost
                    self._send(CardRead(deal_id, told, report, pocket, rng.randrange(230, 256)))
                reported += 1
                self.flush()
                continue
            self._send(CardRead(deal_id, told, report, pocket, rng.randrange(230, 256)))
            reported += 1
            self.flush()
            await self._drain()
        if ProtocolQuirk.POSITION_52 in self.faults.quirks:
            self._send(CardRead(deal_id, 51, order[0], 0, _MARK_52))
        seats = [0] * 52
        for card, pocket in truth.dealt:
            seats[card] = pocket
        record = pack_seats(seats)
        # a stray 53rd card (from another deck) passes the feed counter unread
        fed = 53 if fault is SimFault.EXTRA_CARD else 52
        if target is None:
            self._send(DealEnd(deal_id, fed, record))
        else:
            self._send(BoardDone(deal_id, board, copy, fed, record))
        if ProtocolQuirk.CARD_AFTER_END in self.faults.quirks:
            self._send(CardRead(deal_id, 51, order[0], 0, 255))
        truth.completed = True
        self.completed += 1
        self.state = State.IDLE
        self._op = None
        self.flush()

    async def _power_loss(self) -> None:
        if self._current is not None:
            self._current.interrupted = "power loss"
        self.powered = False
        self.conn.power_off()
        self.state = State.IDLE
        self._op = None
        await asyncio.sleep(self.power_outage)
        self.powered = True
        self._boot(BootReason.POWER_LOSS)
