"""``dealer convert`` and ``dealer export files|boards|handrecords``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dealer.fsutil import MAX_INPUT_BYTES, write_atomic

from . import kit
from .console import Console
from .event import Event, EventOption
from .i18n import error, language, t
from .root import app, fail

if TYPE_CHECKING:  # the formats and the export load inside the commands (the command line starts without them)
    from dealer.export.boards import SessionBoard
    from dealer.formats.base import ExportMeta, ReadResult

out = Console(highlight=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)
export_app = kit.Group(
    help="Export a session: deal files, boards made on a machine, hand records.", no_args_is_help=True
)
app.add_group(export_app, name="export")

# the formats' own descriptions are English (their modules are shared with the importer): the Russian ones here
FORMAT_DESCRIPTIONS = {
    "ber": "BER: 52 цифры на коробку, место каждой карты (Bernasconi)",
    "bhg": "BHG: строка из 52 букв на коробку, руки начиная со сдающего (Borel)",
    "bri": "BRI: записи по 128 байт, номера карт N, E, S (Duplimate)",
    "csv": "CSV: 16 мастей, коробка, сдающий/зональность (электронные таблицы)",
    "dge": "DGE: записи по 128 байт, руки с байтами символов мастей (старые программы сдачи)",
    "dlm": "DLM: файл сдач Duplimate (Jannersten) для Windows, Show или Sealed",
    "dup": "DUP: записи по 156 байт, BRI + DGE + хвост (Duplimate DOS)",
    "json": "JSON: собственный описанный формат файла сдач bridge-dealer",
    "lin": "LIN Bridge Base Online (сдачи; прочие ключи BBO пропускаются)",
    "pbn": "Portable Bridge Notation 2.1 (tistis.nl/pbn): терпимый импорт, строгий экспорт",
}

FromOption = kit.Option(None, "--from", help="Input format (default: from the file's extension).")
SkipOption = kit.Option(False, "--skip-bad", help="Go on without the boards that cannot be read (listed).")


def _read(path: Path, fmt: str | None, skip_bad: bool, max_size: int = MAX_INPUT_BYTES // 2**20) -> ReadResult:
    from dealer.export.files import read_deal_file

    result = read_deal_file(path, fmt, max_size * 2**20)
    for problem in result.problems:  # file names and file text are data: escaped, never taken as markup
        where = error(problem.where_phrase())
        from rich.text import Text

        err.print(Text(f"{path}: {where}:", style="yellow"), error(problem.reason_phrase()), soft_wrap=True)
    if result.problems and not skip_bad:
        n = len(result.problems)
        raise fail(t("{path}: {n} boards cannot be read; fix the file or pass --skip-bad", path=path, n=n))
    if not result.records:
        raise fail(t("{path}: no boards in the file", path=path))
    return result


def _boards(path: Path, fmt: str | None, skip_bad: bool, first: int | None, copies: int) -> list[SessionBoard]:
    from dealer.export.boards import boards_from_records

    return boards_from_records(_read(path, fmt, skip_bad).records, copies=copies, first=first)


@app.command("convert")
def convert(
    source: Path = kit.Argument(..., help="Deal file to read (any readable format)."),
    target: Path = kit.Argument(..., help="Deal file to write."),
    from_fmt: str | None = FromOption,
    to_fmt: str | None = kit.Option(None, "--to", help="Output format (default: from the file's extension)."),
    event: str = kit.Option("", "--event", help="Event name written where the format has one."),
    sealed: bool = kit.Option(False, "--sealed", help="DLM: Status=Sealed (the operator screen hides the deals)."),
    copies: int = kit.Option(1, "--copies", min=1, max=50, help="Copies per board (DLM Duplicates, DUP)."),
    skip_bad: bool = SkipOption,
    max_size: int = kit.Option(
        MAX_INPUT_BYTES // 2**20, "--max-size", min=1, help="Largest file to read, in MiB (raise it for huge files)."
    ),
) -> None:
    """Convert a deal file from any readable format to any writable one."""
    from dealer.formats import ExportMeta, by_name, by_path, load_all
    from dealer.formats.base import FormatError

    load_all()
    result = _read(source, from_fmt, skip_bad, max_size)
    fmt = by_name(to_fmt) if to_fmt else by_path(str(target))
    if not fmt.can_write:
        raise FormatError("format {name} can be read but not written", name=fmt.name)
    data = fmt.write(result.records, ExportMeta(event=event, sealed=sealed, copies=copies))
    write_atomic(target, data)
    out.print(
        t(
            "{n} boards: {source} → {target} ({format})",
            n=len(result.records),
            source=source,
            target=target,
            format=fmt.name,
        ),
        markup=False,
    )


@app.command("formats")
def list_formats() -> None:
    """List the deal-file formats."""
    from dealer.formats import formats, load_all

    load_all()
    for name, fmt in sorted(formats().items()):
        modes = (t("r") if fmt.can_read else "-") + (t("w") if fmt.can_write else "-")  # reads, writes
        description = FORMAT_DESCRIPTIONS.get(name, fmt.description) if language() == "ru" else fmt.description
        out.print(f"{name:5} {modes}  .{', .'.join(fmt.extensions):12} {description}", markup=False, soft_wrap=True)


def _event(regulation: Path | None, event: Path | None) -> Event:
    """The event (its folder, its regulation: named on stderr)."""
    from .event import find_event, say_regulation

    ev = find_event(event, regulation)
    say_regulation(ev)
    return ev


def _stem(name: str | None, names: tuple[str, ...], word: str) -> str:
    """``--name`` as given; else the first of ``names`` given, as a file stem (Cyrillic kept, the rule of
    dealer.export.names), else ``word`` (the files' name in the command line's language)."""
    from dealer.export.names import session_slug

    if name is not None:
        return name
    return session_slug(next((n for n in names if n.strip()), ""), fallback=word)


def _meta(ev: Event, meta: ExportMeta) -> ExportMeta:
    """PBN's Site and Date from the event's regulation where the command gave none (as the consoles' export)."""
    from dealer.export.names import competition_meta

    return competition_meta(ev.regulation, meta)


def _copies(copies: int | None, ev: Event) -> int:
    """The copies of each board: the event's regulation's, or ``--copies`` — flagged when it differs from it."""
    if copies is None:
        return ev.regulation.copies
    if copies != ev.regulation.copies:
        text = t(
            "--copies {copies} differs from the regulation's {reg} copies of each board",
            copies=copies,
            reg=ev.regulation.copies,
        )
        from rich.text import Text

        err.print(Text(t("warning: {text}", text=text), style="yellow"), soft_wrap=True)
    return copies


@export_app.command("files")
def export_files(
    source: Path = kit.Argument(..., help="The session's deals (any readable deal file)."),
    out_dir: Path = kit.Option(Path("."), "--out", "-o", help="Directory to write into."),
    stem: str | None = kit.Option(
        None, "--name", help="File name without extension (default: the event's name, else «session»)."
    ),
    to: str = kit.Option("dlm,dup,pbn", "--formats", help="Comma-separated formats to write."),
    first: int | None = kit.Option(None, "--first", min=1, help="Renumber boards from this number (Law 2)."),
    copies: int | None = kit.Option(None, "--copies", min=1, max=50, help="Copies per board (default: regulation)."),
    regulation: Path | None = kit.Option(None, "--regulation", help="Regulation TOML (default: the event's)."),
    event: str = kit.Option("", "--event", help="Event name written where the format has one."),
    site: str = kit.Option("", "--site", help="Site (venue) written where the format has one (PBN Site)."),
    date: str = kit.Option("", "--date", help="YYYY.MM.DD"),
    sealed: bool = kit.Option(True, "--sealed/--show", help="DLM status: Sealed (default) or Show."),
    from_fmt: str | None = FromOption,
    skip_bad: bool = SkipOption,
) -> None:
    """Write the session as deal files for other software (closed machines: DLM sealed, DUP, PBN)."""
    from dealer.export.files import write_session_files
    from dealer.formats import ExportMeta

    # the event folder: DEALER_EVENT or the current one (--event names the event in the files here)
    ev = _event(regulation, None)
    boards = _boards(source, from_fmt, skip_bad, first, _copies(copies, ev))
    names = [n.strip() for n in to.split(",") if n.strip()]
    event = event or ev.regulation.title
    meta = _meta(ev, ExportMeta(event=event, site=site, date=date, sealed=sealed, copies=boards[0].copies))
    stem = _stem(stem, (event,), t("session"))
    for path in write_session_files(boards, out_dir, stem, names, meta):
        out.print(t("wrote {path}", path=path), markup=False)


@export_app.command("handrecords")
def export_handrecords(
    source: Path = kit.Argument(..., help="The session's deals (any readable deal file; already public)."),
    out_dir: Path = kit.Option(Path("."), "--out", "-o", help="Directory to write into."),
    stem: str | None = kit.Option(
        None, "--name", help="File name without extension (default: the title, then «handrecords»)."
    ),
    kinds: str = kit.Option("html,pdf,pbn", "--formats", help="Any of html, pdf, pbn, comma-separated."),
    title: str = kit.Option("", "--title", help="Title of the document."),
    subtitle: str = kit.Option("", "--subtitle", help="Second line: date, session, place."),
    lang: str | None = kit.Option(None, "--lang", help="ru or en (default: the command line's language)."),
    first: int | None = kit.Option(None, "--first", min=1, help="Renumber boards from this number (Law 2)."),
    regulation: Path | None = kit.Option(None, "--regulation", help="Regulation TOML (default: the event's)."),
    from_fmt: str | None = FromOption,
    skip_bad: bool = SkipOption,
) -> None:
    """Hand records with double-dummy tables and par (HTML, PDF, PBN).

    A deal file named here is public already; publishing a drawn session from the bank goes through
    the reveal gate of ``dealer.handrecords.publish``.
    """
    from dealer.formats import ExportMeta
    from dealer.handrecords.publish import publish

    if lang is None:
        lang = language()
    if lang not in ("en", "ru"):
        raise kit.BadParameter(t("{value!r}: expected ru or en", value=lang), param_hint="--lang")
    ev = _event(regulation, None)  # the event folder: DEALER_EVENT or the current one
    boards = _boards(source, from_fmt, skip_bad, first, 1)
    records = [b.record() for b in boards]
    named = title or ev.regulation.title
    if stem is None:  # as the consoles name them: «Чемпионат.расклады.pdf» (the title's, else the word alone)
        word = t("handrecords")
        stem = f"{_stem(None, (named,), '')}.{word}".lstrip(".")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(t("double dummy")), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err.rich
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
            meta=_meta(ev, ExportMeta(event=named)),
            progress=lambda done, total: bar.update(task, completed=done),
        )
    for path in paths:
        out.print(t("wrote {path}", path=path), markup=False)


