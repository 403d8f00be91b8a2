"""``dealer bank migrate SRC DST``: move a bank between engines (SQLite file <-> PostgreSQL URL), verified."""

from __future__ import annotations

import typer

from .app import fail
from .bank_cmds import bank_app, out


@bank_app.command("migrate")
def migrate_cmd(
    source: str = typer.Argument(..., help="The bank to copy: a SQLite file or a postgresql:// URL."),
    destination: str = typer.Argument(..., help="Where to: a new SQLite file or an empty PostgreSQL database."),
) -> None:
    """Copy every row of a bank into a new one on the same or the other engine; verify both sides."""
    from dealer.bank.engines import open_bank_at
    from dealer.bank.migrate import migrate_bank
    from dealer.bank.pg_store import is_url, redact
    from dealer.draw.verify import verify_bank

    def shown(target: str) -> str:
        return redact(target) if is_url(target) else target

    with open_bank_at(source, create=False) as src:
        before = verify_bank(src)
        if not before.ok:
            raise fail(f"{shown(source)}: does not verify, not migrated: {before.problem}")
        report = migrate_bank(src, destination)
    with open_bank_at(destination, create=False) as dst:
        after = verify_bank(dst)
    if not after.ok:
        raise fail(f"{shown(destination)}: the copy does not verify: {after.problem}")
    if (after.entries, after.deals, after.seals, after.draws) != (
        before.entries,
        before.deals,
        before.seals,
        before.draws,
    ):
        raise fail(f"{shown(destination)}: the copy differs from the source ({after} against {before})")
    rows = ", ".join(f"{n} {table}" for table, n in report.rows.items())
    out.print(f"migrated {shown(source)} -> {shown(destination)}: {rows}", markup=False)
    out.print(
        f"verified on both: {after.entries} ledger entries chained, {after.seals} seals, {after.deals} commitments, "
        f"{after.draws} draws",
        markup=False,
    )
    out.print(
        "the signing key is not copied (it is a file, not a row): a SQLite bank keeps it beside the file, a "
        "PostgreSQL bank in the service's var_dir; move bank-ed25519.pem there (or give --keys) before the next seal",
        markup=False,
    )
