"""100,000 frames of line noise on the serial line: every deal right, zero false cards accepted."""

from __future__ import annotations

import pytest
from _proto_helpers import dealt, driver, run, run_deal, simulator

from dealer.core.events import CardSeen, DealEnded, Disconnected
from drivers.simulator import FaultPlan, NoiseConfig


def _soak(kind: str, junk_frames: int) -> None:
    plan = FaultPlan(seed=2024, noise=NoiseConfig(corrupt_rate=0.01, garbage_per_frame=40, duplicate_rate=0.01))

    async def main() -> None:
        with simulator(kind, plan) as sim:
            machine = sim.machine
            async with driver(sim) as drv:
                complete = 0
                while machine.noise_out.injected < junk_frames:
                    out = await run_deal(drv)
                    truth = next(t for t in machine.history if t.deal_id == out.deal_id)
                    # every card the driver passed on is the card that physically went there
                    for c in out.cards:
                        assert truth.dealt[c.position] == dealt(c)
                    if isinstance(out.end, DealEnded):
                        complete += 1
                        assert len(out.cards) == 52
                    else:
                        # only a link given up under noise may end a deal early; it must say so
                        assert isinstance(out.end, Disconnected), out.end
                        await drv.next_event(10)  # Reconnected
                stats = drv.link.decoder.stats
                assert machine.noise_out.injected >= junk_frames
                assert stats.error_total >= junk_frames * 0.9  # nearly every junk frame was seen and skipped
                assert complete >= 0.95 * len(machine.history)
                assert drv.stats.cards == 52 * complete

    run(main())


def test_100k_noise_frames_no_false_card() -> None:
    _soak("pty", 100_000)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["usb", "tcp"])
def test_noise_soak_other_transports(kind: str) -> None:
    _soak(kind, 300_000)


def test_cards_accepted_only_once_under_duplicates() -> None:
    plan = FaultPlan(seed=9, noise=NoiseConfig(duplicate_rate=0.3))

    async def main() -> None:
        with simulator("pty", plan) as sim:
            async with driver(sim) as drv:
                for _ in range(5):
                    out = await run_deal(drv)
                    assert isinstance(out.end, DealEnded)
                    assert len([e for e in out.events if isinstance(e, CardSeen)]) == 52
                assert sim.machine.noise_out.repeated > 0
                assert drv.link.duplicates > 0

    run(main())
