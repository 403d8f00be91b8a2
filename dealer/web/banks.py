"""Opening the deal bank the service commits to (the SQLite bank of ``dealer.bank``)."""

from __future__ import annotations

from pathlib import Path

from dealer.bank.api import BankApi


def open_bank(path: Path | str, key_dir: Path | None = None) -> BankApi:
    """The SQLite file at ``path``, or the PostgreSQL bank when ``path`` is a ``postgresql://`` URL."""
    from dealer.bank.engines import open_bank_at

    return open_bank_at(path, key_dir)
