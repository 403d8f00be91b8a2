"""Byte transports behind one small async interface: serial (pyserial, paths and URLs), USB bulk (pyusb), TCP.

A transport moves bytes and reports the link gone by raising :class:`TransportClosed`; framing and
reliability live above it (firmware_protocol). ``open_transport("…")`` picks one from a string:

- ``/dev/ttyUSB0``, ``COM3``, ``socket://host:port``, ``rfc2217://host:port``, ``loop://`` … → pyserial
- ``tcp://host:port`` → asyncio TCP
- ``usb:1209:0001`` or ``usb:1209:0001:SERIAL`` or ``usb:PROFILE`` → pyusb bulk endpoints (profile from
  ``config/devices/*.toml``)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from typing import Any, Protocol

import serial
import serial.serialposix
import usb.core
import usb.util

from dealer.core.errors import DealerError

from .profiles import DeviceProfile, find_profile


class TransportClosed(Exception):
    """The link is gone (cable pulled, device vanished, connection reset)."""


class PortOpenError(TransportClosed):
    """A port that would not open: where, and the system's reason. ``template``/``params`` let the catalogues
    say it in the reader's language (the reason, an OSError, through the catalogue's ``os:`` entries)."""

    def __init__(self, where: str, reason: object) -> None:
        self.template = "{where}: {exc}"
        self.params: dict[str, object] = {"where": where, "exc": reason}
        super().__init__(f"{where}: {reason}")


def os_reason(exc: BaseException) -> object:
    """The OSError behind ``exc`` when there is one, else ``exc``. pyserial wraps the system's error in a
    SerialException whose strerror is its own English sentence: on POSIX ``SerialException(errno, "could not open
    port …: [Errno 2] …")`` raised while the OSError is handled (so it is the ``__context__``); on Windows a text
    with no errno. The wrapped OSError carries the strerror the catalogues translate."""
    if isinstance(exc, serial.SerialException):
        inner = exc.__cause__ or exc.__context__
        if isinstance(inner, OSError):
            return inner
        code = exc.args[0] if exc.args else None
        if isinstance(code, int) and not isinstance(code, bool) and code > 0:
            return OSError(code, os.strerror(code))
        return exc
    return exc


class TransportSpecError(DealerError, ValueError):
    pass


class Transport(Protocol):
    description: str

    async def open(self) -> None: ...

    async def read(self) -> bytes:
        """At least one byte; raises TransportClosed when the link is gone."""
        ...

    async def write(self, data: bytes) -> None: ...

    async def close(self) -> None: ...


class _QueueReader:
    """Bytes arriving from a callback or a thread, read with ``await``."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | BaseException] = asyncio.Queue()
        self.closed: BaseException | None = None

    def put(self, item: bytes | BaseException) -> None:
        self.queue.put_nowait(item)

    async def read(self) -> bytes:
        if self.closed is not None:
            raise TransportClosed(str(self.closed))
        item = await self.queue.get()
        if isinstance(item, BaseException):
            self.closed = item
            raise TransportClosed(str(item))
        return item


class SerialTransport:
    """pyserial: a device path or any pyserial URL (``socket://``, ``rfc2217://``, …).

    POSIX serial ports are read through the event loop's reader on the file descriptor; URL handlers
    without one are read by a helper thread.
    """

    def __init__(self, url: str, baudrate: int = 115200) -> None:
        self.url = url
        self.baudrate = baudrate
        self.description = f"serial {url}"
        self._ser: Any = None
        self._rx = _QueueReader()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._fd = -1

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._rx = _QueueReader()
        try:
            self._ser = await asyncio.to_thread(serial.serial_for_url, self.url, baudrate=self.baudrate, timeout=0)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise PortOpenError(self.url, os_reason(exc)) from exc
        if isinstance(self._ser, serial.serialposix.Serial):
            self._fd = self._ser.fileno()
            self._loop.add_reader(self._fd, self._readable)
        else:
            self._ser.timeout = 0.05
            self._stop.clear()
            self._thread = threading.Thread(target=self._read_thread, name=f"serial-{self.url}", daemon=True)
            self._thread.start()

    def _readable(self) -> None:
        try:
            data = self._ser.read(4096)
        except (serial.SerialException, OSError) as exc:
            self._drop_reader()
            self._rx.put(exc)
            return
        if data:
            self._rx.put(bytes(data))

    def _drop_reader(self) -> None:
        if self._fd >= 0 and self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._fd = -1

    def _read_thread(self) -> None:
        assert self._loop is not None
        while not self._stop.is_set():
            try:
                data = self._ser.read(max(1, self._ser.in_waiting))
            except Exception as exc:
                if not self._stop.is_set():
                    self._loop.call_soon_threadsafe(self._rx.put, exc)
                return
            if data:
                self._loop.call_soon_threadsafe(self._rx.put, bytes(data))

    async def read(self) -> bytes:
        return await self._rx.read()

    async def write(self, data: bytes) -> None:
        if self._ser is None:
            raise TransportClosed("not open")
        try:
            if self._thread is None:
                self._ser.write(data)
            else:
                await asyncio.to_thread(self._ser.write, data)
        except (serial.SerialException, OSError) as exc:
            raise TransportClosed(f"write to {self.url} failed: {exc}") from exc

    async def close(self) -> None:
        self._drop_reader()
        self._stop.set()
        if self._ser is not None:
            with contextlib.suppress(Exception):
                self._ser.close()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 1.0)
            self._thread = None
        self._ser = None


