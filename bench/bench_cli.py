"""Command-line start: five light commands against a bare ``python -c pass`` as the floor, in the same run.

Each command is a fresh process of the real entry point (the ``dealer`` console script next to this Python, else
``python -m dealer``), its output thrown away. Runs of the floor and of every command are interleaved round by
round (the two cores are shared, so load hits all of them alike); the best and the median time of each are kept,
and the ratio to the floor is taken on the best (as timeit does) with the median's and the CPU time's ratios in the
note (CPU time is the least disturbed by other jobs). Target:
every light command within 3x the floor. Two anchors show what part of that is the libraries': importing typer
(which checks values through pydantic) and rich, and importing the SQLite bank with its signing keys.
Peak memory (max RSS) is reported too.
"""

from __future__ import annotations

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
# the five light commands officials type at a desk (the bank is an empty one made for the run)
LIGHT: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("board", "1"),
    ("deal", "show", PBN),
    ("bank", "status", "--bank", "bank.sqlite"),
    ("regulation", "check"),
)
ANCHORS: tuple[tuple[str, str], ...] = (
    ("typer+rich", "import typer, typer._adapters, rich.console"),
    ("sqlite bank", "import dealer.bank.store"),
)


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
    rounds = 7 if quick else 25
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    env.pop("LANG", None)  # the default language (Russian), as an official's desk has it
    with tempfile.TemporaryDirectory() as tmp:
        from dealer.bank.store import SqliteBank

        SqliteBank(Path(tmp) / "bank.sqlite").close()
        floor_cmd = [sys.executable, "-c", "pass"]
        anchor_cmds = [[sys.executable, "-c", code] for _, code in ANCHORS]
        cmds = [[*_entry(), *args] for args in LIGHT]
        every = [floor_cmd, *anchor_cmds, *cmds]
        for cmd in every:  # warm the file cache and the bytecode
            _time(cmd, tmp, env)
        times: list[list[float]] = [[] for _ in every]
        cpus: list[list[float]] = [[] for _ in every]
        for _ in range(rounds):
            for i, cmd in enumerate(every):
                wall, used = _time(cmd, tmp, env)
                times[i].append(wall)
                cpus[i].append(used)
        rss = [_max_rss_mib(cmd, tmp, env) for cmd in every]
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
    for args, t, m, c, mem in zip(LIGHT, best[first:], median[first:], cpu[first:], rss[first:], strict=True):
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
