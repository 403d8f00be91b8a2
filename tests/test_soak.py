"""Soak (slow, ``make soak``): 10,000 deals at the simulators' full speed through the whole pipeline (two
stations, the bank, the audience fan-out, then seal, a draw, reveal and bundle) with 200 audience clients
connected. The server's RSS is sampled over time and printed; every client's event sequence is complete or
resynced by a snapshot; every client reaches the last event (none stalled); the ledger verifies.

``SOAK_DEALS`` and ``SOAK_CLIENTS`` change the sizes (e.g. for a shorter run on a slow machine).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _soak import run_soak

pytestmark = pytest.mark.slow


@pytest.mark.timeout(6 * 3600)
def test_soak(tmp_path: Path) -> None:
    deals = int(os.environ.get("SOAK_DEALS", "10000"))
    clients = int(os.environ.get("SOAK_CLIENTS", "200"))
    f = run_soak(tmp_path, deals, clients, sample_every=max(5.0, deals / 500))
    audience = f.pop("audience")
    print("\nsoak:", json.dumps({k: v for k, v in f.items() if k not in ("rss_samples", "rss_table")}))
    print("server RSS over time:\n  " + "\n  ".join(f["rss_table"]))
    assert f["deals"] >= deals
    assert len(audience) == clients
    # no event lost: each client's ids are contiguous except where a snapshot resynced it
    assert f["gaps"] == 0
    assert all(a.events > 0 and a.last_id is not None and a.last_id >= f["final_event_id"] for a in audience)
    # memory flat: the last quarter of the run holds no more than the first quarter plus a small allowance
    assert f["rss_last_quarter_mib"] <= f["rss_first_quarter_mib"] * 1.25 + 32, f["rss_table"]
    assert f["ledger"].startswith("ok:")
