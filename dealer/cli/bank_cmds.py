"""``dealer bank status|seal|verify|import|export-key``."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from dealer.fsutil import MAX_INPUT_BYTES

from . import kit
from .console import Console
from .event import EventOption
from .i18n import error, printable, t
from .light import bank_status, bank_status_table
from .machine import print_json, print_line
from .options import BankOption, KeysOption, PassphraseOption, RegisterOption, open_bank, open_unlocked
from .root import app, fail

if TYPE_CHECKING:  # the importer, the verifier and the progress bar load inside the commands that use them
    from collections.abc import Callable

    from rich.progress import Progress, TaskID

    from dealer.bank_import.importer import ImportReport, SkippedFile

out = Console(highlight=False, markup=False)
warn = Console(highlight=False, stderr=True)
bank_app = kit.Group(help="The deal bank: status, seal, verify, import public deals, export the public key.")
app.add_group(bank_app, name="bank", no_args_is_help=True)


def _progress(auto_refresh: bool = True) -> Progress:
    """A progress bar; without ``auto_refresh`` no thread redraws it (``_refresher`` does, from the caller)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=out.rich,
        auto_refresh=auto_refresh,
    )


def _refresher(progress: Progress, task: TaskID) -> Callable[[int], None]:
    """``progress(done)`` for a bar without a refresh thread (the import's readers fork only without other
    threads): the bar is redrawn at most ten times a second."""
    import time

    last = [0.0]

    def update(done: int) -> None:
        progress.update(task, completed=done)
        now = time.monotonic()
        if now - last[0] >= 0.1:
            last[0] = now
            progress.refresh()

    return update


@bank_app.command("status")
def status_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    as_json: bool = kit.Option(False, "--json", help="Print the public status as JSON."),
) -> None:
    """Public status: deals by state, eligible deals, sealed roots, draws (nothing secret)."""
    st = bank_status(bank, keys)
    if as_json:
        print_json(st, sort_keys=False)
        return
    spec = bank_status_table(st)
    out.print(spec)
    for line in spec.lines:  # lines holding hashes: plain, never wrapped
        print_line(line)


@bank_app.command("seal")
def seal_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    as_json: bool = kit.Option(
        False, "--json", help="Print the sealed record (keep it: `bank verify --since FILE` checks against it)."
    ),
    regulation: Path | None = kit.Option(
        None, "--regulation", help="Regulation TOML, to warn when the bank is below its target (default: the event's)."
    ),
    event: Path | None = EventOption,
    passphrase: Path | None = PassphraseOption,
) -> None:
    """Sign a checkpoint of the ledger with the chief judge's key: its deals become eligible for draws."""
    from .event import find_event, say_regulation

    ev = find_event(event, regulation)
    say_regulation(ev)
    reg = ev.regulation
    with open_unlocked(bank, keys, passphrase) as b:
        seal = b.seal()
        size, head = b.anchor()
        entry = b.entry(seal.ledger_index)
    below = reg.seal_warning(seal.last_deal)
    if below is not None:  # on stderr: --json output stays one JSON document
        warn.print(t("warning: {text}", text=error(below)), markup=False)
    if as_json:
        record = {
            "seal": {"checkpoint": entry.data["checkpoint"], "signature": seal.signature},
            "public_key": seal.public_key,
            "ledger_index": seal.ledger_index,
            "head": f"{size}:{head}",
        }
        print_json(record)
        return
    out.print(t("sealed {n} ledger entries (deals 1..{last})", n=seal.size, last=seal.last_deal), markup=False)
    print_line(t("root       {root}", root=seal.root))
    print_line(t("public key {key}", key=seal.public_key))
    print_line(t("signature  {signature}", signature=seal.signature))
    print_line(
        t("ledger head {size}:{short} (note it in the act; full hash {head})", size=size, short=head[:16], head=head)
    )


