"""Import of real championship PBN files, side by side with endplay's PBN parser on the same files, same run.

Corpus: every ``*.pbn`` under ``../shared/data/pbn`` (the bench is skipped cleanly when it is absent), in five
shapes, each measured on its own:

- ``sample``: the files once (start-up of the command weighs most here: a tenth of a second of endplay's work
  is less than our process takes to start and open a bank, so this shape has no target; the issue's target is
  for a collection of its corpus's size, which the two shapes below are);
- ``copies``: the files copied ``N`` times under other names: most records are duplicates, as in a real
  collection where every match's file repeats the boards of the others (the real workload);
- ``redealt``: the same files with every deal replaced by one dealt with a seeded RNG (the same new deal for
  both rooms of a board of a file), ``N`` times: most deals are new ones the bank must commit;
- ``varied``: archive-like files made from the sample's games by ``bench.corpus`` (commentary, auctions and play,
  tag orders, encodings, BOMs, CRLF, several events a file, 1 to 500 boards), as real collections are;
- ``varied-redealt``: the same with new deals (most of them new to the bank).

For each, best of ``rounds`` with the two sides interleaved (load on the shared cores hits both alike), and
the spread of the rounds' ratios, wall and CPU (``DEALER_BENCH_ROUNDS`` sets the rounds;
``DEALER_BENCH_IMPORT_SHAPES=varied,varied-redealt`` measures only those shapes):

- ``endplay``: ``endplay.parsers.pbn.load`` over every file, in process (the anchor; the files it refuses are
  counted, and the time spent on them counts too);
- ``dealer bank import --json``: the whole command as users run it, in a fresh process into a new bank
  (start-up, reading, parsing, committing in batches, the report), on SQLite and, where a server answers, on
  PostgreSQL (a new database per run).

Ratio: endplay's time over ours (target >= 10; also the min, median and max of the rounds' ratios as rows of
their own). Silent losses: Deal tags that are neither imported, nor a duplicate, nor a reported problem (target 0).
The scan's two paths, each on every file of the shape, per record: the byte path (what an import reads most files
by) and the text path (what it decodes a file for: UTF-16, a value beyond ASCII, a doubtful comment mark), with the
files and records the byte path leaves to the text path in an import (target: the text path within 10% of the
byte path's cost).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside the checkout (a worktree sits one level deeper: the nearest ancestor's shared/ counts)
SAMPLE = next(
    (p / "shared" / "data" / "pbn" for p in ROOT.parents if (p / "shared" / "data" / "pbn").is_dir()),
    ROOT.parent / "shared" / "data" / "pbn",
)
PG_ADMIN = os.environ.get("DEALER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
_DEAL_TAG = re.compile(rb"\[\s*Deal\s")
_DEAL_VALUE = re.compile(rb'(\[Deal[ \t]*")([NESWnesw]):([^"]*)(")')


def _endplay(datas: list[bytes]) -> tuple[float, int, int]:
    elapsed, _, boards, failed = _endplay_cpu(datas)
    return elapsed, boards, failed


def _endplay_cpu(datas: list[bytes]) -> tuple[float, float, int, int]:
    """endplay's parse of every file in this process: wall time, CPU time, boards read, files refused."""
    from endplay.parsers import pbn as ep_pbn

    start = time.perf_counter()
    cpu = time.process_time()
    boards = failed = 0
    for data in datas:
        try:
            boards += len(ep_pbn.load(io.StringIO(data.decode("latin-1"))))
        except Exception:  # endplay refuses some real files; the time spent on them still counts
            failed += 1
    return time.perf_counter() - start, time.process_time() - cpu, boards, failed


