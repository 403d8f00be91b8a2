"""Device kind ``simulator``: the virtual dealing machine of :mod:`drivers.simulator` behind a pseudo-terminal
(url ``pty`` or empty), on a loopback TCP port that pyserial opens as ``socket://`` (url ``tcp``; the default
where there is no pty, as on Windows), or behind its pyusb backend (url ``usb``), driven by the same driver as
hardware, so ``make run`` exercises the serial path a real machine takes."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
from typing import Any, Literal

from dealer.core.events import FaultKind

from ..device import DeviceError
from ..discovery import Candidate
from ..registry import DeviceOptions
from ..simulator import FaultPlan, SimFault, SimulatorThread, VirtualMachine, parse_faults
from .machine import MachineDevice

# the fault the judge asks for (FaultKind) -> the simulator's fault
SIM_FAULTS = {
    FaultKind.JAM: SimFault.JAM,
    FaultKind.MISFEED: SimFault.MISFEED,
    FaultKind.UNREADABLE_CARD: SimFault.UNREADABLE,
    FaultKind.DUPLICATE_CARD: SimFault.DUPLICATE_READ,
    FaultKind.MISSING_CARD: SimFault.MISSING_CARD,
    FaultKind.WRONG_POCKET: SimFault.WRONG_POCKET,
    FaultKind.HOPPER_EMPTY: SimFault.HOPPER_EMPTY,
    FaultKind.COVER_OPEN: SimFault.COVER_OPEN,
    FaultKind.POWER: SimFault.POWER_LOSS,
    FaultKind.DISCONNECTED: SimFault.CABLE_PULLED,
}
RANDOM_FAULTS = (SimFault.JAM, SimFault.MISFEED, SimFault.UNREADABLE, SimFault.DUPLICATE_READ, SimFault.COVER_OPEN)
USB_ID = "usb:1209:0001"  # the simulator's USB identity (pid.codes test VID/PID)
HAS_PTY = importlib.util.find_spec("termios") is not None  # POSIX; Windows has none: the simulator takes TCP
URLS = ("", "pty", "tcp", "usb", "simulator")


def sim_serial(station: str) -> str:
    """The simulated machine's serial number: ``SIM-<station>``; the protocol's serial is ASCII, so a station named
    in Cyrillic («Стол 1») gets ``SIM-`` and 8 hex digits of its name's SHA-256 instead."""
    if station.isascii() and station.isprintable():
        return f"SIM-{station}"
    return "SIM-" + hashlib.sha256(station.encode("utf-8")).hexdigest()[:8]


def medium_of(url: str, has_pty: bool = HAS_PTY) -> Literal["pty", "tcp", "usb"]:
    """Where the simulator sits for a station's url: ``usb``, ``tcp``, else a pty (TCP where there is none)."""
    if url in ("usb", "tcp"):
        return url  # type: ignore[return-value]
    return "pty" if has_pty else "tcp"


def fault_plan(options: DeviceOptions) -> FaultPlan:
    """The options' fault plan (``faults`` spec), else ``fault_rate`` spread over the usual random faults."""
    if options.faults:
        return parse_faults(options.faults, seed=options.seed)
    share = options.fault_rate / len(RANDOM_FAULTS)
    return FaultPlan(rates={fault: share for fault in RANDOM_FAULTS} if share else {}, seed=options.seed)


class SimulatedMachine(MachineDevice):
    """The virtual machine in a thread of this process, reached over a real pty (or its USB backend)."""

    can_inject = True

    def __init__(self, kind: str, url: str, options: DeviceOptions) -> None:
        if url not in URLS:
            raise DeviceError(
                "simulator url {url!r}: a simulator sits on 'pty' (default), 'tcp' (loopback) or 'usb' (pyusb backend)",
                url=url,
            )
        self.medium: Literal["pty", "tcp", "usb"] = medium_of(url)
        super().__init__(kind, url or self.medium, options)
        self._sim: SimulatorThread | None = None

    @classmethod
    def discover(cls, kind: str) -> list[Candidate]:
        return [Candidate("simulator", "simulator", "simulated dealing machine (pty)")]

    def _transport_spec(self) -> tuple[str, Any]:
        if self._sim is not None and self._sim.backend is not None:
            return USB_ID, self._sim.backend
        return self.url, None

    async def open(self) -> None:
        o = self.options
        pace = o.pace if o.pace is not None else 52.0 / o.cards_per_second
        machine = VirtualMachine(pace=pace, faults=fault_plan(o), serial=sim_serial(o.name), history_limit=64)
        self._sim = SimulatorThread(machine, self.medium)
        await asyncio.to_thread(self._sim.start)
        self.url = self._sim.url if self.medium != "usb" else f"{USB_ID} (simulator backend)"
        try:
            await super().open()
        except Exception:
            await self._stop_sim()
            raise

    async def close(self) -> None:
        await super().close()
        await self._stop_sim()

    async def _stop_sim(self) -> None:
        if self._sim is not None:
            sim, self._sim = self._sim, None
            await asyncio.to_thread(sim.stop)

    async def inject_fault(self, kind: FaultKind) -> bool:
        sim = self._sim
        if sim is None or kind not in SIM_FAULTS:
            return False
        fault, machine = SIM_FAULTS[kind], sim.machine
        await asyncio.to_thread(sim.call, lambda: machine.faults.inject(fault))
        return True
