"""Entry point of the ``dealer`` command: exit 0 on success, 1 on failures, 2 on usage errors."""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

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
err = Console(stderr=True, highlight=False)

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
    "dealer.cli.relay_cmds",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dealer {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """Dealing side of sports-bridge tournaments."""


def fail(message: str) -> typer.Exit:
    """Print an error on stderr and return the exit to raise (code 1)."""
    err.print(f"[bold red]error:[/] {message}", markup=True, soft_wrap=True)
    return typer.Exit(1)


def main() -> None:
    for module in COMMAND_MODULES:
        importlib.import_module(module)
    try:
        app()
    except DealerError as exc:
        err.print(f"[bold red]error:[/] {exc}", markup=True, soft_wrap=True)
        sys.exit(1)
