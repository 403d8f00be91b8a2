"""Run every ``bench/bench_*.py`` module, print one table and write the rows as JSON to ``bench/results/``.

Each module exposes ``run(quick: bool = False) -> list[dict]``; a row has ``name``, ``value``, ``unit`` and
optionally ``target`` (text such as ``">= 1000"``) and ``note``.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import json
import os
import platform
import time
import traceback
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
PACKAGES = ("dealer", "drivers", "firmware_protocol")


def _bytecode_as_installed() -> None:
    """Give the processes the benches start the project's compiled bytecode, as ``pip install`` leaves it.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (as on this workplace's machines), nothing of an editable install
    is ever compiled to disk, and every fresh process compiles each module it imports again: ``dealer board``
    would be timed compiling ~40 modules, which no installed copy does (the libraries' bytecode is written by pip
    whatever the variable says). The files go to ``__pycache__`` beside the sources, which git ignores.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for package in PACKAGES:
        compileall.compile_dir(HERE.parent / package, quiet=1)


def _meets(value: Any, target: str | None) -> str:
    if not target or not isinstance(value, int | float):
        return ""
    op, _, number = target.partition(" ")
    try:
        limit = float(number)
    except ValueError:
        return ""
    ok = value >= limit if op == ">=" else value <= limit if op == "<=" else None
    return "" if ok is None else ("yes" if ok else "NO")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--only", action="append", default=[], help="run only bench_<NAME> (repeatable)")
    args = parser.parse_args()
    _bytecode_as_installed()

    names = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if args.only:
        names = [n for n in names if n.removeprefix("bench_") in args.only or n in args.only]
    console = Console()
    rows: list[dict[str, Any]] = []
    for name in names:
        console.print(f"[bold]{name}[/] …")
        started = time.perf_counter()
        try:
            module = importlib.import_module(f"bench.{name}")
            for row in module.run(quick=args.quick):
                rows.append({"module": name, **row})
        except Exception:  # a broken benchmark must not hide the others' figures
            rows.append({"module": name, "name": "FAILED", "value": None, "unit": "", "note": traceback.format_exc()})
            console.print_exception()
        console.print(f"  done in {time.perf_counter() - started:.1f} s")

    table = Table(title="Benchmarks")
    for column in ("module", "name", "value", "unit", "target", "met", "note"):
        table.add_column(column)
    for row in rows:
        value = row.get("value")
        shown = f"{value:,.3f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
        table.add_row(
            row["module"].removeprefix("bench_"),
            str(row["name"]),
            shown,
            str(row.get("unit", "")),
            str(row.get("target", "") or ""),
            _meets(value, row.get("target")),
            str(row.get("note", "") or "")[:60],
        )
    console.print(table)

    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    payload = {"when": stamp, "machine": platform.platform(), "python": platform.python_version(), "rows": rows}
    out = out_dir / f"bench-{stamp}.json"
    out.write_text(json.dumps(payload, indent=2, default=str))
    (out_dir / "latest.json").write_text(json.dumps(payload, indent=2, default=str))
    console.print(f"written {out}")


if __name__ == "__main__":
    main()
