"""Import of real championship PBN files, side by side with endplay's PBN parser on the same files.

Corpus: every ``*.pbn`` under ``../shared/data/pbn`` (skipped cleanly when absent), repeated ``copies`` times
under distinct names so the run is long enough to time. Measured in the same run, best of ``rounds``:

- ``endplay``: ``endplay.parsers.pbn.load`` over every file, in process (the anchor; files it cannot parse
  are counted and timed too);
- ``dealer bank import``: the whole command as users run it, in a fresh process into a new bank (start-up,
  reading, parsing, committing in batches, the summary);
- our PBN reader alone, in process.

Ratios: endplay's time over ours (target ≥ 10 for the command). Silent losses: records that were neither
imported, nor duplicates, nor reported problems (target 0); every ``[Deal`` tag counts as a record.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside the checkout (a worktree sits one level deeper: the nearest ancestor's shared/ counts)
SAMPLE = next(
    (p / "shared" / "data" / "pbn" for p in ROOT.parents if (p / "shared" / "data" / "pbn").is_dir()),
    ROOT.parent / "shared" / "data" / "pbn",
)
SUMMARY = re.compile(r"imported (\d+) of (\d+) deals.*?; (\d+) duplicates, (\d+) unreadable records")


def _endplay(datas: list[bytes]) -> tuple[float, int, int]:
    from endplay.parsers import pbn as ep_pbn

    start = time.perf_counter()
    boards = failed = 0
    for data in datas:
        try:
            boards += len(ep_pbn.load(io.StringIO(data.decode("latin-1"))))
        except Exception:  # endplay refuses some real files; the time spent on them still counts
            failed += 1
    return time.perf_counter() - start, boards, failed


def _ours_parse(datas: list[bytes]) -> tuple[float, int]:
    from dealer.formats.pbn import PBN

    start = time.perf_counter()
    n = sum(len(PBN.read(data).records) for data in datas)
    return time.perf_counter() - start, n


def _ours_import(files: list[Path], tmp: Path) -> tuple[float, str]:
    bank = tmp / "bank.sqlite"
    for p in tmp.glob("bank.sqlite*"):
        p.unlink()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "dealer", "bank", "import", "--bank", str(bank), "--show", "0"]
    start = time.perf_counter()
    r = subprocess.run([*cmd, *map(str, files)], capture_output=True, text=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        raise RuntimeError(f"dealer bank import failed: {r.stderr[-2000:]}")
    return elapsed, r.stdout


def _longest_batch(corpus: list[Path], tmp: Path) -> tuple[float, int]:
    """The longest write transaction of an in-process import (the time a station's commit may wait)."""
    from dealer.bank.importer import import_parsed, read_files
    from dealer.bank.store import SqliteBank

    parsed = read_files(corpus)
    with SqliteBank(tmp / "batches.sqlite") as bank:
        inner = bank.import_deals
        spans: list[float] = []

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spans.append(time.perf_counter() - start)

        bank.import_deals = timed  # type: ignore[method-assign]
        import_parsed(bank, parsed)
    return max(spans), len(spans)


def run(quick: bool = False) -> list[dict[str, Any]]:
    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn") if SAMPLE.is_dir() else []
    if not files:
        return [{"name": "import.corpus", "value": None, "unit": "", "note": f"skipped: {SAMPLE} is absent"}]
    copies = 1 if quick else 4
    rounds = 2 if quick else 3
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        corpus: list[Path] = []
        for k in range(copies):
            for i, src in enumerate(files):
                dst = tmp / f"c{k}" / f"{i:03d}-{src.name}"
                dst.parent.mkdir(exist_ok=True)
                shutil.copyfile(src, dst)
                corpus.append(dst)
        datas = [p.read_bytes() for p in corpus]
        deal_tags = sum(len(re.findall(rb"\[\s*Deal\s", d)) for d in datas)
        best_ep = best_cmd = best_parse = float("inf")
        ep_boards = ep_failed = parsed = 0
        stdout = ""
        for _ in range(rounds):  # interleaved, so load on the shared cores hits both sides alike
            t, ep_boards, ep_failed = _endplay(datas)
            best_ep = min(best_ep, t)
            t, stdout = _ours_import(corpus, tmp)
            best_cmd = min(best_cmd, t)
            t, parsed = _ours_parse(datas)
            best_parse = min(best_parse, t)
        longest, batches = _longest_batch(corpus, tmp)
    m = SUMMARY.search(stdout)
    if m is None:
        raise RuntimeError(f"no summary in the import's output: {stdout[-500:]}")
    imported, records, duplicates, unreadable = map(int, m.groups())
    lost = deal_tags - (imported + duplicates + unreadable)
    note = f"{len(corpus)} files, {records} records ({deal_tags} Deal tags)"
    return [
        {
            "name": "import.endplay_parse",
            "value": round(best_ep, 3),
            "unit": "s",
            "note": f"anchor: {ep_boards} boards, {ep_failed} files refused; {note}",
        },
        {
            "name": "import.command",
            "value": round(best_cmd, 3),
            "unit": "s",
            "note": f"dealer bank import, whole process; {imported} imported, {duplicates} dup, {unreadable} bad",
        },
        {
            "name": "import.command_vs_endplay",
            "value": round(best_ep / best_cmd, 2),
            "unit": "x",
            "target": ">= 10",
            "note": f"{records / best_cmd:,.0f} records/s vs endplay {ep_boards / best_ep:,.0f} boards/s",
        },
        {
            "name": "import.parse_vs_endplay",
            "value": round(best_ep / best_parse, 2),
            "unit": "x",
            "target": ">= 10",
            "note": f"our PBN reader in process: {parsed / best_parse:,.0f} records/s",
        },
        {
            "name": "import.longest_batch_transaction",
            "value": round(longest * 1000, 1),
            "unit": "ms",
            "target": "<= 250",
            "note": f"{batches} batches of <= 1,000 new deals: the longest a station's commit waits",
        },
        {
            "name": "import.silent_losses",
            "value": lost,
            "unit": "records",
            "target": "<= 0",
            "note": "Deal tags neither imported, duplicate nor reported",
        },
    ]


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1, ensure_ascii=False))
