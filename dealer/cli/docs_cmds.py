"""``dealer docs bank|draw|annex|boards|equipment|day|verify``: documents to print and sign.

fpdf2, the audit and the bank are imported inside the commands, so ``dealer --help`` stays quick.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from . import kit
from .console import Console
from .event import Event, EventOption, find_event, say_regulation
from .i18n import error, language, os_reason, t
from .options import KeysOption
from .root import app, fail

if TYPE_CHECKING:
    from dealer.bank.repository import BankRepository
    from dealer.documents.issue import Issued

out = Console(highlight=False)
docs_app = kit.Group(help="Documents to print and sign (PDF): bank act, draw protocol, boards, equipment, the day.")
app.add_group(docs_app, name="docs", no_args_is_help=True)

DirOption = kit.Option(
    None, "--dir", help="Folder of the issued documents (PDF and their JSON; default: the event's var/documents)."
)
BankOption = kit.Option(
    None, "--bank", help="The bank: a SQLite file, or a postgresql://user@host/db URL (default: the event's)."
)
LangOption = kit.Option(None, "--lang", help="ru or en (default: the config's language, then LANG, then ru).")
RegulationOption = kit.Option(None, "--regulation", help="The regulation file (tournament name, officials).")
ConfigOption = kit.Option(
    None, "--config", help="The service configuration (its language, regulation, bank; default: the event's)."
)
WitnessOption = kit.Option([], "--witness", help="A witness who signs too (repeat).")


def _lang(lang: str | None, ev: Event) -> str:
    """--lang, else the event's configuration's language (when it has a file), else LANG, else Russian."""
    from dealer.i18n import LanguageError, resolve_language

    configured = ev.config.language if ev.config_file is not None else None
    try:
        return resolve_language(lang, configured)
    except LanguageError as exc:
        raise fail(error(exc)) from exc


def _event(event: Path | None, regulation: Path | None, config: Path | None, say: bool = True) -> Event:
    ev = find_event(event, regulation, config)
    if say:
        say_regulation(ev)
    return ev


def _open(ev: Event, bank: Path | None, keys: Path | None) -> BankRepository:
    from .options import open_bank

    if bank is not None:
        return open_bank(bank, keys)
    return open_bank(ev.bank, keys if keys is not None else ev.keys)


def _report(issued: Issued) -> None:
    out.print(t("{path}  #{number}  {title}", path=issued.path, number=issued.number, title=issued.title), markup=False)
    out.print(
        t("SHA-256 {sha256}  (ledger entry {index})", sha256=issued.sha256, index=issued.ledger_index), markup=False
    )


@docs_app.command("bank")
def bank_cmd(
    witness: list[str] = WitnessOption,
    no_audit: bool = kit.Option(False, "--no-audit", help="Leave the fairness audit out (a large bank)."),
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Акт формирования банка сдач: the bank formation act."""
    from dealer.documents.issuers import issue_bank_act

    ev = _event(event, regulation, config)
    language, reg, directory = _lang(lang, ev), ev.regulation, directory or ev.documents_dir
    with _open(ev, bank, keys) as b:
        _report(issue_bank_act(b, reg, language, directory, witness, audit=not no_audit))


