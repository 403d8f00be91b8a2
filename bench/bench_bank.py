"""Bank, import and draw: commit latency with fsync, PBN import rate (vs endplay), draw and verify at scale."""

from __future__ import annotations

import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dealer.bank import bulk
from dealer.bank.api import DealSource
from dealer.bank.store import SqliteBank
from dealer.bank_import.importer import import_files
from dealer.core import Deal
from dealer.custody.keyring import Keyring
from dealer.draw.bundle import load_bundle, verify_bundle
from dealer.draw.director import Director
from dealer.draw.protocol import dice_spec
from dealer.formats.base import BoardRecord
from dealer.formats.pbn import PBN
from dealer.regulation import Regulation, regulation_from_dict

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "shared" / "data" / "pbn"


def _random_deals(n: int, seed: int) -> list[Deal]:
    rng = np.random.default_rng(seed)
    base = np.repeat(np.arange(4, dtype=np.uint8), 13)
    out: list[Deal] = []
    while len(out) < n:
        chunk = rng.permuted(np.tile(base, (min(100_000, n - len(out)), 1)), axis=1)
        out.extend(Deal(row.tobytes()) for row in chunk)
    return out


class _Clock:
    """Wall time and this process's CPU time of a step (the machine may be shared: both are reported)."""

    def __enter__(self) -> _Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu

    def note(self, extra: str = "") -> str:
        return f"{extra}{'; ' if extra else ''}CPU {self.cpu:.2f} s of {self.wall:.2f} s wall"


