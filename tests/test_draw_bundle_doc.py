"""docs/bundle.md's worked example (§9) is true: every value recomputed with hashlib alone, written from the
document (not from the code), and both example bundles pass ``verify_bundle``; the first only with nothing
before it, the second only with the first."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from functools import cache
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest
from bundle_examples import MORE_WRONG, Point

from dealer.draw.bundle import load_bundle, verify_bundle

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "bundle.md").read_text(encoding="utf-8")
EXAMPLES = ROOT / "docs" / "examples"


def _blocks() -> list[dict[str, Any]]:
    """The two ``K … drawn`` blocks of §9 as {name: value} with the k= lines as a list."""
    section = DOC[DOC.index("## 9. Worked example") : DOC.index("## 10.")]
    out = []
    for block in re.findall(r"```\n(K .*?)```", section, re.S):
        values: dict[str, Any] = {"steps": []}
        for line in block.splitlines():
            name, _, rest = line.partition(" ")
            rest = rest.strip()
            if name.startswith("k="):
                m = re.fullmatch(r'H\("(\w+)…(\w+),(\d+)"\) = ([0-9a-f]{64}) -> 1 \+ x mod (\d+) = (\d+)', rest)
                assert m, line
                values["steps"].append(m.groups())
            else:
                values[name] = rest
        out.append(values)
    return out


def _bundle(k: int) -> dict[str, Any]:
    return load_bundle((EXAMPLES / f"draw-{k}.json").read_bytes())


def test_the_printed_bundle_is_the_example_file() -> None:
    printed = DOC[DOC.index("Draw 1's bundle:") :]
    printed = printed[printed.index("```json\n") + 8 :]
    printed = printed[: printed.index("```")]
    assert json.loads(printed) == _bundle(1)


def test_worked_example_recomputed_by_hand() -> None:
    blocks = _blocks()
    assert len(blocks) == 2
    drawn_before: set[int] = set()
    for k, values in enumerate(blocks, start=1):
        root = values["root"]
        bundle = _bundle(k)
        com = bundle["commitment"]
        assert (values["K"], values["V"], values["label"]) == (bundle["secret"], bundle["public_value"], com["label"])
        assert com["seal"]["root"] == root
        if "H(K)" in values:
            assert sha256(bytes.fromhex(values["K"])).hexdigest() == values["H(K)"] == com["k_hash"]
        seed = sha256(
            bytes.fromhex(values["K"]) + values["V"].encode() + bytes.fromhex(root) + values["label"].encode()
        ).hexdigest()
        assert seed == values["seed"]
        eligible = [i for i in range(1, 41) if i not in drawn_before]
        picks = []
        for head, tail, step, x_hex, modulus, pick in values["steps"]:
            assert seed.startswith(head) and seed.endswith(tail)
            assert sha256(f"{seed},{step}".encode()).hexdigest() == x_hex
            assert int(modulus) == len(eligible)
            assert 1 + int(x_hex, 16) % len(eligible) == int(pick)
            picks.append(int(pick))
        assert [(p, eligible[p - 1]) for p in picks] == [(d["position"], d["deal_id"]) for d in bundle["drawn"]]
        ids = [str(eligible[p - 1]) for p in picks]
        assert all(f"deal {i}" in values["drawn"] or f"deals {', '.join(ids)}" in values["drawn"] for i in ids)
        drawn_before |= {int(i) for i in ids}
    b1 = _bundle(1)
    from dealer.integrity.ledger import canonical_json  # CJ is json.dumps(sort_keys, separators, ascii): §7

    by_hand = json.dumps(b1["commitment"], sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    assert by_hand == canonical_json(b1["commitment"])
    previous = sha256(by_hand).hexdigest()
    assert _bundle(2)["commitment"]["previous"] == previous and previous in DOC


def test_example_bundles_verify_only_as_a_chain() -> None:
    b1, b2 = _bundle(1), _bundle(2)
    checks = verify_bundle(b1)
    assert len(checks) == 15 and all(c.ok for c in checks)
    assert all(c.ok for c in verify_bundle(b2, [b1]))
    alone = verify_bundle(b2)
    assert alone[-1].name == "chain" and not alone[-1].ok


def test_heads_in_the_text_are_the_entries_hashed() -> None:
    """§9 names the two heads draw 1 proves: (index + 1):SHA-256 of the entry's bytes, by hand."""
    b1 = _bundle(1)
    for member in ("seal_entry", "commitment_entry"):
        body = b1[member]
        index = json.loads(body)["i"]
        assert f"{index + 1}:{sha256(body.encode()).hexdigest()}" in DOC