@export_app.command("boards")
def export_boards(
    source: Path = kit.Argument(..., help="The session's deals (any readable deal file)."),
    device: str | None = kit.Option(
        None, "--device", "-d", help="Machine: serial port or URL, tcp://HOST:PORT, usb:VID:PID or usb:PROFILE."
    ),
    simulate: bool = kit.Option(False, "--simulate", help="Make the boards on the built-in simulator."),
    faults: str = kit.Option("", "--faults", help="Simulator faults, e.g. 'wrong_pocket@2,jam@4:30'."),
    out_dir: Path = kit.Option(Path("."), "--out", "-o", help="Directory of the session output (journal)."),
    stem: str | None = kit.Option(
        None,
        "--name",
        help="Session name: the journal is NAME.journal.json (default: the event's name, else «session»).",
    ),
    first: int | None = kit.Option(None, "--first", min=1, help="Renumber boards from this number (Law 2)."),
    copies: int | None = kit.Option(None, "--copies", min=1, max=50, help="Copies per board (default: regulation)."),
    regulation: Path | None = kit.Option(None, "--regulation", help="Regulation TOML (default: the event's)."),
    event: Path | None = EventOption,
    max_attempts: int = kit.Option(3, "--max-attempts", min=1, max=20, help="Tries per copy before stopping."),
    wait_operator: bool = kit.Option(
        False, "--wait-operator", help="After a foul copy, wait for Enter (the operator clears the machine)."
    ),
    from_fmt: str | None = FromOption,
    skip_bad: bool = SkipOption,
) -> None:
    """Make every copy of every board on a dealing machine, checking every card; resumable."""
    import asyncio

    from dealer.app.exports import make_boards
    from dealer.export.journal import FoulCopy
    from dealer.export.machine import Progress as MakeProgress
    from dealer.export.machine import Stage

    if (device is None) == (not simulate):
        raise kit.BadParameter(t("give either --device or --simulate"), param_hint="--device")
    ev = _event(regulation, event)
    boards = _boards(source, from_fmt, skip_bad, first, _copies(copies, ev))
    stem = _stem(stem, (ev.regulation.title,), t("session"))
    journal = out_dir / f"{stem}.journal.json"  # its folder is made by make_boards

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.text import Text

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err.rich
    ) as bar:
        task = bar.add_task(t("starting"), total=sum(b.copies for b in boards))

        def on_progress(p: MakeProgress) -> None:
            description = t(
                "board {index} of {total}, copy {copy} of {copies}",
                index=p.index,
                total=p.total,
                copy=p.copy,
                copies=p.copies,
            )
            bar.update(task, completed=p.copies_done, description=description)
            if p.stage is Stage.FOUL and p.foul is not None:
                f = p.foul
                where = (
                    " "
                    + t(
                        "(card {card}, pocket {pocket}, belongs in {expected})",
                        card=f.card,
                        pocket=f.pocket,
                        expected=f.expected,
                    )
                    if f.card
                    else ""
                )
                bar.console.print(
                    Text(t("foul"), style="red"),
                    t(
                        "board {board} copy {copy} try {attempt}: {reason}",
                        board=f.board,
                        copy=f.copy,
                        attempt=f.attempt,
                        reason=error(f.reason_phrase()),
                    )
                    + where,
                    soft_wrap=True,
                )

        async def before_remake(foul: FoulCopy) -> None:
            if wait_operator:
                await asyncio.to_thread(
                    input, t("Clear the machine, then press Enter to re-make board {board} ", board=foul.board)
                )

        target = "simulator" if simulate else device
        assert target is not None
        done = asyncio.run(
            make_boards(target, boards, journal, max_attempts=max_attempts, on_progress=on_progress,
                        before_remake=before_remake, pace=0.5, faults=faults, seed=1)
        )  # the director's console's board making, its per-copy watchdog included  # fmt: skip
        report = done.report
    if done.machine is not None:  # the machine goes into the journal, for the board-making act
        import dataclasses
        import json

        doc = json.loads(journal.read_text(encoding="utf-8"))
        doc["machine"] = dataclasses.asdict(done.machine)
        write_atomic(journal, (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    parts = [
        t("{n} copies made", n=len(report.made)),
        t("{n} already made earlier", n=len(report.skipped)),
        t("{n} foul and re-made", n=len(report.fouls)),
    ]
    out.print(", ".join(parts) + "; " + t("journal {journal}", journal=journal), markup=False)
