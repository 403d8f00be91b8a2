"""docs/examples/, made again byte for byte: a small real bank (SQLite, the project's own code) with a fixed clock,
fixed salts, fixed secrets K and the example key, its two worked-example draws (docs/bundle.md §9), and per point of
§12 a right and a wrong bundle (the wrong ones altered and re-signed with the example key, so that only the point
under test fails). ``python tests/bundle_examples.py`` writes them; tests/test_draw_bundle_doc.py compares.

The example key is derived from a published phrase (``EXAMPLE_PHRASE``): anybody can sign with it, so it proves
nothing outside these examples.
"""

from __future__ import annotations

import copy
import json
import random
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from the checkout
    sys.path.insert(0, str(ROOT))

from dealer.bank import deals as bank_deals  # noqa: E402
from dealer.bank.api import DealSource  # noqa: E402
from dealer.bank.ledger import canonical_json  # noqa: E402
from dealer.bank.store import SqliteBank  # noqa: E402
from dealer.core import Deal  # noqa: E402
from dealer.custody import Keyring  # noqa: E402
from dealer.draw import director as draw_director  # noqa: E402
from dealer.draw.director import Director  # noqa: E402
from dealer.draw.protocol import commitment_hash, dice_spec  # noqa: E402
from dealer.regulation import regulation_from_dict  # noqa: E402

EXAMPLES = ROOT / "docs" / "examples"
EXAMPLE_PHRASE = b"bridge-dealer docs/bundle.md example key: published, never use it for a real bank"
EXAMPLE_KEY = Keyring(sha256(EXAMPLE_PHRASE).digest())
BANK_ID = "bdf7a234-e3b6-4bf0-803d-4dd6e9e7a510"
START = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
LABELS = ("Open pairs, session 1", "Open pairs, session 2")
VALUES = ("12345612/65432165", "36251441/22516363")
REGULATION = regulation_from_dict(
    {
        "dealing": {"variant": 2, "open_cards": 30},
        "draw": {"share_percent": 10},
        "session": {"boards": 2},
        "schedule": {"sessions": 2},
        "bank": {"target": 40},
    }
)

Bundle = dict[str, Any]


def example_k(n: int) -> bytes:
    """Draw ``n``'s K: bytes 32(n-1) … 32n-1 (draw 1: 000102…1f)."""
    return bytes(range(32 * (n - 1), 32 * n))


class _Clock:
    """Times one second apart from ``START``, in the bank's form."""

    def __init__(self) -> None:
        self.ticks = 0

    def __call__(self) -> str:
        self.ticks += 1
        return (START + timedelta(seconds=self.ticks)).isoformat(timespec="microseconds")


@contextmanager
def _fixed_randomness() -> Iterator[None]:
    """Salts and K from counters, and the bank's id fixed: the real code, reproducible."""
    salts = (sha256(b"example salt %d" % k).digest()[:16] for k in range(1, 10_000))
    secrets_k = (example_k(n) for n in range(1, 100))
    with (
        mock.patch.object(bank_deals, "os", SimpleNamespace(urandom=lambda size: next(salts)[:size])),
        mock.patch.object(draw_director, "secrets", SimpleNamespace(token_bytes=lambda size: next(secrets_k))),
        mock.patch.object(uuid, "uuid4", lambda: uuid.UUID(BANK_ID)),
    ):
        yield


def worked_example() -> tuple[Bundle, Bundle]:
    """The two draws of §9: a bank of 40 dealt deals, sealed, and two sessions of 2 boards at 10 %."""
    with tempfile.TemporaryDirectory() as tmp, _fixed_randomness():
        bank = SqliteBank(Path(tmp) / "bank.sqlite", clock=_Clock())
        bank.unlock(EXAMPLE_KEY)
        rng = random.Random(2026)
        for _ in range(40):
            cards = list(range(52))
            rng.shuffle(cards)
            seats = bytearray(52)
            for position, card in enumerate(cards):
                seats[card] = position // 13
            source = DealSource("station", station="T1", variant=2, shown_cards=30, dealing_order=bytes(cards))
            bank.commit_deal(Deal(bytes(seats)), source)
        director = Director(bank)
        director.seal()
        spec = dice_spec(["Ann", "Boris"], 8)
        out = []
        for label, value in zip(LABELS, VALUES, strict=True):
            director.prepare(label, spec, REGULATION)
            director.publish(label)
            director.enter_public_value(label, dice=[value])
            director.run(label)
            director.reveal(label)
            out.append(director.bundle(label))
        bank.close()
    return out[0], out[1]