def _commit_latency(work: Path, n: int) -> list[dict[str, Any]]:
    deals = _random_deals(n, 1)
    source = DealSource("station", station="T1", variant=2, shown_cards=30, dealing_order=bytes(range(52)))
    with SqliteBank(work / "latency.sqlite") as bank:
        times = []
        for deal in deals:
            t = time.perf_counter()
            bank.commit_deal(deal, source)
            times.append(time.perf_counter() - t)
    times.sort()
    p50 = times[len(times) // 2] * 1e3
    p99 = times[int(len(times) * 0.99)] * 1e3
    return [
        {"name": "deal commit latency p50 (fsync)", "value": round(p50, 3), "unit": "ms"},
        {"name": "deal commit latency p99 (fsync)", "value": round(p99, 3), "unit": "ms", "target": "<= 10"},
    ]


def _pbn_files(work: Path) -> tuple[list[Path], str]:
    if SAMPLE.is_dir():
        files = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn")
        if files:
            return files, f"shared sample, {len(files)} files"
    path = work / "generated.pbn"
    deals = _random_deals(6000, 2)
    path.write_bytes(PBN.write([BoardRecord(d, k % 32 + 1, tags={"Room": "Open"}) for k, d in enumerate(deals)]))
    return [path], "generated file (../shared absent)"


def _import_rates(work: Path) -> list[dict[str, Any]]:
    files, what = _pbn_files(work)
    datas = [p.read_bytes() for p in files]
    t = time.perf_counter()
    records = sum(len(PBN.read(d, str(p)).records) for p, d in zip(files, datas, strict=True))
    parse_s = time.perf_counter() - t
    with _Clock() as clock, SqliteBank(work / "import.sqlite") as bank:
        report = import_files(bank, files)
    import_s = clock.wall
    rows = [
        {"name": "PBN read", "value": round(records / parse_s), "unit": "deals/s", "note": f"{records} deals, {what}"},
        {
            "name": "PBN import into bank",
            "value": round(report.records / import_s),
            "unit": "deals/s",
            "target": ">= 20000",
            "note": clock.note(
                f"{report.imported} new, {report.duplicates} duplicates, {report.problems} unreadable; "
                f"{report.records / clock.cpu:.0f} deals per CPU second"
            ),
        },
    ]
    try:
        from endplay.parsers import pbn as endplay_pbn

        found = 0
        failed = 0
        t = time.perf_counter()
        for d in datas:
            try:
                found += len(endplay_pbn.load(io.StringIO(d.decode("latin-1"))))
            except Exception:  # endplay gives up on a whole file it cannot parse
                failed += 1
        endplay_s = time.perf_counter() - t
        rows.append(
            {
                "name": "endplay PBN parser",
                "value": round(found / endplay_s) if found else 0,
                "unit": "deals/s",
                "note": f"{found} deals found (ours {records}); {failed} files refused; "
                f"{endplay_s:.2f} s vs ours {parse_s:.2f} s",
            }
        )
    except ImportError:
        rows.append({"name": "endplay PBN parser", "value": "n/a", "unit": "", "note": "endplay not installed"})
    return rows


COMMITS_IN_BIG_BANK = 51  # a dealing station's commits timed in the big bank (the first loads the index)
BOARDS = 200  # a session of the largest allowed board count


def _bench_regulation(n_deals: int) -> Regulation:
    """A schedule of sessions of ``BOARDS`` boards drawn under a 1 % quota of a bank of ``n_deals``: as many
    sessions as make the schedule 1 % of the bank, the least Law 6 allows (one session of 200 boards alone is
    0.2 % of 100,000 deals, which the director refuses without an override). One session is drawn."""
    sessions = -(-n_deals // (100 * BOARDS))
    return regulation_from_dict(
        {
            "dealing": {"variant": 3},
            "draw": {"share_percent": 1},
            "session": {"boards": BOARDS},
            "schedule": {"sessions": sessions},
            "bank": {"target": n_deals},
        },
        "bench",
    )


def _draw_at_scale(work: Path, n_deals: int, empty_p50: float) -> list[dict[str, Any]]:
    """``empty_p50``: a commit's p50 in an empty bank (ms), measured in the same run: the anchor of the commits into
    the big bank."""
    path = work / "big.sqlite"
    t = time.perf_counter()
    with SqliteBank(path) as bank:  # as ``dealer bank import`` writes them: the compact form, in batches
        held = 0
        for start in range(0, n_deals, 200_000):
            chunk = [d.to_bytes() for d in _random_deals(min(200_000, n_deals - start), 10 + start)]
            for k in range(0, len(chunk), 5000):
                part = chunk[k : k + 5000]
                sources = [bulk.source_text(0, None, None)] * len(part)
                outcome = bank.import_canonical(part, sources, {"files": [{"file": "bench.pbn"}]}, None, held)
                held = outcome.imported[-1][1] if outcome.imported else held
    build_s = time.perf_counter() - t
    with SqliteBank(path) as bank:
        bank.raw_connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = path.stat().st_size
        bank.unlock(Keyring.generate())  # the chief judge's key signs the seal and the draw's commitment
        director = Director(bank)
        with _Clock() as seal:
            director.seal()
        with _Clock() as prepare:
            director.prepare("bench", dice_spec(["A", "B"], 10), _bench_regulation(n_deals))
        director.publish("bench")
        director.enter_public_value("bench", dice=["1234561234/6543216543"])
        with _Clock() as draw:
            drawn = director.run("bench")
        director.reveal("bench")
        with _Clock() as build:
            bundle = director.bundle("bench")
        # a dealing station's commits into the big bank (after the draw: the schedule's share stays exact); the
        # first one loads the open bank's index of the batches' deals, the others check against it
        source = DealSource("station", station="T1", variant=2, shown_cards=30, dealing_order=bytes(range(52)))
        times = []
        for deal in _random_deals(COMMITS_IN_BIG_BANK, 3):
            t = time.perf_counter()
            bank.commit_deal(deal, source)
            times.append(time.perf_counter() - t)
    first_ms, rest = times[0] * 1e3, sorted(times[1:])
    p50 = rest[len(rest) // 2] * 1e3
    data = json.dumps(bundle).encode()
    with _Clock() as verify:
        checks = verify_bundle(load_bundle(data))
    assert all(c.ok for c in checks), checks[-1]
    label = f"{n_deals:,}-deal bank"
    return [
        {"name": f"build {label} (bulk import)", "value": round(build_s, 1), "unit": "s"},
        {"name": "database size per deal", "value": round(size / n_deals), "unit": "bytes"},
        {"name": f"seal {label}", "value": round(seal.wall, 2), "unit": "s", "note": seal.note()},
        {
            "name": f"draw prepare (commit) {label}",
            "value": round(prepare.wall, 2),
            "unit": "s",
            "note": prepare.note(),
        },
        {
            "name": f"draw run {label}",
            "value": round(draw.wall, 2),
            "unit": "s",
            "target": "<= 2",
            "note": draw.note(f"{len(drawn)} deals drawn (quota 1%)"),
        },
        {
            "name": f"deal commit latency p50 in the {label}",
            "value": round(p50, 3),
            "unit": "ms",
            "note": f"{p50 / empty_p50:.2f}× the p50 in an empty bank ({empty_p50:.3f} ms, same run); "
            f"the first commit (loading the duplicate index) {first_ms:.1f} ms",
        },
        {
            "name": f"bundle build {label}",
            "value": round(build.wall, 2),
            "unit": "s",
            "note": build.note(f"{len(data):,} bytes"),
        },
        {
            "name": f"bundle verify {label}",
            "value": round(verify.wall, 2),
            "unit": "s",
            "target": "<= 2",
            "note": verify.note(),
        },
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-bank-") as tmp:
        work = Path(tmp)
        rows = _commit_latency(work, 200 if quick else 2000)
        rows += _import_rates(work)
        rows += _draw_at_scale(work, 100_000 if quick else 1_000_000, float(rows[0]["value"]))
    return rows
