"""The whole draw: commit, publish, public value, run, reveal, bundle; verification without the database."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bank_engines import bank_at, engine  # noqa: F401 (fixtures)
from bank_support import random_deal, station_source
from draw_support import DICE, derive, full_draw, make_bank, regulation, resign_commitment

from dealer.bank.store import BankError
from dealer.draw.bundle import verify_bundle
from dealer.draw.director import Director
from dealer.draw.protocol import DrawError, named_spec
from dealer.draw.verify import verify_bank
from dealer.integrity.ledger import canonical_json

ROOT = Path(__file__).resolve().parents[1]
REG = regulation(boards=18, sessions=2, spare=4, share=10)  # 40 deals at 10 % -> a 400-deal bank


@pytest.fixture
def director(bank_at: str, tmp_path: Path) -> Iterator[Director]:  # noqa: F811 (on SQLite and on PostgreSQL)
    bank = make_bank(bank_at, 400, key_dir=tmp_path / "var")
    yield Director(bank)
    bank.close()


def test_regulation_plan_for_the_fixture() -> None:
    assert REG.total_deals == 40 and REG.bank_target == 400 and REG.share_bp == 1000


def test_prepare_needs_a_seal_a_full_bank_and_a_published_commitment(director: Director) -> None:
    with pytest.raises(DrawError, match="no seal"):
        director.prepare("S1", DICE, REG)
    director.seal()
    big = regulation(boards=24, sessions=7, share=5)  # needs 3,360 deals
    with pytest.raises(DrawError, match=r"holds 400 deals, below the regulation's target of 3360.*override"):
        director.prepare("S1", DICE, big)
    # the override is ledgered with the commitment; the quota is still 5 % of the 400 sealed deals = 20
    with pytest.raises(DrawError, match=r"24 deals .* 24 of 400 sealed deals = 6\.00%.*at most 20"):
        director.prepare("S1", DICE, big, override="stage 1 bank short by a machine fault")
    doc = director.prepare("S1", DICE, REG)["commitment"]
    assert doc["n"] == 18 and doc["previous"] is None and doc["drawn_before"] == 0
    assert doc["eligible"] == {"count": 400, "rule": "sealed-minus-chain"}
    with pytest.raises(BankError, match="exists already"):
        director.prepare("S1", DICE, REG)
    with pytest.raises(BankError, match="prepared but not run"):
        director.prepare("S2", DICE, REG)
    with pytest.raises(DrawError, match="not been shown to the hall"):
        director.enter_public_value("S1", dice=["12345612", "65432165"])
    with pytest.raises(BankError, match="not been shown to the hall"):  # the bank itself refuses too
        director.bank.draw_public_value("S1", "12345612/65432165", {"label": "S1", "value": "12345612/65432165"})
    director.publish("S1")
    assert director.bank.draw_published("S1")
    assert director.enter_public_value("S1", dice=["1234 5612", "6543 2165"]) == "12345612/65432165"
    director.run("S1")


def test_override_of_a_small_bank_is_in_the_signed_commitment(director: Director) -> None:
    director.seal()
    small = regulation(boards=20, sessions=1, share=5)  # target 400 + …
    big = regulation(boards=20, sessions=2, share=5)  # target 800: the 400-deal bank is below it
    assert small.bank_target == 400 and big.bank_target == 800
    doc = director.prepare("S1", DICE, big, override="stage bank closed early")["commitment"]
    assert doc["quota"] == {"override": "stage bank closed early", "share_bp": 500, "target": 800}
    director.publish("S1")
    director.enter_public_value("S1", dice=["12345612/65432165"])
    director.run("S1")
    director.reveal("S1")
    checks = verify_bundle(director.bundle("S1"))
    assert checks[-1].ok, checks[-1]
    quota = next(c for c in checks if c.name == "quota")
    assert "below the target of 800" in quota.detail and "stage bank closed early" in quota.detail


def test_bundle_verifies_and_an_independent_derivation_agrees(director: Director) -> None:
    director.seal()
    bundle = full_draw(director, "Open, session 1", REG)
    checks = verify_bundle(bundle)
    assert all(c.ok for c in checks), checks
    assert [c.name for c in checks] == [
        "format", "well-formed", "seal signature", "commitment signature", "seal is possible",
        "commitment names the seal", "ledger entries", "chain", "eligible set", "quota", "secret", "public value",
        "draw", "openings", "inclusion",
    ]  # fmt: skip
    assert derive(bundle, set()) == [(d["position"], d["deal_id"]) for d in bundle["drawn"]]
    assert [director.bank.get_deal(d["deal_id"]).deal.to_bytes().hex() for d in bundle["drawn"]] == [
        d["deal"] for d in bundle["drawn"]
    ]
    assert "ranges" not in json.dumps(bundle["commitment"])


def _mutations(bundle: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    def edit(fn: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
        b = copy.deepcopy(bundle)
        fn(b)
        return b

    def flip(h: str) -> str:
        return ("0" if h[0] != "0" else "1") + h[1:]

    return [
        ("secret", edit(lambda b: b.update(secret=flip(b["secret"])))),
        ("public value", edit(lambda b: b.update(public_value="1234561/65432165"))),
        ("draw", edit(lambda b: b.update(public_value="12345612/65432166"))),
        ("draw", edit(lambda b: b["drawn"].reverse())),
        ("commitment signature", edit(lambda b: b["commitment"].update(drawn_before=1))),
        ("commitment signature", edit(lambda b: b["commitment"]["quota"].update(share_bp=900))),
        ("seal signature", edit(lambda b: b["seal"]["checkpoint"].update(root=flip(b["seal"]["checkpoint"]["root"])))),
        ("openings", edit(lambda b: b["drawn"][3].update(salt=flip(b["drawn"][3]["salt"])))),
        ("openings", edit(lambda b: b["drawn"][0].update(pbn=b["drawn"][1]["pbn"]))),
        ("inclusion", edit(lambda b: b["drawn"][2]["proof"].__setitem__(0, flip(b["drawn"][2]["proof"][0])))),
        ("format", edit(lambda b: b.update(format="other/1"))),
        ("well-formed", edit(lambda b: b.update(secret=b["secret"].upper()))),
        ("well-formed", edit(lambda b: b.update(secret=" " + b["secret"][1:]))),
        ("well-formed", edit(lambda b: b["drawn"][0].update(deal_id=float(b["drawn"][0]["deal_id"])))),
        ("well-formed", edit(lambda b: b["drawn"][0].update(salt=b["drawn"][0]["salt"][:30]))),
        ("well-formed", edit(lambda b: b.update(extra=1))),
        ("well-formed", edit(lambda b: b["commitment"]["public_value"].update(witnesses=["Ann", "Ann"]))),
    ]


def test_a_changed_bundle_fails_at_the_right_check_and_says_what_failed(director: Director) -> None:
    director.seal()
    bundle = full_draw(director, "S1", REG)
    good = {c.name: c.detail for c in verify_bundle(bundle)}
    for expected, mutated in _mutations(bundle):
        checks = verify_bundle(mutated)
        assert not checks[-1].ok and checks[-1].name == expected, (expected, checks[-1])
        assert all(c.ok for c in checks[:-1])
        assert checks[-1].detail != good.get(expected), checks[-1]  # never the success wording


def _chain(director: Director) -> list[dict[str, Any]]:
    director.seal()
    first = full_draw(director, "S1", REG, reveal=False)
    # S2 is prepared while S1 is drawn but unrevealed: its commitment must not give S1's picks away
    doc = director.prepare("S2", DICE, REG)["commitment"]
    assert doc["drawn_before"] == 18 and doc["eligible"] == {"count": 382, "rule": "sealed-minus-chain"}
    listed = {k: v for k, v in doc.items() if isinstance(v, list)}  # no list of deal ids anywhere in it
    assert listed == {} and all(not isinstance(v, list) for part in doc.values() if isinstance(part, dict)
                                for v in part.values() if v is not doc["public_value"].get("witnesses"))  # fmt: skip
    director.publish("S2")
    director.enter_public_value("S2", dice=["66554433/11223344"])
    director.run("S2")
    with pytest.raises(BankError, match="reveal the draws in order"):
        director.reveal("S2")
    assert first == {}
    director.reveal("S1")
    director.reveal("S2")
    third = full_draw(director, "S3", REG, replacement=True, value="31415626/53562343")
    return [director.bundle("S1"), director.bundle("S2"), third]


def test_chain_of_draws_verifies_and_excludes_earlier_deals(director: Director) -> None:
    b1, b2, b3 = _chain(director)
    ids = [{d["deal_id"] for d in b["drawn"]} for b in (b1, b2, b3)]
    assert not ids[0] & ids[1] and not (ids[0] | ids[1]) & ids[2] and len(ids[2]) == 1
    assert derive(b2, ids[0]) == [(d["position"], d["deal_id"]) for d in b2["drawn"]]
    assert derive(b3, ids[0] | ids[1]) == [(d["position"], d["deal_id"]) for d in b3["drawn"]]
    assert all(c.ok for c in verify_bundle(b3, [b2, b1]))
    assert all(c.ok for c in verify_bundle(b3, [b1, b2, b3]))  # any order; the chain is followed by hashes
    assert verify_bank(director.bank).ok
    # withheld / deleted earlier bundle
    for pool in ([], [b1], [b2]):
        checks = verify_bundle(b3, pool)
        assert checks[-1].name == "chain" and "not among the earlier bundles" in checks[-1].detail
    # an earlier bundle changed
    bad = copy.deepcopy(b1)
    bad["drawn"][0]["salt"] = "00" * 16
    checks = verify_bundle(b3, [bad, b2])
    assert checks[-1].name == "chain" and "earlier draw 'S1' does not verify: openings" in checks[-1].detail


def test_reordered_chain_is_detected_even_when_re_signed(director: Director) -> None:
    b1, b2, _ = _chain(director)
    bank = director.bank
    # the key holder re-signs S2 as the first draw and S1 as following it
    f2 = copy.deepcopy(b2)
    f2["commitment"].update(previous=None, drawn_before=0, eligible={"count": 400, "rule": "sealed-minus-chain"})
    resign_commitment(f2, bank.sign)
    from dealer.draw.protocol import commitment_hash

    f1 = copy.deepcopy(b1)
    f1["commitment"].update(previous=commitment_hash(f2["commitment"]), drawn_before=18)
    f1["commitment"]["eligible"]["count"] = 382
    resign_commitment(f1, bank.sign)
    checks = verify_bundle(f1, [f2])
    assert not checks[-1].ok and checks[-1].name in ("chain", "draw"), checks[-1]
    assert not verify_bundle(f2)[-1].ok  # S2 alone, re-signed as first: its picks are not over 400 deals


def test_fork_is_detected(director: Director) -> None:
    b1, b2, b3 = _chain(director)
    fork = copy.deepcopy(b3)
    fork["commitment"]["label"] = "S3 again"
    fork["commitment_signature"] = director.bank.sign(canonical_json(fork["commitment"]))
    checks = verify_bundle(b3, [b1, b2, fork])
    assert checks[-1].name == "chain" and "two chains" in checks[-1].detail
    early = copy.deepcopy(b2)  # a second draw following S1, given beside the genuine S2
    early["commitment"]["label"] = "S2 bis"
    early["commitment_signature"] = director.bank.sign(canonical_json(early["commitment"]))
    checks = verify_bundle(b3, [b1, b2, early])
    assert checks[-1].name == "chain" and "'S2 bis' also follows" in checks[-1].detail


def test_void_is_public_chained_and_draws_nothing(director: Director) -> None:
    director.seal()
    director.prepare("S1", DICE, REG)
    with pytest.raises(DrawError, match="reason"):
        director.void("S1", "  ")
    director.void("S1", "witness Boris taken ill before the draw was shown")
    with pytest.raises(DrawError, match="'S1' is void: it draws nothing"):
        director.run("S1")
    void_bundle = director.bundle("S1")
    checks = verify_bundle(void_bundle)
    assert checks[-1].name == "void" and checks[-1].ok and "taken ill" in checks[-1].detail
    assert void_bundle["void"]["published"] is False
    b2 = full_draw(director, "S2", REG)
    assert b2["commitment"]["drawn_before"] == 0 and b2["commitment"]["previous"] is not None
    assert verify_bundle(b2)[-1].name == "chain"  # the void must be given too
    assert all(c.ok for c in verify_bundle(b2, [void_bundle]))
    with pytest.raises(DrawError, match="before the hall"):
        director.void("S2", "too late")
    assert verify_bank(director.bank).ok
    status = director.status()["draws"][0]
    assert status["state"] == "void" and status["secret"] == void_bundle["secret"]


def test_no_void_once_the_commitment_is_before_the_hall(director: Director) -> None:
    """Whoever could read K would know the result as soon as the witnesses roll: a void then could throw away a
    draw they disliked (#27 item 1), so a published draw is never voided, by the director or the bank."""
    director.seal()
    director.prepare("S1", DICE, REG)
    director.publish("S1")
    with pytest.raises(DrawError, match="before the hall"):
        director.void("S1", "witness absent")
    rec = director.bank.get_draw("S1")
    with pytest.raises(BankError, match="allows no more voids"):  # past the director, at the bank itself
        director.bank.draw_void("S1", rec.secret, {"void": {"label": "S1"}, "signature": ""})
    director.enter_public_value("S1", dice=["11111111/22222222"])
    with pytest.raises(DrawError, match="before the hall"):
        director.void("S1", "we know K and V now: no throwing the draw away")
    assert director.bank.get_draw("S1").state == "public-value"


def test_deals_after_the_seal_wait_for_the_next_seal(director: Director) -> None:
    director.seal()
    rng = random.Random(99)
    late = [director.bank.commit_deal(random_deal(rng), station_source()).deal_id for _ in range(5)]
    spec = named_spec("Lotto 1600, first 10 numbers as drawn", 10, 1, 90, order="as drawn")
    doc = director.prepare("S1", spec, REG)["commitment"]
    assert doc["eligible"]["count"] == 400 and doc["seal"]["last_deal"] == 400 and max(late) == 405


def test_nothing_of_the_draw_is_public_before_reveal(director: Director) -> None:
    director.seal()
    full_draw(director, "S1", REG, reveal=False)
    drawn = director.drawn_deals("S1")
    ids = [d.deal.deal_id for d in drawn]
    public = json.dumps([director.status(), director.commitment("S1"), director.hall_view("S1")])
    assert "drawn_ids" not in public and '"drawn": [' not in public
    for d in drawn:  # no deal's cards, salt or opening either
        assert d.deal.salt.hex() not in public and d.deal.deal.to_pbn() not in public
    with pytest.raises(DrawError, match="only after reveal"):
        director.bundle("S1")
    revealed = director.reveal("S1")
    assert revealed["secret"] not in public and revealed["drawn"] == ids
    status = director.status()["draws"][0]
    assert status["secret"] == revealed["secret"] and status["drawn_ids"] == ids


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "40"}
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_cli_verifies_a_bundle_and_its_chain_without_any_database(director: Director, tmp_path: Path) -> None:
    b1, b2, b3 = _chain(director)
    alone = tmp_path / "elsewhere"
    chain = alone / "chain"
    chain.mkdir(parents=True)
    for name, b in (("s1.json", b1), ("s2.json", b2)):
        (chain / name).write_text(json.dumps(b))
    good = alone / "s3.json"
    good.write_text(json.dumps(b3))
    ok = _cli("draw", "verify", str(good), "--chain", str(chain), cwd=alone)
    assert ok.returncode == 0, ok.stderr
    assert "all 15 checks passed" in ok.stdout
    files = _cli("draw", "verify", str(good), str(chain / "s2.json"), str(chain / "s1.json"), cwd=alone)
    assert files.returncode == 0, files.stderr
    alone_ = _cli("draw", "verify", str(good), cwd=alone)
    assert (
        alone_.returncode == 1 and "FAILED chain" in alone_.stdout and "verification failed at 'chain'" in alone_.stderr
    )
    bad = alone / "bad.json"
    bad.write_text(json.dumps(_mutations(b1)[1][1]))
    failed = _cli("draw", "verify", str(bad), cwd=alone)
    assert failed.returncode == 1
    assert "FAILED public value" in failed.stdout and "verification failed at 'public value'" in failed.stderr
    dup = alone / "dup.json"
    dup.write_text(json.dumps(b1)[:-1] + ', "secret": "' + b1["secret"] + '"}')
    refused = _cli("draw", "verify", str(dup), cwd=alone)
    assert refused.returncode == 1 and "'secret' appears twice" in refused.stderr
    assert not (alone / "var").exists()