class TcpTransport:
    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.description = f"tcp {host}:{port}"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        try:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            raise TransportClosed(f"cannot connect to {self.host}:{self.port}: {exc}") from exc

    async def read(self) -> bytes:
        if self._reader is None:
            raise TransportClosed("not open")
        try:
            data = await self._reader.read(4096)
        except OSError as exc:
            raise TransportClosed(str(exc)) from exc
        if not data:
            raise TransportClosed("connection closed by the device")
        return data

    async def write(self, data: bytes) -> None:
        if self._writer is None or self._writer.is_closing():
            raise TransportClosed("not connected")
        try:
            self._writer.write(data)
            await self._writer.drain()
        except OSError as exc:
            raise TransportClosed(str(exc)) from exc

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        self._reader = self._writer = None


def default_usb_backend() -> Any:
    """libusb 1.0 from the libusb-package wheel (no system install needed)."""
    import libusb_package

    return libusb_package.get_libusb1_backend()


class UsbTransport:
    """Bulk IN/OUT endpoints of a USB device, through pyusb. ``backend`` defaults to libusb-package's libusb."""

    def __init__(
        self,
        vendor_id: int,
        product_id: int,
        *,
        interface: int = 0,
        endpoint_in: int = 0x81,
        endpoint_out: int = 0x01,
        serial_number: str | None = None,
        backend: Any = None,
        packet_size: int = 512,
    ) -> None:
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.interface = interface
        self.endpoint_in = endpoint_in
        self.endpoint_out = endpoint_out
        self.serial_number = serial_number
        self.backend = backend
        self.packet_size = packet_size
        self.description = f"usb {vendor_id:04x}:{product_id:04x}" + (f" #{serial_number}" if serial_number else "")
        self._dev: Any = None
        self._rx = _QueueReader()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_profile(
        cls, profile: DeviceProfile, *, serial_number: str | None = None, backend: Any = None
    ) -> UsbTransport:
        if profile.usb is None:
            raise TransportSpecError(
                "device profile {name!r} ({path}) has no [usb] section", name=profile.name, path=profile.path
            )
        u = profile.usb
        return cls(
            u.vendor_id,
            u.product_id,
            interface=u.interface,
            endpoint_in=u.endpoint_in,
            endpoint_out=u.endpoint_out,
            serial_number=serial_number,
            backend=backend,
        )

    def _find(self) -> Any:
        backend = self.backend if self.backend is not None else default_usb_backend()

        def match(dev: Any) -> bool:
            if self.serial_number is None:
                return True
            try:
                return bool(dev.serial_number == self.serial_number)
            except (usb.core.USBError, ValueError):
                return False

        dev = usb.core.find(idVendor=self.vendor_id, idProduct=self.product_id, backend=backend, custom_match=match)
        if dev is None:
            raise TransportClosed(f"no USB device {self.description}")
        with contextlib.suppress(NotImplementedError, usb.core.USBError):
            if dev.is_kernel_driver_active(self.interface):
                dev.detach_kernel_driver(self.interface)
        dev.set_configuration()
        usb.util.claim_interface(dev, self.interface)
        return dev

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._rx = _QueueReader()
        try:
            self._dev = await asyncio.to_thread(self._find)
        except usb.core.USBError as exc:
            raise TransportClosed(f"cannot open {self.description}: {exc}") from exc
        self._stop.clear()
        self._thread = threading.Thread(target=self._read_thread, name="usb-read", daemon=True)
        self._thread.start()

    def _read_thread(self) -> None:
        assert self._loop is not None
        dev = self._dev
        while not self._stop.is_set():
            try:
                data = dev.read(self.endpoint_in, self.packet_size, timeout=100)
            except usb.core.USBTimeoutError:
                continue
            except Exception as exc:
                if not self._stop.is_set():
                    self._loop.call_soon_threadsafe(self._rx.put, exc)
                return
            if len(data):
                self._loop.call_soon_threadsafe(self._rx.put, bytes(data))

    async def read(self) -> bytes:
        return await self._rx.read()

    async def write(self, data: bytes) -> None:
        if self._dev is None:
            raise TransportClosed("not open")
        try:
            await asyncio.to_thread(self._dev.write, self.endpoint_out, data, 1000)
        except usb.core.USBError as exc:
            raise TransportClosed(f"USB write failed: {exc}") from exc

    async def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 1.0)
            self._thread = None
        if self._dev is not None:
            with contextlib.suppress(Exception):
                usb.util.dispose_resources(self._dev)
        self._dev = None


