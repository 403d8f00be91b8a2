"""Device kinds and :func:`open_device`, in the style of python-can's ``can.Bus(interface=…)``.

A device kind is a name (``serial``, ``usb``, ``tcp``, ``simulator``, ``camera``, …) registered as an entry point
in the group ``dealer.devices``; the entry point names a factory, usually a class, called as
``factory(kind, url, options)`` and returning a :class:`drivers.device.DealingDevice`. The built-in kinds are
entry points of this project too (``pyproject.toml``), so a kind from another package is found the same way;
adding one needs a module and an entry point, nothing in the web service or the CLI.

A factory may also have ``discover(kind) -> list[Candidate]``: the devices of that kind a station could be
connected to (``drivers.discovery.candidates`` asks every kind).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from .device import DealingDevice, DeviceError

GROUP = "dealer.devices"

# The built-in kinds, in the order the judge's console lists them. The same table is in pyproject.toml
# ([project.entry-points."dealer.devices"], a test keeps the two equal); it is used for a kind whose entry
# point is missing from an install made before the kind was added (an editable install not reinstalled).
BUILTIN: dict[str, str] = {
    "simulator": "drivers.kinds.simulator:SimulatedMachine",
    "serial": "drivers.kinds.machine:MachineDevice",
    "usb": "drivers.kinds.machine:MachineDevice",
    "tcp": "drivers.kinds.machine:MachineDevice",
    "camera": "drivers.kinds.camera:CameraDevice",
    "inprocess": "drivers.kinds.inprocess:InProcessSimulator",
}


class UnknownDeviceKind(DeviceError, LookupError):
    pass


@dataclass(frozen=True, slots=True)
class DeviceOptions:
    """What a station (or a command) tells its device besides the kind and the url. A kind uses the options
    that concern it; ``extra`` holds options no built-in kind knows (for kinds of other packages)."""

    name: str = "device"  # the station's name (in the device's identity, threads, messages)
    cards_per_second: float = 8.7  # simulators: dealing pace
    fault_rate: float = 0.0  # simulators: chance per deal of a random fault
    faults: str = ""  # simulator: a fault plan (drivers.simulator.parse_faults), instead of fault_rate
    seed: int | None = None  # simulators: a reproducible run
    pace: float | None = None  # simulator: seconds per deal (default 52 / cards_per_second)
    calibration: Path | None = None  # camera: the calibration file (a virtual: source calibrates itself)
    usb_backend: Any = None  # usb: a pyusb backend (default: libusb); Any: pyusb's backends are untyped
    extra: Mapping[str, Any] = field(default_factory=dict)  # Any: options of kinds from other packages

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> DeviceOptions:  # Any: keyword options, typed by the fields
        known = {f.name for f in fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in options.items() if k in known},
                   extra={k: v for k, v in options.items() if k not in known})  # fmt: skip


class DeviceFactory(Protocol):
    def __call__(self, kind: str, url: str, options: DeviceOptions) -> DealingDevice: ...


def _load(target: str) -> DeviceFactory:
    module, _, attr = target.partition(":")
    factory: DeviceFactory = getattr(importlib.import_module(module), attr)
    return factory


def _registered() -> dict[str, Callable[[], DeviceFactory]]:
    found: dict[str, Callable[[], DeviceFactory]] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name, ep.load)
    for name, target in BUILTIN.items():
        found.setdefault(name, functools.partial(_load, target))
    return found


def device_kinds() -> list[str]:
    """Every registered kind: the built-in ones first, in their order, then the others by name."""
    names = set(_registered())
    return [k for k in BUILTIN if k in names] + sorted(names - set(BUILTIN))


def device_factory(kind: str) -> DeviceFactory:
    loaders = _registered()
    if kind not in loaders:
        raise UnknownDeviceKind(
            "unknown device kind {kind!r}; known: {known}", kind=kind, known=", ".join(device_kinds())
        )
    try:
        return loaders[kind]()
    except (ImportError, AttributeError) as exc:  # a kind's package is broken or half-installed: say which
        raise DeviceError("device kind {kind!r} cannot be loaded: {exc}", kind=kind, exc=exc) from exc


def open_device(kind: str, url: str = "", **options: Any) -> DealingDevice:  # Any: see DeviceOptions
    """A device of ``kind`` at ``url`` (not yet opened: ``await device.open()``)."""
    return device_factory(kind)(kind, url, DeviceOptions.of(options))


def parse_device_id(device: str) -> tuple[str, str]:
    """The kind and url of a device id as discovery lists them (``serial:/dev/ttyUSB0``, ``usb:VID:PID``,
    ``simulator``, ``KIND:URL`` for any registered kind) or as a person types it: a transport url
    (``tcp://HOST:PORT``; ``socket://…`` and ``rfc2217://…`` are serial) or a bare serial port path."""
    if device == "simulator":
        return "simulator", ""
    scheme, sep, _ = device.partition("://")
    if sep:
        return ("tcp" if scheme == "tcp" else "serial"), device
    if device.startswith("usb:"):
        return "usb", device
    kind, sep, url = device.partition(":")
    if sep and url and kind in device_kinds():
        return kind, url
    return "serial", device