@bank_app.command("verify")
def verify_cmd(
    bank: Path = BankOption,
    head: str | None = kit.Option(
        None, "--head", help="A ledger head noted earlier (SIZE:HASH as displayed): the ledger must still hold it."
    ),
    since: Path | None = kit.Option(
        None, "--since", help="A draw bundle or `bank seal --json` record: the ledger must still hold its seal/draw."
    ),
) -> None:
    """Recompute the ledger chain, seals, commitments and draws; name the first entry that does not match."""
    from dealer.bank.engines import is_url
    from dealer.draw.verify import AnchorError, Head, Since, verify_file

    on_server = is_url(bank)  # a postgresql:// bank (verify_file opens it without ever creating one)
    where = str(bank)
    if on_server:
        from dealer.bank.pg_store import normalise_url, redact

        where = redact(normalise_url(bank))
    if not on_server and not bank.is_file():
        raise fail(t("{bank}: no bank file there", bank=where))
    try:
        anchor = Head.parse(head) if head is not None else None
        sealed = Since.load(since) if since is not None else None
    except AnchorError as exc:
        raise fail(error(exc)) from exc
    size = 0 if on_server else bank.stat().st_size
    if size >= 20 << 20:
        with _progress() as progress:
            task = progress.add_task(t("verifying ledger"), total=None)
            report = verify_file(
                bank, lambda done, total: progress.update(task, completed=done, total=total), anchor, sealed
            )
    else:
        report = verify_file(bank, None, anchor, sealed)
    if not report.ok:
        raise fail(f"{where}: {error(report.finding)}")
    parts = [
        t("{n} ledger entries chained", n=report.entries),
        t("{n} seals", n=report.seals),
        t("{n} commitments", n=report.deals),
        t("{n} draws verified", n=report.draws),
    ]
    text = t("ok: {parts}", parts=", ".join(parts))
    if anchor:
        text += "; " + t("head {anchor} found", anchor=anchor)
    if sealed:
        text += "; " + t("{since} is in the ledger", since=since)
    out.print(text, markup=False)


@bank_app.command("restore")
def restore_cmd(
    copy: Path = kit.Argument(
        ..., metavar="COPY", help="The bank's second copy (the file bank.copy names in the service's config)."
    ),
    bank: Path = BankOption,
) -> None:
    """Continue an event on another laptop: the second copy, checked whole, becomes the bank at --bank (which must
    not exist yet); the service then starts on it with the event's keys and secrets in its folder."""
    import shutil
    import sqlite3

    from dealer.custody.files import copy_record_path, record_path
    from dealer.draw.verify import verify_file
    from dealer.fsutil import write_atomic

    if not copy.is_file():
        raise fail(t("{copy}: no bank copy there", copy=copy))
    if bank.exists():
        raise fail(t("{bank}: a bank is already there; restore into a new place", bank=bank))
    report = verify_file(copy, None, None, None)  # the copy is evidence: checked before it is used
    if not report.ok:
        raise fail(f"{copy}: {error(report.finding)}")
    bank.parent.mkdir(parents=True, exist_ok=True)
    part = bank.with_name(bank.name + ".restoring")
    part.unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{copy.resolve()}?mode=ro", uri=True)
    target = sqlite3.connect(part)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()
    os.chmod(part, 0o600)
    again = verify_file(part, None, None, None)
    if not again.ok or again.entries != report.entries:
        part.unlink(missing_ok=True)
        raise fail(f"{bank}: {error(again.finding) if again.finding else again.entries}")
    shutil.move(part, bank)
    out.print(
        t("restored {bank} from {copy}: {n} ledger entries chained", bank=bank, copy=copy, n=report.entries),
        markup=False,
    )
    record, beside = copy_record_path(copy), record_path(bank.parent)
    if record.is_file() and not beside.exists():  # the bank's signing key, still sealed under the passphrase
        write_atomic(beside, record.read_bytes())
        out.print(t("the custody record restored beside it: {path}", path=beside), markup=False)


