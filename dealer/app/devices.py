"""A station's device, through the one device interface of ``drivers`` (:func:`drivers.open_device`).

Nothing here knows a kind of device: the station's configuration names the kind and the url, and the
options every kind may use; ``drivers`` finds the kind among its entry points (``dealer.devices``).
"""

from __future__ import annotations

import dataclasses

from dealer.app.config import StationConfig
from drivers import DealingDevice, open_device, parse_device_id
from drivers.discovery import candidates


def open_station_device(config: StationConfig) -> DealingDevice:
    """The device of a station's configuration (not yet opened)."""
    return open_device(
        config.kind,
        config.url or "",
        name=config.name,
        cards_per_second=config.cards_per_second,
        fault_rate=config.fault_rate,
        seed=config.seed,
        calibration=config.calibration,
    )


def station_on(config: StationConfig, device: str) -> StationConfig:
    """The station's configuration with its device replaced by ``device`` (an id of :func:`available_devices`)."""
    kind, url = parse_device_id(device)
    return dataclasses.replace(config, kind=kind, url=url or device)  # options a kind does not use, it ignores


def available_devices() -> list[dict[str, str]]:
    """What the judge can connect a station to: every registered kind's candidates (``drivers.discovery``)."""
    return [{"id": c.id, "kind": c.kind, "description": c.description} for c in candidates()]