def test_the_example_files_are_made_again_byte_for_byte() -> None:
    """tests/bundle_examples.py makes docs/examples/ from a real bank with fixed randomness: the same bytes."""
    from bundle_examples import EXAMPLES as folder
    from bundle_examples import all_files

    made = all_files()
    assert folder == EXAMPLES and "draw-1.json" in made
    for name, data in made.items():
        assert (EXAMPLES / name).read_bytes() == data, name
    on_disk = {p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*") if p.is_file()}
    assert on_disk == set(made), "files in docs/examples/ that the generator does not make, or missing ones"


@cache
def _points() -> dict[int, Point]:
    from bundle_examples import points, worked_example

    return {p.number: p for p in points(*worked_example())}


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    command = [sys.executable, "-m", "dealer", "--lang", "en", "draw", "verify", *args]
    return subprocess.run(command, cwd=EXAMPLES, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("number", range(1, 17))
def test_each_point_accepts_the_right_bundle_and_refuses_the_wrong_one(number: int) -> None:
    """docs/bundle.md §12: the real `dealer draw verify` passes the right files and refuses the wrong one, at the
    check (or with the refusal) the point names."""
    point = _points()[number]
    assert f"### 12.{number}. " in DOC
    for name in point.files:
        assert f"points/{name.split('/')[0]}" in DOC, f"§12 does not name {name}"
    ok = _verify(*point.ok)
    assert ok.returncode == 0 and "checks passed" in ok.stdout, ok.stdout + ok.stderr
    bad = _verify(*point.bad)
    assert bad.returncode == 1 and point.fails_at in bad.stdout + bad.stderr, bad.stdout + bad.stderr
    if number == 5:  # whatever the order
        again = _verify(point.bad[0], *reversed(point.bad[1:]))
        assert again.returncode == 1 and point.fails_at in again.stderr
    if number == 11:
        assert "ignored points/11-chain/other-bank.json: a bundle of another bank" in ok.stdout


@pytest.mark.parametrize("name", sorted(MORE_WRONG))
def test_the_other_wrong_bundles_are_refused_where_the_document_says(name: str) -> None:
    bad = _verify(name)
    assert bad.returncode == 1 and MORE_WRONG[name] in bad.stdout + bad.stderr, bad.stdout + bad.stderr
    assert name in DOC


def test_a_void_reissue_is_refused_whatever_the_order_in_the_api() -> None:
    """§12.5 by the library too: the run bundle and the void of one commitment, given either way round."""
    run, void = _bundle(1), load_bundle((EXAMPLES / "points" / "05-one-commitment.bad.json").read_bytes())
    for checked, given in ((run, [void]), (void, [run]), (_bundle(2), [run, void]), (_bundle(2), [void, run])):
        checks = verify_bundle(checked, given)
        assert checks[-1].name == "chain" and "two different bundles" in checks[-1].detail
    assert verify_bundle(_bundle(2), [run, copy.deepcopy(run)])[-1].ok  # the same bundle twice counts once


def test_other_banks_in_the_api_ignored_from_a_folder_and_refused_one_by_one() -> None:
    """§12.11 by the library: ``folder`` bundles of another bank are ignored, ``chain`` ones refused (also a thing
    that is not a bundle at all)."""
    b1, b2 = _bundle(1), _bundle(2)
    other = load_bundle((EXAMPLES / "points" / "11-chain" / "other-bank.json").read_bytes())
    assert verify_bundle(b2, [b1], folder=[other])[-1].ok
    assert verify_bundle(b2, folder=[b1, other])[-1].ok
    for given in ([b1, other], [b1, {"not": "a bundle"}]):
        last = verify_bundle(b2, given)[-1]
        assert last.name == "chain" and not last.ok and "give only this bank's bundles" in last.detail