@bank_app.command("import")
def import_cmd(
    files: list[Path] = kit.Argument(..., help="Deal files of any readable format (by extension)."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    show: int = kit.Option(20, "--show", help="How many problems and duplicates to list (0: all)."),
    max_size: int = kit.Option(
        MAX_INPUT_BYTES // 2**20, "--max-size", min=1, help="Largest file to read, in MiB (raise it for huge files)."
    ),
    skip_bad: bool = kit.Option(False, "--skip-bad", help="Leave out files with no readable deal (listed)."),
    as_json: bool = kit.Option(False, "--json", help="Print the totals and every problem and duplicate as JSON."),
    register: Path | None = RegisterOption,
) -> None:
    """Import public deals: each deal once, committed in short batches; every record imported or reported.
    Deals the register of played deals holds are left out (Law 15), each reported."""
    from dealer.bank.engines import load_engine
    from dealer.bank_import.importer import import_parsed, read_files

    from .light import NothingToImport, bank_import_json, collector_paused, set_aside_played

    if as_json:  # the lean front door runs this too (dealer.cli.fast): one body for both
        try:
            # one line: thousands of duplicates
            print_line(bank_import_json(files, bank, keys, max_size, skip_bad, register))
        except NothingToImport as exc:
            raise fail(exc.message()) from None
        return
    skipped: list[SkippedFile] = []
    prepare = partial(load_engine, bank)  # loaded while a second process reads
    with collector_paused():  # see there: an import makes many objects and no cycles
        if out.is_terminal:
            with _progress(auto_refresh=False) as progress:  # no refresh thread: the files may be read by two processes
                task = progress.add_task(t("reading files"), total=len(files))
                parsed = read_files(
                    files,
                    max_bytes=max_size * 2**20,
                    skip_bad=skip_bad,
                    skipped=skipped,
                    progress=_refresher(progress, task),
                    prepare=prepare,
                )
        else:
            parsed = read_files(files, max_bytes=max_size * 2**20, skip_bad=skip_bad, skipped=skipped, prepare=prepare)
        if not parsed:
            raise fail(t("no file with deals to import ({n} left out); nothing was imported", n=len(skipped)))
        set_aside_played(parsed, bank, register)
        total = sum(len(records) for _, records in parsed)
        with open_bank(bank, keys, create=True) as b:
            if out.is_terminal:
                with _progress() as progress:
                    task = progress.add_task(t("importing"), total=total)
                    report = import_parsed(b, parsed, lambda done, _t: progress.update(task, completed=done))
            else:
                report = import_parsed(b, parsed)
    report.skipped.extend(skipped)
    _import_summary(report, show)


def _import_summary(report: ImportReport, show: int) -> None:
    """Problems (files left out, unreadable records, duplicates) as one table, then the totals."""
    rows: list[tuple[str, str, str, str]] = [
        (s.path, "", "", t("left out: {reason}", reason=s.reason)) for s in report.skipped
    ]
    for f in report.files:
        rows.extend((f.path, _opt(p.line), _opt(p.board), p.reason) for p in f.problems)
    problems = len(rows)
    for f in report.files:
        rows.extend(
            (
                d.file,
                _opt(d.line),
                _opt(d.board),
                t(
                    "duplicate of deal {deal} ({first})",
                    deal=d.repeats,
                    first=t("bank") if d.first_seen == "bank" else d.first_seen,
                ),
            )
            for d in f.duplicates
        )
    listed = rows if show == 0 else rows[: max(show, 0)]
    listed = [(printable(a), b, c, printable(d)) for a, b, c, d in listed]  # names and reasons from files: escaped
    if listed:
        if out.is_terminal:
            from rich.table import Table
            from rich.text import Text

            table = Table(title=t("Problems and duplicates"), title_justify="left")
            for column in (t("file"), t("line"), t("board"), t("what")):
                table.add_column(column, overflow="fold")
            for row in listed:
                table.add_row(*(Text(cell) for cell in row))  # file text is data, never markup
            out.print(table)
        else:  # plain lines, one a record, written at once (thousands of duplicates print in milliseconds)
            lines = []
            for path, line, board, what in listed:
                where = f"{path}:{line}" if line else path
                lines.append(f"{where}:{' ' + t('board {board}:', board=board) if board else ''} {what}\n")
            out.file.write("".join(lines))
    if len(rows) > len(listed):
        out.print(t("… {n} more (--show 0 lists all)", n=len(rows) - len(listed)), markup=False)
    span = (
        " " + t("as deals {first}..{last}", first=report.first_deal, last=report.last_deal)
        if report.first_deal is not None
        else ""
    )
    entries = report.batch_indices
    if not entries:
        ledger = t("nothing written to the ledger")
    elif len(entries) == 1:
        ledger = t("ledger entry {index}", index=entries[0])
    else:
        ledger = t("ledger entries {first}..{last} ({n} batches)", first=entries[0], last=entries[-1], n=len(entries))
    counts = [
        t("{n} duplicates", n=report.duplicates),
        t("{n} unreadable records", n=problems - len(report.skipped)),
    ]
    if report.skipped:
        counts.append(t("{n} files left out", n=len(report.skipped)))
    text = (
        t("{n} files", n=len(report.files))
        + ": "
        + t("imported {imported} of {n} deals", imported=report.imported, n=report.records)
        + span
        + "; "
        + ", ".join(counts)
        + "; "
        + ledger
    )
    out.print(text, markup=False, soft_wrap=True)


def _opt(value: int | None) -> str:
    return "" if value is None else str(value)


@bank_app.command("export-key")
def export_key_cmd(
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    output: Path | None = kit.Option(None, "--out", "-o", help="Write the PEM here instead of printing it."),
) -> None:
    """Print (or write) the bank's Ed25519 public key for verifiers."""
    from dealer.custody.files import public_pem, read_record

    with open_bank(bank, keys) as b:
        raw = read_record(b.key_dir).public_key
    pem = public_pem(raw)
    if output is None:
        print_line(pem.decode().rstrip())
        print_line(t("raw: {raw}", raw=raw))
    else:
        output.write_bytes(pem)
        out.print(t("wrote {output} (raw key {raw})", output=output, raw=raw), markup=False)
