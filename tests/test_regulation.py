from pathlib import Path
from typing import Any

import pytest

from dealer.regulation import (
    DealingVariant,
    RegulationError,
    load_regulation,
    parse_regulation,
    regulation_from_dict,
)


def reg(**sections: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"dealing": {"variant": 2, "open_cards": 32}}
    data.update(sections)
    return data


def test_default_file_loads() -> None:
    r = load_regulation()
    assert r.variant is DealingVariant.PARTIALLY_OPEN
    assert r.open_cards == 32 and r.open_count() == 32
    assert r.bank_target == 480  # 24 boards at 5 %
    assert r.is_open(31) and not r.is_open(32)


@pytest.mark.parametrize(("k", "ok"), [(27, False), (28, True), (29, True), (39, True), (40, True), (41, False)])
def test_open_cards_bounds(k: int, ok: bool) -> None:
    data = {"dealing": {"variant": 2, "open_cards": k}}
    if ok:
        assert regulation_from_dict(data).open_cards == k
    else:
        with pytest.raises(RegulationError, match=rf"dealing.open_cards = {k} is out of range: allowed 28..40"):
            regulation_from_dict(data)


def test_open_cards_required_for_variant_2_refused_for_others() -> None:
    with pytest.raises(RegulationError, match="open_cards is required for variant 2"):
        regulation_from_dict({"dealing": {"variant": 2}})
    for variant in (1, 3):
        with pytest.raises(RegulationError, match="only allowed with variant 2"):
            regulation_from_dict({"dealing": {"variant": variant, "open_cards": 32}})
    assert regulation_from_dict({"dealing": {"variant": 3}}).open_count() == 52
    assert regulation_from_dict({"dealing": {"variant": 1}}).open_count() == 0


@pytest.mark.parametrize("variant", [0, 4, "2", 2.0, True])
def test_variant_bounds(variant: Any) -> None:
    with pytest.raises(RegulationError, match="dealing.variant"):
        regulation_from_dict({"dealing": {"variant": variant}})


@pytest.mark.parametrize(
    ("share", "ok"), [(0.99, False), (1, True), (1.01, True), (9.99, True), (10, True), (10.01, False)]
)
def test_share_bounds(share: float, ok: bool) -> None:
    data = reg(draw={"share_percent": share}, session={"boards": 1})
    if ok:
        assert regulation_from_dict(data).share_percent == share
    else:
        with pytest.raises(RegulationError, match=r"draw.share_percent = .* is out of range: allowed 1..10"):
            regulation_from_dict(data)


@pytest.mark.parametrize(("deals", "ok"), [(4, False), (5, True), (6, True), (49, True), (50, True), (51, False)])
def test_number_of_deals_share_checked(deals: int, ok: bool) -> None:
    data = reg(draw={"deals": deals}, bank={"target": 500}, session={"boards": 4})
    if ok:
        r = regulation_from_dict(data)
        assert r.deals_per_session == deals and r.share_percent == pytest.approx(deals / 5)
    else:
        with pytest.raises(
            RegulationError, match=rf"draw.deals = {deals} is .*% of bank.target = 500: allowed 1%..10%"
        ):
            regulation_from_dict(data)


def test_deals_needs_target_and_not_both() -> None:
    with pytest.raises(RegulationError, match="needs bank.target"):
        regulation_from_dict(reg(draw={"deals": 10}))
    with pytest.raises(RegulationError, match="either"):
        regulation_from_dict(reg(draw={"deals": 10, "share_percent": 5}, bank={"target": 200}))


@pytest.mark.parametrize(("key", "lo", "hi"), [("boards", 1, 200), ("copies", 1, 50)])
def test_session_bounds(key: str, lo: int, hi: int) -> None:
    for value, ok in ((lo - 1, False), (lo, True), (lo + 1, True), (hi - 1, True), (hi, True), (hi + 1, False)):
        data = reg(session={key: value}, draw={"share_percent": 10})
        if ok:
            regulation_from_dict(data)
        else:
            with pytest.raises(RegulationError, match=rf"session.{key} = {value} is out of range: allowed {lo}..{hi}"):
                regulation_from_dict(data)


def test_bank_target_derived_and_checked() -> None:
    assert regulation_from_dict(reg(session={"boards": 30}, draw={"share_percent": 4})).bank_target == 750
    with pytest.raises(RegulationError, match=r"bank.target = 100 at 5% gives 5 deals, fewer than the schedule's 24"):
        regulation_from_dict(reg(bank={"target": 100}))
    with pytest.raises(RegulationError, match="bank.target = 0 is out of range"):
        regulation_from_dict(reg(bank={"target": 0}))


