"""A process committing deals at full speed is killed with SIGKILL: every acknowledged deal survives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bank_engines import bank_at, engine, open_test_bank  # noqa: F401 (fixtures)

from dealer.core import Deal
from dealer.draw.verify import verify_bank

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import random, sys
    sys.path.insert(0, {tests!r})
    from bank_support import random_deal, station_source
    from dealer.bank.engines import open_bank_at

    bank = open_bank_at(sys.argv[1], sys.argv[2])
    rng = random.Random()
    while True:
        deal = random_deal(rng)
        c = bank.commit_deal(deal, station_source())
        # acknowledged only after commit_deal returned (fsynced)
        sys.stdout.write(f"{{c.deal_id}} {{deal.to_bytes().hex()}} {{c.commitment}}\\n")
        sys.stdout.flush()
    """
)


def test_sigkill_while_committing_loses_no_acknowledged_deal(bank_at: str, tmp_path: Path) -> None:  # noqa: F811
    path = bank_at  # a SQLite file, or a PostgreSQL database
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(tests=str(ROOT / "tests")))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    acked: list[tuple[int, str, str]] = []
    for _round in range(2):  # kill, restart, kill again: the second run appends to the recovered bank
        child = subprocess.Popen(
            [sys.executable, str(script), path, str(tmp_path / "keys")], stdout=subprocess.PIPE, env=env, text=True
        )
        assert child.stdout is not None
        target = len(acked) + 150
        deadline = time.monotonic() + 120
        while len(acked) < target and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            deal_id, canonical, com = line.split()
            acked.append((int(deal_id), canonical, com))
        child.send_signal(signal.SIGKILL)
        child.wait()
        for line in child.stdout:  # lines written before the kill are acknowledged too
            if line.endswith("\n"):
                deal_id, canonical, com = line.split()
                acked.append((int(deal_id), canonical, com))
        assert child.returncode == -signal.SIGKILL
    assert len(acked) >= 300
    with open_test_bank(path, tmp_path) as bank:
        report = verify_bank(bank)
        assert report.ok, report.problem
        assert bank.deal_count() >= len(acked)
        for acked_id, canonical, com in acked:
            stored = bank.get_deal(acked_id)
            assert stored.deal == Deal.from_bytes(bytes.fromhex(canonical))
            assert stored.commitment.hex() == com
