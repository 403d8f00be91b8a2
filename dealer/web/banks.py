"""Opening the deal bank the service commits to (the SQLite bank of ``dealer.bank``)."""

from __future__ import annotations

from pathlib import Path

from dealer.bank.api import BankApi


def open_bank(path: Path, busy_timeout: float = 2.0) -> BankApi:
    """``busy_timeout``: seconds a write waits for another writer (a CLI import) before the station retries it."""
    from dealer.bank.store import SqliteBank

    return SqliteBank(path, busy_timeout=busy_timeout)
