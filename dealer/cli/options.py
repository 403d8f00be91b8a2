"""Options shared by the bank and draw commands."""

from __future__ import annotations

from pathlib import Path

import typer

from dealer.bank.store import DEFAULT_BANK_PATH, BankError, SqliteBank

BankOption = typer.Option(DEFAULT_BANK_PATH, "--bank", help="The bank database file.")
KeysOption = typer.Option(None, "--keys", help="Directory of the signing key (default: the bank file's directory).")


def open_bank(bank: Path, keys: Path | None, create: bool = False) -> SqliteBank:
    """Open the bank; only an import creates a new one (a mistyped --bank must not start an empty bank)."""
    if not create and not bank.exists():
        raise BankError(f"{bank}: no bank there (give --bank, or create it with dealer bank import)")
    return SqliteBank(bank, keys)
