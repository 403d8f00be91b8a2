"""The register of played deals: every deal drawn for play (or played elsewhere and added), kept across banks and
events in its own SQLite file (``var/played.sqlite``). Law 15: a deal is not played twice in a competition — a bank
holding a registered deal draws nothing until the deal is gone from it (docs/custody.md).

One table, ``played(canonical PRIMARY KEY, ts, source)``: the canonical 13 bytes of each deal, when it was added
and from what (a bank and draw, or a file). Adding is idempotent; reading is a set lookup.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .errors import BankError

SCHEMA = "CREATE TABLE IF NOT EXISTS played (canonical BLOB PRIMARY KEY, ts TEXT NOT NULL, source TEXT NOT NULL)"


class PlayedRegister:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise BankError(
                "{path}: not a register of played deals ({reason})", path=self.path, reason=str(exc)
            ) from exc

    def add(self, canonicals: Iterable[bytes], source: str, ts: str) -> int:
        """Register deals (13-byte canonical forms); returns how many were new."""
        rows = [(bytes(c), ts, source) for c in canonicals]
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            before = self.count()
            self._db.executemany("INSERT OR IGNORE INTO played VALUES (?, ?, ?)", rows)
            return self.count() - before

    def played(self, canonicals: Iterable[bytes]) -> set[bytes]:
        """Those of ``canonicals`` that are registered as played."""
        wanted = [bytes(c) for c in canonicals]
        found: set[bytes] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT canonical FROM played WHERE canonical IN ({marks})", part).fetchall()
            found.update(bytes(r[0]) for r in rows)
        return found

    def source_of(self, canonical: bytes) -> str | None:
        row = self._db.execute("SELECT source FROM played WHERE canonical=?", (canonical,)).fetchone()
        return None if row is None else str(row[0])

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM played").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PlayedRegister:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
