"""The full command line: the typer app every command module registers on, and its run (``run_full``).

``dealer.cli.app.main`` (the entry point) comes here for every command line its lean front door
(``dealer.cli.fast``) does not run itself. Start-up is still kept short: only the module(s) that register the
command typed (``COMMANDS``) are imported, and every command module imports heavy libraries (numpy, OpenCV,
FastAPI, endplay) inside the commands that use them. Help, ``--version`` and unknown commands import every
command module (still without those).
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


ERROR = {"word": "error:"}  # "ошибка:" when the command line speaks Russian (dealer/cli/i18n.py)


def run_full() -> None:
    """Run ``sys.argv`` through typer (exits through SystemExit, as click does)."""
    from .app import modules_for
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
