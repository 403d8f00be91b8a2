"""Device kind ``simulator``: the virtual dealing machine of :mod:`drivers.simulator` behind a pseudo-terminal
(url ``pty`` or empty), or behind its pyusb backend (url ``usb``), driven by the same driver as hardware, so
``make run`` exercises the serial path a real machine takes."""

from __future__ import annotations

import asyncio
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
        if url not in ("", "pty", "usb", "simulator"):
            raise DeviceError(
                "simulator url {url!r}: a simulator sits on 'pty' (default) or 'usb' (pyusb backend)", url=url
            )
        super().__init__(kind, url or "pty", options)
        self.medium: Literal["pty", "usb"] = "usb" if url == "usb" else "pty"
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
        machine = VirtualMachine(pace=pace, faults=fault_plan(o), serial=f"SIM-{o.name}", history_limit=64)
        self._sim = SimulatorThread(machine, self.medium)
        await asyncio.to_thread(self._sim.start)
        self.url = self._sim.url if self.medium == "pty" else f"{USB_ID} (simulator backend)"
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