def open_transport(spec: str, *, baudrate: int = 115200, usb_backend: Any = None) -> Transport:
    """A transport from a string (see the module docstring). Raises TransportSpecError naming the problem."""
    if spec.startswith("tcp://"):
        host, sep, port = spec[len("tcp://") :].rpartition(":")
        if not sep or not port.isdecimal() or not 0 < int(port) < 65536:
            raise TransportSpecError("{spec!r}: expected tcp://HOST:PORT with PORT in 1..65535", spec=spec)
        return TcpTransport(host or "127.0.0.1", int(port))
    if spec.startswith("usb:"):
        parts = spec[4:].split(":")
        try:
            if len(parts) >= 2 and all(len(p) == 4 for p in parts[:2]):
                vid, pid = int(parts[0], 16), int(parts[1], 16)
                serial_number = parts[2] if len(parts) > 2 else None
                profile = find_profile(vendor_id=vid, product_id=pid)
                if profile is not None and profile.usb is not None:
                    return UsbTransport.from_profile(profile, serial_number=serial_number, backend=usb_backend)
                return UsbTransport(vid, pid, serial_number=serial_number, backend=usb_backend)
        except ValueError:
            raise TransportSpecError(
                "{spec!r}: expected usb:VID:PID[:SERIAL] with hexadecimal ids", spec=spec
            ) from None
        profile = find_profile(name=parts[0])
        if profile is None:
            raise TransportSpecError(
                "{spec!r}: no device profile named {name!r} in config/devices", spec=spec, name=parts[0]
            )
        return UsbTransport.from_profile(
            profile, serial_number=parts[1] if len(parts) > 1 else None, backend=usb_backend
        )
    return SerialTransport(spec, baudrate)
