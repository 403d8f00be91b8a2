"""``dealer custody init|status|passphrase``: the chief judge's custody of the bank's key (docs/custody.md)."""

from __future__ import annotations

from pathlib import Path

from . import kit
from .console import Console
from .i18n import t
from .machine import print_line
from .options import BankOption, KeysOption, PassphraseOption, open_bank, read_passphrase
from .root import app, fail

out = Console(highlight=False, markup=False)
custody_app = kit.Group(help="The chief judge's custody of the bank's signing key and the draw secrets.")
app.add_group(custody_app, name="custody", no_args_is_help=True)


@custody_app.command("init")
def init_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
    generate: bool = kit.Option(
        False, "--generate", help="Make a passphrase of 16 random characters (80 bits) and print it once."
    ),
) -> None:
    """Create the custody record: the bank's signing key sealed under the chief judge's passphrase.

    A bank's plain key file (bank-ed25519.pem) is adopted and then deleted."""
    from dealer.app.director_console import CustodyExists, SealsSignedElsewhere, adoptable_key, seal_key
    from dealer.custody import check_passphrase, generate_passphrase

    with open_bank(bank, keys, create=True) as b:
        key_dir = b.key_dir
        latest = b.latest_seal()
    try:
        adopted = adoptable_key(key_dir, latest)
    except CustodyExists as exc:
        raise fail(t("{path} exists: the custody is set up already (dealer custody passphrase changes it)",
                     path=exc.path)) from None  # fmt: skip
    except SealsSignedElsewhere as exc:
        raise fail(t("the bank's seals are signed by key {public}…, whose key file is not in {dir}: nothing was made",
                     public=exc.public_key[:16], dir=key_dir)) from None  # fmt: skip
    if generate:
        secret = generate_passphrase()
    else:
        secret = check_passphrase(read_passphrase(passphrase, t("New custody passphrase (12 characters or more): ")))
        if passphrase is None and read_passphrase(None, t("Type it again: ")) != secret:
            raise fail(t("the two passphrases differ: nothing was made"))
    keyring, path = seal_key(key_dir, adopted, secret)
    out.print(t("custody record written to {path}", path=path))
    print_line(t("public key {key}", key=keyring.public_key))
    if generate:
        print_line(t("passphrase {passphrase}", passphrase=secret))
        out.print(t("write it down now and keep it on the chief judge's person: it is shown once, stored nowhere"))


@custody_app.command("status")
def status_cmd(bank: Path = BankOption, keys: Path | None = KeysOption) -> None:
    """The custody record's public key and whether it signed the bank's seals (nothing secret)."""
    from dealer.custody.files import read_record, record_path

    with open_bank(bank, keys) as b:
        record = read_record(b.key_dir)
        latest = b.latest_seal()
    print_line(t("custody record {path}", path=record_path(b.key_dir)))
    print_line(t("public key {key}", key=record.public_key))
    if latest is None:
        out.print(t("the bank has no seal yet"))
    elif latest.public_key == record.public_key:
        out.print(t("the bank's seals are signed by this key"))
    else:
        raise fail(t("the bank's seals are signed by another key ({public}…)", public=latest.public_key[:16]))


@custody_app.command("passphrase")
def passphrase_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
    new: Path | None = kit.Option(None, "--new-passphrase-file", help="File whose first line is the new one."),
) -> None:
    """Change the custody passphrase (the key stays the same)."""
    from dealer.custody import rewrap_record
    from dealer.custody.files import read_record, write_record

    with open_bank(bank, keys) as b:
        key_dir = b.key_dir
    record = read_record(key_dir)
    old = read_passphrase(passphrase, t("Current custody passphrase: "))
    fresh = read_passphrase(new, t("New custody passphrase (12 characters or more): "))
    write_record(key_dir, rewrap_record(record, old, fresh))
    out.print(t("custody passphrase changed; public key {key}", key=record.public_key))
