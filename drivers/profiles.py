"""Device profiles (``config/devices/*.toml``): how to find and talk to a kind of device."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from dealer.core.errors import DealerError

PROFILE_DIR = Path(__file__).resolve().parents[1] / "dealer" / "config" / "devices"


class ProfileError(DealerError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class UsbSpec:
    vendor_id: int
    product_id: int
    interface: int
    endpoint_out: int
    endpoint_in: int


@dataclass(frozen=True, slots=True)
class DeviceProfile:
    name: str
    description: str
    kind: str
    path: Path
    usb: UsbSpec | None
    baudrate: int
    serial_usb_ids: tuple[tuple[int, int], ...]


def _int(table: dict[str, object], key: str, path: Path, low: int, high: int, default: int | None = None) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ProfileError(
            "{path}: field {key!r} = {value!r} is not an integer in {low}..{high}",
            path=path,
            key=key,
            value=value,
            low=low,
            high=high,
        )
    return value


def load_profile(path: Path) -> DeviceProfile:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError("{path}: {exc}", path=path, exc=exc) from exc
    usb_raw = raw.get("usb")
    usb = None
    if isinstance(usb_raw, dict):
        usb = UsbSpec(
            vendor_id=_int(usb_raw, "vendor_id", path, 0, 0xFFFF),
            product_id=_int(usb_raw, "product_id", path, 0, 0xFFFF),
            interface=_int(usb_raw, "interface", path, 0, 255, 0),
            endpoint_out=_int(usb_raw, "endpoint_out", path, 0x01, 0x0F, 0x01),
            endpoint_in=_int(usb_raw, "endpoint_in", path, 0x81, 0x8F, 0x81),
        )
    serial_raw = raw.get("serial", {})
    if not isinstance(serial_raw, dict):
        raise ProfileError("{path}: [serial] must be a table", path=path)
    ids: list[tuple[int, int]] = []
    for n, item in enumerate(serial_raw.get("usb_ids", [])):
        vid, sep, pid = str(item).partition(":")
        try:
            ids.append((int(vid, 16), int(pid, 16)))
        except ValueError:
            raise ProfileError(
                "{path}: serial.usb_ids[{n}] = {item!r} is not VID:PID in hexadecimal", path=path, n=n, item=item
            ) from None
        if not sep:
            raise ProfileError("{path}: serial.usb_ids[{n}] = {item!r} is not VID:PID", path=path, n=n, item=item)
    name = raw.get("name", path.stem)
    return DeviceProfile(
        name=str(name),
        description=str(raw.get("description", "")),
        kind=str(raw.get("kind", "dealing_machine")),
        path=path,
        usb=usb,
        baudrate=_int(serial_raw, "baudrate", path, 50, 10_000_000, 115200),
        serial_usb_ids=tuple(ids),
    )


def load_profiles(directory: Path = PROFILE_DIR) -> list[DeviceProfile]:
    return [load_profile(p) for p in sorted(directory.glob("*.toml"))]


def find_profile(
    *, name: str | None = None, vendor_id: int | None = None, product_id: int | None = None
) -> DeviceProfile | None:
    for profile in load_profiles():
        if name is not None and profile.name == name:
            return profile
        usb = profile.usb
        if vendor_id is not None and usb is not None and (usb.vendor_id, usb.product_id) == (vendor_id, product_id):
            return profile
    return None
