"""Calibration (fair deals pass at about the nominal rate) and power (weak shuffles and rigged deals fail)."""

import numpy as np
import pytest
from scipy import stats

from dealer.audit import AuditRecord, audit_dealset, deal_from_order, run_audit
from dealer.audit.power import simulate
from dealer.audit.records import DealSet
from dealer.audit.shufflers import FairShuffler, seats_from_orders

SEEDS = 40
DEALS = 600
ALPHA = 0.05


def dealset(spec: str, deals: int, seed: int, with_order: bool) -> DealSet:
    orders = simulate(spec, deals, seed)
    return DealSet.from_arrays(seats_from_orders(orders), orders if with_order else None)


def test_fair_deals_pass_at_about_the_nominal_rate() -> None:
    alarms = 0
    p_values: dict[str, list[float]] = {}
    for seed in range(SEEDS):
        result = audit_dealset(dealset("fair", DEALS, 10_000 + seed, with_order=True), ALPHA)
        alarms += not result.passed
        for c in result.checks:
            if c.p_value is not None and c.id != "duplicates":
                p_values.setdefault(c.id, []).append(c.p_value)
    # Holm keeps the family-wise rate at most α: the count of alarms is at most Binomial(40, 0.05) in the upper tail
    assert alarms <= stats.binom.ppf(0.999, SEEDS, ALPHA)
    # Every test's own p-values look uniform (calibrated, neither anti-conservative nor dead)
    assert set(p_values) == {
        "patterns", "hcp_N", "hcp_E", "hcp_S", "hcp_W", "card_seat", "pair_repeat", "same_seat", "order_kept",
    }  # fmt: skip
    pooled = np.concatenate([np.array(v) for v in p_values.values()])
    assert stats.kstest(pooled, "uniform").pvalue > 1e-3
    for check_id, values in p_values.items():
        assert stats.kstest(values, "uniform").pvalue > 1e-4, check_id


def test_one_riffle_is_flagged_from_the_hands_alone_within_600_deals() -> None:
    for seed in range(5):
        result = audit_dealset(dealset("gsr:1", DEALS, seed, with_order=False), 0.01)
        assert not result.passed
        assert result.check("pair_repeat").status == "fail"
        assert result.check("order_kept").status == "skipped"


def test_two_and_three_riffles_are_flagged_with_the_dealing_order() -> None:
    for spec in ("gsr:2", "gsr:3"):
        for seed in range(5):
            result = audit_dealset(dealset(spec, 60, seed, with_order=True), 0.01)
            assert result.check("order_kept").status == "fail", (spec, seed)
            assert not result.passed


def test_a_seat_that_gets_too_many_aces_is_flagged() -> None:
    orders = FairShuffler(b"rigged").orders(DEALS)
    records = []
    for i, order in enumerate(orders):
        deal = deal_from_order(order)
        seats = bytearray(deal.seats)
        if i % 3 == 0 and seats[0] != 0:  # swap ♠A into North's hand a third of the time
            swap = next(c for c in range(52) if seats[c] == 0 and c % 13 != 0)
            seats[0], seats[swap] = 0, seats[0]
        records.append(AuditRecord(type(deal)(bytes(seats)), i + 1))
    result = run_audit(records, 0.01)
    assert result.check("card_seat").status == "fail"
    assert not result.passed


def test_duplicates_are_reported_by_id() -> None:
    orders = FairShuffler(b"dup").orders(50)
    records = [AuditRecord(deal_from_order(o), f"B{i}") for i, o in enumerate(orders)]
    records.append(AuditRecord(records[7].deal, "B-again"))
    result = run_audit(records)
    dup = result.check("duplicates")
    assert dup.status == "fail"
    assert dup.details["groups"] == [["B7", "B-again"]]


def test_stations_are_audited_apart_and_consecutive_pairs_stay_inside_a_station() -> None:
    fair = FairShuffler(b"station-a").orders(300)
    weak = simulate("gsr:1", 300, 4)
    records = [AuditRecord(deal_from_order(o), f"A{i}", "A") for i, o in enumerate(fair)]
    records += [AuditRecord(deal_from_order(o), f"B{i}", "B") for i, o in enumerate(weak)]
    result = run_audit(records, 0.01)
    assert result.pairs == 598
    by_station = {s.station: s for s in result.stations}
    assert by_station["A"].passed
    assert not by_station["B"].passed and "pair_repeat" in by_station["B"].failed
    for s in result.stations:  # Bonferroni over the two stations
        assert s.alpha == 0.005
        assert s.min_p_holm is not None and s.passed == (s.min_p_holm >= 0.005)


def test_too_few_deals_skip_tests_with_a_reason() -> None:
    result = run_audit([AuditRecord(deal_from_order(FairShuffler(b"one").next_order()), 1)])
    assert result.check("card_seat").status == "skipped"
    assert "20" in result.check("card_seat").verdict_en
    assert result.check("pair_repeat").status == "skipped"
    assert result.passed


def test_consecutive_deals_follow_time_order_within_a_station() -> None:
    from datetime import UTC, datetime, timedelta

    weak = simulate("gsr:1", 300, 8)
    start = datetime(2026, 11, 29, 9, 0)
    records = [
        AuditRecord(deal_from_order(o), i, "T1", (start + timedelta(minutes=i)).replace(tzinfo=UTC if i % 2 else None))
        for i, o in enumerate(weak)
    ]
    shuffled = records[1::2] + records[::2]  # stored out of order; the times put them back
    result = run_audit(shuffled, 0.01)
    assert result.check("pair_repeat").status == "fail"
    assert result.dealset is not None and list(result.dealset.ids) == list(range(300))


def test_position_against_seat_runs_when_the_machine_chooses_pockets() -> None:
    fair = FairShuffler(b"pockets")
    decks = fair.orders(200)
    deals = [deal_from_order(o) for o in fair.orders(200)]
    # a machine that reads the cards in deck order and puts each in its pocket of an independent random deal
    free = [AuditRecord(d, i, "M", order=tuple(map(int, o))) for i, (d, o) in enumerate(zip(deals, decks, strict=True))]
    result = run_audit(free, 0.01)
    assert result.check("position_seat").status == "pass"
    # a machine whose first 13 cards always go to North (deal and order built together)
    biased = []
    for i, o in enumerate(decks):
        seats = bytearray(52)
        for t, card in enumerate(o):
            seats[int(card)] = 0 if t < 13 else 1 + (t - 13) % 3
        biased.append(AuditRecord(type(deals[0])(bytes(seats)), i, "M", order=tuple(map(int, o))))
    result = run_audit(biased, 0.01)
    assert result.check("position_seat").status == "fail"


def test_clockwise_dealing_skips_position_against_seat_with_the_reason() -> None:
    orders = FairShuffler(b"clockwise").orders(40)
    records = [AuditRecord(deal_from_order(o), i, order=tuple(map(int, o))) for i, o in enumerate(orders)]
    check = run_audit(records).check("position_seat")
    assert check.status == "skipped" and "clockwise" in check.verdict_en and "часовой" in check.verdict_ru


def test_results_do_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    from dealer.audit import checks

    orders = simulate("gsr:3", 300, 12)
    whole = audit_dealset(DealSet.from_arrays(seats_from_orders(orders), orders), 0.01)
    monkeypatch.setattr(checks, "CHUNK", 64)  # 64-row chunks, 8-pair chunks for the inversions
    chunked = audit_dealset(DealSet.from_arrays(seats_from_orders(orders), orders), 0.01)
    assert [(c.id, c.statistic, c.p_value) for c in whole.checks] == [
        (c.id, c.statistic, c.p_value) for c in chunked.checks
    ]
