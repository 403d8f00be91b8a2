"""``dealer convert`` and ``dealer export files|boards|handrecords``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from dealer.export.boards import SessionBoard, boards_from_records
from dealer.export.files import read_deal_file, write_session_files
from dealer.formats import ExportMeta, by_name, by_path, formats, load_all
from dealer.formats.base import FormatError, ReadResult
from dealer.fsutil import MAX_INPUT_BYTES, write_atomic

from .app import app, fail

out = Console(highlight=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)
export_app = typer.Typer(
    help="Export a session: deal files, boards made on a machine, hand records.", no_args_is_help=True
)
app.add_typer(export_app, name="export")

FromOption = typer.Option(None, "--from", help="Input format (default: from the file's extension).")
SkipOption = typer.Option(False, "--skip-bad", help="Go on without the boards that cannot be read (listed).")


def _read(path: Path, fmt: str | None, skip_bad: bool, max_size: int = MAX_INPUT_BYTES // 2**20) -> ReadResult:
    result = read_deal_file(path, fmt, max_size * 2**20)
    for problem in result.problems:  # file names and file text are data: escaped, never taken as markup
        err.print(Text(f"{path}: {problem.where()}:", style="yellow"), problem.reason, soft_wrap=True)
    if result.problems and not skip_bad:
        raise fail(f"{path}: {len(result.problems)} board(s) cannot be read; fix the file or pass --skip-bad")
    if not result.records:
        raise fail(f"{path}: no boards in the file")
    return result


def _boards(path: Path, fmt: str | None, skip_bad: bool, first: int | None, copies: int) -> list[SessionBoard]:
    return boards_from_records(_read(path, fmt, skip_bad).records, copies=copies, first=first)


@app.command("convert")
def convert(
    source: Path = typer.Argument(..., help="Deal file to read (any readable format)."),
    target: Path = typer.Argument(..., help="Deal file to write."),
    from_fmt: str | None = FromOption,
    to_fmt: str | None = typer.Option(None, "--to", help="Output format (default: from the file's extension)."),
    event: str = typer.Option("", "--event", help="Event name written where the format has one."),
    sealed: bool = typer.Option(False, "--sealed", help="DLM: Status=Sealed (the operator screen hides the deals)."),
    copies: int = typer.Option(1, "--copies", min=1, max=50, help="Copies per board (DLM Duplicates, DUP)."),
    skip_bad: bool = SkipOption,
    max_size: int = typer.Option(
        MAX_INPUT_BYTES // 2**20, "--max-size", min=1, help="Largest file to read, in MiB (raise it for huge files)."
    ),
) -> None:
    """Convert a deal file from any readable format to any writable one."""
    load_all()
    result = _read(source, from_fmt, skip_bad, max_size)
    fmt = by_name(to_fmt) if to_fmt else by_path(str(target))
    if not fmt.can_write:
        raise FormatError("format {name} can be read but not written", name=fmt.name)
    data = fmt.write(result.records, ExportMeta(event=event, sealed=sealed, copies=copies))
    write_atomic(target, data)
    out.print(f"{len(result.records)} boards: {source} → {target} ({fmt.name})", markup=False)


@app.command("formats")
def list_formats() -> None:
    """List the deal-file formats."""
    load_all()
    for name, fmt in sorted(formats().items()):
        modes = ("r" if fmt.can_read else "-") + ("w" if fmt.can_write else "-")
        out.print(f"{name:5} {modes}  .{', .'.join(fmt.extensions):12} {fmt.description}", markup=False, soft_wrap=True)


def _copies(copies: int | None, regulation: Path | None) -> int:
    if copies is not None:
        return copies
    from dealer.regulation import load_regulation

    return load_regulation(regulation).copies


@export_app.command("files")
def export_files(
    source: Path = typer.Argument(..., help="The session's deals (any readable deal file)."),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory to write into."),
    stem: str = typer.Option("session", "--name", help="File name without extension."),
    to: str = typer.Option("dlm,dup,pbn", "--formats", help="Comma-separated formats to write."),
    first: int | None = typer.Option(None, "--first", min=1, help="Renumber boards from this number (Law 2)."),
    copies: int | None = typer.Option(None, "--copies", min=1, max=50, help="Copies per board (default: regulation)."),
    regulation: Path | None = typer.Option(None, "--regulation", help="Regulation TOML (copies)."),
    event: str = typer.Option("", "--event"),
    site: str = typer.Option("", "--site"),
    date: str = typer.Option("", "--date", help="YYYY.MM.DD"),
    sealed: bool = typer.Option(True, "--sealed/--show", help="DLM status: Sealed (default) or Show."),
    from_fmt: str | None = FromOption,
    skip_bad: bool = SkipOption,
) -> None:
    """Write the session as deal files for other software (closed machines: DLM sealed, DUP, PBN)."""
    boards = _boards(source, from_fmt, skip_bad, first, _copies(copies, regulation))
    names = [n.strip() for n in to.split(",") if n.strip()]
    meta = ExportMeta(event=event, site=site, date=date, sealed=sealed, copies=boards[0].copies)
    for path in write_session_files(boards, out_dir, stem, names, meta):
        out.print(f"wrote {path}", markup=False)


@export_app.command("handrecords")
def export_handrecords(
    source: Path = typer.Argument(..., help="The session's deals (any readable deal file; already public)."),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory to write into."),
    stem: str = typer.Option("handrecords", "--name", help="File name without extension."),
    kinds: str = typer.Option("html,pdf,pbn", "--formats", help="Any of html, pdf, pbn, comma-separated."),
    title: str = typer.Option("", "--title", help="Title of the document."),
    subtitle: str = typer.Option("", "--subtitle", help="Second line: date, session, place."),
    lang: str = typer.Option("en", "--lang", help="en or ru."),
    first: int | None = typer.Option(None, "--first", min=1, help="Renumber boards from this number (Law 2)."),
    from_fmt: str | None = FromOption,
    skip_bad: bool = SkipOption,
) -> None:
    """Hand records with double-dummy tables and par (HTML, PDF, PBN).

    A deal file named here is public already; publishing a drawn session from the bank goes through
    the reveal gate of ``dealer.handrecords.publish``.
    """
    from dealer.handrecords.publish import publish

    if lang not in ("en", "ru"):
        raise typer.BadParameter(f"{lang!r}: expected en or ru", param_hint="--lang")
    boards = _boards(source, from_fmt, skip_bad, first, 1)
    records = [b.record() for b in boards]
    with Progress(
        TextColumn("double dummy"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err
    ) as bar:
        task = bar.add_task("dd", total=len(records))
        paths = publish(
            records,
            out_dir,
            stem,
            gate=None,
            kinds=[k.strip() for k in kinds.split(",") if k.strip()],
            title=title,
            subtitle=subtitle,
            lang=lang,
            meta=ExportMeta(event=title),
            progress=lambda done, total: bar.update(task, completed=done),
        )
    for path in paths:
        out.print(f"wrote {path}", markup=False)


@export_app.command("boards")
def export_boards(
    source: Path = typer.Argument(..., help="The session's deals (any readable deal file)."),
    device: str | None = typer.Option(
        None, "--device", "-d", help="Machine: serial port or URL, tcp://HOST:PORT, usb:VID:PID or usb:PROFILE."
    ),
    simulate: bool = typer.Option(False, "--simulate", help="Make the boards on the built-in simulator."),
    faults: str = typer.Option("", "--faults", help="Simulator faults, e.g. 'wrong_pocket@2,jam@4:30'."),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory of the session output (journal)."),
    stem: str = typer.Option("session", "--name", help="Session name: the journal is NAME.journal.json."),
    first: int | None = typer.Option(None, "--first", min=1, help="Renumber boards from this number (Law 2)."),
    copies: int | None = typer.Option(None, "--copies", min=1, max=50, help="Copies per board (default: regulation)."),
    regulation: Path | None = typer.Option(None, "--regulation", help="Regulation TOML (copies)."),
    max_attempts: int = typer.Option(3, "--max-attempts", min=1, max=20, help="Tries per copy before stopping."),
    wait_operator: bool = typer.Option(
        False, "--wait-operator", help="After a foul copy, wait for Enter (the operator clears the machine)."
    ),
    from_fmt: str | None = FromOption,
    skip_bad: bool = SkipOption,
) -> None:
    """Make every copy of every board on a dealing machine, checking every card; resumable."""
    import asyncio

    from dealer.export.driver import DriverCopyMaker
    from dealer.export.journal import FoulCopy
    from dealer.export.machine import BoardMaker, MakeReport, Stage
    from dealer.export.machine import Progress as MakeProgress
    from drivers.machine import MachineDriver
    from drivers.simulator import SimulatorThread, VirtualMachine, parse_faults
    from drivers.transport import open_transport

    if (device is None) == (not simulate):
        raise typer.BadParameter("give either --device or --simulate", param_hint="--device")
    boards = _boards(source, from_fmt, skip_bad, first, _copies(copies, regulation))
    journal = out_dir / f"{stem}.journal.json"
    out_dir.mkdir(parents=True, exist_ok=True)

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err
    ) as bar:
        task = bar.add_task("starting", total=sum(b.copies for b in boards))

        def on_progress(p: MakeProgress) -> None:
            bar.update(
                task, completed=p.copies_done, description=f"board {p.index} of {p.total}, copy {p.copy} of {p.copies}"
            )
            if p.stage is Stage.FOUL and p.foul is not None:
                f = p.foul
                where = f" (card {f.card}, pocket {f.pocket}, belongs in {f.expected})" if f.card else ""
                bar.console.print(
                    Text("foul", style="red"),
                    f"board {f.board} copy {f.copy} try {f.attempt}: {f.reason}{where}",
                    soft_wrap=True,
                )

        async def before_remake(foul: FoulCopy) -> None:
            if wait_operator:
                await asyncio.to_thread(input, f"Clear the machine, then press Enter to re-make board {foul.board} ")

        async def run(url: str) -> MakeReport:
            driver = MachineDriver(lambda: open_transport(url))
            await driver.connect()
            try:
                maker = BoardMaker(
                    DriverCopyMaker(driver),
                    journal,
                    max_attempts=max_attempts,
                    on_progress=on_progress,
                    before_remake=before_remake,
                )
                return await maker.run_async(boards)
            finally:
                await driver.close()

        if simulate:
            machine = VirtualMachine(pace=0.5, faults=parse_faults(faults, seed=1))
            with SimulatorThread(machine, "pty") as sim:
                report = asyncio.run(run(sim.url))
        else:
            assert device is not None
            report = asyncio.run(run(device))
    out.print(
        f"{len(report.made)} copies made, {len(report.skipped)} already made earlier, {len(report.fouls)} foul "
        f"and re-made; journal {journal}",
        markup=False,
    )
