"""Options shared by the bank and draw commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import kit
from .light import DEFAULT_BANK_PATH as DEFAULT_BANK_PATH  # the bank commands' default, named once
from .light import register_path as register_path

if TYPE_CHECKING:
    from dealer.bank.repository import BankRepository

BankOption = kit.Option(
    DEFAULT_BANK_PATH, "--bank", help="The bank: a SQLite file, or a postgresql://user@host/db URL."
)
KeysOption = kit.Option(None, "--keys", help="Directory of the signing key (default: the bank file's directory).")


def open_bank(bank: Path, keys: Path | None, create: bool = False) -> BankRepository:
    """Open the bank; only an import creates a new one (a mistyped --bank must not start an empty bank)."""
    from dealer.bank.engines import open_bank_at

    return open_bank_at(bank, keys, create=create)


PASSPHRASE_ENV = "DEALER_PASSPHRASE_FILE"
PassphraseOption = kit.Option(
    None,
    "--passphrase-file",
    envvar=PASSPHRASE_ENV,
    help="File whose first line is the chief judge's custody passphrase ('-': standard input), e.g. on the chief "
    "judge's own USB stick; asked for when omitted.",
)


def read_passphrase(source: Path | None, prompt: str) -> str:
    """The passphrase: the first line of ``source`` ('-' for standard input), else typed without echo."""
    import sys

    from dealer.custody import CustodyError
    from dealer.fsutil import read_input

    if source is None:
        if not sys.stdin.isatty():
            raise CustodyError("no terminal to ask the passphrase on: give --passphrase-file FILE (or - for stdin)")
        import getpass

        return getpass.getpass(prompt)
    raw = sys.stdin.buffer.readline(4096) if str(source) == "-" else read_input(source, 4096)
    try:
        return raw.decode("utf-8").splitlines()[0] if raw.strip() else ""
    except UnicodeDecodeError as exc:
        raise CustodyError("{source}: the passphrase is not UTF-8 text", source=source) from exc


def open_unlocked(bank: Path, keys: Path | None, passphrase: Path | None) -> BankRepository:
    """Open the bank and unlock the chief judge's custody with the passphrase (docs/custody.md)."""
    from dealer.custody.files import read_record
    from dealer.custody.keyring import unlock_record

    from .i18n import t

    b = open_bank(bank, keys)
    try:
        record = read_record(b.key_dir)
        b.unlock(unlock_record(record, read_passphrase(passphrase, t("Chief judge's custody passphrase: "))))
    except BaseException:
        b.close()
        raise
    return b


RegisterOption = kit.Option(
    None,
    "--register",
    help="The register of played deals of the competition (default: played.sqlite beside the bank file).",
)
