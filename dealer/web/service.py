"""The running service: configuration, regulation, bank, audience hub, judge bus and stations, wired together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dealer.bank.api import BankApi
from dealer.core.events import FaultKind
from dealer.regulation import Regulation, load_regulation
from dealer.relay.publisher import RelayPublisher

from .bankworker import BankWorker
from .config import ServiceConfig, StationConfig
from .devices import DeviceLink
from .hub import PublicHub
from .links import available_devices, open_link
from .operator import OperatorBus
from .public import bank_message, commitment_message
from .secrets import RoleSecrets, load_or_create_secret
from .station import Station, StationError

log = logging.getLogger("dealer.service")


def default_bank_factory(path: Path | str, key_dir: Path | None = None) -> Callable[[], BankApi]:
    def make() -> BankApi:
        from .banks import open_bank

        return open_bank(path, key_dir)

    return make


class Service:
    def __init__(
        self,
        config: ServiceConfig,
        regulation: Regulation | None = None,
        bank_factory: Callable[[], BankApi] | None = None,
        autostart: bool = True,
    ) -> None:
        self.config = config
        self.regulation = regulation or load_regulation(config.regulation)
        self.secrets = RoleSecrets(
            config.judge_secret or load_or_create_secret(config.var_dir, "judge"),
            config.director_secret or load_or_create_secret(config.var_dir, "director"),
        )
        target: Path | str = config.bank_url or config.bank_path
        key_dir = config.var_dir if config.bank_url else None
        self.bank = BankWorker(bank_factory or default_bank_factory(target, key_dir))
        self.hub = PublicHub(delay=config.broadcast_delay)
        self.relay_publisher: RelayPublisher | None = None
        if config.relay_nats:  # remote viewers: the public stream, in real time, to NATS for the relays
            self.relay_publisher = RelayPublisher(config.relay_nats, config.relay_event)
            self.hub.sinks.append(self.relay_publisher.sink)
        self.operator = OperatorBus()
        self.board_cards_shown = False  # Show cards for board making on the judge's console (ledgered when set)
        self.stations = {
            s.name: Station(s, self.regulation, self.bank, self.hub, self.operator) for s in config.stations
        }
        for station in self.stations.values():
            station.marker = config.var_dir / f"station-{station.name}.dealing"
        self.autostart = autostart
        self._ticker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def begin_shutdown(self) -> None:
        """Called from a signal handler: end the audience streams so the server can stop at once."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.hub.close)

    # -- life cycle ----------------------------------------------------------------------------------------
    async def startup(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self.relay_publisher is not None:
            self.relay_publisher.start()
        formed = await self.bank.call(self.bank.bank.deal_count)
        head = await self.bank.call(self.bank.bank.ledger_head)
        self.hub.publish(bank_message(formed, self.regulation.bank_target, head))
        for station in self.stations.values():
            if await station.recover() is not None:
                log.warning("station %s: the deal in progress when the service stopped is voided", station.name)
            station.announce()
        if self.autostart:
            for station in self.stations.values():
                try:
                    await station.connect(open_link(station.config))
                    await station.start()
                except Exception as exc:  # a missing device must not stop the service: the judge reconnects
                    log.warning("station %s: %s", station.name, exc)
                    station.status = "disconnected"
                    station.announce()
        self._ticker = asyncio.create_task(self._tick())

    async def shutdown(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        for station in self.stations.values():
            station.running = False
            with contextlib.suppress(Exception):
                await station.disconnect()
        self.bank.close()
        if self.relay_publisher is not None:
            await self.relay_publisher.close()

    async def _tick(self) -> None:
        """Heartbeat and device status to the judges once a second."""
        while True:
            await asyncio.sleep(1.0)
            for station in self.stations.values():
                if station.link is not None:
                    self.operator.send(
                        {"type": "heartbeat", "station": station.name, "device_status": station.link.status()}
                    )

    # -- judge ---------------------------------------------------------------------------------------------
    def station(self, name: str) -> Station:
        try:
            return self.stations[name]
        except KeyError:
            raise StationError(f"no station {name!r} (stations: {', '.join(self.stations)})") from None

    def judge_state(self) -> dict[str, Any]:
        return {
            "type": "state",
            "stations": [s.state() for s in self.stations.values()],
            "bank": self.hub.state.bank,
        }

    async def judge_command(self, name: str, action: str, args: dict[str, Any]) -> dict[str, Any]:
        station = self.station(name)
        if action == "connect":
            device = str(args.get("device", "simulator"))
            cfg = station.config
            if device != "simulator" or cfg.kind != "simulator":
                if device.startswith("usb:"):
                    kind, url = "usb", device
                elif device == "simulator":
                    kind, url = "simulator", ""
                else:
                    kind, _, url = device.partition(":")
                cfg = StationConfig(
                    name=cfg.name,
                    kind=kind if kind in ("serial", "usb", "tcp", "simulator", "camera") else "serial",
                    url=url or device,
                    cards_per_second=cfg.cards_per_second,
                    fault_rate=cfg.fault_rate,
                    auto_redeal=cfg.auto_redeal,
                    first_seat=cfg.first_seat,
                    seed=cfg.seed,
                    calibration=cfg.calibration if kind == "camera" else None,
                )
            link: DeviceLink = open_link(cfg)
            await station.connect(link)
        elif action == "disconnect":
            await station.disconnect()
        elif action in ("start", "resume"):
            await station.start()
        elif action == "pause":
            await station.pause()
        elif action == "stop":
            await station.stop()
        elif action == "redeal":
            await station.redeal()
        elif action == "show":
            await station.set_show_cards(True, "judge")
        elif action == "hide":
            await station.set_show_cards(False, "judge")
        elif action == "inject":
            fault = FaultKind(str(args.get("kind", "jam")))
            if not await station.inject_fault(fault):
                raise StationError(f"station {name}: this device cannot simulate faults")
        else:
            raise StationError(f"unknown action {action!r}")
        return station.state()

    def devices(self) -> list[dict[str, str]]:
        return available_devices()

    # -- director ------------------------------------------------------------------------------------------
    def publish_commitment(self, view: dict[str, Any]) -> None:
        """Put a draw before the hall (its commitment, then V, then the reveal): see ``commitment_message``."""
        self.hub.publish(commitment_message(view))
