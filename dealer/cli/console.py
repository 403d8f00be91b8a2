"""Text for people on stdout or stderr: plain lines written as they are, rich only for what needs it.

A command prints its lines through ``Console.print``: text (no markup, no style) is written as it is, with its
control characters shown, not obeyed (``i18n.printable``); rich is imported only when a command prints one of
rich's renderables (a ``Table``, a styled ``Text``), markup, or hands the console to a progress bar (``rich``).
Light tables (``light.TableSpec``) are drawn here, in rich's default box, without rich. Machine output goes
through ``machine.py`` instead.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from .i18n import printable

if TYPE_CHECKING:
    import rich.console

    from .light import TableSpec


class Console:
    """A console for people (stdout, or stderr with ``stderr=True``)."""

    def __init__(self, stderr: bool = False, highlight: bool = False, markup: bool = True) -> None:
        self.stderr = stderr
        self.highlight = highlight
        self.markup = markup
        self._rich: rich.console.Console | None = None

    @property
    def file(self) -> TextIO:
        return sys.stderr if self.stderr else sys.stdout

    @property
    def is_terminal(self) -> bool:
        return terminal(self.file)

    @property
    def rich(self) -> rich.console.Console:
        """rich's console with the same settings (imported on first use: progress bars, tables, markup)."""
        if self._rich is None:
            from rich.console import Console as RichConsole

            self._rich = RichConsole(stderr=self.stderr, highlight=self.highlight, markup=self.markup)
        return self._rich

    # Any: what rich's ``Console.print`` takes (renderables, and its keyword settings)
    def print(self, *objects: Any, markup: bool | None = None, **settings: Any) -> None:
        plain = all(isinstance(o, str) for o in objects) and not settings.get("style")
        if plain and not (self.markup if markup is None else markup):
            stream = self.file
            stream.write(printable(" ".join(objects)) + settings.get("end", "\n"))
            stream.flush()
            return
        from .light import TableSpec

        if len(objects) == 1 and isinstance(objects[0], TableSpec):
            write_table(objects[0], self.file)
            return
        self.rich.print(*objects, markup=markup, **settings)


def terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (styles are written only to one; ``NO_COLOR`` turns them off)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def write_table(spec: TableSpec, stream: TextIO) -> None:
    """A table of text in rich's default box (padding 1, title centred, bold header on a terminal)."""
    styled = terminal(stream)
    header = tuple(printable(c) for c in spec.header) if spec.header else None
    body = [tuple(printable(c) for c in cells) for cells in spec.rows]
    rows = [*([header] if header else []), *body]
    columns = max(len(row) for row in rows)
    sizes = [max(len(row[c]) if c < len(row) else 0 for row in rows) for c in range(columns)]
    total = sum(sizes) + 3 * columns + 1

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (size + 2) for size in sizes) + right + "\n"

    def row(cells: tuple[str, ...], bar: str, bold: bool) -> str:
        parts = []
        for cell, size in zip(cells, sizes, strict=False):
            text = cell.rjust(size) if spec.right else cell.ljust(size)
            parts.append(f"\x1b[1m \x1b[0m\x1b[1m{text}\x1b[0m\x1b[1m \x1b[0m" if bold else f" {text} ")
        return bar + bar.join(parts) + bar + "\n"

    title = printable(spec.title.strip())
    left = max((total - len(title)) // 2, 0)
    title = " " * left + title + " " * max(total - len(title) - left, 0)
    out = (f"\x1b[3m{title}\x1b[0m" if styled else title) + "\n"
    if header:
        out += line("┏", "━", "┳", "┓") + row(header, "┃", styled) + line("┡", "━", "╇", "┩")
    else:
        out += line("┌", "─", "┬", "┐")
    out += "".join(row(cells, "│", False) for cells in body)
    out += line("└", "─", "┴", "┘")
    stream.write(out)
    stream.flush()
