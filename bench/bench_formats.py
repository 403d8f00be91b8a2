"""Deal-file formats and the hand-record double-dummy pipeline.

Writes and reads of 100,000 deals per format (deals/s; quick mode 5,000), and the DD throughput of the
hand-record pipeline (deal conversion, batches of 40 through DDS, par) against raw
``endplay.dds.calc_all_tables`` on the same deals (target: ≥ 90%).
"""

from __future__ import annotations

import random
import time
from typing import Any

from dealer.core import DEAL_COUNT, Deal
from dealer.formats import BoardRecord, ExportMeta, by_name, formats, load_all

DD_TARGET = 90.0


def _deals(n: int, seed: int = 1) -> list[Deal]:
    rng = random.Random(seed)
    return [Deal.from_rank(rng.randrange(DEAL_COUNT)) for _ in range(n)]


# Files that hold a limited number of boards are written as many files: DLM boards 1..99, DUP 3-digit numbers.
CHUNK = {"dlm": 99, "dup": 999}


def _format_rows(n: int) -> list[dict[str, Any]]:
    load_all()
    deals = _deals(n)
    rows: list[dict[str, Any]] = []
    for name in sorted(formats()):
        fmt = by_name(name)
        size = CHUNK.get(name, n)
        chunks = [[BoardRecord(d, k + 1) for k, d in enumerate(deals[i : i + size])] for i in range(0, n, size)]
        t0 = time.perf_counter()
        blobs = [fmt.write(c, ExportMeta()) for c in chunks]
        t1 = time.perf_counter()
        got = sum(len(fmt.read(b).records) for b in blobs)
        t2 = time.perf_counter()
        if got != n:
            raise AssertionError(f"{name}: read {got} of {n} deals")
        rows.append({"name": f"formats.{name}.write", "value": round(n / (t1 - t0)), "unit": "deals/s", "target": None})
        rows.append({"name": f"formats.{name}.read", "value": round(n / (t2 - t1)), "unit": "deals/s", "target": None})
    return rows


def _dd_rows(n: int) -> list[dict[str, Any]]:
    from endplay import dds
    from endplay.types import Deal as EpDeal

    from dealer.handrecords.analysis import BATCH, analyse

    deals = _deals(n, seed=7)
    ep = [EpDeal(d.to_pbn()) for d in deals]
    records = [BoardRecord(d, i + 1) for i, d in enumerate(deals)]
    # Interleave raw and pipeline batch by batch (alternating which goes first), so drift in machine load
    # (other processes on the two cores) hits both alike.
    raw_s = ours_s = 0.0
    for k, i in enumerate(range(0, n, BATCH)):
        steps = [("raw", i), ("ours", i)] if k % 2 == 0 else [("ours", i), ("raw", i)]
        for what, start in steps:
            t0 = time.perf_counter()
            if what == "raw":
                dds.calc_all_tables(ep[start : start + BATCH])
                raw_s += time.perf_counter() - t0
            else:
                assert len(analyse(records[start : start + BATCH])) == len(ep[start : start + BATCH])
                ours_s += time.perf_counter() - t0
    raw, ours = n / raw_s, n / ours_s
    return [
        {"name": "dd.raw_calc_all_tables", "value": round(raw, 2), "unit": "deals/s", "target": None},
        {"name": "dd.handrecord_pipeline", "value": round(ours, 2), "unit": "deals/s", "target": None},
        {"name": "dd.pipeline_vs_raw", "value": round(100 * ours / raw, 1), "unit": "%", "target": f">= {DD_TARGET:g}"},
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    return _format_rows(5_000 if quick else 100_000) + _dd_rows(40 if quick else 160)


if __name__ == "__main__":
    import sys

    for row in run(quick="--quick" in sys.argv):
        print(f"{row['name']:32} {row['value']:>12} {row['unit']:8} {row['target'] or ''}")
