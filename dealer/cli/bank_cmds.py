"""``dealer bank status|seal|verify|import|export-key``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from dealer.bank.importer import ImportReport, SkippedFile, import_json, import_parsed, read_files
from dealer.fsutil import MAX_INPUT_BYTES

from .app import app, fail
from .machine import print_json, print_line
from .options import BankOption, KeysOption, open_bank

out = Console(highlight=False, markup=False)
warn = Console(highlight=False, stderr=True)
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
    from dealer.draw.director import Director  # here, not at the top: ``bank import`` starts without it

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
    regulation: Path | None = typer.Option(
        None, "--regulation", help="Regulation TOML, to warn when the bank is below its target (default: embedded)."
    ),
) -> None:
    """Sign a checkpoint of the ledger: its deals become eligible for draws."""
    from dealer.regulation import load_regulation

    reg = load_regulation(regulation)
    with open_bank(bank, keys) as b:
        seal = b.seal()
        size, head = b.anchor()
        entry = b.entry(seal.ledger_index)
    if seal.last_deal < reg.bank_target:  # on stderr: --json output stays one JSON document
        warn.print(
            f"warning: sealed {seal.last_deal} deals, below the regulation's target of {reg.bank_target} "
            f"({reg.plan_text()}): a draw from this bank needs the director's override with a reason",
            markup=False,
        )
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
    from dealer.bank.verify import AnchorError, Head, Since, verify_file

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
    show: int = typer.Option(20, "--show", help="How many problems and duplicates to list (0: all)."),
    max_size: int = typer.Option(
        MAX_INPUT_BYTES // 2**20, "--max-size", min=1, help="Largest file to read, in MiB (raise it for huge files)."
    ),
    skip_bad: bool = typer.Option(False, "--skip-bad", help="Leave out files with no readable deal (listed)."),
    as_json: bool = typer.Option(False, "--json", help="Print the totals and every problem and duplicate as JSON."),
) -> None:
    """Import public deals: each deal once, committed in short batches; every record imported or reported."""
    skipped: list[SkippedFile] = []
    if out.is_terminal and not as_json:
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
        if out.is_terminal and not as_json:
            with _progress() as progress:
                task = progress.add_task("importing", total=total)
                report = import_parsed(b, parsed, lambda done, _t: progress.update(task, completed=done))
        else:
            report = import_parsed(b, parsed)
    report.skipped.extend(skipped)
    if as_json:
        print_line(json.dumps(import_json(report)))  # one line: thousands of duplicates print at once
        return
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
        print_line(pem.decode().rstrip())
        print_line(f"raw: {raw}")
    else:
        output.write_bytes(pem)
        out.print(f"wrote {output} (raw key {raw})", markup=False)
