"""Helpers for the draw tests: small regulations, full draws, an independent re-derivation, forged bundles."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from hashlib import sha256
from pathlib import Path
from typing import Any

from bank_support import random_deal, station_source
from custody_support import unlocked

from dealer.bank.composed import Bank
from dealer.bank.store import ImportItem
from dealer.draw.director import Director
from dealer.draw.protocol import PublicValueSpec, dice_spec
from dealer.integrity.ledger import canonical_json
from dealer.integrity.merkle import audit_path, tree_levels
from dealer.regulation import Regulation, regulation_from_dict

DICE = dice_spec(["Ann", "Boris"], 8)  # 16 rolls of a d6: 41.4 bits


def regulation(boards: int, sessions: int = 1, spare: int = 0, share: float = 10) -> Regulation:
    return regulation_from_dict(
        {
            "dealing": {"variant": 3},
            "draw": {"share_percent": share},
            "session": {"boards": boards},
            "schedule": {"sessions": sessions, "spare": spare},
        }
    )


def make_bank(path: Path | str, deals: int, seed: int = 7, key_dir: Path | None = None) -> Bank:
    """A bank of ``deals`` random deals at ``path``: a SQLite file or a postgresql:// URL; the test key unlocked."""
    from dealer.bank.engines import open_bank_at

    bank = unlocked(open_bank_at(path, key_dir))
    rng = random.Random(seed)
    bank.import_deals([ImportItem(random_deal(rng), station_source()) for _ in range(deals)], {"files": []})
    return bank


def full_draw(
    director: Director,
    label: str,
    reg: Regulation,
    value: str = "12345612/65432165",
    spec: PublicValueSpec = DICE,
    replacement: bool = False,
    reveal: bool = True,
) -> dict[str, Any]:
    director.prepare(label, spec, reg, replacement=replacement)
    director.publish(label)
    if spec.kind == "dice":
        director.enter_public_value(label, dice=[value])
    else:
        director.enter_public_value(label, named=value)
    director.run(label)
    if not reveal:
        return {}
    director.reveal(label)
    return director.bundle(label)


# -- an independent derivation (hashlib only, written from docs/bundle.md) ---------------------------------
def rivest(seed_hex: str, total: int, n: int) -> list[int]:
    picks: list[int] = []
    k = 0
    while len(picks) < n:
        k += 1
        p = 1 + int(sha256(f"{seed_hex},{k}".encode()).hexdigest(), 16) % total
        if p not in picks:
            picks.append(p)
    return picks


def derive(bundle: dict[str, Any], drawn_before: set[int]) -> list[tuple[int, int]]:
    """(position, deal id) from the bundle's K, V, root and label and the earlier draws' deals."""
    com = bundle["commitment"]
    seed = sha256(
        bytes.fromhex(bundle["secret"])
        + bundle["public_value"].encode()
        + bytes.fromhex(com["seal"]["root"])
        + com["label"].encode()
    ).hexdigest()
    eligible = [i for i in range(1, com["seal"]["last_deal"] + 1) if i not in drawn_before]
    return [(p, eligible[p - 1]) for p in rivest(seed, len(eligible), com["n"])]


def forge(
    director: Director, bundle: dict[str, Any], value: str, before: AbstractSet[int] = frozenset()
) -> dict[str, Any]:
    """What the holder of K, the database and the key can publish for another V: the genuine signed
    commitment and seal, V replaced, and the deals that V selects with their true openings and proofs."""
    bank = director.bank
    forged = copy.deepcopy(bundle)
    forged["public_value"] = value
    picks = derive(forged, set(before))
    size = bundle["commitment"]["seal"]["size"]
    levels = tree_levels(bank.leaves(size))
    drawn = []
    for position, deal_id in picks:
        d = bank.get_deal(deal_id)
        drawn.append(
            {
                "deal": d.deal.to_bytes().hex(),
                "deal_id": deal_id,
                "entry": bank.entry_bodies([d.ledger_index])[d.ledger_index].decode(),
                "ledger_index": d.ledger_index,
                "pbn": d.deal.to_pbn(),
                "position": position,
                "proof": [h.hex() for h in audit_path(levels, d.ledger_index)],
                "salt": d.salt.hex(),
            }
        )
    forged["drawn"] = drawn
    return forged


def resign_commitment(bundle: dict[str, Any], sign: Callable[[bytes], str]) -> dict[str, Any]:
    """What the holder of the key and the database can do to an altered commitment: sign it again and write its
    draw-commit entry again at the same place (same index, previous hash and time)."""
    bundle["commitment_signature"] = sign(canonical_json(bundle["commitment"]))
    entry = json.loads(bundle["commitment_entry"])
    entry["d"] = {"commitment": bundle["commitment"], "signature": bundle["commitment_signature"]}
    bundle["commitment_entry"] = canonical_json(entry).decode()
    return bundle


# How a hand reads in the command line (`dealer draw show`), derived by hand from the PBN letters: ranks A K Q J
# T read Т К Д В 10 in Russian (the rules' letters), a void is a dash, seats N E S W are С В Ю З.
_SHOWN_RANKS = {"en": dict(zip("AKQJT", ("A", "K", "Q", "J", "10"), strict=True)),
                "ru": dict(zip("AKQJT", ("Т", "К", "Д", "В", "10"), strict=True))}  # fmt: skip
_SHOWN_SEATS = {"en": "NESW", "ru": "СВЮЗ"}


def pbn_as_shown(pbn: str, lang: str) -> list[str]:
    """The four lines `dealer draw show` prints for a deal given in PBN (first seat N), independently of the code."""
    first, _, rest = pbn.partition(":")
    assert first == "N", pbn
    lines = []
    for seat, hand in zip(_SHOWN_SEATS[lang], rest.split(), strict=True):
        holdings = [
            symbol + " " + (" ".join(_SHOWN_RANKS[lang].get(c, c) for c in cards) if cards else "—")
            for symbol, cards in zip("♠♥♦♣", hand.split("."), strict=True)
        ]
        lines.append(f"{seat}: " + "  ".join(holdings))
    return lines


def shown_deals(stdout: str) -> list[list[str]]:
    """The hands `dealer draw show` printed, four lines a deal (each deal's heading line dropped)."""
    lines = [line.strip() for line in stdout.splitlines() if line.startswith("  ") and ": " in line]
    return [lines[k : k + 4] for k in range(0, len(lines), 4)]
