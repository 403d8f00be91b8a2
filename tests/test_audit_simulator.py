"""The virtual dealing machine deals with a weak shuffler on request, and the audit catches it (real driver, pty)."""

from __future__ import annotations

from _proto_helpers import dealt, driver, run, run_deal, simulator

from dealer.audit import AuditRecord, run_audit
from dealer.audit.shufflers import simulator_shuffler
from dealer.core import Deal
from dealer.core.events import DealEnded


def machine_deals(spec: str, count: int) -> list[AuditRecord]:
    """Deal ``count`` random deals on the simulator with shuffler ``spec``; records as the bank would keep them."""
    records: list[AuditRecord] = []

    async def main() -> None:
        with simulator("pty", shuffler=simulator_shuffler(spec)) as sim:
            async with driver(sim) as drv:
                for _ in range(count):
                    out = await run_deal(drv)
                    assert isinstance(out.end, DealEnded) and out.end.record is not None
                    order = tuple(dealt(c)[0] for c in sorted(out.cards, key=lambda c: c.position))
                    records.append(AuditRecord(Deal.from_bytes(out.end.record), out.deal_id, "SIM", order=order))

    run(main())
    return records


def test_simulator_with_one_riffle_is_caught() -> None:
    records = machine_deals("gsr:1:11", 30)
    result = run_audit(records, 0.01)
    assert result.with_order == 30
    assert result.check("order_kept").status == "fail"
    assert not result.passed


def test_simulator_with_a_fair_shuffle_passes() -> None:
    result = run_audit(machine_deals("fair:5eed", 30), 0.01)
    assert result.check("order_kept").status == "pass"
    assert result.passed, result.verdict_en