# -- altering a bundle as the holder of the key could, so that only the point under test fails ------------------
def _entry(body: str) -> dict[str, Any]:
    entry = json.loads(body)
    assert isinstance(entry, dict)
    return entry


def resign(b: Bundle) -> Bundle:
    """Sign the checkpoint, the commitment and the void again with the example key and write their ledger entries
    again at the same places (the commitment's entry chains onto the seal entry when it follows it)."""
    cp = b["seal"]["checkpoint"]
    b["seal"]["signature"] = EXAMPLE_KEY.sign(canonical_json(cp))
    b["public_key"] = EXAMPLE_KEY.public_key
    seal = _entry(b["seal_entry"])
    seal["d"] = {"checkpoint": cp, "public_key": b["public_key"], "signature": b["seal"]["signature"]}
    seal["ts"] = cp["ts"]
    b["seal_entry"] = canonical_json(seal).decode()
    b["commitment_signature"] = EXAMPLE_KEY.sign(canonical_json(b["commitment"]))
    com = _entry(b["commitment_entry"])
    com["d"] = {"commitment": b["commitment"], "signature": b["commitment_signature"]}
    if com["i"] == seal["i"] + 1:
        com["prev"] = sha256(b["seal_entry"].encode()).hexdigest()
    if com["ts"] < b["commitment"]["ts"]:
        com["ts"] = b["commitment"]["ts"]
    b["commitment_entry"] = canonical_json(com).decode()
    if b["void"] is not None:
        b["void"]["commitment"] = commitment_hash(b["commitment"])
        b["void"]["label"] = b["commitment"]["label"]
        b["void_signature"] = EXAMPLE_KEY.sign(canonical_json(b["void"]))
    return b


def voided(b: Bundle, reason: str = "witness Boris taken ill before the commitment was shown") -> Bundle:
    """``b``'s draw as if voided before its commitment was shown: no V, nothing drawn, K public."""
    v = copy.deepcopy(b)
    ts = (datetime.fromisoformat(v["commitment"]["ts"]) + timedelta(seconds=30)).isoformat(timespec="microseconds")
    v.update(drawn=[], public_value=None)
    v["void"] = {"commitment": "", "format": "bridge-dealer-draw-void/2", "label": "", "published": False,
                 "reason": reason, "secret": v["secret"], "ts": ts}  # fmt: skip
    return resign(v)


def altered(b: Bundle, change: Callable[[Bundle], None]) -> Bundle:
    out = copy.deepcopy(b)
    change(out)
    return resign(out)


def dumps(b: Bundle) -> bytes:
    """A bundle file as ``dealer draw bundle`` writes it."""
    return (json.dumps(b, indent=1, sort_keys=True) + "\n").encode()


# -- the points of docs/bundle.md §12 ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Point:
    """One point: its files (name -> bytes), the verify arguments that pass and those that fail, and the check that
    fails (its name as `dealer draw verify` prints it)."""

    number: int
    name: str
    files: dict[str, bytes]
    ok: tuple[str, ...]
    bad: tuple[str, ...]
    fails_at: str


def points(d1: Bundle, d2: Bundle) -> list[Point]:
    """Per point of docs/bundle.md §12: the files and the verify arguments that pass and fail (none yet)."""
    del d1, d2
    return []


def all_files() -> dict[str, bytes]:
    """Every file of docs/examples/ this generator makes, by path relative to it."""
    d1, d2 = worked_example()
    files = {"draw-1.json": dumps(d1), "draw-2.json": dumps(d2)}
    for point in points(d1, d2):
        files.update({f"points/{name}": data for name, data in point.files.items()})
    return files


def write(folder: Path = EXAMPLES) -> None:
    for name, data in all_files().items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


if __name__ == "__main__":
    write()
