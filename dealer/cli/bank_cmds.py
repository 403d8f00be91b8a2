"""``dealer bank status|seal|verify|import|export-key``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from dealer.bank.importer import ImportReport, SkippedFile, import_parsed, read_files
from dealer.bank.verify import verify_bank
from dealer.draw.director import Director
from dealer.fsutil import MAX_INPUT_BYTES

from .app import app, fail
from .options import BankOption, KeysOption, open_bank

out = Console(highlight=False)
bank_app = typer.Typer(help="The deal bank: status, seal, verify, import public deals, export the public key.")
app.add_typer(bank_app, name="bank", no_args_is_help=True)


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
        out.print(json.dumps(st, indent=2), markup=False)
        return
    table = Table(title=f"Bank {st['bank']}", show_header=False)
    for key in ("deals", "in_bank", "drawn", "played", "sealed_deals", "unsealed_deals", "eligible", "ledger_size"):
        table.add_row(key.replace("_", " "), str(st[key]))
    table.add_row("ledger head", st["ledger_head"])
    out.print(table)
    for s in st["seals"]:
        out.print(
            f"seal at entry {s['index']}: {s['size']} entries, deals 1..{s['last_deal']}, root {s['root']}, {s['ts']}"
        )
    for d in st["draws"]:
        out.print(f"draw {d['label']!r}: {d['state']}, {d['n']} of {d['eligible']} deals, SHA-256(K) {d['k_hash']}")


@bank_app.command("seal")
def seal_cmd(bank: Path = BankOption, keys: Path | None = KeysOption) -> None:
    """Sign a checkpoint of the ledger: its deals become eligible for draws."""
    with open_bank(bank, keys) as b:
        seal = b.seal()
    out.print(f"sealed {seal.size} ledger entries (deals 1..{seal.last_deal})", markup=False)
    out.print(f"root       {seal.root}\npublic key {seal.public_key}\nsignature  {seal.signature}", markup=False)


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
    show: int = typer.Option(20, "--show", help="How many problems and duplicates to list (0: all)."),
    max_size: int = typer.Option(
        MAX_INPUT_BYTES // 2**20, "--max-size", min=1, help="Largest file to read, in MiB (raise it for huge files)."
    ),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="Leave out files with no readable deal (listed)."),
) -> None:
    """Import public deals: each deal once, committed in short batches; every record imported or reported."""
    skipped: list[SkippedFile] = []
    if out.is_terminal:
        with _progress() as progress:
            task = progress.add_task("reading files", total=len(files))
            parsed = read_files(
                files,
                max_bytes=max_size * 2**20,
                skip_bad=skip_bad,
                skipped=skipped,
                progress=lambda done: progress.update(task, completed=done),
            )
    else:
        parsed = read_files(files, max_bytes=max_size * 2**20, skip_bad=skip_bad, skipped=skipped)
    if not parsed:
        raise fail(f"no file with deals to import ({len(skipped)} left out); nothing was imported")
    total = sum(len(records) for _, records in parsed)
    with open_bank(bank, keys, create=True) as b:
        if out.is_terminal:
            with _progress() as progress:
                task = progress.add_task("importing", total=total)
                report = import_parsed(b, parsed, lambda done, _t: progress.update(task, completed=done))
        else:
            report = import_parsed(b, parsed)
    report.skipped.extend(skipped)
    _import_summary(report, show)


def _import_summary(report: ImportReport, show: int) -> None:
    """Problems (files left out, unreadable records, duplicates) as one table, then the totals."""
    rows: list[tuple[str, str, str, str]] = [(s.path, "", "", f"left out: {s.reason}") for s in report.skipped]
    for f in report.files:
        rows.extend((f.path, _opt(p.line), _opt(p.board), p.reason) for p in f.problems)
    problems = len(rows)
    for f in report.files:
        rows.extend(
            (d.file, _opt(d.line), _opt(d.board), f"duplicate of deal {d.repeats} ({d.first_seen})")
            for d in f.duplicates
        )
    listed = rows if show == 0 else rows[: max(show, 0)]
    if listed:
        if out.is_terminal:
            table = Table(title="Problems and duplicates", title_justify="left")
            for column in ("file", "line", "board", "what"):
                table.add_column(column, overflow="fold")
            for row in listed:
                table.add_row(*(Text(cell) for cell in row))  # file text is data, never markup
            out.print(table)
        else:  # plain lines, one a record, written at once (thousands of duplicates print in milliseconds)
            lines = []
            for path, line, board, what in listed:
                where = f"{path}:{line}" if line else path
                lines.append(f"{where}:{f' board {board}:' if board else ''} {what}\n")
            out.file.write("".join(lines))
    if len(rows) > len(listed):
        out.print(f"… {len(rows) - len(listed)} more (--show 0 lists all)", markup=False)
    span = f" as deals {report.first_deal}..{report.last_deal}" if report.first_deal is not None else ""
    entries = report.batch_indices
    ledger = (
        f"ledger entry {entries[0]}"
        if len(entries) == 1
        else f"ledger entries {entries[0]}..{entries[-1]} ({len(entries)} batches)"
    )
    out.print(
        f"{len(report.files)} files: imported {report.imported} of {report.records} deals{span}; "
        f"{report.duplicates} duplicates, {problems - len(report.skipped)} unreadable records"
        + (f", {len(report.skipped)} files left out" if report.skipped else "")
        + f"; {ledger}",
        markup=False,
        soft_wrap=True,
    )


def _opt(value: int | None) -> str:
    return "" if value is None else str(value)


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
        out.print(pem.decode().rstrip(), markup=False)
        out.print(f"raw: {raw}", markup=False)
    else:
        output.write_bytes(pem)
        out.print(f"wrote {output} (raw key {raw})", markup=False)
