"""Opening the deal bank the service commits to (``dealer.bank``, on either engine)."""

from __future__ import annotations

from pathlib import Path

from dealer.bank.repository import BankRepository


def open_bank(path: Path | str, busy_timeout: float = 2.0, key_dir: Path | None = None) -> BankRepository:
    """The SQLite file at ``path``, or the PostgreSQL bank when ``path`` is a ``postgresql://`` URL.

    ``busy_timeout``: seconds a SQLite write waits for another writer (a CLI import) before the station retries it
    (PostgreSQL writers queue on the database's advisory lock instead)."""
    from dealer.bank.engines import open_bank_at

    return open_bank_at(path, key_dir, busy_timeout=busy_timeout)
