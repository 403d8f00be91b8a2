"""Everything that touches hardware: transports, the dealing-machine driver, the camera scanner, the simulator.

The rest of the project sees devices through one interface, :class:`drivers.device.DealingDevice`, made by
:func:`open_device` from a kind (an entry point of the group ``dealer.devices``) and a url, python-can style;
:func:`drivers.discovery.candidates` lists what could be connected.
"""

from .device import DealingDevice, DeviceError
from .registry import DeviceOptions, device_kinds, open_device, parse_device_id

__all__ = ["DealingDevice", "DeviceError", "DeviceOptions", "device_kinds", "open_device", "parse_device_id"]
