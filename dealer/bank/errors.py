"""What the bank refuses, and why. Every message is an English template with named values (TEAM.md)."""

from __future__ import annotations

from pathlib import Path

from dealer.core.errors import DealerError


class BankError(DealerError):
    """Something the bank refuses, naming what and why."""


class DuplicateDealError(BankError):
    def __init__(self, existing_id: int) -> None:
        self.existing_id = existing_id
        super().__init__("duplicate deal: it repeats deal {existing_id} already in the bank", existing_id=existing_id)


class BankUnavailableError(BankError):
    """A write that could not be made now but may succeed later (file locked, disk full, I/O error)."""


class BankBusyError(BankUnavailableError):
    def __init__(self, path: Path, waited: float) -> None:
        self.path = path
        self.waited = waited
        super().__init__(
            "{path}: the bank is busy: another writer (a `dealer bank import`, another service) held it "
            "for more than {waited:g} s; nothing was written, try again when it has finished",
            path=path,
            waited=waited,
        )
