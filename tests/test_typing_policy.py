"""Typing policy: ``Any`` in ``dealer/`` only where a library forces it, each use saying why.

A use of ``typing.Any`` counts as explained when a comment starting ``# Any:`` stands on the same line or in
the block of comment-only lines just above it (``# Any: json.loads gives an unvalidated document``). The count of
unexplained uses may only go down: lower ``CEILING`` when you remove some, never raise it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dealer"
MARK = "# Any:"
MIN_REASON = 10  # characters of reason after the mark: "# Any:" alone explains nothing
CEILING = 0  # unexplained uses of Any in dealer/ as of this commit; it may only go down


@dataclass(frozen=True)
class AnyUse:
    path: str
    line: int


def _any_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to ``typing.Any`` (``from typing import Any as A``) and names bound to the typing module."""
    aliases: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("typing", "typing_extensions"):
            aliases |= {a.asname or a.name for a in node.names if a.name == "Any"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name in ("typing", "typing_extensions")}
    return aliases, modules


def _string_annotations(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Quoted annotations (``x: "dict[str, Any]"``), which the AST holds as plain strings."""
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            annotations = [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x]
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for ann in annotations:
            for sub in ast.walk(ann) if ann is not None else ():
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    yield sub.lineno, sub.value


def _uses_in(tree: ast.AST, aliases: set[str], modules: set[str], line_offset: int = 0) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases:
            yield node.lineno + line_offset
        value = node.value if isinstance(node, ast.Attribute) and node.attr == "Any" else None
        if isinstance(node, ast.Attribute) and isinstance(value, ast.Name) and value.id in modules:
            yield node.lineno + line_offset


def any_lines(source: str) -> list[int]:
    """Line numbers of every use of ``typing.Any`` in ``source`` (imports excluded, one entry per use)."""
    tree = ast.parse(source)
    aliases, modules = _any_names(tree)
    lines = list(_uses_in(tree, aliases, modules))
    for line, text in _string_annotations(tree):
        try:
            inner = ast.parse(text, mode="eval")
        except SyntaxError:
            continue
        lines += _uses_in(inner, aliases, modules, line - 1)
    return sorted(lines)


def comments(source: str) -> dict[int, str]:
    """Each line's comment text, from the tokenizer (a ``#`` inside a string is not a comment)."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string
    return out


def unexplained(source: str, path: str = "<source>") -> list[AnyUse]:
    notes = comments(source)
    text = source.splitlines()

    def gives_reason(comment: str) -> bool:
        return comment.startswith(MARK) and len(comment[len(MARK) :].strip()) >= MIN_REASON

    def explained(line: int) -> bool:
        if gives_reason(notes.get(line, "")):
            return True
        above = line - 1  # the block of comment-only lines just above, read upwards
        while above >= 1 and text[above - 1].lstrip().startswith("#"):
            if gives_reason(text[above - 1].strip()):
                return True
            above -= 1
        return False

    return [AnyUse(path, n) for n in any_lines(source) if not explained(n)]


def unexplained_in_package() -> list[AnyUse]:
    found: list[AnyUse] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += unexplained(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    return found


def test_the_counter_finds_every_kind_of_use() -> None:
    source = (
        "from typing import Any, cast\n"
        "import typing as t\n"
        "def f(x: Any, *a: Any, **k: 'dict[str, Any]') -> t.Any:\n"
        "    y: dict[str, Any] = {}  # Any: json.loads output before validation\n"
        "    # Any: the library's callback has no types\n"
        "    z = cast(Any, x)\n"
        "    w = cast(Any, x)  # noqa: just a comment, not an explanation\n"
        "    # Any: a reason may take\n"
        "    # two lines\n"
        "    v = cast(Any, x)\n"
        "\n"
        "    u = cast(Any, x)  # a blank line ends the block above\n"
        "    s = 'Any'  # a string in code is not a use: # Any: inside a string\n"
        "    r = cast(Any, x)  # Any:\n"
        "    return y, z, w, s\n"
    )
    assert any_lines(source) == [3, 3, 3, 3, 4, 6, 7, 10, 12, 14]
    assert [u.line for u in unexplained(source)] == [3, 3, 3, 3, 7, 12, 14]


def test_an_alias_and_a_file_without_typing_are_counted_right() -> None:
    assert any_lines("from typing import Any as A\nx: A = 1\ny: 'list[A]' = []\n") == [2, 3]
    assert any_lines("Any = object\nx: Any = 1\n") == []  # not typing's Any
    assert any_lines("x: 'Any' = 1\n") == []  # no typing import: a forward reference to some other Any


def test_unexplained_any_in_dealer_only_goes_down() -> None:
    found = unexplained_in_package()
    listing = "\n".join(f"{u.path}:{u.line}" for u in found)
    assert len(found) <= CEILING, (
        f"{len(found)} uses of Any in dealer/ without a '{MARK} why' comment (allowed {CEILING}): "
        f"type them precisely or say which library forces Any\n{listing}"
    )
