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
from dealer.bank.store import SqliteBank  # noqa: E402
from dealer.core import Deal  # noqa: E402
from dealer.custody import Keyring  # noqa: E402
from dealer.draw import director as draw_director  # noqa: E402
from dealer.draw.director import Director  # noqa: E402
from dealer.draw.protocol import commitment_hash, dice_spec  # noqa: E402
from dealer.integrity.ledger import canonical_json  # noqa: E402
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


OTHER_BANK = "0f3c9a52-7d41-4e8b-9b6a-2c5e1d7f8a90"
NAMED = {"count": 10, "description": "Lotto draw 1600, the first 10 numbers, as drawn", "distinct": True,
         "kind": "named", "max": 90, "min": 1, "order": "as drawn", "separator": "-", "width": 2}  # fmt: skip


def _later(ts: str, seconds: int) -> str:
    return (datetime.fromisoformat(ts) + timedelta(seconds=seconds)).isoformat(timespec="microseconds")


def _void_with(d1: Bundle, change: Callable[[Bundle], None], reason: str | None = None) -> Bundle:
    """Draw 1 altered by ``change`` (commitment or checkpoint), re-signed, and voided."""
    out = voided(altered(d1, change)) if reason is None else voided(altered(d1, change), reason)
    return out


def _set(path: str, value: object) -> Callable[[Bundle], None]:
    """A change that sets the member at dotted ``path`` (list items by number)."""

    def change(b: Bundle) -> None:
        *parents, last = path.split(".")
        node: Any = b
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[last] = value

    return change


def _all(*changes: Callable[[Bundle], None]) -> Callable[[Bundle], None]:
    def change(b: Bundle) -> None:
        for c in changes:
            c(b)

    return change


def _respell(pbn: str) -> str:
    """The same deal spelled otherwise: the first suit of more than one card with its ranks reversed."""
    hands = pbn[2:].split(" ")
    for h, hand in enumerate(hands):
        suits = hand.split(".")
        for s, suit in enumerate(suits):
            if len(suit) > 1:
                suits[s] = suit[::-1]
                hands[h] = ".".join(suits)
                return "N:" + " ".join(hands)
    raise AssertionError("a deal has a suit of two cards or more")


# where each wrong bundle of §12 fails: the text `dealer draw verify` prints (its check, or the refusal)
FAILS = {
    1: "not a well-formed bundle: commitment.ts = ",
    2: "not a well-formed bundle: seal.checkpoint.bank = ",
    3: "verification failed at 'openings': deal 40: the PBN",
    4: "not a well-formed bundle: commitment.n = 2: a replacement",
    5: "verification failed at 'chain': two different bundles",
    6: "verification failed at 'chain': draw 'Open pairs, session 1' also follows nothing",
    7: "not a well-formed bundle: commitment.public_value: the public value carries 20.7 bits",
    8: "verification failed at 'seal is possible': the seal covers 41 ledger entries but claims deals 1..41",
    9: "not a well-formed bundle: commitment.quota.target = 10000001 is above",
    10: "not a well-formed bundle: commitment.public_value: named public value: width 11",
    11: "verification failed at 'chain': the bundle of draw 'Open pairs, session 1' given is of bank " + OTHER_BANK,
    12: "verification failed at 'void draw': the void is dated",
    13: "verification failed at 'quota': 0 drawn before + 5 = 5 deals, above 10% of 40",
    14: "not a well-formed bundle: void.reason = 'witness Boris\\x7f taken ill' is not printable",
    15: "15-bom.bad.json: not a well-formed bundle: the file starts with a UTF-8 byte order mark",
    16: "16-chain-bad/notes.json: not a well-formed bundle: format = None",
}


