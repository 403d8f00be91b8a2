"""Files of a session's deals as they lie on disk before play: sealed under the chief judge's key (docs/custody.md).

The service writes a session's deal files and its board-making journal into ``var/export``, which the account
that runs the service can read. Before play those files would tell it the drawn deals (and a journal's digest of
the boards, or a foul record's card, would let it find them among the bank's deals), so the service writes them
sealed: AES-256-GCM under a key derived from the chief judge's (``Keyring.seal``), with the bank, the session and
the file's name as associated data. A sealed file starts with the byte 0x01 (a deal file or a JSON journal never
does); reading opens it with the key, and the console serves the opened bytes to the signed-in chief judge only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from dealer.fsutil import write_atomic

SEALED_MARK = b"\x01"


class Sealer(Protocol):
    """What seals and opens (the chief judge's ``dealer.custody.Keyring``)."""

    def seal(self, plaintext: bytes, context: bytes) -> bytes: ...

    def open(self, blob: bytes, context: bytes) -> bytes: ...


@dataclass(frozen=True, slots=True)
class AtRest:
    """A session's folder of files sealed at rest. ``key`` is asked at every use (the key may be locked or
    withheld in between: then it raises ``CustodyLockedError`` and nothing is written or read)."""

    key: Callable[[], Sealer]
    bank_id: str
    label: str

    def context(self, name: str) -> bytes:
        return b"\x00".join((b"export-file", self.bank_id.encode(), self.label.encode(), name.encode()))

    def write(self, path: Path, data: bytes) -> None:
        write_atomic(path, self.key().seal(data, self.context(path.name)))

    def read(self, path: Path) -> bytes:
        """The file's bytes, opened when sealed (older, plain files are read as they are)."""
        return self.opened(path.name, path.read_bytes())

    def opened(self, name: str, raw: bytes) -> bytes:
        if raw[:1] != SEALED_MARK:
            return raw
        return self.key().open(raw, self.context(name))
