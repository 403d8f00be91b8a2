"""What a deal costs the bank on disk, all in (ledger entry, deal row, indexes, the engine's own overhead).

Two banks on each engine (PostgreSQL where a server answers), each made by ``dealer.bank_import.importer.import_files``
as ``dealer bank import`` makes it, then sealed:

- ``shared``: the shared PBN sample as it is (skipped cleanly where ``../shared`` is absent);
- ``generated``: files of random deals (``N`` distinct deals, 32 boards a file), where the fixed cost of an
  empty bank (a page per table and index) weighs little.

SQLite: the file's size after a WAL checkpoint. PostgreSQL: ``pg_total_relation_size`` of every table of the
bank's database (heap, TOAST, indexes, free-space and visibility maps). The anchor is log2 of the number of
deals, 95.4 bits (11.9 bytes): what a deal is worth as information; the target is 200 bytes a deal.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from dealer.bank.composed import Bank
from dealer.bank_import.importer import import_files
from dealer.core import Deal
from dealer.custody.keyring import Keyring
from dealer.formats.base import BoardRecord
from dealer.formats.pbn import PBN

from .bench_import import SAMPLE, _pg_url

DEALS = math.factorial(52) // math.factorial(13) ** 4
LOG2_D = math.log2(DEALS)  # 95.4 bits
ANCHOR = f"log2 D = {LOG2_D:.1f} bits = {LOG2_D / 8:.1f} bytes a deal"


def _generated(work: Path, n: int) -> list[Path]:
    rng = np.random.default_rng(33)
    hands = np.tile(np.repeat(np.arange(4, dtype=np.uint8), 13), (n, 1))
    rng.permuted(hands, axis=1, out=hands)
    deals = [Deal(row.tobytes()) for row in hands]
    files: list[Path] = []
    for start in range(0, n, 32):
        path = work / f"gen{start // 32:05d}.pbn"
        records = [BoardRecord(d, k + 1, tags={"Room": "Open"}) for k, d in enumerate(deals[start : start + 32])]
        path.write_bytes(PBN.write(records))
        files.append(path)
    return files


def _sqlite_size(path: Path, files: list[Path]) -> tuple[int, int]:
    from dealer.bank.store import SqliteBank

    with SqliteBank(path) as bank:
        bank.unlock(Keyring.generate())  # the chief judge's key signs the seal
        report = import_files(bank, files)
        bank.seal()
        bank.raw_connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size, report.imported


_PG_SIZE = (
    "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
)


def _pg_total(bank: Bank) -> int:
    with bank.engine.read() as db:
        return int(db.execute(_PG_SIZE).fetchone()[0])


def _pg_size(url: str, files: list[Path]) -> tuple[int, int, int]:
    """The bank's size, its deals, and the size of the same bank before the import (its relations, empty)."""
    from dealer.bank.pg_store import PostgresBank

    with PostgresBank(url) as bank:
        empty = _pg_total(bank)
        bank.unlock(Keyring.generate())
        report = import_files(bank, files)
        bank.seal()
        size = _pg_total(bank)
    return size, report.imported, empty


def _row(engine: str, corpus: str, size: int, deals: int, note: str) -> dict[str, Any]:
    return {
        "name": f"storage.{corpus}.{engine}",
        "value": round(size / deals, 1) if deals else None,
        "unit": "bytes/deal",
        "target": "<= 200",
        "note": f"{deals:,} deals, {size:,} bytes, sealed; {note}; {ANCHOR}",
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    n = 4000 if quick else 20000
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
        work = Path(tmp)
        shared = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn") if SAMPLE.is_dir() else []
        gen_dir = work / "gen"
        gen_dir.mkdir()
        corpora = [("generated", _generated(gen_dir, n), f"{n:,} random deals in files of 32")]
        if shared:
            corpora.insert(0, ("shared", shared, f"{len(shared)} shared PBN files"))
        else:
            rows.append({"name": "storage.shared", "value": None, "unit": "", "note": f"skipped: {SAMPLE} is absent"})
        for k, (corpus, files, note) in enumerate(corpora):
            size, deals = _sqlite_size(work / f"bank{k}.sqlite", files)
            rows.append(_row("sqlite", corpus, size, deals, note))
            with _pg_url() as url:
                if url is None:
                    rows.append({"name": f"storage.{corpus}.postgresql", "value": None, "unit": "",
                                 "note": "skipped: no PostgreSQL server at 127.0.0.1:5432"})  # fmt: skip
                    continue
                size, deals, empty = _pg_size(url, files)
                rows.append(_row("postgresql", corpus, size, deals, f"{note}; the empty bank: {empty:,} bytes"))
    return rows


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv), indent=1, ensure_ascii=False))
