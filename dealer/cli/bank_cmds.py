"""``dealer bank status|seal|verify|import|export-key``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from dealer.bank.importer import import_parsed, read_files
from dealer.bank.verify import verify_bank
from dealer.draw.director import Director

from .app import app, fail
from .machine import print_json, print_line
from .options import BankOption, KeysOption, open_bank

out = Console(highlight=False)
bank_app = typer.Typer(help="The deal bank: status, seal, verify, import public deals, export the public key.")
app.add_typer(bank_app, name="bank", no_args_is_help=True)

BIG_IMPORT = 5000  # deals from which a progress bar is shown


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=out
    )


@bank_app.command("status")
def status_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    as_json: bool = typer.Option(False, "--json", help="Print the public status as JSON."),
) -> None:
    """Public status: deals by state, eligible deals, sealed roots, draws (nothing secret)."""
    with open_bank(bank, keys) as b:
        st = Director(b).status()
    if as_json:
        print_json(st, sort_keys=False)
        return
    table = Table(title=f"Bank {st['bank']}", show_header=False)
    for key in ("deals", "in_bank", "drawn", "played", "sealed_deals", "unsealed_deals", "eligible", "ledger_size"):
        table.add_row(key.replace("_", " "), str(st[key]))
    table.add_row("ledger head", st["ledger_head"])
    out.print(table)
    for s in st["seals"]:  # lines holding hashes: plain, never wrapped
        print_line(
            f"seal at entry {s['index']}: {s['size']} entries, deals 1..{s['last_deal']}, root {s['root']}, {s['ts']}"
        )
    for d in st["draws"]:
        print_line(f"draw {d['label']!r}: {d['state']}, {d['n']} of {d['eligible']} deals, SHA-256(K) {d['k_hash']}")


@bank_app.command("seal")
def seal_cmd(bank: Path = BankOption, keys: Path | None = KeysOption) -> None:
    """Sign a checkpoint of the ledger: its deals become eligible for draws."""
    with open_bank(bank, keys) as b:
        seal = b.seal()
    out.print(f"sealed {seal.size} ledger entries (deals 1..{seal.last_deal})", markup=False)
    print_line(f"root       {seal.root}\npublic key {seal.public_key}\nsignature  {seal.signature}")


@bank_app.command("verify")
def verify_cmd(bank: Path = BankOption) -> None:
    """Recompute the ledger chain, seals, commitments and draws; name the first entry that does not match."""
    with open_bank(bank, None) as b:
        if b.ledger_size() >= 50_000:
            with _progress() as progress:
                task = progress.add_task("verifying ledger", total=b.ledger_size())
                report = verify_bank(b, lambda done, total: progress.update(task, completed=done, total=total))
        else:
            report = verify_bank(b)
    if not report.ok:
        raise fail(f"{bank}: {report.problem}")
    out.print(
        f"ok: {report.entries} ledger entries chained, {report.seals} seals, {report.deals} commitments, "
        f"{report.draws} draws verified",
        markup=False,
    )


@bank_app.command("import")
def import_cmd(
    files: list[Path] = typer.Argument(..., help="Deal files of any readable format (by extension)."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    show: int = typer.Option(20, "--show", help="How many duplicates and problems to list (0: all)."),
) -> None:
    """Import public deals: each deal once, the whole import in one transaction."""
    parsed = read_files(files)  # an unreadable file stops here, before the bank is opened
    total = sum(len(records) for _, records in parsed)
    with open_bank(bank, keys, create=True) as b:
        if total >= BIG_IMPORT:
            with _progress() as progress:
                task = progress.add_task("importing", total=total)
                report = import_parsed(b, parsed, lambda done, _t: progress.update(task, completed=done))
        else:
            report = import_parsed(b, parsed)
    listed = 0
    for f in report.files:
        out.print(
            f"{f.path}: {f.records} deals read, {f.imported} imported, {len(f.duplicates)} duplicates, "
            f"{len(f.problems)} not readable",
            markup=False,
        )
        for p in f.problems:
            out.print(f"  {f.path}: {p.where()}: {p.reason}", markup=False)
        for d in f.duplicates:
            if show and listed >= show:
                break
            out.print(f"  {d.describe()}", markup=False)
            listed += 1
    if show and report.duplicates > listed:
        out.print(f"  … {report.duplicates - listed} more duplicates (--show 0 lists all)", markup=False)
    span = f" as deals {report.first_deal}..{report.last_deal}" if report.first_deal is not None else ""
    out.print(
        f"imported {report.imported} of {report.records} deals{span}; {report.duplicates} duplicates, "
        f"{report.problems} unreadable records; ledger entry {report.batch_index}",
        markup=False,
    )


@bank_app.command("export-key")
def export_key_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    output: Path | None = typer.Option(None, "--out", "-o", help="Write the PEM here instead of printing it."),
) -> None:
    """Print (or write) the bank's Ed25519 public key for verifiers."""
    with open_bank(bank, keys) as b:
        pem = b.public_key_pem()
        raw = b.public_key_hex()
    if output is None:
        print_line(pem.decode().rstrip())
        print_line(f"raw: {raw}")
    else:
        output.write_bytes(pem)
        out.print(f"wrote {output} (raw key {raw})", markup=False)
