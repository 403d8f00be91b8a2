"""Entry point of the ``dealer`` command: exit 0 on success, 1 on failures, 2 on usage errors.

Start-up is kept short: ``main`` imports only the module(s) that register the command typed (``COMMANDS``),
and every command module imports heavy libraries (numpy, OpenCV, FastAPI, endplay) inside the commands that
use them. Help, ``--version`` and unknown commands import every command module (still without those).
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console
from rich.markup import escape

from dealer import __version__
from dealer.core.errors import DealerError

app = typer.Typer(
    name="dealer",
    help="Dealing side of sports-bridge tournaments: machines, scanners, the deal bank, the draw, export.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
err = Console(stderr=True, highlight=False, markup=False)  # data (file names, file text) is never markup

# Each command group lives in its own module and registers itself on ``app`` when imported.
COMMAND_MODULES = (
    "dealer.cli.deal_cmds",
    "dealer.cli.bank_cmds",
    "dealer.cli.bank_migrate_cmds",
    "dealer.cli.draw_cmds",
    "dealer.cli.audit_cmds",
    "dealer.cli.export_cmds",
    "dealer.cli.device_cmds",
    "dealer.cli.simulate_cmds",
    "dealer.cli.scanner_cmds",
    "dealer.cli.serve_cmds",
    "dealer.cli.docs_cmds",
    "dealer.cli.relay_cmds",
)
# Top-level command name -> the modules that register it and its subcommands (a test checks this is complete).
COMMANDS: dict[str, tuple[str, ...]] = {
    "deal": ("dealer.cli.deal_cmds",),
    "regulation": ("dealer.cli.deal_cmds",),
    "board": ("dealer.cli.deal_cmds",),
    "bank": ("dealer.cli.bank_cmds", "dealer.cli.bank_migrate_cmds", "dealer.cli.audit_cmds"),
    "draw": ("dealer.cli.draw_cmds",),
    "audit": ("dealer.cli.audit_cmds",),
    "export": ("dealer.cli.export_cmds",),
    "convert": ("dealer.cli.export_cmds",),
    "formats": ("dealer.cli.export_cmds",),
    "machine": ("dealer.cli.device_cmds",),
    "devices": ("dealer.cli.device_cmds",),
    "simulate": ("dealer.cli.simulate_cmds",),
    "scanner": ("dealer.cli.scanner_cmds",),
    "serve": ("dealer.cli.serve_cmds",),
    "docs": ("dealer.cli.docs_cmds",),
    "relay": ("dealer.cli.relay_cmds",),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dealer {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="Language of help and errors: ru or en (default: the config's language, then LANG, then ru).",
    ),
) -> None:
    """Dealing side of sports-bridge tournaments."""


def fail(message: str) -> typer.Exit:
    """Print an error on stderr and return the exit to raise (code 1)."""
    err.print(f"[bold red]{ERROR['word']}[/] {escape(message)}", markup=True, soft_wrap=True)  # messages quote data
    return typer.Exit(1)


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules to import for this command line: the typed command's, or all of them."""
    for arg in argv:
        if arg.startswith("-"):
            if arg in ("-h", "--help", "--version"):
                break
            continue
        return COMMANDS.get(arg, COMMAND_MODULES)
    return COMMAND_MODULES


ERROR = {"word": "error:"}  # "ошибка:" when the command line speaks Russian (dealer/cli/i18n.py)


def main() -> None:
    from .i18n import catalogue, cli_language, error, localize, set_language

    for module in modules_for(sys.argv[1:]):
        importlib.import_module(module)
    lang = cli_language(sys.argv[1:])
    set_language(lang)
    if lang == "ru":
        ERROR["word"] = catalogue()["framework"]["error:"]
    command = typer.main.get_command(app)
    localize(command, lang)
    try:
        command()
    except DealerError as exc:
        err.print(f"[bold red]{ERROR['word']}[/] {escape(error(exc))}", markup=True, soft_wrap=True)
        sys.exit(1)