def points(d1: Bundle, d2: Bundle) -> list[Point]:
    """Per point of docs/bundle.md §12, the files and the `dealer draw verify` arguments (paths relative to
    docs/examples/) that pass and that fail, and where the wrong one fails."""
    com_ts = d1["commitment"]["ts"]
    void_ok = voided(copy.deepcopy(d1))
    other = altered(d1, _all(_set("seal.checkpoint.bank", OTHER_BANK), _set("commitment.bank", OTHER_BANK)))
    restarted = voided(
        altered(
            d2,
            _all(
                _set("commitment.previous", None),
                _set("commitment.drawn_before", 0),
                _set("commitment.eligible", {"count": 40, "rule": "sealed-minus-chain"}),
            ),
        )
    )
    respelled = copy.deepcopy(d1)
    respelled["drawn"][0]["pbn"] = _respell(d1["drawn"][0]["pbn"])
    sealed_late = altered(
        d1, _all(_set("seal.checkpoint.ts", _later(com_ts, 1)), _set("commitment.seal.ts", _later(com_ts, 1)))
    )
    void_early = copy.deepcopy(void_ok)
    void_early["void"]["ts"] = _later(com_ts, -1)
    resign(void_early)
    P = Point
    return [
        P(1, "time", {"01-time.bad.json": dumps(altered(d1, _set("commitment.ts", com_ts.replace(".000000", ""))))},
          ("draw-1.json",), ("points/01-time.bad.json",), FAILS[1]),
        P(2, "bank id", {"02-bank-id.bad.json": dumps(altered(d1, _all(_set("seal.checkpoint.bank", BANK_ID.upper()),
                                                                        _set("commitment.bank", BANK_ID.upper()))))},
          ("draw-1.json",), ("points/02-bank-id.bad.json",), FAILS[2]),
        P(3, "pbn", {"03-pbn.bad.json": dumps(respelled)}, ("draw-1.json",), ("points/03-pbn.bad.json",),
          FAILS[3]),
        P(4, "replacement", {
            "04-replacement.ok.json": dumps(_void_with(d1, _all(_set("commitment.kind", "replacement"),
                                                                 _set("commitment.n", 1)))),
            "04-replacement.bad.json": dumps(_void_with(d1, _set("commitment.kind", "replacement")))},
          ("points/04-replacement.ok.json",), ("points/04-replacement.bad.json",), FAILS[4]),
        P(5, "one commitment", {"05-one-commitment.ok.json": dumps(d1), "05-one-commitment.bad.json": dumps(void_ok)},
          ("draw-2.json", "draw-1.json", "points/05-one-commitment.ok.json"),
          ("draw-2.json", "draw-1.json", "points/05-one-commitment.bad.json"), FAILS[5]),
        P(6, "restart", {"06-restart.bad.json": dumps(restarted)}, ("points/06-restart.bad.json",),
          ("points/06-restart.bad.json", "draw-1.json"), FAILS[6]),
        P(7, "32 bits", {"07-bits.bad.json": dumps(_void_with(d1, _set("commitment.public_value.witnesses", ["Ann"])))},
          ("draw-1.json",), ("points/07-bits.bad.json",), FAILS[7]),
        P(8, "seal and eligible", {
            "08-last-deal.bad.json": dumps(_void_with(d1, _all(
                _set("seal.checkpoint.last_deal", 41), _set("commitment.seal.last_deal", 41),
                _set("commitment.eligible.count", 41)))),
            "08-seal-index.bad.json": dumps(_void_with(d1, _set("commitment.seal.index", 40))),
            "08-eligible-rule.bad.json": dumps(_void_with(d1, _set("commitment.eligible.rule", "sealed")))},
          ("draw-1.json",), ("points/08-last-deal.bad.json",), FAILS[8]),
        P(9, "target and override", {
            "09-override.ok.json": dumps(_void_with(d1, _all(
                _set("commitment.quota.target", 50),
                _set("commitment.quota.override", "the stage bank of 40 deals, by the chief judge's decision")))),
            "09-target.bad.json": dumps(_void_with(d1, _set("commitment.quota.target", 10_000_001))),
            "09-override.bad.json": dumps(_void_with(d1, _all(
                _set("commitment.quota.target", 50), _set("commitment.quota.override", "x" * 501))))},
          ("points/09-override.ok.json",), ("points/09-target.bad.json",), FAILS[9]),
        P(10, "lotto spec", {
            "10-named.ok.json": dumps(_void_with(d1, _set("commitment.public_value", dict(NAMED)))),
            "10-named.bad.json": dumps(_void_with(d1, _set("commitment.public_value", {**NAMED, "width": 11})))},
          ("points/10-named.ok.json",), ("points/10-named.bad.json",), FAILS[10]),
        P(11, "other banks", {"11-chain/draw-1.json": dumps(d1), "11-chain/other-bank.json": dumps(other)},
          ("draw-2.json", "--chain", "points/11-chain"),
          ("draw-2.json", "draw-1.json", "points/11-chain/other-bank.json"), FAILS[11]),
        P(12, "time order", {"12-void.ok.json": dumps(void_ok), "12-void-time.bad.json": dumps(void_early),
                             "12-seal-time.bad.json": dumps(sealed_late)},
          ("points/12-void.ok.json",), ("points/12-void-time.bad.json",), FAILS[12]),
        P(13, "void quota", {"13-void-quota.bad.json": dumps(_void_with(d1, _set("commitment.n", 5)))},
          ("points/12-void.ok.json",), ("points/13-void-quota.bad.json",), FAILS[13]),
        P(14, "printable", {
            "14-printable.ok.json": dumps(voided(copy.deepcopy(d1), "witness Boris\u00a0Petrov taken ill — not shown")),
            "14-printable.bad.json": dumps(voided(copy.deepcopy(d1), "witness Boris\x7f taken ill")),
            "14-space.bad.json": dumps(voided(copy.deepcopy(d1), "witness Boris taken ill\u2003"))},
          ("points/14-printable.ok.json",), ("points/14-printable.bad.json",),
          FAILS[14]),
        P(15, "bom", {"15-bom.bad.json": b"\xef\xbb\xbf" + dumps(d1)}, ("draw-1.json",), ("points/15-bom.bad.json",),
          FAILS[15]),
        P(16, "chain folder", {"16-chain-ok/draw-1.json": dumps(d1), "16-chain-ok/notes.txt": b"draw 1 of 2\n",
                               "16-chain-bad/draw-1.json": dumps(d1),
                               "16-chain-bad/notes.json": b'{"note": "draw 1 of 2"}\n'},
          ("draw-2.json", "--chain", "points/16-chain-ok"), ("draw-2.json", "--chain", "points/16-chain-bad"),
          FAILS[16]),
    ]  # fmt: skip


# the wrong bundles of a point beyond its first, with where each fails (the test refuses each)
MORE_WRONG = {
    "points/08-seal-index.bad.json": "failed at 'commitment names the seal': the commitment's seal differs from the "
    "checkpoint in index",
    "points/08-eligible-rule.bad.json": "not a well-formed bundle: commitment.eligible.rule = 'sealed'",
    "points/09-override.bad.json": "not a well-formed bundle: commitment.quota.override is 501 characters long",
    "points/12-seal-time.bad.json": "failed at 'seal is possible': the seal is dated after the commitment",
    "points/14-space.bad.json": "not a well-formed bundle: void.reason = 'witness Boris taken ill\\u2003' is not",
}


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
