"""Entry point of the ``dealer`` command: exit 0 on success, 1 on failures, 2 on usage errors.

The commands officials type at a desk start at once: ``main`` first offers the command line to the lean front
door (``dealer.cli.fast``), which runs ``dealer --help``, ``board``, ``deal show``, ``bank status`` and
``regulation check`` without typer, rich or pydantic, printing what typer would print byte for byte. Anything
else, or any doubt, goes to the full typer app (``dealer.cli.root``), as does every command line when
``DEALER_CLI_FULL=1`` (the tests compare the two). Importing this module imports no library.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# Each command group lives in its own module and registers itself on ``app`` when imported.
COMMAND_MODULES = (
    "dealer.cli.deal_cmds",
    "dealer.cli.bank_cmds",
    "dealer.cli.bank_migrate_cmds",
    "dealer.cli.draw_cmds",
    "dealer.cli.custody_cmds",
    "dealer.cli.register_cmds",
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
    "custody": ("dealer.cli.custody_cmds",),
    "register": ("dealer.cli.register_cmds",),
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
FULL = "DEALER_CLI_FULL"  # "1": every command line through typer (the front door stands aside)


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules to import for this command line: the typed command's, or all of them."""
    for arg in argv:
        if arg.startswith("-"):
            if arg in ("-h", "--help", "--version"):
                break
            continue
        return COMMANDS.get(arg, COMMAND_MODULES)
    return COMMAND_MODULES


def main(leave_at_once: bool = False) -> None:
    """Run the command line; ``leave_at_once``: a light command, its output written and flushed (and its bank
    closed), ends the process without the interpreter's clean-up (which frees every object one by one: 16 ms
    after an import of 60,000 records)."""
    if os.environ.get(FULL) != "1":
        from .fast import run_light

        try:
            code = run_light(sys.argv[1:])
        except BrokenPipeError:  # the reader went away (``| head``): exit 1 and say nothing, as click does
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the final flush writes nowhere
            code = 1
        if code is not None:
            if leave_at_once:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
            sys.exit(code)
    from .root import run_full

    run_full()


def script() -> None:
    """The ``dealer`` command and ``python -m dealer`` (a caller of ``main`` keeps its process going)."""
    main(leave_at_once=True)


# Any: the typer app and its helpers (``app``, ``fail``, ``err``, ``ERROR``) live in ``dealer.cli.root``; they
# are still reachable here, loaded on first use, for code and tests that knew them as ``dealer.cli.app``'s
def __getattr__(name: str) -> Any:
    if name in ("app", "fail", "err", "ERROR"):
        from . import root

        return getattr(root, name)
    raise AttributeError(name)
