"""The chief judge's custody in tests: one known key and passphrase, records made cheaply (scrypt N = 2^10)."""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path
from typing import TypeVar

from dealer.bank.repository import BankRepository
from dealer.custody import Keyring, create_record
from dealer.custody.files import write_record

TEST_PASSPHRASE = "test custody passphrase"
TEST_KEYRING = Keyring(sha256(b"bridge-dealer tests: the chief judge's key").digest())
CHEAP = 10  # scrypt N = 2^10: a test record opens in a millisecond (a real one is made with 2^17)

B = TypeVar("B", bound=BankRepository)


def unlocked(bank: B, keyring: Keyring = TEST_KEYRING) -> B:
    """``bank`` with the test key unlocked (as the chief judge's passphrase would)."""
    bank.unlock(keyring)
    return bank


def write_custody(key_dir: Path, keyring: Keyring = TEST_KEYRING, passphrase: str = TEST_PASSPHRASE) -> Path:
    """A custody record in ``key_dir`` for ``keyring`` under ``passphrase``."""
    return write_record(key_dir, create_record(keyring, passphrase, n_log2=CHEAP))


def passphrase_file(directory: Path, passphrase: str = TEST_PASSPHRASE) -> Path:
    path = directory / "passphrase.txt"
    path.write_text(passphrase + "\n", encoding="utf-8")
    return path


def cli_env(directory: Path, key_dir: Path | None = None) -> dict[str, str]:
    """Environment for a ``dealer`` subprocess: the passphrase in a file named by DEALER_PASSPHRASE_FILE (and a
    custody record written into ``key_dir`` when given)."""
    if key_dir is not None and not (key_dir / "custody.json").exists():
        write_custody(key_dir)
    return {"DEALER_PASSPHRASE_FILE": str(passphrase_file(directory))}
