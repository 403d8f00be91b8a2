"""A pyusb backend that presents the virtual machine as a USB device with two bulk endpoints.

The driver uses pyusb exactly as with real hardware (``usb.core.find(..., backend=...)``, configuration,
claimed interface, ``Endpoint.read/write``); only the bottom layer (libusb) is replaced by this class, which
routes bulk transfers to the machine. Pulling the cable makes the device vanish: transfers on old handles
fail with LIBUSB_ERROR_NO_DEVICE and enumeration does not list it until it is plugged back in.
"""

from __future__ import annotations

import array
import asyncio
import errno
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

import usb.backend
import usb.core

from .machine import VirtualMachine

LIBUSB_ERROR_TIMEOUT = -7
LIBUSB_ERROR_NO_DEVICE = -4


@dataclass
class _Dev:
    bLength: int = 18
    bDescriptorType: int = 1
    bcdUSB: int = 0x0200
    bDeviceClass: int = 0
    bDeviceSubClass: int = 0
    bDeviceProtocol: int = 0
    bMaxPacketSize0: int = 64
    idVendor: int = 0
    idProduct: int = 0
    bcdDevice: int = 0x0100
    iManufacturer: int = 1
    iProduct: int = 2
    iSerialNumber: int = 3
    bNumConfigurations: int = 1
    address: int = 7
    bus: int = 1
    port_number: int = 1
    port_numbers: tuple[int, ...] = (1,)
    speed: int = 3


@dataclass
class _Config:
    bLength: int = 9
    bDescriptorType: int = 2
    wTotalLength: int = 32
    bNumInterfaces: int = 1
    bConfigurationValue: int = 1
    iConfiguration: int = 0
    bmAttributes: int = 0x80
    bMaxPower: int = 50
    extra_descriptors: list[int] = field(default_factory=list)


@dataclass
class _Interface:
    bInterfaceNumber: int = 0
    bLength: int = 9
    bDescriptorType: int = 4
    bAlternateSetting: int = 0
    bNumEndpoints: int = 2
    bInterfaceClass: int = 0xFF
    bInterfaceSubClass: int = 0
    bInterfaceProtocol: int = 0
    iInterface: int = 0
    extra_descriptors: list[int] = field(default_factory=list)


@dataclass
class _Endpoint:
    bEndpointAddress: int
    bLength: int = 7
    bDescriptorType: int = 5
    bmAttributes: int = 0x02  # bulk
    wMaxPacketSize: int = 64
    bInterval: int = 0
    bRefresh: int = 0
    bSynchAddress: int = 0
    extra_descriptors: list[int] = field(default_factory=list)


@dataclass
class _Handle:
    generation: int


class SimulatorUsbBackend(usb.backend.IBackend):  # type: ignore[misc]
    """pyusb backend whose one device is the virtual machine."""

    def __init__(
        self,
        machine: VirtualMachine,
        loop: asyncio.AbstractEventLoop,
        *,
        vendor_id: int,
        product_id: int,
        interface: int = 0,
        endpoint_out: int = 0x01,
        endpoint_in: int = 0x81,
        manufacturer: str = "bridge-dealer",
    ) -> None:
        super().__init__()
        self.machine = machine
        self.loop = loop
        self.endpoint_out = endpoint_out
        self.endpoint_in = endpoint_in
        self._dev = _Dev(idVendor=vendor_id, idProduct=product_id)
        self._intf = _Interface(bInterfaceNumber=interface)
        self._eps = (_Endpoint(endpoint_out), _Endpoint(endpoint_in))
        self._strings = {1: manufacturer, 2: machine.model, 3: machine.serial}
        self._in: queue.Queue[bytes] = queue.Queue()
        self._rest = b""
        self._lock = threading.Lock()
        self._generation = 1
        self.plugged = True
        self.cable_pulls = 0
        machine.attach(self._from_machine)
        machine.unplug = self.pull_cable

    # -- the machine side (called on the machine's loop) ------------------------------------------------
    def _from_machine(self, data: bytes) -> None:
        if self.plugged:
            self._in.put(data)

    def pull_cable(self, seconds: float) -> None:
        self.cable_pulls += 1
        with self._lock:
            self.plugged = False
            self._generation += 1
            self._rest = b""
            while not self._in.empty():
                self._in.get_nowait()
        self.machine.detach()
        self.loop.call_later(seconds, self._plug_in)

    def _plug_in(self) -> None:
        with self._lock:
            self.plugged = True
        self.machine.attach(self._from_machine)

    # -- IBackend ----------------------------------------------------------------------------------------
    def _check(self, handle: _Handle) -> None:
        if not self.plugged or handle.generation != self._generation:
            raise usb.core.USBError(
                "No such device (it may have been disconnected)", LIBUSB_ERROR_NO_DEVICE, errno.ENODEV
            )

    def enumerate_devices(self) -> Any:
        if self.plugged:
            yield self._dev

    def get_device_descriptor(self, dev: Any) -> _Dev:
        return self._dev

    def get_configuration_descriptor(self, dev: Any, config: int) -> _Config:
        return _Config()

    def get_interface_descriptor(self, dev: Any, intf: int, alt: int, config: int) -> _Interface:
        if intf != 0 or alt != 0:
            raise IndexError("no such interface")
        return self._intf

    def get_endpoint_descriptor(self, dev: Any, ep: int, intf: int, alt: int, config: int) -> _Endpoint:
        return self._eps[ep]

    def open_device(self, dev: Any) -> _Handle:
        handle = _Handle(self._generation)
        self._check(handle)
        return handle

    def close_device(self, dev_handle: _Handle) -> None:
        return None

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        self._check(dev_handle)

    def get_configuration(self, dev_handle: _Handle) -> int:
        self._check(dev_handle)
        return 1

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._check(dev_handle)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        return None

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        return False

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        self._check(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        self._check(dev_handle)

    def ctrl_transfer(
        self, dev_handle: _Handle, bmRequestType: int, bRequest: int, wValue: int, wIndex: int, data: Any, timeout: int
    ) -> int:
        self._check(dev_handle)
        if bRequest == 6 and wValue >> 8 == 3:  # GET_DESCRIPTOR, string
            index = wValue & 0xFF
            if index == 0:
                desc = bytes([4, 3, 0x09, 0x04])
            else:
                text = self._strings.get(index, "").encode("utf-16-le")
                desc = bytes([2 + len(text), 3]) + text
            n = min(len(desc), len(data))
            data[:n] = array.array("B", desc[:n])
            return n
        return 0

    def bulk_write(self, dev_handle: _Handle, ep: int, intf: int, data: Any, timeout: int) -> int:
        self._check(dev_handle)
        payload = bytes(data)
        self.loop.call_soon_threadsafe(self.machine.receive, payload)
        return len(payload)

    def bulk_read(self, dev_handle: _Handle, ep: int, intf: int, buff: Any, timeout: int) -> int:
        self._check(dev_handle)
        chunk = self._rest
        if not chunk:
            try:
                chunk = self._in.get(timeout=(timeout / 1000) if timeout > 0 else None)
            except queue.Empty:
                raise usb.core.USBTimeoutError("Operation timed out", LIBUSB_ERROR_TIMEOUT, errno.ETIMEDOUT) from None
            self._check(dev_handle)
            while len(chunk) < len(buff) and not self._in.empty():
                chunk += self._in.get_nowait()
        n = min(len(chunk), len(buff))
        buff[:n] = array.array("B", chunk[:n])
        self._rest = chunk[n:]
        return n
