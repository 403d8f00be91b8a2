"""What a storage engine gives the bank: connections, transactions and the few statements that differ.

``composed.Bank`` holds one engine and the table classes; everything else about the bank (the ledger's chain,
the deals, seals and draws, the custody of the key) is engine-neutral SQL in those tables. ``store.SqliteEngine``
and ``pg_store.PgEngine`` implement this; a third engine would too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, TypeVar

from .schema import Connection

T = TypeVar("T")


class Engine(Protocol):
    import_batch: int  # deals an import commits in one transaction
    in_process: bool  # the engine works in this process (SQLite), not in a server of its own
    copies_to_file: bool  # the bank can copy itself whole into a file (``Bank.copy_to``)

    def open(self, create_bank: Callable[[Connection], None]) -> str:
        """Lay the schema where the engine does so (and, in a transaction, ``create_bank`` when the database has
        no bank and may get one); the bank's id ("" when it has none)."""
        ...

    def tx(self) -> AbstractContextManager[Connection]:
        """One durable write transaction, serialised with every other writer of the bank."""
        ...

    def read(self) -> AbstractContextManager[Connection]:
        """The connection for a read, under the bank's lock (one connection is shared by threads)."""
        ...

    def write(self, attempt: Callable[[], T], recover: Callable[[], T | None] | None = None) -> T:
        """``attempt()`` (a write in its own transaction), retried while the engine may retry it; when the
        outcome of a COMMIT is unknown, ``recover()`` says what landed (None: nothing did)."""
        ...

    def existing_ids(self, db: Connection, deals: Sequence[bytes]) -> dict[bytes, int]:
        """The bank's ids of those of ``deals`` (canonical forms) it already holds."""
        ...

    def copy_to(self, path: Path, key_dir: Path) -> tuple[int, str]:
        """A whole, consistent copy of the bank in the file ``path``, and the copy's ledger (size, head)."""
        ...

    def describe(self) -> str: ...
    def close(self) -> None: ...
