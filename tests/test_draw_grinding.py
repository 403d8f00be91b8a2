"""Grinding: the holder of K, the database and the signing key tries every other spelling of V.

For each class of variant (spaces, separators, case, Unicode digits and spaces, leading zeros, float-like
numbers) a forged bundle is built the way such an organiser would: the genuine signed seal and commitment, the
variant as V, and the deals that variant selects, with their true openings and Merkle proofs. Every one of them
draws other deals than the genuine V — and every one is refused at **public value**.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from draw_support import derive, forge, full_draw, make_bank, regulation

from dealer.draw.bundle import verify_bundle
from dealer.draw.director import Director
from dealer.draw.protocol import dice_spec, named_spec

REG = regulation(boards=20, sessions=2, share=10)  # 2 × 20 deals of a 400-deal bank

DICE_VARIANTS = {
    "spaces": ["12345612/65432165 ", " 12345612/65432165", "12345612 /65432165", "1234 5612/65432165"],
    "tabs and newlines": ["12345612\t/65432165", "12345612/65432165\n"],
    "separators": ["12345612-65432165", "12345612,65432165", "12345612 65432165", "1234561265432165",
                   "12345612//65432165", "12345612\\65432165"],
    "Unicode spaces": ["12345612\u00a0/65432165", "12345612/\u200965432165", "12345612/65432165\u3000",
                       "12345612\u2002/65432165"],
    "Unicode digits": ["\u0661\u0662345612/65432165", "\uff11\uff12345612/65432165", "12345612/6543216\u0665",
                       "\u09e7\u09e8345612/65432165"],
    "leading zeros": ["012345612/65432165", "12345612/065432165"],
    "float-like": ["12345612.0/65432165", "1.2345612e7/65432165", "+12345612/65432165"],
    "case": ["12345612/65432165".upper() + "A", "0x12345612/65432165"],
}  # fmt: skip

NAMED_CANONICAL = "07-90-01-33-12-45-08-61-02-19"
NAMED_VARIANTS = {
    "spaces": [" " + NAMED_CANONICAL, NAMED_CANONICAL + " ", "07 -90-01-33-12-45-08-61-02-19"],
    "separators": ["07 90 01 33 12 45 08 61 02 19", "07,90,01,33,12,45,08,61,02,19", "07/90/01/33/12/45/08/61/02/19",
                   "07\u201390-01-33-12-45-08-61-02-19", "07--90-01-33-12-45-08-61-02-19"],
    "Unicode spaces": ["07-90-01-33-12-45-08-61-02-19\u00a0", "07-90-01-33-12-45-08-61-02\u2009-19"],
    "Unicode digits": ["\u0660\u0667-90-01-33-12-45-08-61-02-19", "\uff10\uff17-90-01-33-12-45-08-61-02-19"],
    "leading zeros": ["7-90-1-33-12-45-8-61-2-19", "007-90-01-33-12-45-08-61-02-19"],
    "float-like": ["07.0-90-01-33-12-45-08-61-02-19", "7e0-90-01-33-12-45-08-61-02-19",
                   "07-90-01-33-12-45-08-61-02-1.9e1", "+7-90-01-33-12-45-08-61-02-19"],
    "case": ["07-90-01-33-12-45-08-61-02-1E", "0X7-90-01-33-12-45-08-61-02-19"],
}  # fmt: skip


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Director, dict[str, Any], dict[str, Any]]]:
    path: Path = tmp_path_factory.mktemp("grind") / "bank.sqlite"
    bank = make_bank(path, 400)
    d = Director(bank)
    d.seal()
    dice = full_draw(d, "S1", REG, spec=dice_spec(["Ann", "Boris"], 8))
    lotto = named_spec("Lotto 1600, first 10 numbers as drawn", 10, 1, 90, order="as drawn")
    named = full_draw(d, "S2", REG, value="7 90 1 33 12 45 8 61 2 19", spec=lotto)
    yield d, dice, named
    bank.close()


def _refused(d: Director, bundle: dict[str, Any], value: str, chain: list[dict[str, Any]]) -> None:
    before = {x["deal_id"] for b in chain for x in b["drawn"]}
    forged = forge(d, bundle, value, before)
    assert derive(forged, before) != derive(bundle, before)  # it would draw other deals
    checks = verify_bundle(forged, chain)
    assert not checks[-1].ok, value
    assert checks[-1].name == "public value", (value, checks[-1])
    assert all(c.ok for c in checks[:-1])
    assert "not canonical" in checks[-1].detail


@pytest.mark.parametrize("variant_class", sorted(DICE_VARIANTS))
def test_every_other_spelling_of_dice_is_refused(genuine: Any, variant_class: str) -> None:
    d, dice, _ = genuine
    assert dice["public_value"] == "12345612/65432165" and all(c.ok for c in verify_bundle(dice))
    for value in DICE_VARIANTS[variant_class]:
        _refused(d, dice, value, [])


@pytest.mark.parametrize("variant_class", sorted(NAMED_VARIANTS))
def test_every_other_spelling_of_a_named_number_is_refused(genuine: Any, variant_class: str) -> None:
    d, dice, named = genuine
    assert named["public_value"] == NAMED_CANONICAL and all(c.ok for c in verify_bundle(named, [dice]))
    for value in NAMED_VARIANTS[variant_class]:
        _refused(d, named, value, [dice])


def test_a_forged_bundle_with_the_genuine_value_is_the_genuine_bundle(genuine: Any) -> None:
    """The forgery helper itself is faithful: with the genuine V it rebuilds a bundle that verifies."""
    d, dice, named = genuine
    assert forge(d, dice, dice["public_value"]) == dice
    assert all(c.ok for c in verify_bundle(forge(d, named, NAMED_CANONICAL, {x["deal_id"] for x in dice["drawn"]}),
                                           [dice]))  # fmt: skip
