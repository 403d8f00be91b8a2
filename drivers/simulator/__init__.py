"""The simulated dealing machine: firmware behaviour, fault injection, pty / TCP / pyusb endpoints."""

from .faults import FaultPlan, NoiseConfig, ProtocolQuirk, SimFault, parse_faults
from .machine import DealTruth, Shuffler, VirtualMachine, csprng_shuffle
from .runner import SIM_PRODUCT_ID, SIM_VENDOR_ID, SimulatorThread

__all__ = [
    "SIM_PRODUCT_ID",
    "SIM_VENDOR_ID",
    "DealTruth",
    "FaultPlan",
    "NoiseConfig",
    "ProtocolQuirk",
    "Shuffler",
    "SimFault",
    "SimulatorThread",
    "VirtualMachine",
    "csprng_shuffle",
    "parse_faults",
]
