"""Opening a station's device from its configuration, and listing the devices the judge can connect.

A station talks to a real dealing machine, or to the simulated one, through the project's driver
(``drivers.machine.MachineDriver`` over ``drivers.transport``). The simulator is the virtual machine of
``drivers.simulator`` behind a pseudo-terminal, so ``make run`` exercises the same serial path as hardware.
``LocalSimulator`` (in-process, no wire) stays for benchmarks of the service alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any, Literal

from dealer.core.events import DeviceEvent, FaultKind

from .config import StationConfig
from .devices import DeviceLink

# FaultKind the judge can ask the simulator for -> the simulator's fault
_SIM_FAULTS = {
    "jam": "JAM",
    "misfeed": "MISFEED",
    "unreadable_card": "UNREADABLE",
    "duplicate_card": "DUPLICATE_READ",
    "missing_card": "MISSING_CARD",
    "wrong_pocket": "WRONG_POCKET",
    "hopper_empty": "HOPPER_EMPTY",
    "cover_open": "COVER_OPEN",
    "power": "POWER_LOSS",
    "disconnected": "CABLE_PULLED",
}
_RANDOM_FAULTS = ("JAM", "MISFEED", "UNREADABLE", "DUPLICATE_READ", "COVER_OPEN")
STATES = ("idle", "dealing", "duplicating", "fault")


class MachineLink:
    """A dealing machine (or the simulator on a pty) through ``MachineDriver``."""

    can_deal = True

    def __init__(self, config: StationConfig) -> None:
        self.config = config
        self.kind = config.kind
        self.url = ""
        self._sim: Any = None
        self._driver: Any = None
        self._heartbeat = 0.0
        self._state = "connecting"
        self._poller: asyncio.Task[None] | None = None

    async def open(self) -> None:
        from drivers.machine import MachineDriver
        from drivers.transport import open_transport

        cfg = self.config
        if cfg.kind == "simulator":
            from drivers.simulator import FaultPlan, SimFault, SimulatorThread, VirtualMachine

            share = cfg.fault_rate / len(_RANDOM_FAULTS)
            plan = FaultPlan(rates={SimFault[name]: share for name in _RANDOM_FAULTS} if share else {}, seed=cfg.seed)
            machine = VirtualMachine(
                pace=52.0 / cfg.cards_per_second, faults=plan, serial=f"SIM-{cfg.name}", history_limit=64
            )
            medium: Literal["pty", "usb"] = (
                "usb" if cfg.url == "usb" else "pty"
            )  # url = "usb": the simulator behind its pyusb backend
            self._sim = SimulatorThread(machine, medium)
            await asyncio.to_thread(self._sim.start)
            self.url = self._sim.url if medium == "pty" else "usb:1209:0001 (simulator backend)"
        elif cfg.kind == "tcp":
            assert cfg.url is not None
            self.url = cfg.url if "://" in cfg.url else f"tcp://{cfg.url}"
        elif cfg.kind == "usb":
            assert cfg.url is not None
            self.url = cfg.url if cfg.url.startswith("usb:") else f"usb:{cfg.url}"
        else:
            assert cfg.url is not None
            self.url = cfg.url
        url, backend = self.url, self._sim.backend if self._sim is not None else None
        if backend is not None:
            url = "usb:1209:0001"
        self._driver = MachineDriver(lambda: open_transport(url, usb_backend=backend))
        try:
            await self._driver.connect()
        except Exception:
            await self._stop_sim()
            raise
        self._heartbeat = time.time()
        self._state = "idle"
        self._poller = asyncio.create_task(self._poll())

    async def _poll(self) -> None:
        """Status once a second: the heartbeat the judge sees."""
        while True:
            await asyncio.sleep(1.0)
            try:
                st = await asyncio.wait_for(self._driver.status(), 2.0)
            except Exception:
                self._state = "no answer"
                continue
            self._heartbeat = time.time()
            self._state = STATES[st.state] if 0 <= st.state < len(STATES) else str(st.state)

    def info(self) -> dict[str, Any]:
        info = self._driver.info if self._driver is not None else None
        out: dict[str, Any] = {"kind": self.kind, "url": self.url}
        if info is not None:
            out.update({k: v for k, v in dataclasses.asdict(info).items() if k != "transport"})
        return out

    def status(self) -> dict[str, Any]:
        stats = self._driver.stats if self._driver is not None else None
        return {
            "state": self._state,
            "heartbeat": self._heartbeat,
            "connected": bool(self._driver is not None and self._driver.connected),
            "cards": stats.cards if stats else 0,
            "reconnects": stats.reconnects if stats else 0,
        }

    async def request_deal(self) -> None:
        from drivers.device import CommandRefused, DeviceError

        if not self._driver.connected:
            raise DeviceError(f"{self.url}: the device is not connected (reconnecting); try again in a moment")
        try:
            await asyncio.wait_for(self._driver.start_deal(), 10.0)
        except CommandRefused:  # the machine is still in a fault the operator has cleared: reset, then deal
            await asyncio.wait_for(self._driver.reset(), 10.0)
            await asyncio.wait_for(self._driver.start_deal(), 10.0)
        except TimeoutError:
            raise DeviceError(f"{self.url}: the device did not answer the start of a deal") from None
        self._state = "dealing"

    async def next_event(self) -> DeviceEvent | None:
        from drivers.device import LinkLost

        try:
            event: DeviceEvent = await self._driver.next_event()
        except LinkLost:
            return None
        self._heartbeat = time.time()
        return event

    async def inject_fault(self, kind: FaultKind) -> bool:
        if self._sim is None or kind.value not in _SIM_FAULTS:
            return False
        from drivers.simulator import SimFault

        fault = SimFault[_SIM_FAULTS[kind.value]]
        machine = self._sim.machine
        await asyncio.to_thread(self._sim.call, lambda: machine.faults.inject(fault))
        return True

    async def abort(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._driver.abort(), 3.0)

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        if self._driver is not None:
            await self._driver.close()
        await self._stop_sim()
        self._state = "closed"

    async def _stop_sim(self) -> None:
        if self._sim is not None:
            sim, self._sim = self._sim, None
            await asyncio.to_thread(sim.stop)


def open_link(config: StationConfig) -> DeviceLink:
    if config.kind == "camera":
        from .camera_link import CameraLink

        return CameraLink(config)
    return MachineLink(config)


def available_devices() -> list[dict[str, str]]:
    """What ``dealer devices`` lists (serial ports, USB devices matching a profile), plus the simulator."""
    from drivers.discovery import candidates

    return [{"id": c.id, "kind": c.kind, "description": c.description} for c in candidates()]
