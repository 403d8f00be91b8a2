"""The help of a command or group as plain text, in the command line's language (loaded only to show help).

Layout: the usage line, the help text, then the arguments, the options and the commands, each a two-column list
(the names, then the help text wrapped to the console's width, with the default, the range, the environment
variable and whether it is required). Help texts are English in the command modules and looked up in the
catalogue (``help`` in ``dealer/cli/i18n/ru.json``) for Russian.
"""

from __future__ import annotations

import os
import textwrap

from .i18n import catalogue, language, word
from .kit import Command, Group, Param

INDENT = 2
MAX_LEFT = 28


def translated(text: str) -> str:
    """A help text in the command line's language (the English text is the catalogue's key)."""
    if language() != "ru":
        return text
    found = catalogue()["help"].get(text, text)
    return str(found)


def width() -> int:
    """The console's width for help: COLUMNS, else the terminal's, else 80 (at most 120)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return min(int(columns), 120)
    try:
        return min(os.get_terminal_size(1).columns, 120)
    except (OSError, ValueError):
        return 80


def usage_line(node: Command | Group, path: list[str]) -> str:
    parts = [word("Usage:"), *path, word("[OPTIONS]")]
    if isinstance(node, Group):
        parts.append(word("COMMAND [ARGS]..."))
    else:
        parts.extend(p.metavar() for p in node.params if not p.is_option)
    return " ".join(parts)


def _type_name(param: Param) -> str:
    name = f"<{param.type}>"
    if language() == "ru":
        return str(catalogue()["types"].get(name, name))
    return name


def _option_row(param: Param) -> tuple[str, str]:
    left = ", ".join(sorted(param.decls, key=len)) + "".join("/" + off for off in param.off)
    if not param.flag:
        left += " " + _type_name(param)
    notes = []
    if param.min is not None or param.max is not None:
        from .kit import _range

        notes.append(f"[{_range(param)}]")
    if param.envvar:
        notes.append(word("[env var: {}]").replace("{}", param.envvar))
    if param.required:
        notes.append(word("[required]"))
    elif param.default not in (None, False, "", (), []) and not param.flag:
        notes.append(word("[default: {}]").replace("{}", str(param.default)))
    return left, " ".join(x for x in (translated(param.help or ""), *(_kept(n) for n in notes)) if x)


def _kept(note: str) -> str:
    """A bracketed note as one word for wrapping (its spaces no-break until the lines are made)."""
    return note.replace(" ", NBSP)


NBSP = "\u00a0"


def _argument_row(param: Param) -> tuple[str, str]:
    notes = [word("[required]")] if param.required else []
    if not param.required and param.default not in (None, "", (), []):
        notes.append(word("[default: {}]").replace("{}", str(param.default)))
    return param.metavar(), " ".join(x for x in (translated(param.help or ""), *(_kept(n) for n in notes)) if x)


def _short(node: Command | Group) -> str:
    text = translated(node.help or "")
    return " ".join(text.split("\n\n")[0].split())


def _wrap(text: str, size: int) -> list[str]:
    """Lines of at most ``size`` characters, broken at spaces only (option names, paths and URLs stay whole)."""
    return textwrap.wrap(text, size, break_long_words=False, break_on_hyphens=False)


def _rows(title: str, rows: list[tuple[str, str]], total: int) -> list[str]:
    left_width = min(max(len(left) for left, _ in rows), MAX_LEFT)
    right_width = max(total - INDENT - left_width - 2, 20)
    out = ["", f"{word(title)}:"]
    for left, right in rows:
        lines = [line.replace(NBSP, " ") for line in _wrap(right, right_width)] or [""]
        if len(left) > left_width:
            out.append(" " * INDENT + left)
            out.extend(" " * (INDENT + left_width + 2) + line for line in lines if line)
            continue
        out.append(" " * INDENT + left.ljust(left_width) + "  " + lines[0])
        out.extend(" " * (INDENT + left_width + 2) + line for line in lines[1:])
    return out


def render_help(node: Command | Group, path: list[str]) -> str:
    """The whole help of ``node`` (reached by ``path``, the program's name first), ending with a newline."""
    total = width()
    out = [usage_line(node, path)]
    text = translated(node.help or "")
    for paragraph in text.split("\n\n"):
        out.append("")
        out.extend("  " + line for line in _wrap(" ".join(paragraph.split()), total - INDENT))
    arguments = [_argument_row(p) for p in node.params if not p.is_option]
    if arguments:
        out += _rows("Arguments", arguments, total)
    options = [_option_row(p) for p in node.params if p.is_option]
    options.append(("-h, --help", word("Show this message and exit.")))
    out += _rows("Options", options, total)
    if isinstance(node, Group) and node.commands:
        out += _rows("Commands", [(name, _short(sub)) for name, sub in sorted(node.commands.items())], total)
    return "\n".join(out) + "\n"
