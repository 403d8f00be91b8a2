"""Entry point of the ``dealer`` command: exit 0 on success, 1 on failures, 2 on usage errors.

One path for every command line: the command line's language is chosen, only the module(s) that register the
typed command are imported (``COMMANDS``; every module for help of the root, ``--version`` and an unknown
command), and ``dealer.cli.kit`` parses and runs it. No library is imported at start: a command module imports
what it needs (rich for a progress bar or a table of its own, numpy, OpenCV, FastAPI, endplay) inside the
command that uses it, so every command, its help included, starts within a few times a bare ``python -c pass``
(``bench/bench_cli.py``).
"""

from __future__ import annotations

import importlib
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
    "dealer.cli.tls_cmds",
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
    "tls": ("dealer.cli.tls_cmds",),
}


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules to import for this command line: the typed command's, or all of them."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg.startswith("-"):
            if arg == "--version":
                return ()  # the root's own answer: no command module needed
            if arg in ("-h", "--help"):
                break
            skip = arg == "--lang"  # the root's one option with a value
            continue
        return COMMANDS.get(arg, COMMAND_MODULES)
    return COMMAND_MODULES


def run(argv: list[str]) -> int:
    """Run one command line (without the program's name); its exit code. Domain errors are printed as one line
    (``error: …``, exit 1)."""
    from dealer.core.errors import DealerError

    from .i18n import cli_language, error, set_language, word
    from .kit import run as run_kit
    from .root import app, print_error

    set_language(cli_language(argv))
    for module in modules_for(argv):
        importlib.import_module(module)
    try:
        return run_kit(app, argv)
    except DealerError as exc:
        print_error(error(exc))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("\n" + word("Aborted!") + "\n")
        return 1


def main() -> None:
    """Run ``sys.argv`` and exit with its code."""
    try:
        code = run(sys.argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (``| head``): exit 1 and say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the final flush writes nowhere
        code = 1
    sys.exit(code)


def script() -> None:
    """The ``dealer`` command and ``python -m dealer`` (a caller of ``main`` keeps its process going)."""
    main()


# Any: the root group and its helpers live in ``dealer.cli.root``; they are still reachable here, loaded on first
# use, for code and tests that knew them as ``dealer.cli.app``'s
def __getattr__(name: str) -> Any:
    if name in ("app", "fail"):
        from . import root

        return getattr(root, name)
    raise AttributeError(name)
