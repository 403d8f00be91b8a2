"""Command-line start: five light commands against a bare ``python -c pass`` as the floor, in the same run.

Each command is a fresh process of the real entry point. Runs of the floor and of every command are interleaved
round by round (the two cores are shared, so load hits all of them alike) and the best time of each counts, as
timeit does. Target: every light command within 3x the floor. Peak memory (max RSS) is reported too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LIGHT: tuple[tuple[str, ...], ...] = (
    ("--help",),
    ("board", "1"),
    ("deal", "show", "1"),
    ("deal", "rank", "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"),
    ("bank", "status"),
)


def _time(cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def _max_rss_mib(cmd: list[str], cwd: str, env: dict[str, str]) -> float:
    script = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", script, *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    return int(out.stdout.strip() or 0) / 1024


def run(quick: bool = False) -> list[dict[str, Any]]:
    rounds = 5 if quick else 15
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    with tempfile.TemporaryDirectory() as tmp:
        from dealer.bank.store import SqliteBank

        SqliteBank(Path(tmp) / "bank.sqlite").close()
        env["PWD"] = tmp
        floor_cmd = [sys.executable, "-c", "pass"]
        # what the command-line library alone costs (typer 0.29 converts every parameter through pydantic)
        typer_cmd = [sys.executable, "-c", "import typer, typer._adapters, rich.console"]
        cmds = [
            [sys.executable, "-m", "dealer", *args, *(("--bank", "bank.sqlite") if args[0] == "bank" else ())]
            for args in LIGHT
        ]
        best = [float("inf")] * (len(cmds) + 2)
        for _ in range(rounds):
            for i, cmd in enumerate([floor_cmd, typer_cmd, *cmds]):
                best[i] = min(best[i], _time(cmd, tmp, env))
        rss = [_max_rss_mib(cmd, tmp, env) for cmd in [floor_cmd, typer_cmd, *cmds]]
    floor = best[0]
    rows: list[dict[str, Any]] = [
        {
            "name": "cli.floor(python -c pass)",
            "value": round(floor * 1000, 1),
            "unit": "ms",
            "note": f"anchor; max RSS {rss[0]:.0f} MiB",
        },
        {
            "name": "cli.library(typer+rich)",
            "value": round(best[1] / floor, 2),
            "unit": "x floor",
            "note": f"{best[1] * 1000:.0f} ms importing typer (with pydantic) and rich alone; RSS {rss[1]:.0f} MiB",
        },
    ]
    for args, t, mem in zip(LIGHT, best[2:], rss[2:], strict=True):
        rows.append(
            {
                "name": f"cli.start({' '.join(args)[:24]})",
                "value": round(t / floor, 2),
                "unit": "x floor",
                "target": "<= 3",
                "note": f"{t * 1000:.0f} ms vs floor {floor * 1000:.0f} ms; max RSS {mem:.0f} MiB",
            }
        )
    return rows


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(f"{row['name']:36} {row['value']:>10} {row['unit']:8} {row.get('target') or '':6} {row['note']}")