def test_a_void_bundle_carrying_a_public_value_or_made_after_publish_is_refused(director: Director) -> None:
    """A void after the hall saw the commitment (or after V) would let the holder of K throw away a draw whose
    result they could know: the bank refuses it, and a void bundle forged to say so, signed with the bank's own
    key, fails verification."""
    from dealer.integrity.ledger import canonical_json

    director.seal()
    director.prepare("S1", DICE, REG)
    director.void("S1", "the hall lost power")
    genuine = director.bundle("S1")
    assert all(c.ok for c in verify_bundle(genuine)) and genuine["public_value"] is None
    forged = copy.deepcopy(genuine)
    forged["public_value"] = "12345612/65432165"
    checks = verify_bundle(forged)
    assert checks[-1].name == "void" and not checks[-1].ok
    assert "voided after its public value was entered" in checks[-1].detail
    after = copy.deepcopy(genuine)
    after["void"]["published"] = True
    after["void_signature"] = director.bank.keyring.sign(canonical_json(after["void"]))  # the key holder's forgery
    checks = verify_bundle(after)
    assert checks[-1].name == "void" and not checks[-1].ok
    assert "after its commitment was shown to the hall" in checks[-1].detail
    director.prepare("S2", DICE, REG)
    director.publish("S2")
    director.enter_public_value("S2", dice=["12345612/65432165"])
    with pytest.raises(DrawError, match="before the hall"):
        director.void("S2", "changed our mind")


def test_a_commitment_prepared_before_another_draw_is_refused_inside_the_bank(director: Director) -> None:
    """The bank hands its earlier draws to the draw's chain check inside the write transaction: a commitment
    computed before another process committed a draw (stale ``previous`` / ``drawn_before``) leaves no trace."""
    from dealer.draw.director import ChainOf

    director.seal()
    first = full_draw(director, "S1", REG)["commitment"]
    stale = {**first, "label": "late", "previous": None, "drawn_before": 0}  # as prepared before S1 was committed
    bank = director.bank
    before = bank.ledger_size(), bank.ledger_head()
    with pytest.raises(DrawError, match="another draw was made while 'late' was prepared"):
        bank.draw_commit("late", os.urandom(32), {"commitment": stale, "signature": "00"}, follows=ChainOf(stale))
    assert (bank.ledger_size(), bank.ledger_head()) == before
    assert [d.label for d in bank.draws()] == ["S1"]
    # the chain as the next draw must name it: S1's hash, and its 18 deals drawn before
    doc = director.prepare("S2", DICE, REG)["commitment"]
    assert doc["drawn_before"] == 18 and doc["previous"] is not None
