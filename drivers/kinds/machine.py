"""Device kinds ``serial``, ``usb`` and ``tcp``: a dealing machine speaking the open protocol, through
:class:`drivers.machine.MachineDriver` over :mod:`drivers.transport`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any

from dealer.core.events import DeviceEvent, FaultKind
from firmware_protocol.messages import State

from ..device import BoardMachine, CommandRefused, DeviceError, LinkLost
from ..discovery import Candidate
from ..machine import MachineDriver
from ..registry import DeviceOptions
from ..transport import open_transport

POLL_SECONDS = 1.0  # the status request that is the heartbeat the judge sees
ANSWER_SECONDS = 10.0  # a start of a deal, or a reset, unanswered this long: the device is not answering


def state_name(state: int) -> str:
    """The judge's word for the machine's STATUS state (``idle``, ``dealing``, ``duplicating``, ``fault``)."""
    try:
        return State(state).name.lower()
    except ValueError:
        return str(state)


def machine_url(kind: str, url: str) -> str:
    """The transport spec of a station's url: ``tcp`` and ``usb`` stations may leave out the scheme."""
    if kind == "tcp" and "://" not in url:
        return f"tcp://{url}"
    if kind == "usb" and not url.startswith("usb:"):
        return f"usb:{url}"
    return url


class MachineDevice:
    """A dealing machine (``kind`` serial, usb or tcp) as a :class:`drivers.device.DealingDevice`."""

    can_deal = True
    can_inject = False

    def __init__(self, kind: str, url: str, options: DeviceOptions) -> None:
        if not url:
            raise DeviceError(
                "station {station}: a {kind} device needs url = where the machine is", station=options.name, kind=kind
            )
        self.kind = kind
        self.url = machine_url(kind, url)
        self.options = options
        self._driver: MachineDriver | None = None
        self._heartbeat = 0.0
        self._state = "connecting"
        self._poller: asyncio.Task[None] | None = None

    @classmethod
    def discover(cls, kind: str) -> list[Candidate]:
        from .. import discovery

        if kind == "serial":
            return discovery.serial_candidates()
        if kind == "usb":
            return discovery.usb_candidates()
        return []  # a TCP machine is not found by listing: the judge types its address

    # -- life cycle ------------------------------------------------------------------------------------------
    def _transport_spec(self) -> tuple[str, Any]:
        """What the driver opens (a spec, and a pyusb backend or None). Any: pyusb's backend is untyped."""
        return self.url, self.options.usb_backend

    async def open(self) -> None:
        spec, backend = self._transport_spec()
        self._driver = MachineDriver(lambda: open_transport(spec, usb_backend=backend))
        await self._driver.connect()
        self._heartbeat = time.time()
        self._state = "idle"
        self._poller = asyncio.create_task(self._poll())

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        if self._driver is not None:
            await self._driver.close()
        self._state = "closed"

    def _open_driver(self) -> MachineDriver:
        if self._driver is None:
            raise DeviceError("{url}: the device is not open", url=self.url)
        return self._driver

    def board_machine(self) -> BoardMachine:
        return self._open_driver()

    async def _poll(self) -> None:
        """Status once a second: the heartbeat the judge sees."""
        driver = self._open_driver()
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                st = await asyncio.wait_for(driver.status(), 2 * POLL_SECONDS)
            except Exception:
                self._state = "no answer"
                continue
            self._heartbeat = time.time()
            self._state = state_name(st.state)

    # -- the judge's view ------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        info = self._driver.info if self._driver is not None else None
        out: dict[str, Any] = {"kind": self.kind, "url": self.url}
        if info is not None:
            out.update({k: v for k, v in dataclasses.asdict(info).items() if k != "transport"})
        return out

    def status(self) -> dict[str, Any]:
        driver = self._driver
        return {
            "state": self._state,
            "heartbeat": self._heartbeat,
            "connected": bool(driver is not None and driver.connected),
            "cards": driver.stats.cards if driver is not None else 0,
            "reconnects": driver.stats.reconnects if driver is not None else 0,
        }

    # -- dealing ---------------------------------------------------------------------------------------------
    async def request_deal(self) -> None:
        driver = self._open_driver()
        if not driver.connected:
            raise DeviceError("{url}: the device is not connected (reconnecting); try again in a moment", url=self.url)
        try:
            await asyncio.wait_for(driver.start_deal(), ANSWER_SECONDS)
        except CommandRefused:  # the machine is still in a fault the operator has cleared: reset, then deal
            await asyncio.wait_for(driver.reset(), ANSWER_SECONDS)
            await asyncio.wait_for(driver.start_deal(), ANSWER_SECONDS)
        except TimeoutError:
            raise DeviceError("{url}: the device did not answer the start of a deal", url=self.url) from None
        self._state = "dealing"

    async def next_event(self) -> DeviceEvent | None:
        try:
            event = await self._open_driver().next_event()
        except LinkLost:
            return None
        self._heartbeat = time.time()
        return event

    async def inject_fault(self, kind: FaultKind) -> bool:
        return False

    async def abort(self) -> None:
        if self._driver is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._driver.abort(), 3.0)