def _ascii(data: bytes) -> bytes:
    """The file's tags as ASCII bytes whatever its encoding (UTF-16 after its mark; the others are ASCII-based)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16").encode("ascii", errors="replace")
    return data


def _ours_parse(datas: list[bytes]) -> tuple[float, int]:
    from dealer.formats.pbn_scan import DealCache, scan

    start = time.perf_counter()
    cache = DealCache()
    n = sum(len(scan(data, cache=cache)) for data in datas)
    return time.perf_counter() - start, n


def _paths(datas: list[bytes]) -> tuple[float, float, int, int, int]:
    """The scan's two paths on the same files (those the byte path reads), each on every one of them, best of
    three rounds interleaved, a new deal cache each time: the byte path's time, the text path's (``decode_text``
    and ``_scan_text``), their records; and the files and records the byte path leaves to the text path."""
    from dealer.formats.pbn import decode_text
    from dealer.formats.pbn_scan import DealCache, _scan_bytes, _scan_text

    read = [_scan_bytes(data, DealCache()) for data in datas]
    kept = [data for data, r in zip(datas, read, strict=True) if r is not None]
    records = sum(len(r.deals) + len(r.problems) for r in read if r is not None)
    left = [data for data, r in zip(datas, read, strict=True) if r is None]
    left_records = sum(len(_scan_text(decode_text(data, normalise=False), DealCache())) for data in left)
    best_bytes = best_text = float("inf")
    for _ in range(3):
        cache = DealCache()
        start = time.perf_counter()
        for data in kept:
            _scan_bytes(data, cache)
        best_bytes = min(best_bytes, time.perf_counter() - start)
        cache = DealCache()
        start = time.perf_counter()
        for data in kept:
            _scan_text(decode_text(data, normalise=False), cache)
        best_text = min(best_text, time.perf_counter() - start)
    return best_bytes, best_text, records, len(left), left_records


@contextmanager
def _pg_url() -> Iterator[str | None]:
    """A new database for one run (dropped afterwards), or None where no PostgreSQL server answers."""
    try:
        import psycopg

        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except Exception:
        yield None
        return
    name = f"dealer_bench_{uuid.uuid4().hex[:12]}"
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{PG_ADMIN.rpartition('/')[0]}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _ours_import(files: list[Path], bank: str) -> tuple[float, dict[str, Any]]:
    elapsed, _, report = _ours_import_cpu(files, bank)
    return elapsed, report


def _ours_import_cpu(files: list[Path], bank: str) -> tuple[float, float, dict[str, Any]]:
    """``dealer bank import --json`` in a fresh process: wall time, the CPU time of its processes (its reading
    child's included; not a PostgreSQL server's), its report."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "dealer", "bank", "import", "--bank", bank, "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run([*cmd, *map(str, files)], capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"dealer bank import failed: {r.stderr.decode(errors='replace')[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, cpu, json.loads(r.stdout)


def _fresh_sqlite(tmp: Path) -> str:
    for p in tmp.glob("bank.sqlite*"):
        p.unlink()
    return str(tmp / "bank.sqlite")


def _redeal(data: bytes, rng: random.Random, table: dict[bytes, bytes]) -> bytes:
    """``data`` with every deal value replaced by a new random deal (the same one where the value repeats)."""
    from dealer.core import Deal, Seat

    def swap(m: re.Match[bytes]) -> bytes:
        old = m.group(2).upper() + b":" + m.group(3)
        new = table.get(old)
        if new is None:
            seats = bytearray(52)
            for position, card in enumerate(rng.sample(range(52), 52)):
                seats[card] = position // 13
            new = table[old] = Deal(bytes(seats)).to_pbn(Seat.parse(m.group(2).decode().upper())).encode()
        return m.group(1) + new + m.group(4)

    return _DEAL_VALUE.sub(swap, data)


def _corpus(files: list[Path], tmp: Path, shape: str, copies: int) -> list[Path]:
    if shape.startswith("varied"):  # archive-like files made from the sample (``bench.corpus``), ``copies`` of them
        from .corpus import make_varied

        return make_varied(files, tmp / shape, copies, redeal=shape.endswith("redealt"))
    out: list[Path] = []
    rng = random.Random(17)
    for k in range(copies):
        folder = tmp / f"{shape}{k}"
        folder.mkdir()
        for i, src in enumerate(files):
            table: dict[bytes, bytes] = {}  # a new deal per board of each file (both rooms play it)
            dst = folder / f"{i:03d}-{src.name}"
            data = src.read_bytes()
            dst.write_bytes(_redeal(data, rng, table) if shape == "redealt" else data)
            out.append(dst)
    return out


def _measure(
    corpus: list[Path], tmp: Path, rounds: int, engines: tuple[str, ...], target: str | None
) -> list[dict[str, Any]]:
    datas = [p.read_bytes() for p in corpus]
    deal_tags = sum(len(_DEAL_TAG.findall(_ascii(d))) for d in datas)
    best_ep = best_parse = best_start = float("inf")
    best: dict[str, float] = {}
    smallest = min(corpus, key=lambda p: p.stat().st_size)  # the command's fixed cost: one small file
    reports: dict[str, dict[str, Any]] = {}
    ep_boards = ep_failed = parsed = 0
    pairs: dict[str, list[tuple[float, float]]] = {}  # engine -> each round's (wall, CPU) ratio to endplay's
    for _ in range(rounds):  # interleaved, so load on the shared cores hits both sides alike
        t, ep_cpu, ep_boards, ep_failed = _endplay_cpu(datas)
        best_ep = min(best_ep, t)
        for engine in engines:
            if engine == "sqlite":
                ours, cpu, reports[engine] = _ours_import_cpu(corpus, _fresh_sqlite(tmp))
            else:
                with _pg_url() as url:
                    if url is None:
                        continue
                    ours, cpu, reports[engine] = _ours_import_cpu(corpus, url)
            best[engine] = min(best.get(engine, float("inf")), ours)
            pairs.setdefault(engine, []).append((t / ours, ep_cpu / max(cpu, 1e-3)))
        t, parsed = _ours_parse(datas)
        best_parse = min(best_parse, t)
        t, _ = _ours_import([smallest], _fresh_sqlite(tmp))
        best_start = min(best_start, t)
    on_bytes, on_text, path_records, left, left_records = _paths(datas)
    rows: list[dict[str, Any]] = [
        {
            "name": "endplay_parse",
            "value": round(best_ep, 3),
            "unit": "s",
            "note": f"anchor: {ep_boards:,} boards read, {ep_failed} of {len(corpus)} files refused; "
            f"{deal_tags:,} Deal tags ({deal_tags / best_ep:,.0f}/s)",
        },
        {
            "name": "parse_vs_endplay",
            "value": round(best_ep / best_parse, 2),
            "unit": "x",
            "note": f"our PBN import scan in process: {parsed:,} records, {parsed / best_parse:,.0f} records/s",
        },
        {
            "name": "text_path_vs_byte_path",
            "value": round(on_text / max(on_bytes, 1e-9), 2),
            "unit": "x",
            "target": "<= 1.1",
            "note": f"per record: byte path {1e6 * on_bytes / max(path_records, 1):.1f} us, text path (decoded) "
            f"{1e6 * on_text / max(path_records, 1):.1f} us, each on the same {path_records:,} records; "
            f"the byte path leaves {left} files ({left_records:,} records) to the text path",
        },
        {
            "name": "command_start",
            "value": round(best_start, 3),
            "unit": "s",
            "note": f"dealer bank import of one small file ({smallest.name}) into a new bank: the fixed cost",
        },
    ]
    for engine in engines:
        if engine not in best:
            rows.append({"name": f"command_{engine}", "value": None, "unit": "", "note": f"skipped: no {engine}"})
            continue
        rep = reports[engine]
        lost = deal_tags - (rep["imported"] + rep["duplicates"] + rep["unreadable"])
        rows += [
            {
                "name": f"command_{engine}",
                "value": round(best[engine], 3),
                "unit": "s",
                "note": f"dealer bank import, whole process: {rep['records']:,} records "
                f"({rep['records'] / best[engine]:,.0f}/s), {rep['imported']:,} new, {rep['duplicates']:,} dup, "
                f"{rep['unreadable']} unreadable",
            },
            {
                "name": f"command_{engine}_vs_endplay",
                "value": round(best_ep / best[engine], 2),
                "unit": "x",
                **({"target": target} if target else {}),
                "note": f"{rep['records'] / best[engine]:,.0f} records/s vs endplay {deal_tags / best_ep:,.0f}/s"
                + ("" if target else f"; no target: {best_start:.2f} s of the {best[engine]:.2f} s is the start")
                + f"; {_spread(pairs[engine])}",
            },
            *(
                {
                    "name": f"command_{engine}_vs_endplay_{which}",
                    "value": round(pick([w for w, _ in pairs[engine]]), 2),
                    "unit": "x",
                    "note": f"the {which} of {len(pairs[engine])} interleaved pairs' wall ratios (each round's "
                    "endplay time over the command's, run one after the other: load hits both)",
                }
                for which, pick in (("min", min), ("median", statistics.median), ("max", max))
            ),
            {
                "name": f"command_{engine}_past_start_vs_endplay",
                "value": round(best_ep / max(best[engine] - best_start, 1e-3), 2),
                "unit": "x",
                "note": f"the same, the command's fixed cost ({best_start:.2f} s) taken off: the share that grows",
            },
            {
                "name": f"silent_losses_{engine}",
                "value": lost,
                "unit": "records",
                "target": "<= 0",
                "note": "Deal tags neither imported, duplicate nor reported",
            },
        ]
    return rows


def _spread(pairs: list[tuple[float, float]]) -> str:
    """Each round's ratio (the two sides run one after the other): wall and CPU, min / median / max."""
    wall = [w for w, _ in pairs]
    cpu = [c for _, c in pairs]
    return (
        f"{len(pairs)} interleaved pairs: wall ratio {min(wall):.1f} / {statistics.median(wall):.1f} / "
        f"{max(wall):.1f} (min / median / max), CPU ratio {min(cpu):.1f} / {statistics.median(cpu):.1f} / "
        f"{max(cpu):.1f} (ours: the command's processes, not the server's)"
    )


def _longest_batch(corpus: list[Path], tmp: Path, engine: str) -> tuple[float, int, int] | None:
    """The longest write transaction of an in-process import (the time a station's commit may wait), the
    number of batches and the bank's batch size; None where no PostgreSQL server answers."""
    from dealer.bank import bulk
    from dealer.bank.engines import open_bank_at
    from dealer.bank_import.importer import import_parsed, read_files

    parsed = read_files(corpus)
    inner = bulk.import_canonical
    spans: list[float] = []

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spans.append(time.perf_counter() - start)

    with _pg_url() if engine == "postgresql" else _nothing(str(tmp / "batches.sqlite")) as target:
        if target is None:
            return None
        bulk.import_canonical = timed  # for this measurement only
        try:
            with open_bank_at(target, tmp / "keys") as bank:
                import_parsed(bank, parsed)
                size = bank.import_batch
        finally:
            bulk.import_canonical = inner
    return max(spans), len(spans), size


@contextmanager
def _nothing(value: str) -> Iterator[str]:
    yield value


def run(quick: bool = False) -> list[dict[str, Any]]:
    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn") if SAMPLE.is_dir() else []
    if not files:
        return [{"name": "import.corpus", "value": None, "unit": "", "note": f"skipped: {SAMPLE} is absent"}]
    copies = 2 if quick else 20
    rounds = int(os.environ.get("DEALER_BENCH_ROUNDS", "1" if quick else "3"))
    only = {s for s in os.environ.get("DEALER_BENCH_IMPORT_SHAPES", "").split(",") if s}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        both = ("sqlite", "postgresql")
        varied = 60 if quick else 600  # files of 1 to 500 boards: about 40,000 records in 600
        shapes = (
            ("sample", 1, ("sqlite",), None),
            ("copies", copies, both, ">= 10"),
            ("redealt", max(2, copies // 2), both, ">= 10"),
            ("varied", varied, both, ">= 10"),
            ("varied-redealt", varied, both, ">= 10"),
        )
        for shape, n, engines, target in shapes:
            if only and shape not in only:
                continue
            corpus = _corpus(files, tmp, shape, n)
            label = f"{shape}: {len(corpus)} files" + (
                f" ({n} x {len(files)})" if n > 1 and not shape.startswith("varied") else ""
            )
            for row in _measure(corpus, tmp, rounds, engines, target):
                rows.append({**row, "name": f"import.{shape}.{row['name']}", "note": f"{label}; {row['note']}"})
            if shape == "redealt":
                for engine in both:
                    measured = _longest_batch(corpus, tmp, engine)
                    name = "import.longest_batch_transaction" + ("" if engine == "sqlite" else f"_{engine}")
                    if measured is None:
                        rows.append({"name": name, "value": None, "unit": "", "note": f"skipped: no {engine}"})
                        continue
                    longest, batches, size = measured
                    rows.append(
                        {
                            "name": name,
                            "value": round(longest * 1000, 1),
                            "unit": "ms",
                            "target": "<= 250",
                            "note": f"{label}; {engine}: {batches} batches of <= {size:,} new deals "
                            "(the longest a station may wait)",
                        }
                    )
            for folder in tmp.iterdir():  # the next shape's files only
                if folder.is_dir():
                    shutil.rmtree(folder)
    return rows


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1, ensure_ascii=False))
