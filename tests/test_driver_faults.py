"""Every injected fault surfaces as its typed event and voids the deal, over pty, pyusb and TCP."""

from __future__ import annotations

import pytest
from _proto_helpers import EXPECTED, KINDS, DriverOptions, driver, run, run_deal, simulator, wait_for

from dealer.core.events import CardSeen, DealEnded, DeviceFault, Disconnected, Reconnected
from drivers.machine import MachineDriver
from drivers.simulator import FaultPlan, SimFault


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault", list(EXPECTED), ids=lambda f: f.value)
def test_fault_is_typed_and_voids_the_deal(kind: str, fault: SimFault) -> None:
    plan = FaultPlan(seed=7)
    plan.inject(fault, operation=2, position=20)

    async def main() -> None:
        # a power cut (0.15 s) must look like a restart, not a dead link: give retransmission a wider window
        window: DriverOptions = {"ack_timeout": 0.15} if fault is SimFault.POWER_LOSS else {}
        with simulator(kind, plan) as sim:
            async with driver(sim, **window) as drv:
                good = await run_deal(drv)
                assert isinstance(good.end, DealEnded)
                bad = await run_deal(drv)
                assert isinstance(bad.end, DeviceFault), bad.events
                assert bad.end.kind is EXPECTED[fault]
                assert bad.end.deal_id == bad.deal_id
                assert not any(isinstance(e, DealEnded) for e in bad.events)
                # no card beyond the checks was passed on: at most 52 distinct, never a 14th in a pocket
                cards = [c.card for c in bad.cards if c.card is not None]
                assert len(cards) == len(set(cards))
                if fault is SimFault.POWER_LOSS:
                    await wait_session(drv)
                await drv.reset()
                again = await run_deal(drv)
                assert isinstance(again.end, DealEnded), again.events
                assert len({c.card for c in again.cards}) == 52

    run(main())


async def wait_session(drv: MachineDriver) -> None:
    import asyncio

    for _ in range(200):
        if drv.connected:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no new session after the device restarted")


@pytest.mark.parametrize("kind", KINDS)
def test_cable_pulled_reports_lost_deal_and_reconnects(kind: str) -> None:
    plan = FaultPlan(seed=3)
    plan.inject(SimFault.CABLE_PULLED, operation=1, position=10)

    async def main() -> None:
        with simulator(kind, plan) as sim:
            async with driver(sim) as drv:
                deal_id = await drv.start_deal()
                events = await wait_for(drv, Disconnected)
                lost = events[-1]
                assert isinstance(lost, Disconnected)
                assert lost.deal_in_progress == deal_id
                assert not any(isinstance(e, DealEnded) for e in events)
                after = await wait_for(drv, Reconnected)
                # the lost deal is never resumed: nothing of it arrives after the reconnection
                assert not any(isinstance(e, CardSeen | DealEnded) for e in after)
                fresh = await run_deal(drv)
                assert isinstance(fresh.end, DealEnded), fresh.events
                assert fresh.deal_id != deal_id
                assert len({c.card for c in fresh.cards}) == 52

    run(main())
