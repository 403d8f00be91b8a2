"""The whole draw: commit, public value, run, reveal, bundle; verification without the database."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from bank_engines import bank_at, engine, open_test_bank  # noqa: F401 (fixtures)
from bank_support import random_deal, station_source

from dealer.bank.store import ImportItem
from dealer.bank.verify import verify_bank
from dealer.draw.bundle import verify_bundle
from dealer.draw.director import Director
from dealer.draw.protocol import DrawError, dice_spec, draw_seed, drawn_ids, named_spec, to_ranges

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def director(bank_at: str, tmp_path: Path) -> Director:  # noqa: F811 (on SQLite and on PostgreSQL)
    bank = open_test_bank(bank_at, tmp_path)
    rng = random.Random(7)
    bank.import_deals([ImportItem(random_deal(rng), station_source()) for _ in range(400)], {"files": []})
    yield Director(bank)
    bank.close()


def _draw(director: Director, label: str, count: int = 20, dice: tuple[str, ...] = ("123456", "654321")) -> dict:  # type: ignore[type-arg]
    director.prepare(label, dice_spec(["Ann", "Boris"], 6), count=count)
    director.enter_public_value(label, dice=list(dice))
    director.run(label)
    director.reveal(label)
    return director.bundle(label)


def test_prepare_needs_a_seal_and_refuses_with_figures(director: Director) -> None:
    with pytest.raises(DrawError, match="no seal"):
        director.prepare("S1", dice_spec(["Ann"], 4), share_percent=5)
    director.seal()
    with pytest.raises(DrawError, match=r"0\.50% of 400 eligible deals.*between 4 and 40"):
        director.prepare("S1", dice_spec(["Ann"], 4), count=2)
    director.prepare("S1", dice_spec(["Ann"], 4), share_percent=5)
    with pytest.raises(Exception, match="exists already"):
        director.prepare("S1", dice_spec(["Ann"], 4), share_percent=5)
    with pytest.raises(Exception, match="prepared but not run"):
        director.prepare("S2", dice_spec(["Ann"], 4), share_percent=5)
    with pytest.raises(DrawError, match="no public value"):
        director.run("S1")


def test_bundle_verifies_and_the_draw_is_reproducible_from_it(director: Director, tmp_path: Path) -> None:
    director.seal()
    bundle = _draw(director, "Open, session 1")
    checks = verify_bundle(bundle)
    assert all(c.ok for c in checks), checks
    assert [c.name for c in checks] == [
        "format", "seal signature", "commitment signature", "commitment names the seal", "eligible set",
        "share", "secret", "public value", "draw", "openings", "inclusion",
    ]  # fmt: skip
    # reproduce from the bundle's published values alone
    com = bundle["commitment"]
    seed = draw_seed(
        bytes.fromhex(bundle["secret"]), bundle["public_value"], bytes.fromhex(com["seal"]["root"]), com["label"]
    )
    ids = [i for _, i in drawn_ids(seed, com["eligible"]["ranges"], com["eligible"]["count"], com["n"])]
    assert ids == [d["deal_id"] for d in bundle["drawn"]]
    assert [director.bank.get_deal(i).deal.to_bytes().hex() for i in ids] == [d["deal"] for d in bundle["drawn"]]
    # any other K or V gives another draw
    other_k = draw_seed(os.urandom(32), bundle["public_value"], bytes.fromhex(com["seal"]["root"]), com["label"])
    other_v = draw_seed(
        bytes.fromhex(bundle["secret"]), "123456/654320", bytes.fromhex(com["seal"]["root"]), com["label"]
    )
    for seed2 in (other_k, other_v):
        assert [i for _, i in drawn_ids(seed2, com["eligible"]["ranges"], com["eligible"]["count"], com["n"])] != ids


def _mutations(bundle: dict) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    def edit(fn) -> dict:  # type: ignore[no-untyped-def, type-arg]
        b = copy.deepcopy(bundle)
        fn(b)
        return b

    flip = lambda h: ("0" if h[0] != "0" else "1") + h[1:]  # noqa: E731
    return [
        ("secret", edit(lambda b: b.update(secret=flip(b["secret"])))),
        ("public value", edit(lambda b: b.update(public_value="12345/654320"))),
        ("draw", edit(lambda b: b.update(public_value="123456/654320"))),
        ("draw", edit(lambda b: b["drawn"].reverse())),
        ("commitment signature", edit(lambda b: b["commitment"].update(n=b["commitment"]["n"] + 1))),
        ("commitment signature", edit(lambda b: b["commitment"]["eligible"].update(count=1))),
        ("seal signature", edit(lambda b: b["seal"]["checkpoint"].update(root=flip(b["seal"]["checkpoint"]["root"])))),
        ("openings", edit(lambda b: b["drawn"][3].update(salt=flip(b["drawn"][3]["salt"])))),
        ("openings", edit(lambda b: b["drawn"][0].update(pbn=b["drawn"][1]["pbn"]))),
        ("inclusion", edit(lambda b: b["drawn"][2]["proof"].__setitem__(0, flip(b["drawn"][2]["proof"][0])))),
        ("format", edit(lambda b: b.update(format="other/1"))),
    ]


def test_a_changed_bundle_fails_at_the_right_check(director: Director) -> None:
    director.seal()
    bundle = _draw(director, "S1")
    for expected, mutated in _mutations(bundle):
        checks = verify_bundle(mutated)
        assert not checks[-1].ok and checks[-1].name == expected, (expected, checks[-1])
        assert all(c.ok for c in checks[:-1])


def test_drawn_deal_is_never_eligible_again(director: Director) -> None:
    director.seal()
    first = [d["deal_id"] for d in _draw(director, "S1", count=40)["drawn"]]
    second = _draw(director, "S2", count=36)
    assert second["commitment"]["eligible"]["count"] == 360
    flat = {i for a, b in second["commitment"]["eligible"]["ranges"] for i in range(a, b + 1)}
    assert not flat & set(first)
    assert not {d["deal_id"] for d in second["drawn"]} & set(first)
    assert all(c.ok for c in verify_bundle(second))
    assert director.bank.state_counts() == {"bank": 324, "drawn": 0, "played": 76}
    in_bank = [d.deal_id for d in director.bank.iter_deals() if d.state == "bank"]
    assert director.bank.eligible_ranges(400) == to_ranges(in_bank)
    assert director.bank.eligible_count(400) == len(in_bank) == 324
    assert len(director.bank.eligible_ranges(400)) > 50
    assert verify_bank(director.bank).ok


def test_deals_after_the_seal_wait_for_the_next_seal(director: Director) -> None:
    director.seal()
    rng = random.Random(99)
    late = [director.bank.commit_deal(random_deal(rng), station_source()).deal_id for _ in range(5)]
    doc = director.prepare("S1", named_spec("tomorrow's lottery"), count=10)["commitment"]
    assert doc["eligible"]["ranges"] == [[1, 400]]
    assert max(late) == 405


def test_nothing_of_the_draw_is_public_before_reveal(director: Director) -> None:
    director.seal()
    director.prepare("S1", dice_spec(["Ann"], 6), count=12)
    director.enter_public_value("S1", dice=["314159"])
    drawn = director.run("S1")
    secret = director.bank.get_draw("S1").secret.hex()
    ids = [d.deal.deal_id for d in drawn]
    public = json.dumps([director.status(), director.commitment("S1")])
    assert secret not in public
    assert "drawn_ids" not in public
    for d in drawn:  # no deal's cards, salt or opening either
        assert d.deal.salt.hex() not in public and d.deal.deal.to_pbn() not in public
    with pytest.raises(DrawError, match="only after reveal"):
        director.bundle("S1")
    director.reveal("S1")
    status = director.status()["draws"][0]
    assert status["secret"] == secret and status["drawn_ids"] == ids


def test_cli_verifies_a_bundle_without_any_database(director: Director, tmp_path: Path) -> None:
    director.seal()
    bundle = _draw(director, "S1")
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    good = alone / "bundle.json"
    good.write_text(json.dumps(bundle))
    bad = alone / "bad.json"
    bad.write_text(json.dumps(_mutations(bundle)[1][1]))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda p: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "dealer", "draw", "verify", str(p)], cwd=alone, env=env, capture_output=True, text=True
    )
    ok = run(good)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("passed") >= 11 and "all 11 checks passed" in ok.stdout
    failed = run(bad)
    assert failed.returncode == 1
    assert "FAILED public value" in failed.stdout and "verification failed at 'public value'" in failed.stderr
    assert not (alone / "var").exists()
