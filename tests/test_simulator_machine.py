"""The virtual machine's firmware behaviour: state machine, NAKs, pluggable shuffler, pace, status."""

from __future__ import annotations

import asyncio
import time

import pytest
import serial
from _proto_helpers import driver, run, run_deal, simulator

from dealer.core import Deal
from dealer.core.events import CardSeen, DealEnded, DeviceEvent, DeviceFault, Disconnected, FaultKind, Reconnected
from drivers.device import BoardMachine, CommandRefused, DeviceBusy
from drivers.machine import MachineDriver
from drivers.simulator import FaultPlan, SimFault, SimulatorThread, VirtualMachine
from firmware_protocol.codec import Decoder, Received, encode
from firmware_protocol.messages import Capability, Nak, NakReason, StartDeal, State


def test_pluggable_shuffler_decides_the_order() -> None:
    async def main() -> None:
        with simulator("pty", shuffler=lambda cards: list(reversed(list(cards)))) as sim:
            async with driver(sim) as drv:
                out = await run_deal(drv)
                assert isinstance(out.end, DealEnded)
                assert [int(c.card) for c in out.cards if c.card is not None] == list(range(51, -1, -1))
                assert [int(c.pocket) for c in out.cards if c.pocket is not None] == [i % 4 for i in range(52)]

    run(main())


def test_broken_shuffler_is_a_fault_not_a_bad_deal() -> None:
    async def main() -> None:
        with simulator("pty", shuffler=lambda cards: list(cards)[:51]) as sim:
            async with driver(sim) as drv:
                out = await run_deal(drv)
                assert isinstance(out.end, DeviceFault) and out.end.kind is FaultKind.OTHER
                assert out.cards == []

    run(main())


def test_paced_machine_deals_a_whole_deal() -> None:
    async def main() -> None:
        with simulator("pty", pace=0.26) as sim:  # 5 ms a card
            assert sim.machine.pace == 0.26
            async with driver(sim) as drv:
                out = await run_deal(drv)
                assert isinstance(out.end, DealEnded) and len(out.cards) == 52

    run(main())


def test_default_pace_is_about_six_seconds_a_board() -> None:
    assert VirtualMachine().pace == 6.0


def test_state_machine_naks() -> None:
    async def main() -> None:
        with simulator("tcp", pace=2.0) as sim:
            async with driver(sim) as drv:
                deal_id = await drv.start_deal()
                with pytest.raises(DeviceBusy):
                    await drv.start_deal()
                status = await drv.status()
                assert status.state == State.DEALING and status.deal_id == deal_id
                with pytest.raises(CommandRefused, match="BAD_STATE"):
                    await drv._command(StartDeal(999))
                await drv.abort()
                events: list[DeviceEvent] = []
                while not any(isinstance(e, DeviceFault) for e in events):
                    events.append(await drv.next_event(5))
                last = events[-1]
                assert isinstance(last, DeviceFault) and last.kind is FaultKind.ABORTED
                status = await drv.status()
                assert status.state == State.IDLE
                truth = sim.machine.history[-1]
                assert truth.interrupted == "abort" and not truth.completed

    run(main())


def test_machine_without_duplicator_refuses_boards() -> None:
    deal = Deal.from_rank(42)

    async def main() -> None:
        caps = Capability.READER | Capability.SHUFFLER
        with simulator("pty", capabilities=caps) as sim:
            async with driver(sim) as drv:
                assert drv.info is not None and not drv.info.duplicator
                with pytest.raises(CommandRefused, match="NOT_CAPABLE"):
                    await drv.make_board(1, deal, 1)
                out = await run_deal(drv)  # the refusal left the driver usable
                assert isinstance(out.end, DealEnded)

    run(main())


def test_no_session_before_hello_over_raw_serial() -> None:
    with SimulatorThread(VirtualMachine(pace=0), "pty") as sim:
        port = serial.serial_for_url(sim.url, timeout=0.5)
        try:
            decoder = Decoder()
            # (the BOOT sent at power-up may be gone: opening a serial port flushes its input buffer)
            port.write(encode(StartDeal(5), 0))
            naks: list[Nak] = []
            deadline = time.monotonic() + 5
            while not naks and time.monotonic() < deadline:
                got = [e.message for e in decoder.feed(port.read(64)) if isinstance(e, Received)]
                naks = [m for m in got if isinstance(m, Nak)]
            assert naks and naks[0].reason == NakReason.NO_SESSION and naks[0].nacked_seq == 0
        finally:
            port.close()


def test_silent_device_is_detected_by_heartbeat_and_deal_reported_lost() -> None:
    plan = FaultPlan(seed=1)
    plan.inject(SimFault.POWER_LOSS, operation=1, position=5)

    async def main() -> None:
        # the outage outlasts the retransmission window: the link is declared lost, then comes back
        with simulator("pty", plan, power_outage=1.0) as sim:
            async with driver(sim) as drv:
                deal_id = await drv.start_deal()
                events = [await drv.next_event(10)]
                while not isinstance(events[-1], Disconnected | DeviceFault):
                    events.append(await drv.next_event(10))
                lost = events[-1]
                if isinstance(lost, Disconnected):
                    assert lost.deal_in_progress == deal_id
                    while not isinstance(events[-1], Reconnected):
                        events.append(await drv.next_event(10))
                else:  # a stalled host may see the restart itself before giving the link up
                    assert lost.kind is FaultKind.POWER and lost.deal_id == deal_id
                    while not drv.connected:
                        await asyncio.sleep(0.01)
                assert not any(isinstance(e, DealEnded) for e in events)
                assert len([e for e in events if isinstance(e, CardSeen)]) <= 5
                out = await run_deal(drv)
                assert isinstance(out.end, DealEnded)

    run(main())


def test_driver_is_a_board_machine() -> None:
    async def main() -> None:
        with simulator("usb") as sim:
            async with driver(sim) as drv:
                device: BoardMachine = drv
                assert device.info is not None and device.info.transport.startswith("usb 1209:0001")
                deal = Deal.from_rank(10**20)
                result = await device.make_board(1, deal, 1)
                assert result.ok
                events = [await drv.next_event(1) for _ in range(54)]
                assert isinstance(events[-1], DealEnded)

    run(main())


def test_connect_to_nothing_is_a_clear_error(tmp_path: object) -> None:
    from drivers.device import DeviceError
    from drivers.transport import open_transport

    async def main() -> None:
        drv = MachineDriver(lambda: open_transport("tcp://127.0.0.1:1"))
        with pytest.raises(DeviceError, match="cannot connect"):
            await drv.connect()

    asyncio.run(main())
