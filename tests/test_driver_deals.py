"""The real driver against the simulator over a pty, the pyusb backend and TCP: random deals and boards."""

from __future__ import annotations

import pytest
from _proto_helpers import KINDS, dealt, driver, run, run_deal, simulator

from dealer.core import Deal
from dealer.core.events import CardSeen, DealEnded, DealStarted, DeviceFault, FaultKind
from drivers.machine import MachineDriver
from drivers.simulator import FaultPlan, SimFault, csprng_shuffle
from drivers.simulator.machine import DealTruth
from drivers.transport import open_transport
from firmware_protocol.cards import pack_seats


def check_complete(cards: list[CardSeen], end: object, truth: DealTruth) -> None:
    assert isinstance(end, DealEnded)
    assert [c.position for c in cards] == list(range(52))
    assert len({c.card for c in cards}) == 52
    assert all(c.card is not None and c.pocket is not None for c in cards)
    per_pocket = [sum(1 for c in cards if c.pocket == p) for p in range(4)]
    assert per_pocket == [13, 13, 13, 13]
    # exactly what the machine physically dealt, and the record agrees
    assert [dealt(c) for c in cards] == truth.dealt
    seats = [0] * 52
    for card, pocket in map(dealt, cards):
        seats[card] = pocket
    assert end.record == pack_seats(seats)
    assert Deal.from_bytes(end.record).seats == bytes(seats)


@pytest.mark.parametrize("kind", KINDS)
def test_100_random_deals_complete(kind: str) -> None:
    async def main() -> None:
        with simulator(kind) as sim:
            async with driver(sim) as drv:
                assert drv.info is not None and drv.info.shuffler and drv.info.pockets == 4
                ids = set()
                for _ in range(100):
                    out = await run_deal(drv)
                    assert isinstance(out.events[0], DealStarted) and out.events[0].deal_id == out.deal_id
                    truth = sim.machine.history[-1]
                    assert truth.deal_id == out.deal_id
                    check_complete(out.cards, out.end, truth)
                    ids.add(out.deal_id)
                assert len(ids) == 100
                # the CSPRNG shuffle gives 100 different deals
                assert len({tuple(t.dealt) for t in sim.machine.history}) == 100

    run(main())


def test_pyserial_socket_url() -> None:
    """pyserial's URL handlers (here socket://) reach the machine on its TCP port."""

    async def main() -> None:
        with simulator("tcp") as sim:
            drv = MachineDriver(lambda: open_transport(sim.url), ack_timeout=0.05, heartbeat=0.2)
            await drv.connect()
            try:
                assert drv.info is not None and "socket://" in drv.info.transport
                for _ in range(3):
                    out = await run_deal(drv)
                    check_complete(out.cards, out.end, sim.machine.history[-1])
            finally:
                await drv.close()

    run(main())


@pytest.mark.parametrize("kind", KINDS)
def test_make_board_copies(kind: str) -> None:
    deals = [Deal(bytes(pocket for pocket in _random_seats())) for _ in range(4)]

    async def main() -> None:
        with simulator(kind) as sim:
            async with driver(sim) as drv:
                for board, deal in enumerate(deals, start=1):
                    for copy in (1, 2):
                        result = await drv.make_board(board, deal, copy)
                        assert result.ok, result
                        assert (result.board, result.copy) == (board, copy)
                        assert result.record == deal.to_bytes()
                        truth = sim.machine.history[-1]
                        assert truth.board == board and truth.copy == copy
                        assert all(deal.seats[card] == pocket for card, pocket in truth.dealt)

    run(main())


def _random_seats() -> list[int]:
    order = csprng_shuffle(range(52))
    seats = [0] * 52
    for i, card in enumerate(order):
        seats[card] = i % 4
    return seats


@pytest.mark.parametrize("kind", KINDS)
def test_make_board_wrong_pocket_reports_card_and_pocket(kind: str) -> None:
    deal = Deal(bytes(_random_seats()))
    plan = FaultPlan(seed=11)
    plan.inject(SimFault.WRONG_POCKET, operation=1, position=30)

    async def main() -> None:
        with simulator(kind, plan) as sim:
            async with driver(sim) as drv:
                result = await drv.make_board(5, deal, 3)
                assert not result.ok
                fault = result.fault
                assert isinstance(fault, DeviceFault)
                assert fault.kind is FaultKind.WRONG_POCKET
                card, pocket = sim.machine.history[-1].dealt[30]
                assert deal.seats[card] != pocket  # the simulator really misplaced it
                assert (fault.card, fault.pocket, fault.position) == (card, pocket, 30)
                assert "board 5 copy 3" in fault.detail
                # the machine was stopped; the next copy is made correctly
                again = await drv.make_board(5, deal, 3)
                assert again.ok and again.record == deal.to_bytes()

    run(main())


def test_random_deal_wrong_pocket_is_caught_by_pocket_count() -> None:
    plan = FaultPlan(seed=5)
    plan.inject(SimFault.WRONG_POCKET, operation=1, position=3)

    async def main() -> None:
        with simulator("pty", plan) as sim:
            async with driver(sim) as drv:
                out = await run_deal(drv)
                assert isinstance(out.end, DeviceFault) and out.end.kind is FaultKind.WRONG_POCKET
                assert out.end.card is not None and out.end.pocket is not None
                counts = [sum(1 for c in out.cards if c.pocket == p) for p in range(4)]
                assert max(counts) == 13 and counts[out.end.pocket] == 13

    run(main())
