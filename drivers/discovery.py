"""Device discovery: candidate serial ports and USB devices matching a profile (``config/devices/``).

What ``dealer devices`` prints and what the judge's console offers to connect; no device is opened here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Candidate:
    """A device a station can be connected to: ``id`` is what the station opens (``serial:PATH``,
    ``usb:VID:PID[:SERIAL]``, ``simulator``, ``KIND:URL``; see :func:`drivers.registry.parse_device_id`)."""

    id: str
    kind: str
    description: str


def serial_rows() -> list[dict[str, Any]]:
    from serial.tools import list_ports

    from .profiles import load_profiles

    known = {ids: p.name for p in load_profiles() for ids in p.serial_usb_ids}
    rows = []
    for port in sorted(list_ports.comports(), key=lambda p: p.device):
        ids = (port.vid, port.pid) if port.vid is not None and port.pid is not None else None
        rows.append(
            {
                "device": port.device,
                "usb": f"{port.vid:04x}:{port.pid:04x}" if ids else "",
                "serial": port.serial_number or "",
                "description": port.description or "",
                "profile": known.get(ids, "") if ids else "",
            }
        )
    return rows


def usb_rows(backend: Any = None) -> tuple[list[dict[str, Any]], str | None]:
    """USB devices matching a profile, through ``backend`` (default: libusb from libusb-package)."""
    import usb.core

    from .profiles import load_profiles
    from .transport import default_usb_backend

    try:
        backend = backend if backend is not None else default_usb_backend()
    except Exception as exc:  # no libusb at all: say so, do not fail the listing of serial ports
        return [], f"libusb unavailable: {exc}"
    if backend is None:
        return [], "libusb unavailable"
    rows: list[dict[str, Any]] = []
    for profile in load_profiles():
        if profile.usb is None:
            continue
        try:
            found = usb.core.find(
                find_all=True, idVendor=profile.usb.vendor_id, idProduct=profile.usb.product_id, backend=backend
            )
            devices = list(found or [])
        except usb.core.USBError as exc:
            return rows, f"USB enumeration failed: {exc}"
        for dev in devices:
            try:
                serial_number = dev.serial_number or ""
            except (usb.core.USBError, ValueError):
                serial_number = "(no access)"
            rows.append(
                {
                    "bus": f"{dev.bus}:{dev.address}",
                    "usb": f"{dev.idVendor:04x}:{dev.idProduct:04x}",
                    "serial": serial_number,
                    "profile": profile.name,
                    "open": f"usb:{dev.idVendor:04x}:{dev.idProduct:04x}"
                    + (f":{serial_number}" if serial_number else ""),
                }
            )
    return rows, None


def serial_candidates() -> list[Candidate]:
    """Serial ports a dealing machine may sit behind (not a motherboard UART with nothing behind it)."""
    found = []
    for row in serial_rows():
        if row["description"] in ("", "n/a") and not row["usb"]:
            continue  # a motherboard UART with nothing behind it (/dev/ttyS0..31): not a dealing machine
        text = " ".join(x for x in (row["description"], row["profile"], row["serial"]) if x)
        found.append(Candidate(f"serial:{row['device']}", "serial", text))
    return found


def usb_candidates() -> list[Candidate]:
    """USB devices matching a profile (none where libusb is missing)."""
    usb_found, _ = usb_rows()
    return [Candidate(row["open"], "usb", f"{row['profile']} {row['bus']}") for row in usb_found]


def candidates() -> list[Candidate]:
    """Every device a station could connect to: what each registered device kind finds (its ``discover``),
    in the order of :func:`drivers.registry.device_kinds`. A failing listing becomes one ``error`` entry
    saying why (a broken port list must not break a console)."""
    from .registry import device_factory, device_kinds

    found: list[Candidate] = []
    for kind in device_kinds():
        try:
            discover = getattr(device_factory(kind), "discover", None)
            if discover is not None:
                found.extend(discover(kind))
        except Exception as exc:
            found.append(Candidate("", "error", f"device listing failed ({kind}): {exc}"))
    return found
