"""Deal commits on PostgreSQL with 1, 2 and 4 concurrent writer processes, against SQLite's single writer.

Each writer is a process of its own committing random deals one by one (``commit_deal``: one durable transaction
each, the ledger appended under the database's advisory lock). Latency is per commit, as the caller sees it;
throughput is all writers' deals / wall time from the first start to the last end. The anchor is SQLite with one
writer (WAL, synchronous=FULL), same deals, same run. PostgreSQL rows are skipped, saying why, without a server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PG_ADMIN = os.environ.get("DEALER_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")

WRITER = textwrap.dedent(
    """
    import json, random, sys, time
    sys.path.insert(0, {tests!r})
    from bank_support import random_deal, station_source
    from dealer.bank.engines import open_bank_at

    bank = open_bank_at(sys.argv[1], sys.argv[2])
    rng = random.Random(int(sys.argv[3]))
    deals = [random_deal(rng) for _ in range(int(sys.argv[4]))]
    print("ready", flush=True)
    sys.stdin.readline()
    lat = []
    for deal in deals:
        t = time.perf_counter()
        bank.commit_deal(deal, station_source())
        lat.append(time.perf_counter() - t)
    print(json.dumps(lat), flush=True)
    """
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")


def _run_writers(target: str, tmp: Path, writers: int, per_writer: int) -> dict[str, float]:
    script = tmp / "writer.py"
    script.write_text(WRITER.format(tests=str(ROOT / "tests")))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), target, str(tmp / "keys"), str(1000 + i), str(per_writer)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(writers)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().startswith("ready")
    start = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    latencies: list[float] = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        latencies += json.loads(out.strip().splitlines()[-1])
    wall = time.perf_counter() - start
    return {
        "p50_ms": _pct(latencies, 50) * 1000,
        "p99_ms": _pct(latencies, 99) * 1000,
        "deals_per_s": len(latencies) / wall,
    }


def _pg_database() -> tuple[str, str] | None:
    try:
        import psycopg

        name = f"dealer_bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as c:
            c.execute(f'CREATE DATABASE "{name}"')
    except Exception:
        return None
    base, _, _ = PG_ADMIN.rpartition("/")
    return name, f"{base}/{name}"


def _drop(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _rows(label: str, m: dict[str, float], note: str = "") -> list[dict[str, Any]]:
    return [
        {"name": f"{label}: commit p50", "value": round(m["p50_ms"], 2), "unit": "ms", "note": note},
        {"name": f"{label}: commit p99", "value": round(m["p99_ms"], 2), "unit": "ms", "note": note},
        {"name": f"{label}: throughput", "value": round(m["deals_per_s"], 1), "unit": "deals/s", "note": note},
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    per = 100 if quick else 400
    rows: list[dict[str, Any]] = []
    with TemporaryDirectory() as tmp:
        anchor = _run_writers(str(Path(tmp) / "bank.sqlite"), Path(tmp), 1, per)
        rows += _rows("SQLite, 1 writer (anchor)", anchor, f"{per} deals")
        for writers in (1, 2, 4):
            db = _pg_database()
            if db is None:
                rows.append({"name": "PostgreSQL", "value": None, "unit": "", "note": f"skipped: no server {PG_ADMIN}"})
                break
            name, url = db
            try:
                m = _run_writers(url, Path(tmp), writers, per)
            finally:
                _drop(name)
            ratio = m["deals_per_s"] / anchor["deals_per_s"]
            rows += _rows(f"PostgreSQL, {writers} writer(s)", m, f"{writers}x{per} deals, {ratio:.2f}x SQLite")
    return rows
