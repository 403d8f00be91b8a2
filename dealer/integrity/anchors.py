"""Anchors kept outside the bank, for ``dealer bank verify``: a noted ledger head and a sealed record.

A ledger checked on its own proves only that it is self-consistent: whoever can write the file can cut its tail
or rewrite it after the last seal. ``Head`` (``SIZE:HASH`` or a hash prefix of at least 16 hex digits, as the hall
display shows and officials note in their acts) must be an entry of the ledger, and ``Since`` (a draw bundle or a
``bank seal --json`` record) a seal the ledger still holds — and for a bundle, the very draw it records.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from dealer.core.errors import DealerError
from dealer.core.json_types import JsonObject


class AnchorError(DealerError, ValueError):
    """An anchor given to verify that cannot be used (names what is wrong with it)."""


MAX_SINCE_BYTES = 64 << 20  # a --since file larger than this is refused unread (bundles are a few MB at most)
MIN_HEAD_DIGITS = 16  # a noted head of 16 hex digits (64 bits) cannot be matched by a forged ledger


@dataclass(frozen=True, slots=True)
class Head:
    """A recorded ledger head: ``SIZE:HASH`` (size optional), HASH a prefix of at least 16 hex digits."""

    prefix: str
    size: int | None

    @classmethod
    def parse(cls, text: str) -> Head:
        raw = re.sub(r"[\s\u00a0_-]", "", text).lower()
        size_text, _, digits = raw.rpartition(":")
        pattern = "[0-9a-f]{" + str(MIN_HEAD_DIGITS) + ",64}"
        if not re.fullmatch(pattern, digits) or (size_text and not size_text.isdigit()):
            raise AnchorError(
                "head {text!r}: give SIZE:HASH or HASH as the hall display shows it (HASH: {digits} to 64 hex digits)",
                text=text[:80],
                digits=MIN_HEAD_DIGITS,
            )
        return cls(digits, int(size_text) if size_text else None)

    def __str__(self) -> str:
        return f"{self.size}:{self.prefix}" if self.size is not None else self.prefix


@dataclass(frozen=True, slots=True)
class Since:
    """A sealed record kept outside the bank: a draw bundle, or the JSON of ``dealer bank seal --json``."""

    checkpoint: JsonObject
    signature: str
    commitment: JsonObject | None = None  # a bundle's draw
    public_value: str | None = None
    drawn: tuple[int, ...] | None = None
    name: str = "the sealed record"

    @classmethod
    def load(cls, path: Path) -> Since:
        try:
            if not path.is_file():
                raise AnchorError("{path}: not a regular file", path=path)
            with path.open("rb") as f:
                raw = f.read(MAX_SINCE_BYTES + 1)
            if len(raw) > MAX_SINCE_BYTES:
                raise AnchorError(
                    "{path}: larger than {mib} MiB: not a bundle or a seal record", path=path, mib=MAX_SINCE_BYTES >> 20
                )
            doc = json.loads(raw)
            seal = doc["seal"]
            checkpoint, signature = seal["checkpoint"], seal["signature"]
            if not isinstance(checkpoint, dict) or not isinstance(signature, str):
                raise TypeError("seal.checkpoint must be an object and seal.signature a string")
            commitment = doc.get("commitment")
            drawn = doc.get("drawn")
            ids = tuple(int(d["deal_id"]) for d in drawn) if isinstance(drawn, list) else None
        except AnchorError:
            raise
        except OSError as exc:
            raise AnchorError("{path}: cannot read ({reason})", path=path, reason=exc.strerror) from exc
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise AnchorError(
                "{path}: not a draw bundle or a `bank seal --json` record ({error}: {exc})",
                path=path,
                error=type(exc).__name__,
                exc=exc,
            ) from exc
        value = doc.get("public_value")
        return cls(checkpoint, signature, commitment if isinstance(commitment, dict) else None,
                   value if isinstance(value, str) else None, ids, str(path))  # fmt: skip
