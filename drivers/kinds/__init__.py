"""The built-in device kinds, one module each, registered as entry points of the group ``dealer.devices``
(see :mod:`drivers.registry`): ``machine`` (serial, USB, TCP), ``simulator`` (the virtual machine on a pty or
its USB backend), ``camera`` (a card scanner under manual dealing), ``inprocess`` (a wire-less simulator for
benchmarks of the service alone)."""
