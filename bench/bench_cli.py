"""Command-line start: every command's ``--help`` (the whole command tree, walked) and the light commands run,
against a bare ``python -c pass`` as the floor, in the same run.

Each command is a fresh process of the real entry point (the ``dealer`` console script next to this Python, else
``python -m dealer``), its output thrown away. Runs of the floor and of every command are interleaved round by
round (the two cores are shared, so load hits all of them alike); the best and the median time of each are kept,
and the ratio to the floor is taken on the best (as timeit does) with the median's and the CPU time's ratios in the
note (CPU time is the least disturbed by other jobs). Target: every command, its help included, within 3x the
floor: one row for the tree (its worst command, with the median and the three slowest in the note) and one row
per light command run. Anchors show what part of that is the libraries': importing click and rich (which the
command line does not load to start), the domain's core, and the SQLite bank with its signing keys. Peak
memory (max RSS) is reported for the light commands.
"""

from __future__ import annotations

import importlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PBN = "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"
# the light commands officials type at a desk, run (the bank is an empty one made for the run)
LIGHT: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("board", "1"),
    ("deal", "show", PBN),
    ("deal", "rank", PBN),
    ("bank", "status", "--bank", "bank.sqlite"),
    ("regulation", "check"),
    ("formats",),
)
ANCHORS: tuple[tuple[str, str], ...] = (
    ("click+rich", "import click, rich.console"),
    ("dealer.core", "import dealer.core"),
    ("sqlite bank", "import dealer.bank.store"),
)


def command_tree() -> list[tuple[str, ...]]:
    """Every command and group of the command line (the root first), walked from ``dealer.cli.app``'s root."""
    from dealer.cli import app as cli_app
    from dealer.cli.kit import Group

    for module in cli_app.COMMAND_MODULES:
        importlib.import_module(module)
    paths: list[tuple[str, ...]] = []

    def walk(node: object, path: tuple[str, ...]) -> None:
        paths.append(path)
        if isinstance(node, Group):
            for name, sub in node.commands.items():
                walk(sub, (*path, name))

    walk(cli_app.app, ())
    return paths


def _entry() -> list[str]:
    script = Path(sys.executable).with_name("dealer")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dealer"]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(cmd: list[str], cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run; CPU suffers less from the other jobs on the machine."""
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, _cpu() - cpu


def _max_rss_mib(cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    script = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", script, *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    return int(out.stdout.strip() or 0) / 1024


def run(quick: bool = False) -> list[dict[str, Any]]:
    rounds = 3 if quick else 11
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    env.pop("LANG", None)  # the default language (Russian), as an official's desk has it
    with tempfile.TemporaryDirectory() as tmp:
        from dealer.bank.store import SqliteBank

        SqliteBank(Path(tmp) / "bank.sqlite").close()
        floor_cmd = [sys.executable, "-c", "pass"]
        anchor_cmds = [[sys.executable, "-c", code] for _, code in ANCHORS]
        cmds = [[*_entry(), *args] for args in LIGHT]
        tree = command_tree()
        helps = [[*_entry(), *path, "--help"] for path in tree]
        every = [floor_cmd, *anchor_cmds, *cmds, *helps]
        for cmd in every:  # warm the file cache and the bytecode
            _time(cmd, tmp, env)
        times: list[list[float]] = [[] for _ in every]
        cpus: list[list[float]] = [[] for _ in every]
        for _ in range(rounds):
            for i, cmd in enumerate(every):
                wall, used = _time(cmd, tmp, env)
                times[i].append(wall)
                cpus[i].append(used)
        rss = [_max_rss_mib(cmd, tmp, env) for cmd in every[: 1 + len(ANCHORS) + len(LIGHT)]]
    best = [min(t) for t in times]
    median = [statistics.median(t) for t in times]
    cpu = [min(c) for c in cpus]
    floor, floor_median = best[0], median[0]
    rows: list[dict[str, Any]] = [
        {
            "name": "cli.floor(python -c pass)",
            "value": round(floor * 1000, 1),
            "unit": "ms",
            "note": f"anchor; median {floor_median * 1000:.0f} ms; CPU {cpu[0] * 1000:.0f} ms; "
            f"max RSS {rss[0]:.0f} MiB; {rounds} rounds",
        }
    ]
    for k, (label, _) in enumerate(ANCHORS, start=1):
        rows.append(
            {
                "name": f"cli.library({label})",
                "value": round(best[k] / floor, 2),
                "unit": "x floor",
                "note": f"importing it alone: {best[k] * 1000:.0f} ms (median {median[k] * 1000:.0f}); "
                f"CPU {cpu[k] / cpu[0]:.1f}x the floor's; RSS {rss[k]:.0f} MiB",
            }
        )
    first = 1 + len(ANCHORS)
    tree_at = first + len(LIGHT)
    ratios = sorted(
        (
            (best[k] / floor, cpu[k] / cpu[0], " ".join(("dealer", *path, "--help")))
            for k, path in enumerate(tree, tree_at)
        ),
        reverse=True,
    )
    rows.append(
        {
            "name": f"cli.tree(--help of all {len(tree)} commands)",
            "value": round(ratios[0][0], 2),
            "unit": "x floor",
            "target": "<= 3",
            "note": f"the slowest command; median {statistics.median(r[0] for r in ratios):.2f}x; CPU: slowest "
            f"{max(r[1] for r in ratios):.1f}x, median {statistics.median(r[1] for r in ratios):.1f}x the floor's; "
            "slowest: " + ", ".join(f"{name} {ratio:.2f}x" for ratio, _, name in ratios[:3]),
        }
    )
    light = slice(first, tree_at)
    for args, t, m, c, mem in zip(LIGHT, best[light], median[light], cpu[light], rss[first:], strict=True):
        shown = " ".join(a if len(a) < 20 else "PBN" for a in args)
        rows.append(
            {
                "name": f"cli.start({shown})",
                "value": round(t / floor, 2),
                "unit": "x floor",
                "target": "<= 3",
                "note": f"best {t * 1000:.0f} ms vs floor {floor * 1000:.0f} ms; median {m * 1000:.0f} ms "
                f"({m / floor_median:.1f}x the floor's median); CPU {c / cpu[0]:.1f}x the floor's; "
                f"max RSS {mem:.0f} MiB",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row['name']:40} {row['value']:>8} {row['unit']:8} {row.get('target') or '':6} {row['note']}")
