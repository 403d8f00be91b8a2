"""Typed messages of the protocol. Layouts come from ``messages.json``; this module only names them.

At import every class and enum is checked against the table (names, order of fields, codes), so the table
stays the single source of truth.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from .table import load_table


class MsgType(IntEnum):
    HELLO = 0x01
    GET_INFO = 0x02
    HEARTBEAT = 0x03
    GET_STATUS = 0x04
    START_DEAL = 0x10
    MAKE_BOARD = 0x11
    ABORT = 0x12
    RESET = 0x13
    HELLO_REPLY = 0x81
    DEVICE_INFO = 0x82
    STATUS = 0x84
    DEAL_START = 0x90
    CARD_READ = 0x91
    DEAL_END = 0x92
    BOARD_DONE = 0x93
    FAULT = 0x94
    BOOT = 0xA0
    ACK = 0xF0
    NAK = 0xF1


class State(IntEnum):
    IDLE = 0
    DEALING = 1
    DUPLICATING = 2
    FAULT = 3


class Capability(IntEnum):
    READER = 1
    SHUFFLER = 2
    DUPLICATOR = 4


class DealKind(IntEnum):
    RANDOM = 0
    BOARD = 1


class BootReason(IntEnum):
    POWER_ON = 0
    POWER_LOSS = 1
    WATCHDOG = 2
    RESET_COMMAND = 3


class NakReason(IntEnum):
    UNKNOWN_TYPE = 1
    BAD_LENGTH = 2
    BAD_FIELD = 3
    UNSUPPORTED_VERSION = 4
    BAD_STATE = 5
    NOT_CAPABLE = 6
    NO_SESSION = 7
    BUSY = 8


class FaultCode(IntEnum):
    JAM = 1
    MISFEED = 2
    UNREADABLE_CARD = 3
    DUPLICATE_CARD = 4
    MISSING_CARD = 5
    EXTRA_CARD = 6
    WRONG_POCKET = 7
    HOPPER_EMPTY = 8
    BOARD_MISSING = 9
    POCKET_FULL = 10
    COVER_OPEN = 11
    POWER = 12
    OTHER = 255


@dataclass(frozen=True, slots=True)
class Hello:
    TYPE: ClassVar[MsgType] = MsgType.HELLO
    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class GetInfo:
    TYPE: ClassVar[MsgType] = MsgType.GET_INFO


@dataclass(frozen=True, slots=True)
class Heartbeat:
    TYPE: ClassVar[MsgType] = MsgType.HEARTBEAT
    counter: int


@dataclass(frozen=True, slots=True)
class GetStatus:
    TYPE: ClassVar[MsgType] = MsgType.GET_STATUS


@dataclass(frozen=True, slots=True)
class StartDeal:
    TYPE: ClassVar[MsgType] = MsgType.START_DEAL
    deal_id: int | None


@dataclass(frozen=True, slots=True)
class MakeBoard:
    TYPE: ClassVar[MsgType] = MsgType.MAKE_BOARD
    deal_id: int | None
    board: int
    copy: int
    deal: bytes


@dataclass(frozen=True, slots=True)
class Abort:
    TYPE: ClassVar[MsgType] = MsgType.ABORT


@dataclass(frozen=True, slots=True)
class Reset:
    TYPE: ClassVar[MsgType] = MsgType.RESET


@dataclass(frozen=True, slots=True)
class HelloReply:
    TYPE: ClassVar[MsgType] = MsgType.HELLO_REPLY
    version: int
    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    TYPE: ClassVar[MsgType] = MsgType.DEVICE_INFO
    capabilities: int
    pockets: int
    fw_major: int
    fw_minor: int
    fw_patch: int
    serial: str
    model: str

    def has(self, capability: Capability) -> bool:
        return bool(self.capabilities & capability)

    @property
    def firmware(self) -> str:
        return f"{self.fw_major}.{self.fw_minor}.{self.fw_patch}"


@dataclass(frozen=True, slots=True)
class Status:
    TYPE: ClassVar[MsgType] = MsgType.STATUS
    state: int
    deal_id: int | None
    cards_done: int
    fault: int


@dataclass(frozen=True, slots=True)
class DealStart:
    TYPE: ClassVar[MsgType] = MsgType.DEAL_START
    deal_id: int | None
    kind: int
    board: int
    copy: int


@dataclass(frozen=True, slots=True)
class CardRead:
    TYPE: ClassVar[MsgType] = MsgType.CARD_READ
    deal_id: int | None
    position: int | None
    card: int | None
    pocket: int | None
    confidence: int


@dataclass(frozen=True, slots=True)
class DealEnd:
    TYPE: ClassVar[MsgType] = MsgType.DEAL_END
    deal_id: int | None
    cards: int
    record: bytes


@dataclass(frozen=True, slots=True)
class BoardDone:
    TYPE: ClassVar[MsgType] = MsgType.BOARD_DONE
    deal_id: int | None
    board: int
    copy: int
    cards: int
    record: bytes


@dataclass(frozen=True, slots=True)
class Fault:
    TYPE: ClassVar[MsgType] = MsgType.FAULT
    deal_id: int | None
    code: int
    position: int | None
    card: int | None
    pocket: int | None
    detail: str


@dataclass(frozen=True, slots=True)
class Boot:
    TYPE: ClassVar[MsgType] = MsgType.BOOT
    reason: int
    max_version: int


@dataclass(frozen=True, slots=True)
class Ack:
    TYPE: ClassVar[MsgType] = MsgType.ACK
    acked_seq: int


@dataclass(frozen=True, slots=True)
class Nak:
    TYPE: ClassVar[MsgType] = MsgType.NAK
    nacked_seq: int
    nacked_type: int
    reason: int
    detail: str


Message = (
    Hello
    | GetInfo
    | Heartbeat
    | GetStatus
    | StartDeal
    | MakeBoard
    | Abort
    | Reset
    | HelloReply
    | DeviceInfo
    | Status
    | DealStart
    | CardRead
    | DealEnd
    | BoardDone
    | Fault
    | Boot
    | Ack
    | Nak
)

MESSAGE_CLASSES: dict[MsgType, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        GetInfo,
        Heartbeat,
        GetStatus,
        StartDeal,
        MakeBoard,
        Abort,
        Reset,
        HelloReply,
        DeviceInfo,
        Status,
        DealStart,
        CardRead,
        DealEnd,
        BoardDone,
        Fault,
        Boot,
        Ack,
        Nak,
    )
}


def _check_against_table() -> None:
    table = load_table()
    names = {m.name for m in table.messages}
    if names != {t.name for t in MsgType}:
        raise RuntimeError(f"messages.json and MsgType disagree: {sorted(names ^ {t.name for t in MsgType})}")
    for spec in table.messages:
        mt = MsgType[spec.name]
        if mt.value != spec.type:
            raise RuntimeError(f"messages.json: {spec.name} is type {spec.type}, MsgType says {mt.value}")
        cls = MESSAGE_CLASSES[mt]
        got = tuple(f.name for f in dataclasses.fields(cls))
        want = tuple(f.name for f in spec.fields)
        if got != want:
            raise RuntimeError(f"messages.json: {spec.name} fields {want} but class {cls.__name__} has {got}")
    for enum_name, enum_cls in (
        ("state", State),
        ("capability", Capability),
        ("deal_kind", DealKind),
        ("boot_reason", BootReason),
        ("nak_reason", NakReason),
        ("fault_code", FaultCode),
    ):
        want_values = table.enums[enum_name]
        got_values = {e.name: e.value for e in enum_cls}
        if want_values != got_values:
            raise RuntimeError(f"messages.json: enum {enum_name} {want_values} differs from {got_values}")


_check_against_table()
