"""Shared helpers of the protocol / driver / simulator tests: a simulator on a real medium and a driver on it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar, Unpack

from dealer.core.events import CardSeen, DealEnded, DeviceEvent, DeviceFault, Disconnected, FaultKind, Reconnected
from drivers.machine import MachineDriver
from drivers.simulator import FaultPlan, Shuffler, SimFault, SimulatorThread, VirtualMachine
from drivers.simulator.runner import Kind
from drivers.transport import TcpTransport, Transport, open_transport

T = TypeVar("T")


class LinkTiming(TypedDict):
    ack_timeout: float
    retry_limit: int


KINDS = ("pty", "usb", "tcp")
# Short retransmission timeout for fast fault tests; enough retries that a loaded CI machine is not a pulled cable.
FAST: LinkTiming = {"ack_timeout": 0.05, "retry_limit": 30}

# Each injected simulator fault and the typed event the driver must surface for it.
EXPECTED = {
    SimFault.JAM: FaultKind.JAM,
    SimFault.MISFEED: FaultKind.MISFEED,
    SimFault.UNREADABLE: FaultKind.UNREADABLE_CARD,
    SimFault.DUPLICATE_READ: FaultKind.DUPLICATE_CARD,
    SimFault.MISSING_CARD: FaultKind.MISSING_CARD,
    SimFault.WRONG_POCKET: FaultKind.WRONG_POCKET,
    SimFault.HOPPER_EMPTY: FaultKind.HOPPER_EMPTY,
    SimFault.COVER_OPEN: FaultKind.COVER_OPEN,
    SimFault.POWER_LOSS: FaultKind.POWER,
    SimFault.BOARD_MISSING: FaultKind.BOARD_MISSING,
    SimFault.POCKET_FULL: FaultKind.POCKET_FULL,
    SimFault.EXTRA_CARD: FaultKind.EXTRA_CARD,
}


class MachineOptions(TypedDict, total=False):
    """The simulator's keywords the tests set (``VirtualMachine``'s own names)."""

    pace: float
    shuffler: Shuffler
    capabilities: int
    power_outage: float
    cable_outage: float
    ack_timeout: float
    retry_limit: int
    session_timeout: float


class DriverOptions(TypedDict, total=False):
    """The driver's keywords the tests set (``MachineDriver``'s own names)."""

    heartbeat: float
    reconnect_delay: float
    handshake_timeout: float
    ack_timeout: float
    retry_limit: int
    reply_timeout: float
    report_timeout: float


MEDIA: dict[str, Kind] = {"pty": "pty", "usb": "usb", "tcp": "tcp"}


@contextlib.contextmanager
def simulator(
    kind: str, plan: FaultPlan | None = None, **machine_args: Unpack[MachineOptions]
) -> Iterator[SimulatorThread]:
    options = MachineOptions(
        pace=0, power_outage=0.15, cable_outage=0.15, ack_timeout=FAST["ack_timeout"], retry_limit=FAST["retry_limit"]
    )
    options.update(machine_args)
    machine = VirtualMachine(faults=plan, **options)
    with SimulatorThread(machine, MEDIA[kind]) as sim:
        yield sim


def transport_factory(sim: SimulatorThread) -> Callable[[], Transport]:
    if sim.kind == "usb":
        return lambda: open_transport("usb:1209:0001", usb_backend=sim.backend)
    if sim.kind == "tcp":
        tcp = sim.tcp
        assert tcp is not None
        return lambda: TcpTransport("127.0.0.1", tcp.port)
    return lambda: open_transport(sim.url)


@contextlib.asynccontextmanager
async def driver(sim: SimulatorThread, **kwargs: Unpack[DriverOptions]) -> AsyncIterator[MachineDriver]:
    options = DriverOptions(
        heartbeat=0.2, reconnect_delay=0.05, ack_timeout=FAST["ack_timeout"], retry_limit=FAST["retry_limit"]
    )
    options.update(kwargs)
    drv = MachineDriver(transport_factory(sim), **options)
    await drv.connect()
    try:
        yield drv
    finally:
        await drv.close()


@dataclass
class Outcome:
    deal_id: int
    cards: list[CardSeen] = field(default_factory=list)
    events: list[DeviceEvent] = field(default_factory=list)
    end: DealEnded | DeviceFault | Disconnected | None = None


def dealt(card: CardSeen) -> tuple[int, int]:
    """(card, pocket) of a card the machine read and put in a pocket, as the simulator's record lists it."""
    assert card.card is not None and card.pocket is not None, card
    return int(card.card), int(card.pocket)


async def run_deal(drv: MachineDriver, timeout: float = 10.0) -> Outcome:
    """Start a random deal and collect its events until it ends, faults, or the link drops."""
    deal_id = await drv.start_deal()
    out = Outcome(deal_id)
    while True:
        ev = await drv.next_event(timeout)
        out.events.append(ev)
        if isinstance(ev, CardSeen):
            out.cards.append(ev)
        elif isinstance(ev, DealEnded | DeviceFault | Disconnected):
            out.end = ev
            return out


async def wait_for(drv: MachineDriver, kind: type, timeout: float = 10.0) -> list[DeviceEvent]:
    seen: list[DeviceEvent] = []
    while True:
        ev = await drv.next_event(timeout)
        seen.append(ev)
        if isinstance(ev, kind):
            return seen


def run(coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


__all__ = [
    "KINDS",
    "DriverOptions",
    "Outcome",
    "Reconnected",
    "dealt",
    "driver",
    "run",
    "run_deal",
    "simulator",
    "wait_for",
]
