"""Every error template written in ``dealer/`` and ``drivers/``, found by walking the syntax trees (for the
catalogue tests).

An error is built as ``SomeError("English template {field}", field=value)`` where ``SomeError`` is
``DealerError`` or one of its subclasses (found by walking the class definitions), or as a
``Phrase("words")`` used inside an error's params. The template must be a literal string (or a conditional
expression choosing between literals): anything else is a *bad site*. Classes that put a fixed prefix before
every template (``PREFIX = "{source}: "``) have it added; ``CardTokenError(token, position, reason)`` takes
its template from ``reason`` + its ``SUFFIX``; the other classes with their own ``__init__`` build their
templates inside it (``super().__init__("…", …)``, walked as well).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEALER = ROOT / "dealer"
DRIVERS = ROOT / "drivers"  # the device code (imports dealer.core only): its errors reach people as well
# bank branch converts these: its raise sites follow the same convention after the merge (remove then).
EXEMPT: tuple[str, ...] = ()


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    templates: tuple[str, ...]  # empty: not a literal template (a bad site)
    source: str


def _trees() -> dict[str, ast.Module]:
    files = [*DEALER.rglob("*.py"), *DRIVERS.rglob("*.py")]
    return {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8")) for p in files}


def _base_names(node: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases]


def _error_classes(trees: dict[str, ast.Module]) -> dict[str, ast.ClassDef]:
    classes: dict[str, ast.ClassDef] = {}
    known = {"DealerError"}
    changed = True
    while changed:
        changed = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in known and set(_base_names(node)) & known:
                    known.add(node.name)
                    classes[node.name] = node
                    changed = True
    return classes


def _class_constant(classes: dict[str, ast.ClassDef], name: str, attr: str) -> str:
    """A string class attribute (``PREFIX``), looked up through the error base classes."""
    node = classes.get(name)
    if node is None:
        return ""
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in stmt.targets):
            assert isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
            return stmt.value.value
    for base in _base_names(node):
        found = _class_constant(classes, base, attr)
        if found:
            return found
    return ""


def _own_init(classes: dict[str, ast.ClassDef], name: str) -> ast.FunctionDef | None:
    node = classes.get(name)
    if node is None:
        return None
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            return stmt
    for base in _base_names(node):
        found = _own_init(classes, base)
        if found is not None:
            return found
    return None


def literals(node: ast.expr) -> tuple[str, ...]:
    """The template(s) a literal (or ``a if c else b`` of literals) gives; () when it is not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.IfExp):
        a, b = literals(node.body), literals(node.orelse)
        return a + b if a and b else ()
    return ()


def _takes_template(init: ast.FunctionDef | None) -> bool:
    if init is None:
        return True
    args = [*init.args.posonlyargs, *init.args.args]
    return len(args) >= 2 and args[1].arg == "template"


def _segment(lines: list[bytes], node: ast.expr) -> str:
    """The node's source text, as ``ast.get_source_segment`` gives it, from the file's lines split once (that
    function splits the whole file again on every call: minutes for the ten thousand calls of the tree)."""
    if node.end_lineno is None or node.end_col_offset is None:
        return ""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first][node.col_offset : node.end_col_offset].decode("utf-8")
    middle = b"".join(lines[first + 1 : last])
    return (lines[first][node.col_offset :] + middle + lines[last][: node.end_col_offset]).decode("utf-8")


@functools.cache
def sites() -> list[Site]:
    """Walked once per test process (two tests read it; neither changes it)."""
    trees = _trees()
    classes = _error_classes(trees)
    found: list[Site] = []
    for path, tree in sorted(trees.items()):
        if path.startswith(EXEMPT):
            continue
        lines = (ROOT / path).read_text(encoding="utf-8").encode("utf-8").splitlines(keepends=True)
        in_error_class = _calls_inside_error_classes(tree, classes)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            text = _segment(lines, node)
            if name in ("Phrase", "DealerError") or (name in classes and _takes_template(_own_init(classes, name))):
                prefix = _class_constant(classes, name, "PREFIX")
                templates = literals(node.args[0]) if node.args else ("",)
                found.append(Site(path, node.lineno, tuple(prefix + t for t in templates), text))
            elif name == "CardTokenError" and len(node.args) >= 3:
                suffix = _class_constant(classes, name, "SUFFIX")
                found.append(Site(path, node.lineno, tuple(t + suffix for t in literals(node.args[2])), text))
            elif (
                isinstance(func, ast.Attribute)
                and func.attr == "__init__"
                and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "super"
                and node.args
                and id(node) in in_error_class
            ):
                first = node.args[0]
                if isinstance(first, ast.BinOp) or (isinstance(first, ast.Name) and first.id == "template"):
                    continue  # a prefix or suffix added to the caller's template, checked at the callers
                found.append(Site(path, node.lineno, literals(first), text))
    return found


def _calls_inside_error_classes(tree: ast.Module, classes: dict[str, ast.ClassDef]) -> set[int]:
    """The ids of the calls written inside the body of an error class (of this tree)."""
    return {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name in classes
        for sub in ast.walk(node)
        if isinstance(sub, ast.Call)
    }


if __name__ == "__main__":  # list the templates (and the bad sites): python tests/_error_templates.py
    import json

    catalogue = json.loads((DEALER / "core/i18n/ru.json").read_text(encoding="utf-8"))
    for site in sites():
        if not site.templates:
            print(f"BAD {site.path}:{site.line}: {site.source[:100]}")
        for t in site.templates:
            if t not in catalogue:
                print(json.dumps(t, ensure_ascii=False))
