"""Options shared by the bank and draw commands."""

from __future__ import annotations

from pathlib import Path

import typer

from dealer.bank.store import DEFAULT_BANK_PATH, SqliteBank

BankOption = typer.Option(DEFAULT_BANK_PATH, "--bank", help="The bank database file.")
KeysOption = typer.Option(None, "--keys", help="Directory of the signing key (default: the bank file's directory).")


def open_bank(bank: Path, keys: Path | None) -> SqliteBank:
    return SqliteBank(bank, keys)
