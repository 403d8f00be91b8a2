"""The Law 6 share counted against the whole sealed bank: 7 sessions × 24 boards at 5 % need 3,360 deals.

Figures derived by hand: 7 × 24 = 168 deals; 168 × 100 / 5 = 3,360; with 2 spare deals 170 × 100 / 5 = 3,400;
5 % of 3,400 is 170, so after seven sessions (168) two replacement deals fit and a third does not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bank_engines import ENGINES, bank_target
from draw_support import DICE, full_draw, make_bank

from dealer.draw.bundle import verify_bundle
from dealer.draw.director import Director
from dealer.draw.protocol import DrawError
from dealer.draw.verify import verify_bank
from dealer.regulation import regulation_from_dict

SEVEN = {"dealing": {"variant": 2, "open_cards": 32}, "draw": {"share_percent": 5}, "session": {"boards": 24}}


@pytest.fixture(scope="module", params=ENGINES)
def director(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Director]:
    """A sealed-size bank on SQLite and on PostgreSQL (skipped, saying why, where no server answers)."""
    root = tmp_path_factory.mktemp("quota")
    with bank_target(str(request.param), root) as target:
        bank = make_bank(target, 3400, seed=12, key_dir=root / "var")
        yield Director(bank)
        bank.close()


def test_seven_sessions_of_24_boards_at_5_percent_need_3360_deals() -> None:
    reg = regulation_from_dict({**SEVEN, "schedule": {"sessions": 7}})
    assert (reg.total_deals, reg.bank_target) == (168, 3360)
    spare = regulation_from_dict({**SEVEN, "schedule": {"sessions": 7, "spare": 2}})
    assert (spare.total_deals, spare.bank_target) == (170, 3400)


def test_sessions_then_replacements_until_the_quota_is_full(director: Director) -> None:
    reg = regulation_from_dict({**SEVEN, "schedule": {"sessions": 7, "spare": 2}})
    director.seal()
    assert director.plan(reg)["quota"] == 170
    bundles = []
    for k in range(1, 8):
        bundles.append(full_draw(director, f"Session {k}", reg, value=f"{1 + k % 6}2345612/65432165"))
        assert bundles[-1]["commitment"]["n"] == 24 and bundles[-1]["commitment"]["drawn_before"] == 24 * (k - 1)
    with pytest.raises(DrawError, match="the schedule has 7 sessions and 7 session draws are made"):
        director.prepare("Session 8", DICE, reg)
    for k in (1, 2):  # replacement boards fit until the quota is full
        bundles.append(full_draw(director, f"Replacement {k}", reg, value=f"{k}1111111/22222222", replacement=True))
        assert bundles[-1]["commitment"]["n"] == 1
    with pytest.raises(DrawError, match=r"171 of 3400 sealed deals = 5\.03%, above the regulation's 5%: at most 170"):
        director.prepare("Replacement 3", DICE, reg, replacement=True)
    assert director.plan(reg)["drawn"] == 170 and director.plan(reg)["left"] == 0
    ids = [d["deal_id"] for b in bundles for d in b["drawn"]]
    assert len(ids) == 170 == len(set(ids))  # never a deal twice
    last = verify_bundle(bundles[-1], bundles[:-1])
    assert all(c.ok for c in last)
    assert "168 drawn before + 1 = 169" in next(c.detail for c in verify_bundle(bundles[-2], bundles[:-2])
                                                 if c.name == "quota")  # fmt: skip
    assert verify_bank(director.bank).ok


def test_an_eighth_session_is_refused_by_the_quota_too(tmp_path: Path) -> None:
    """A regulation claiming 8 sessions on a 3,360-deal bank at 5 % is refused; so is the 8th draw itself."""
    from dealer.regulation import RegulationError

    with pytest.raises(
        RegulationError, match=r"bank.target = 3360 at 5% gives 168 deals, fewer than the schedule's 192"
    ):
        regulation_from_dict({**SEVEN, "schedule": {"sessions": 8}, "bank": {"target": 3360}})
    bank = make_bank(tmp_path / "bank.sqlite", 480, seed=3)  # one session's bank: 24 at 5 % of 480
    try:
        d = Director(bank)
        d.seal()
        eight = regulation_from_dict({**SEVEN, "schedule": {"sessions": 8}})
        one = regulation_from_dict(SEVEN)
        full_draw(d, "Session 1", one)
        with pytest.raises(DrawError, match=r"48 of 480 sealed deals = 10\.00%, above the regulation's 5%: at most 24"):
            d.prepare("Session 2", DICE, eight, override="bank of stage 1 only")  # below target 3840, overridden
    finally:
        bank.close()
