"""The small interface the dealing service uses for any dealing machine (real, simulated, other drivers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.core.events import DeviceEvent, DeviceFault


class DeviceError(DealerError):
    """The device could not do what was asked (names the device and the reason)."""


class CommandRefused(DeviceError):
    def __init__(self, command: str, reason: str, detail: str) -> None:
        self.command = command
        self.reason = reason
        self.detail = detail
        super().__init__(f"the device refused {command}: {reason} ({detail})")


class LinkLost(DeviceError):
    """The link dropped (or the device restarted). ``deal_id`` names a deal whose start was cut short: it is
    void, and its Disconnected or DeviceFault event still follows on the event stream."""

    def __init__(self, message: str, deal_id: int | None = None) -> None:
        super().__init__(message)
        self.deal_id = deal_id


class DeviceBusy(DeviceError):
    pass


@dataclass(frozen=True, slots=True)
class MachineInfo:
    serial: str
    model: str
    firmware: str
    protocol_version: int
    pockets: int
    reader: bool
    shuffler: bool
    duplicator: bool
    transport: str


@dataclass(frozen=True, slots=True)
class BoardResult:
    """Outcome of one copy of one board. ``ok`` only if every card went into the pocket the deal says."""

    deal_id: int
    board: int
    copy: int
    ok: bool
    fault: DeviceFault | None = None
    record: bytes | None = None


class DealingDevice(Protocol):
    @property
    def info(self) -> MachineInfo | None: ...

    async def start_deal(self) -> int:
        """Start a random deal; its cards arrive on :meth:`events`. Returns the deal id."""
        ...

    def events(self) -> AsyncIterator[DeviceEvent]: ...

    async def abort(self) -> None: ...

    async def make_board(self, board_number: int, deal: Deal, copy: int) -> BoardResult: ...

    async def close(self) -> None: ...