@docs_app.command("draw")
def draw_cmd(
    label: str = kit.Argument(..., help="The session label of the draw."),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Протокол жеребьёвки: the draw protocol (no drawn deals: those are in the annex)."""
    from dealer.documents.issuers import issue_draw_protocol

    ev = _event(event, regulation, config)
    language, reg, directory = _lang(lang, ev), ev.regulation, directory or ev.documents_dir
    with _open(ev, bank, keys) as b:
        _report(issue_draw_protocol(b, reg, language, directory, label, witness))


@docs_app.command("annex")
def annex_cmd(
    label: str = kit.Argument(..., help="The session label of a revealed draw."),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """The draw protocol's sealed annex: the drawn deals as boards (only after the reveal)."""
    from dealer.documents.issuers import issue_draw_annex

    ev = _event(event, regulation, config)
    language, reg, directory = _lang(lang, ev), ev.regulation, directory or ev.documents_dir
    with _open(ev, bank, keys) as b:
        _report(issue_draw_annex(b, reg, language, directory, label, witness))


@docs_app.command("boards")
def boards_cmd(
    label: str = kit.Argument(..., help="The session label."),
    journal: Path | None = kit.Option(
        None,
        "--journal",
        help="The board-making journal (default: the consoles' one, var/export/<session>-<id>/<session>.journal.json).",
    ),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Акт изготовления комплектов: the board-making act."""
    from dealer.documents.issuers import issue_boards_act
    from dealer.export.names import board_journal

    ev = _event(event, regulation, config)
    if journal is None:  # where the consoles wrote it, in the event's var/
        journal = board_journal(ev.var_dir, label)
    language, reg, directory = _lang(lang, ev), ev.regulation, directory or ev.documents_dir
    with _open(ev, bank, keys) as b:
        _report(issue_boards_act(b, reg, language, directory, label, journal, witness))


@docs_app.command("equipment")
def equipment_cmd(
    session: str = kit.Argument(..., help="The session label the checks were recorded under."),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Акт проверки оборудования: the technical judge's equipment checks of a session."""
    from dealer.documents.issuers import issue_equipment_act

    ev = _event(event, regulation, config)
    language, reg, directory = _lang(lang, ev), ev.regulation, directory or ev.documents_dir
    with _open(ev, bank, keys) as b:
        _report(issue_equipment_act(b, reg, language, directory, session, witness))


@docs_app.command("closed")
def closed_cmd(
    session: str = kit.Argument(..., help="The session's name on the act (variant 1: its boards file holds one)."),
    witness: list[str] = WitnessOption,
    no_audit: bool = kit.Option(False, "--no-audit", help="Leave the randomness audit of the boards out."),
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Акт закрытой сдачи (variant 1): the event's boards file checked against the ledger, with the audit."""
    from dealer.app.closed import ClosedBoards
    from dealer.documents.issuers import issue_closed_act

    ev = _event(event, regulation, config)
    language, reg, directory = _lang(lang, ev), ev.regulation, directory or ev.documents_dir
    boards = ClosedBoards(ev.var_dir / "boards" / "closed.jsonl", reg.boards_per_session, reg.copies)
    deals = [] if no_audit else boards.audit_deals()
    with _open(ev, bank, keys) as b:
        _report(issue_closed_act(b, reg, language, directory, session, boards.records(), deals, witness))


@docs_app.command("day")
def day_cmd(
    day: str = kit.Option(..., "--date", help="The day, YYYY-MM-DD (local date of issue)."),
    lang: str | None = LangOption,
    directory: Path | None = DirOption,
    config: Path | None = ConfigOption,
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Every document issued on a day, in one PDF with a table of contents."""
    from dealer.documents.issue import issue_day

    try:
        when = date.fromisoformat(day)
    except ValueError as exc:
        raise fail(t("--date {day!r}: expected YYYY-MM-DD", day=day)) from exc
    ev = _event(event, None, config, say=False)
    language = _lang(lang, ev)
    with _open(ev, bank, keys) as b:
        _report(issue_day(b, directory or ev.documents_dir, when, language))


@docs_app.command("verify")
def verify_cmd(
    file: Path = kit.Argument(..., help="An issued document (PDF) to check against the ledger."),
    bank: Path | None = BankOption,
    keys: Path | None = KeysOption,
    event: Path | None = EventOption,
) -> None:
    """Check that a document file is exactly one the ledger recorded."""
    from hashlib import sha256

    from dealer.documents.issue import verify_file
    from dealer.i18n import Messages

    try:
        data = file.read_bytes()
    except OSError as exc:
        raise fail(t("{file}: cannot read: {reason}", file=file, reason=os_reason(exc))) from exc
    with _open(find_event(event), bank, keys) as b:
        entry = verify_file(b, data)
    if entry is None:
        raise fail(
            t(
                "{file}: SHA-256 {sha256} is not recorded in the ledger: not an issued document",
                file=file,
                sha256=sha256(data).hexdigest(),
            )
        )
    text = t(
        "{file}: {title} No. {number} ({language}) issued {ts}, ledger entry {index}",
        file=file,
        title=entry.data.get("title") or entry.data["doc"],
        number=entry.data["number"],
        language=t("in Russian") if entry.data["lang"] == "ru" else t("in English"),
        ts=Messages(language(), {}).when(entry.ts),
        index=entry.index,
    )
    out.print(text, markup=False)
