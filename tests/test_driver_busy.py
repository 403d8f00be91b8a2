"""PROTOCOL.md §5.5: a command refused with BUSY is sent again as a new message after busy_retry_ms."""

from __future__ import annotations

from _proto_helpers import FAST, run, transport_factory

from dealer.core.events import DealEnded
from drivers.machine import MachineDriver
from drivers.simulator import SimulatorThread, VirtualMachine
from firmware_protocol.messages import Message, NakReason, StartDeal


class BusyOnce(VirtualMachine):
    """Refuses the first two START_DEALs with BUSY (its queue is "full"), then deals."""

    def __init__(self) -> None:
        super().__init__(pace=0, **FAST)
        self.refused = 0

    def _judge(self, msg: Message) -> tuple[NakReason, str] | None:
        if isinstance(msg, StartDeal) and self.refused < 2:
            self.refused += 1
            return NakReason.BUSY, "send queue full"
        return super()._judge(msg)


def test_driver_retries_a_busy_command_as_a_new_message() -> None:
    machine = BusyOnce()
    with SimulatorThread(machine, "pty") as sim:

        async def go() -> None:
            drv = MachineDriver(transport_factory(sim), heartbeat=0.3, **FAST)
            await drv.connect()
            try:
                deal_id = await drv.start_deal()
                assert isinstance(await drv.wait_deal(deal_id), DealEnded)
            finally:
                await drv.close()

        run(go(), timeout=60)
    assert machine.refused == 2
    assert machine.completed == 1
    assert machine.link.duplicates == 0  # each retry was a new message (new seq), not a retransmission
