"""What any card source reports (a dealing machine, a camera scanner, a simulator).

The dealing session consumes these and does not care where a card came from. Drivers build them; the
domain never does I/O to get them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .cards import Card, Seat


class FaultKind(Enum):
    JAM = "jam"
    MISFEED = "misfeed"
    UNREADABLE_CARD = "unreadable_card"
    DUPLICATE_CARD = "duplicate_card"
    MISSING_CARD = "missing_card"
    EXTRA_CARD = "extra_card"
    WRONG_POCKET = "wrong_pocket"
    HOPPER_EMPTY = "hopper_empty"
    BOARD_MISSING = "board_missing"
    POCKET_FULL = "pocket_full"
    COVER_OPEN = "cover_open"
    POWER = "power"
    DISCONNECTED = "disconnected"
    ABORTED = "aborted"
    PROTOCOL = "protocol"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class DealStarted:
    deal_id: int
    timestamp: float


@dataclass(frozen=True, slots=True)
class CardSeen:
    """One card read. ``card`` is None when the reader could not read it (never guessed).

    ``pocket`` is the seat the machine put the card in; None for manual dealing under a camera, where the
    dealing session assigns seats by dealing order. ``position`` is 0-based in the deal's dealing order.
    """

    deal_id: int
    position: int
    card: Card | None
    pocket: Seat | None
    confidence: float
    timestamp: float
    frame: int | None = None


@dataclass(frozen=True, slots=True)
class DealEnded:
    """The device says the deal is complete; ``record`` is its own canonical 13-byte record, if it keeps one."""

    deal_id: int
    timestamp: float
    record: bytes | None = None


@dataclass(frozen=True, slots=True)
class DeviceFault:
    kind: FaultKind
    detail: str
    timestamp: float
    deal_id: int | None = None
    position: int | None = None
    card: Card | None = None
    pocket: Seat | None = None


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The link to the device is gone; the deal in progress (if any) is lost and must be void."""

    reason: str
    timestamp: float
    deal_in_progress: int | None = None


@dataclass(frozen=True, slots=True)
class Reconnected:
    timestamp: float


DeviceEvent = DealStarted | CardSeen | DealEnded | DeviceFault | Disconnected | Reconnected
