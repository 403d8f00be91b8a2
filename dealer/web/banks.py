"""Opening the deal bank the service commits to (the SQLite bank of ``dealer.bank``)."""

from __future__ import annotations

from pathlib import Path

from dealer.bank.api import BankApi


def open_bank(path: Path) -> BankApi:
    from dealer.bank.store import SqliteBank

    return SqliteBank(path)
