"""Options shared by the bank and draw commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .light import DEFAULT_BANK_PATH as DEFAULT_BANK_PATH  # the bank commands' default, named once

if TYPE_CHECKING:
    from dealer.bank.store import SqliteBank

BankOption = typer.Option(
    DEFAULT_BANK_PATH, "--bank", help="The bank: a SQLite file, or a postgresql://user@host/db URL."
)
KeysOption = typer.Option(None, "--keys", help="Directory of the signing key (default: the bank file's directory).")


def open_bank(bank: Path, keys: Path | None, create: bool = False) -> SqliteBank:
    """Open the bank; only an import creates a new one (a mistyped --bank must not start an empty bank)."""
    from dealer.bank.engines import open_bank_at

    return open_bank_at(bank, keys, create=create)
