"""``dealer bank status|seal|verify|import|export-key``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from dealer.bank.importer import import_parsed, read_files
from dealer.bank.verify import AnchorError, Head, Since, verify_file
from dealer.draw.director import Director

from .app import app, fail
from .machine import print_json, print_line
from .options import BankOption, KeysOption, open_bank

out = Console(highlight=False, markup=False)
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
    table.add_row("anchor for the act", f"{st['ledger_size']}:{st['ledger_head'][:16]}")
    out.print(table)
    for s in st["seals"]:  # lines holding hashes: plain, never wrapped
        print_line(
            f"seal at entry {s['index']}: {s['size']} entries, deals 1..{s['last_deal']}, root {s['root']}, {s['ts']}"
        )
    for d in st["draws"]:
        print_line(f"draw {d['label']!r}: {d['state']}, {d['n']} of {d['eligible']} deals, SHA-256(K) {d['k_hash']}")


@bank_app.command("seal")
def seal_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    as_json: bool = typer.Option(
        False, "--json", help="Print the sealed record (keep it: `bank verify --since FILE` checks against it)."
    ),
) -> None:
    """Sign a checkpoint of the ledger: its deals become eligible for draws."""
    with open_bank(bank, keys) as b:
        seal = b.seal()
        size, head = b.anchor()
        entry = b.entry(seal.ledger_index)
    if as_json:
        record = {
            "seal": {"checkpoint": entry.data["checkpoint"], "signature": seal.signature},
            "public_key": seal.public_key,
            "ledger_index": seal.ledger_index,
            "head": f"{size}:{head}",
        }
        print_json(record)
        return
    out.print(f"sealed {seal.size} ledger entries (deals 1..{seal.last_deal})", markup=False)
    print_line(f"root       {seal.root}\npublic key {seal.public_key}\nsignature  {seal.signature}")
    print_line(f"ledger head {size}:{head[:16]} (note it in the act; full hash {head})")


@bank_app.command("verify")
def verify_cmd(
    bank: Path = BankOption,
    head: str | None = typer.Option(
        None, "--head", help="A ledger head noted earlier (SIZE:HASH as displayed): the ledger must still hold it."
    ),
    since: Path | None = typer.Option(
        None, "--since", help="A draw bundle or `bank seal --json` record: the ledger must still hold its seal/draw."
    ),
) -> None:
    """Recompute the ledger chain, seals, commitments and draws; name the first entry that does not match."""
    if not bank.is_file():
        raise fail(f"{bank}: no bank file there")
    try:
        anchor = Head.parse(head) if head is not None else None
        sealed = Since.load(since) if since is not None else None
    except AnchorError as exc:
        raise fail(str(exc)) from exc
    size = bank.stat().st_size
    if size >= 20 << 20:
        with _progress() as progress:
            task = progress.add_task("verifying ledger", total=None)
            report = verify_file(
                bank, lambda done, total: progress.update(task, completed=done, total=total), anchor, sealed
            )
    else:
        report = verify_file(bank, None, anchor, sealed)
    if not report.ok:
        raise fail(f"{bank}: {report.problem}")
    extra = (f"; head {anchor} found" if anchor else "") + (f"; {since} is in the ledger" if sealed else "")
    out.print(
        f"ok: {report.entries} ledger entries chained, {report.seals} seals, {report.deals} commitments, "
        f"{report.draws} draws verified{extra}",
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
