"""Random faults of every kind (seeded) over every transport: each deal either completes exactly as the
machine dealt it, or ends in the typed event of the fault injected into it; nothing else, never a false card."""

from __future__ import annotations

import asyncio

import pytest
from _proto_helpers import EXPECTED, KINDS, dealt, driver, run, simulator

from dealer.core.events import (
    CardSeen,
    DealEnded,
    DealStarted,
    DeviceEvent,
    DeviceFault,
    Disconnected,
    Reconnected,
)
from drivers.device import LinkLost
from drivers.machine import MachineDriver
from drivers.simulator import FaultPlan, NoiseConfig, SimFault


async def _until_connected(drv: MachineDriver) -> None:
    for _ in range(1000):
        if drv.connected:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the driver did not get its session back")


async def _soak(kind: str, deals: int, rate: float, seed: int, noise: bool = False) -> dict[str, int]:
    plan = FaultPlan(seed=seed, rates=dict.fromkeys(SimFault, rate))
    if noise:
        plan.noise = NoiseConfig(corrupt_rate=0.005, garbage_per_frame=0.5, duplicate_rate=0.005)
    tally: dict[str, int] = {}
    with simulator(kind, plan) as sim:
        machine = sim.machine
        async with driver(sim) as drv:
            for _ in range(deals):
                await _until_connected(drv)
                try:
                    deal_id = await drv.start_deal()
                except LinkLost as exc:
                    # the link dropped (or the device restarted) as the deal started: the deal is void and
                    # its end event still follows, after whatever the machine managed to begin
                    assert exc.deal_id is not None
                    lost = await drv.next_event(10)
                    while not (
                        (isinstance(lost, Disconnected) and lost.deal_in_progress == exc.deal_id)
                        or (isinstance(lost, DeviceFault) and lost.deal_id == exc.deal_id)
                    ):
                        assert isinstance(lost, DealStarted | CardSeen), lost
                        lost = await drv.next_event(10)
                    if isinstance(lost, Disconnected):
                        while not isinstance(await drv.next_event(10), Reconnected):
                            pass
                    tally["lost at start"] = tally.get("lost at start", 0) + 1
                    continue
                events: list[DeviceEvent] = []
                while True:
                    ev = await drv.next_event(10)
                    events.append(ev)
                    if isinstance(ev, DealEnded | DeviceFault | Disconnected) and (
                        not isinstance(ev, DeviceFault) or ev.deal_id == deal_id
                    ):
                        break
                end = events[-1]
                truth = next(t for t in machine.history if t.deal_id == deal_id)
                cards = [e for e in events if isinstance(e, CardSeen) and e.card is not None]
                for c in cards:  # never a false card
                    assert c.deal_id == deal_id
                    assert dealt(c) in truth.dealt
                assert len({c.card for c in cards}) == len(cards)
                if truth.fault is None and not isinstance(end, Disconnected):
                    assert isinstance(end, DealEnded), (truth, end)
                    assert [dealt(c) for c in cards] == truth.dealt
                    tally["complete"] = tally.get("complete", 0) + 1
                elif truth.fault is SimFault.CABLE_PULLED or isinstance(end, Disconnected):
                    assert isinstance(end, Disconnected) and end.deal_in_progress == deal_id, (truth, end)
                    while not isinstance(await drv.next_event(10), Reconnected):
                        pass
                    tally["cable_pulled"] = tally.get("cable_pulled", 0) + 1
                else:
                    assert isinstance(end, DeviceFault) and truth.fault is not None, (truth, end)
                    assert end.kind is EXPECTED[truth.fault], (truth, end)
                    tally[truth.fault.value] = tally.get(truth.fault.value, 0) + 1
                    await _until_connected(drv)
                    await drv.reset()
    return tally


@pytest.mark.parametrize("kind", KINDS)
def test_random_faults_each_surface_as_their_event(kind: str) -> None:
    tally = run(_soak(kind, deals=40, rate=0.06, seed=100 + KINDS.index(kind)))
    assert tally.get("complete", 0) >= 10
    assert len(tally) >= 4  # several different faults occurred and were recognised


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_soak_thousands_of_deals_with_every_fault(kind: str) -> None:
    tally = run(_soak(kind, deals=2000, rate=0.01, seed=7, noise=True), timeout=3000)
    assert set(tally) - {"lost at start"} == {"complete", "cable_pulled"} | {f.value for f in EXPECTED}
