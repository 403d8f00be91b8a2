"""Opening a bank by what names it: a SQLite file path, or a ``postgresql://`` URL (same repository, two engines)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import BankError

if TYPE_CHECKING:
    from .composed import Bank


def is_url(value: str | Path) -> bool:
    """Whether ``value`` names a PostgreSQL bank (``postgresql:`` / ``postgres:``) rather than a SQLite file.

    Here, not in ``pg_store``, so that telling the two apart does not load psycopg."""
    return str(value).startswith(("postgresql:", "postgres:"))


def load_engine(target: str | Path) -> None:
    """Load the modules ``open_bank_at(target)`` needs (SQLite's bank, and psycopg for a URL: a tenth of a
    second): an import does it while a second process reads its files. Opens nothing, writes nothing."""
    from . import store  # noqa: F401

    if is_url(target):
        from . import pg_store  # noqa: F401


def open_bank_at(
    target: str | Path, key_dir: Path | str | None = None, create: bool = True, busy_timeout: float | None = None
) -> Bank:
    """The bank at ``target``. Without ``create``, a missing bank is an error (no empty bank by a typo)."""
    if is_url(target):  # psycopg loads only for a URL
        from .pg_store import PostgresBank, normalise_url, redact

        url = normalise_url(target)
        bank = PostgresBank(url, key_dir, create=create)
        if not bank.bank_id:
            bank.close()
            raise BankError("{url}: no bank in that database yet (create it with dealer bank import)", url=redact(url))
        return bank
    from .store import SqliteBank

    path = Path(target)
    if not create and not path.exists():
        raise BankError("{path}: no bank there (give --bank, or create it with dealer bank import)", path=path)
    if busy_timeout is not None:
        return SqliteBank(path, key_dir, busy_timeout=busy_timeout)
    return SqliteBank(path, key_dir)
