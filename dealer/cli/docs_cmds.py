"""``dealer docs bank|draw|annex|boards|equipment|day|verify``: documents to print and sign.

fpdf2, the audit and the bank are imported inside the commands, so ``dealer --help`` stays quick.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from .i18n import error, language, os_reason, t
from .options import BankOption, KeysOption
from .root import app, fail

if TYPE_CHECKING:
    from dealer.documents.issue import Issued
    from dealer.regulation import Regulation

out = Console(highlight=False)
docs_app = typer.Typer(help="Documents to print and sign (PDF): bank act, draw protocol, boards, equipment, the day.")
app.add_typer(docs_app, name="docs", no_args_is_help=True)

DEFAULT_DIR = Path("var/documents")
DirOption = typer.Option(DEFAULT_DIR, "--dir", help="Folder of the issued documents (PDF and their JSON).")
LangOption = typer.Option(None, "--lang", help="ru or en (default: the config's language, then LANG, then ru).")
RegulationOption = typer.Option(None, "--regulation", help="The regulation file (tournament name, officials).")
ConfigOption = typer.Option(None, "--config", help="The service configuration (for its language).")
WitnessOption = typer.Option([], "--witness", help="A witness who signs too (repeat).")


def _lang(lang: str | None, config: Path | None) -> str:
    from dealer.i18n import LanguageError, resolve_language

    configured = None
    if config is not None or Path("config/service.toml").is_file():
        from dealer.web.config import load_config

        configured = load_config(config).language
    try:
        return resolve_language(lang, configured)
    except LanguageError as exc:
        raise fail(error(exc)) from exc


def _regulation(path: Path | None) -> Regulation:
    from dealer.regulation import load_regulation

    if path is None and Path("config/regulation.toml").is_file():
        path = Path("config/regulation.toml")
    return load_regulation(path)


def _report(issued: Issued) -> None:
    out.print(t("{path}  #{number}  {title}", path=issued.path, number=issued.number, title=issued.title), markup=False)
    out.print(
        t("SHA-256 {sha256}  (ledger entry {index})", sha256=issued.sha256, index=issued.ledger_index), markup=False
    )


@docs_app.command("bank")
def bank_cmd(
    witness: list[str] = WitnessOption,
    no_audit: bool = typer.Option(False, "--no-audit", help="Leave the fairness audit out (a large bank)."),
    lang: str | None = LangOption,
    directory: Path = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Акт формирования банка сдач: the bank formation act."""
    from dealer.documents.issuers import issue_bank_act

    from .options import open_bank

    language, reg = _lang(lang, config), _regulation(regulation)
    with open_bank(bank, keys) as b:
        _report(issue_bank_act(b, reg, language, directory, witness, audit=not no_audit))


@docs_app.command("draw")
def draw_cmd(
    label: str = typer.Argument(..., help="The session label of the draw."),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Протокол жеребьёвки: the draw protocol (no drawn deals: those are in the annex)."""
    from dealer.documents.issuers import issue_draw_protocol

    from .options import open_bank

    language, reg = _lang(lang, config), _regulation(regulation)
    with open_bank(bank, keys) as b:
        _report(issue_draw_protocol(b, reg, language, directory, label, witness))


@docs_app.command("annex")
def annex_cmd(
    label: str = typer.Argument(..., help="The session label of a revealed draw."),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """The draw protocol's sealed annex: the drawn deals as boards (only after the reveal)."""
    from dealer.documents.issuers import issue_draw_annex

    from .options import open_bank

    language, reg = _lang(lang, config), _regulation(regulation)
    with open_bank(bank, keys) as b:
        _report(issue_draw_annex(b, reg, language, directory, label, witness))


@docs_app.command("boards")
def boards_cmd(
    label: str = typer.Argument(..., help="The session label."),
    journal: Path | None = typer.Option(
        None, "--journal", help="The board-making journal (default: var/export/<session>/<session>.journal.json)."
    ),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Акт изготовления комплектов: the board-making act."""
    from dealer.documents.issuers import issue_boards_act
    from dealer.web.routes_export import session_slug

    from .options import open_bank

    if journal is None:
        slug = session_slug(label)
        journal = Path("var/export") / slug / f"{slug}.journal.json"
    language, reg = _lang(lang, config), _regulation(regulation)
    with open_bank(bank, keys) as b:
        _report(issue_boards_act(b, reg, language, directory, label, journal, witness))


@docs_app.command("equipment")
def equipment_cmd(
    session: str = typer.Argument(..., help="The session label the checks were recorded under."),
    witness: list[str] = WitnessOption,
    lang: str | None = LangOption,
    directory: Path = DirOption,
    regulation: Path | None = RegulationOption,
    config: Path | None = ConfigOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Акт проверки оборудования: the technical judge's equipment checks of a session."""
    from dealer.documents.issuers import issue_equipment_act

    from .options import open_bank

    language, reg = _lang(lang, config), _regulation(regulation)
    with open_bank(bank, keys) as b:
        _report(issue_equipment_act(b, reg, language, directory, session, witness))


@docs_app.command("day")
def day_cmd(
    day: str = typer.Option(..., "--date", help="The day, YYYY-MM-DD (local date of issue)."),
    lang: str | None = LangOption,
    directory: Path = DirOption,
    config: Path | None = ConfigOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Every document issued on a day, in one PDF with a table of contents."""
    from dealer.documents.issue import issue_day

    from .options import open_bank

    try:
        when = date.fromisoformat(day)
    except ValueError as exc:
        raise fail(t("--date {day!r}: expected YYYY-MM-DD", day=day)) from exc
    language = _lang(lang, config)
    with open_bank(bank, keys) as b:
        _report(issue_day(b, directory, when, language))


@docs_app.command("verify")
def verify_cmd(
    file: Path = typer.Argument(..., help="An issued document (PDF) to check against the ledger."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Check that a document file is exactly one the ledger recorded."""
    from hashlib import sha256

    from dealer.documents.issue import verify_file
    from dealer.i18n import Messages

    from .options import open_bank

    try:
        data = file.read_bytes()
    except OSError as exc:
        raise fail(t("{file}: cannot read: {reason}", file=file, reason=os_reason(exc))) from exc
    with open_bank(bank, keys) as b:
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
        "{file}: document #{number} ({doc}, {lang}) issued {ts}, ledger entry {index}",
        file=file,
        number=entry.data["number"],
        doc=entry.data["doc"],
        lang=entry.data["lang"],
        ts=Messages(language(), {}).when(entry.ts),
        index=entry.index,
    )
    out.print(text, markup=False)
