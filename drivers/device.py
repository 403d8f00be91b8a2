"""The small interface the dealing service uses for any dealing machine (real, simulated, other drivers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.core.events import DeviceEvent, DeviceFault, FaultKind


class DeviceError(DealerError):
    """The device could not do what was asked (names the device and the reason)."""


class CommandRefused(DeviceError):
    def __init__(self, command: str, reason: str, detail: str) -> None:
        self.command = command
        self.reason = reason
        self.detail = detail
        super().__init__(
            "the device refused {command}: {reason} ({detail})", command=command, reason=reason, detail=detail
        )


class LinkLost(DeviceError):
    """The link dropped (or the device restarted). ``deal_id`` names a deal whose start was cut short: it is
    void, and its Disconnected or DeviceFault event still follows on the event stream."""

    def __init__(self, template: str = "", /, *, deal_id: int | None = None, **params: object) -> None:
        super().__init__(template, **params)
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


class BoardMachine(Protocol):
    """A dealing machine at the protocol level: deals, board copies, its event stream (``MachineDriver``).
    Board making (``dealer.export``) drives one of these through :meth:`DealingDevice.board_machine`."""

    @property
    def info(self) -> MachineInfo | None: ...

    @property
    def connected(self) -> bool: ...

    async def start_deal(self) -> int:
        """Start a random deal; its cards arrive on :meth:`events`. Returns the deal id."""
        ...

    def events(self) -> AsyncIterator[DeviceEvent]: ...

    async def abort(self) -> None: ...

    async def reset(self) -> None:
        """Clear a device fault (after the operator has fixed the machine)."""
        ...

    async def make_board(self, board_number: int, deal: Deal, copy: int) -> BoardResult: ...

    async def close(self) -> None: ...


class DealingDevice(Protocol):
    """One connected card source, whatever it is: a dealing machine (serial, USB, TCP), the simulator, a camera
    scanner under manual dealing, or a kind registered by another package (entry point group
    ``dealer.devices``). The web stations and the CLI use devices only through this interface;
    :func:`drivers.open_device` makes one.

    It yields ``dealer.core.events`` one at a time, can be asked to deal one deal, and reports its identity and
    last heartbeat. ``info`` and ``status`` are plain JSON-able views for the judge's console.
    """

    kind: str
    url: str
    can_deal: bool  # False for manual dealing under a camera: the operator deals, the device only reads
    can_inject: bool  # True for simulators: the judge's console offers fault injection

    async def open(self) -> None:
        """Connect (raises :class:`DeviceError` or another ``DealerError`` naming the problem)."""
        ...

    def info(self) -> dict[str, Any]:  # Any: a JSON view (strings, numbers, lists) that differs by kind
        ...

    def status(self) -> dict[str, Any]:  # Any: as info; at least state, heartbeat, connected
        ...

    async def request_deal(self) -> None:
        """Deal one deal; a manual station (``can_deal`` False) starts reading the operator's next deal."""
        ...

    async def next_event(self) -> DeviceEvent | None:
        """The next event; None when the stream has ended (device closed)."""
        ...

    async def inject_fault(self, kind: FaultKind) -> bool:
        """Simulators only: make the next card fail with ``kind``; False where not supported."""
        ...

    async def abort(self) -> None:
        """Stop the deal in progress, if any."""
        ...

    async def close(self) -> None: ...

    def board_machine(self) -> BoardMachine:
        """The open machine for board making; raises :class:`DeviceError` if this device cannot make boards."""
        ...