def test_unknown_keys_refused() -> None:
    with pytest.raises(RegulationError, match=r"unknown key dealing.open_card \(allowed in \[dealing\]"):
        regulation_from_dict({"dealing": {"variant": 2, "open_card": 30}})
    with pytest.raises(RegulationError, match="unknown key 'shuffle'"):
        regulation_from_dict(reg(shuffle={}))


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "reg.toml"
    bad.write_text("[dealing]\nvariant = 2\nopen_cards = 50\n")
    with pytest.raises(RegulationError, match=rf"^{bad}: dealing.open_cards = 50"):
        load_regulation(bad)
    with pytest.raises(RegulationError, match="not valid TOML.*line 1"):
        parse_regulation("[dealing\n")
    with pytest.raises(RegulationError, match="cannot read"):
        load_regulation(tmp_path / "missing.toml")


def test_schedule_sets_the_bank_target_from_the_whole_bank_share() -> None:
    r = regulation_from_dict(reg(session={"boards": 24}, schedule={"sessions": 7}))
    # 7 sessions × 24 boards = 168 deals at 5 % of the whole bank: 168 × 100 / 5 = 3,360 deals
    assert (r.total_deals, r.bank_target, r.share_bp) == (168, 3360, 500)
    r = regulation_from_dict(
        reg(session={"boards": 24}, schedule={"sessions": 7, "spare": 2}, draw={"share_percent": 3})
    )
    assert r.bank_target == 5667  # ceil(170 × 100 / 3) = ceil(5666.67)
    with pytest.raises(
        RegulationError, match=r"bank.target = 3000 at 5% gives 150 deals, fewer than the schedule's 168"
    ):
        regulation_from_dict(reg(session={"boards": 24}, schedule={"sessions": 7}, bank={"target": 3000}))
    with pytest.raises(RegulationError, match="schedule.sessions = 0 is out of range"):
        regulation_from_dict(reg(schedule={"sessions": 0}))
    with pytest.raises(RegulationError, match="more than two decimals"):
        regulation_from_dict(reg(draw={"share_percent": 2.555}))
    with pytest.raises(RegulationError, match=r"the schedule's 60 deals .* 12% of bank.target = 500"):
        regulation_from_dict(
            reg(draw={"deals": 30}, bank={"target": 500}, session={"boards": 4}, schedule={"sessions": 2})
        )


def test_regulation_check_prints_the_plan(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    f = tmp_path / "reg.toml"
    f.write_text("[dealing]\nvariant = 3\n[session]\nboards = 24\n[schedule]\nsessions = 7\nspare = 2\n")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "120"}
    r = subprocess.run([sys.executable, "-m", "dealer", "regulation", "check", str(f)], env=env,
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "3400" in r.stdout  # ceil(170 × 100 / 5)
    assert "session 7" in r.stdout and "168" in r.stdout and "4.94%" in r.stdout and "5.00%" in r.stdout


def test_a_rehearsal_can_draw_its_session_from_its_small_bank(tmp_path: Path) -> None:
    """A rehearsal's bank of 12 deals must let the director try the draw: with the default regulation's
    5% × 24 boards nothing could be drawn from 12 deals (5% of 12 is 0). 10% of 12 = 1.2, so the quota is 1."""
    from draw_support import DICE, full_draw, make_bank

    from dealer.draw.bundle import verify_bundle
    from dealer.draw.director import Director
    from dealer.regulation import REHEARSAL_TARGET, load_regulation, rehearsal_regulation

    reg = rehearsal_regulation(load_regulation(None))
    assert reg.bank_target == REHEARSAL_TARGET == 12
    assert REHEARSAL_TARGET * reg.share_bp // 10000 >= reg.deals_per_session * reg.sessions + reg.spare_deals == 1
    with make_bank(tmp_path / "bank.sqlite", REHEARSAL_TARGET) as bank:
        director = Director(bank)
        director.seal()
        bundle = full_draw(director, "rehearsal", reg, spec=DICE)
        assert len(bundle["drawn"]) == 1 and all(c.ok for c in verify_bundle(bundle))


def test_variant_1_checks_no_bank_share() -> None:
    """Variant 1 forms no bank and draws nothing (Law 6): a bank target or a draw size in its file is not checked
    against its boards — the same numbers refused for variant 2 load for variant 1."""
    closed = {"dealing": {"variant": 1}}
    for extra in ({"bank": {"target": 80}}, {"bank": {"target": 80}, "draw": {"deals": 30}}):
        with pytest.raises(RegulationError):
            regulation_from_dict(reg(session={"boards": 24}, **extra))
        loaded = regulation_from_dict({**closed, "session": {"boards": 24}, **extra})
        assert loaded.variant is DealingVariant.CLOSED and loaded.boards_per_session == 24
