"""``dealer bank migrate SRC DST``: move a bank between engines (SQLite file <-> PostgreSQL URL), verified."""

from __future__ import annotations

from . import kit
from .bank_cmds import bank_app, out
from .i18n import error, t
from .root import fail


@bank_app.command("migrate")
def migrate_cmd(
    source: str = kit.Argument(..., help="The bank to copy: a SQLite file or a postgresql:// URL."),
    destination: str = kit.Argument(..., help="Where to: a new SQLite file or an empty PostgreSQL database."),
) -> None:
    """Copy every row of a bank into a new one on the same or the other engine; verify both sides."""
    from dealer.bank.engines import is_url, open_bank_at
    from dealer.bank.migrate import migrate_bank
    from dealer.bank.pg_store import redact
    from dealer.draw.verify import verify_bank

    def shown(target: str) -> str:
        return redact(target) if is_url(target) else target

    with open_bank_at(source, create=False) as src:
        before = verify_bank(src)
        if not before.ok:
            raise fail(
                t("{bank}: does not verify, not migrated: {problem}", bank=shown(source), problem=error(before.finding))
            )
        report = migrate_bank(src, destination)
    with open_bank_at(destination, create=False) as dst:
        after = verify_bank(dst)
    if not after.ok:
        raise fail(
            t("{bank}: the copy does not verify: {problem}", bank=shown(destination), problem=error(after.finding))
        )
    if (after.entries, after.deals, after.seals, after.draws) != (
        before.entries,
        before.deals,
        before.seals,
        before.draws,
    ):
        raise fail(
            t(
                "{bank}: the copy differs from the source ({after} against {before})",
                bank=shown(destination),
                after=after,
                before=before,
            )
        )
    rows = ", ".join(f"{n} {table}" for table, n in report.rows.items())
    out.print(
        t(
            "migrated {source} -> {destination}: {rows}",
            source=shown(source),
            destination=shown(destination),
            rows=rows,
        ),
        markup=False,
    )
    parts = [
        t("{n} ledger entries chained", n=after.entries),
        t("{n} seals", n=after.seals),
        t("{n} commitments", n=after.deals),
        t("{n} draws", n=after.draws),
    ]
    out.print(t("verified on both: {parts}", parts=", ".join(parts)), markup=False)
    out.print(
        t(
            "the chief judge's custody record is not copied (it is a file, not a row): a SQLite bank keeps it beside "
            "the file, a PostgreSQL bank in the service's var_dir; move custody.json there (or give --keys) before "
            "the next seal"
        ),
        markup=False,
    )
