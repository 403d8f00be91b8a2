"""Ledger entries: their exact bytes, the hash chain and the signed checkpoints (seals). Pure, no I/O.

An entry is the canonical JSON (keys sorted, no spaces, ASCII only) of
``{"d": payload, "i": index, "k": kind, "prev": hex hash of entry i-1 (64 zeros for entry 0), "ts": time}``;
its hash is SHA-256 of those bytes. docs/bundle.md describes the same for third-party verifiers.
"""

from __future__ import annotations

import json
from typing import Final

from dealer.core.json_types import JsonObject

GENESIS_PREV = "0" * 64


class EntryKind:
    GENESIS = "genesis"
    DEAL = "deal"
    VOID = "void"
    IMPORT = "import"
    SHOWN = "shown"  # cards shown on the judge console
    SEAL = "seal"
    DRAW_COMMIT = "draw-commit"
    PUBLIC_VALUE = "draw-public-value"
    DRAW = "draw"
    DRAW_PUBLISHED = "draw-published"  # the commitment shown to the hall (before V may be entered)
    DRAW_VOID = "draw-void"  # a prepared draw abandoned, with its reason and K
    EXPORT = "export"
    REVEAL = "reveal"


def canonical_json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def commitment(salt: bytes, canonical: bytes) -> bytes:
    """SHA-256(salt ‖ canonical deal): what the bank publishes for a deal it keeps secret."""
    from hashlib import sha256  # here: reading the bank (``dealer bank status``) hashes nothing, OpenSSL stays unloaded

    return sha256(salt + canonical).digest()


class Entry:
    """A ledger entry. A plain class, equal by value and not to be changed (``Final``), rather than a dataclass:
    ``dealer bank status`` reads entries, and the dataclasses machinery (with ``inspect``) would cost its start
    a third of a bare Python's."""

    __slots__ = ("data", "index", "kind", "prev", "ts")
    index: Final[int]
    kind: Final[str]
    ts: Final[str]
    prev: Final[str]
    data: Final[JsonObject]

    def __init__(self, index: int, kind: str, ts: str, prev: str, data: JsonObject) -> None:
        self.index = index
        self.kind = kind
        self.ts = ts
        self.prev = prev
        self.data = data

    def _values(self) -> tuple[int, str, str, str, JsonObject]:
        return self.index, self.kind, self.ts, self.prev, self.data

    def __eq__(self, other: object) -> bool:
        return other._values() == self._values() if isinstance(other, Entry) else NotImplemented

    def __repr__(self) -> str:
        return "Entry(index={!r}, kind={!r}, ts={!r}, prev={!r}, data={!r})".format(*self._values())

    def encode(self) -> bytes:
        return canonical_json({"d": self.data, "i": self.index, "k": self.kind, "prev": self.prev, "ts": self.ts})

    @classmethod
    def decode(cls, body: bytes) -> Entry:
        """Parse entry bytes; raises ValueError unless they are exactly the canonical form."""
        obj = json.loads(body)
        if not isinstance(obj, dict) or set(obj) != {"d", "i", "k", "prev", "ts"}:
            raise ValueError("entry must be an object with exactly the keys d, i, k, prev, ts")
        entry = cls(obj["i"], obj["k"], obj["ts"], obj["prev"], obj["d"])
        if not (isinstance(entry.index, int) and isinstance(entry.kind, str) and isinstance(entry.data, dict)):
            raise ValueError("entry fields have the wrong types")
        if entry.encode() != body:
            raise ValueError("entry bytes are not in canonical form")
        return entry


def entry_hash(body: bytes) -> str:
    from hashlib import sha256

    return sha256(body).hexdigest()


# -- seals -------------------------------------------------------------------------------------------
SEAL_FORMAT = "bridge-dealer-seal/1"


def checkpoint(bank_id: str, size: int, root: bytes, ts: str, last_deal: int) -> JsonObject:
    """What a seal signs: the first ``size`` ledger entries have Merkle root ``root``; deals 1..last_deal."""
    return {"bank": bank_id, "format": SEAL_FORMAT, "last_deal": last_deal, "root": root.hex(), "size": size, "ts": ts}


# -- typed views of entries (what readers outside the bank need, without knowing the JSON keys) ------------
class DealEntry:
    """A ``deal`` entry: the commitment the bank published for deal ``deal_id`` and its public source (a plain
    class, as ``Entry``)."""

    __slots__ = ("commitment", "deal_id", "index", "source", "ts")
    index: Final[int]
    ts: Final[str]
    deal_id: Final[int]
    commitment: Final[str]  # hex
    source: Final[JsonObject]  # kind, shown, and station/variant (dealt) or file/board/line/file_sha256 (imported)

    def __init__(self, index: int, ts: str, deal_id: int, commitment: str, source: JsonObject) -> None:
        self.index = index
        self.ts = ts
        self.deal_id = deal_id
        self.commitment = commitment
        self.source = source

    def _values(self) -> tuple[int, str, int, str, JsonObject]:
        return self.index, self.ts, self.deal_id, self.commitment, self.source

    def __eq__(self, other: object) -> bool:
        return other._values() == self._values() if isinstance(other, DealEntry) else NotImplemented

    def __repr__(self) -> str:
        return "DealEntry(index={!r}, ts={!r}, deal_id={!r}, commitment={!r}, source={!r})".format(*self._values())

    @property
    def station(self) -> str | None:
        """The dealing station that dealt it (None for an imported deal)."""
        station = self.source.get("station")
        return station if isinstance(station, str) else None

    @classmethod
    def of(cls, entry: Entry) -> DealEntry:
        if entry.kind != EntryKind.DEAL:
            raise ValueError(f"ledger entry {entry.index} is a {entry.kind!r} entry, not a deal")
        data = entry.data
        return cls(entry.index, entry.ts, int(data["id"]), str(data["c"]), dict(data.get("src") or {}))
