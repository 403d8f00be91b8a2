"""Opening a station's device from its configuration, and listing the devices the judge can connect."""

from __future__ import annotations

from .config import StationConfig
from .devices import DeviceLink, LocalSimulator
from .station import StationError


def open_link(config: StationConfig) -> DeviceLink:
    if config.kind == "simulator":
        return LocalSimulator(config.name, config.cards_per_second, config.fault_rate, config.seed)
    raise StationError(f"station {config.name}: no driver for {config.kind} devices in this build")


def available_devices() -> list[dict[str, str]]:
    devices = [{"id": "simulator", "kind": "simulator", "description": "simulated dealing machine"}]
    try:
        from serial.tools import list_ports

        for port in list_ports.comports():
            devices.append({"id": f"serial:{port.device}", "kind": "serial", "description": port.description or ""})
    except Exception:  # pragma: no cover - pyserial is a dependency; a broken port list is not fatal
        pass
    return devices
