"""Soak figures: a real ``dealer serve`` forming a bank at the simulators' full speed with many audience clients.

Reuses the soak machinery of ``tests/_soak.py`` (server process, raw-socket SSE clients, RSS sampling). Full mode:
1,000 deals with 200 clients; quick mode: 100 deals with 50 clients. The complete 10,000-deal soak is
``make soak`` (``tests/test_soak.py``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"


def run(quick: bool = False) -> list[dict[str, Any]]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from _soak import run_soak

    deals, clients = (100, 50) if quick else (1000, 200)
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        f = run_soak(Path(tmp), deals, clients, sample_every=2.0)
    growth = f["rss_last_quarter_mib"] - f["rss_first_quarter_mib"]
    seconds = f["formation_s"]
    note = f"{f['deals']} deals, {clients} SSE clients, 2 stations (pty + pyusb simulators), 2% faults"
    return [
        {"name": f"soak: deals formed per second ({clients} clients)", "value": f["deals_per_s"], "unit": "deals/s",
         "note": note},
        {"name": f"soak: cards per second ({clients} clients)", "value": f["cards_per_s"], "unit": "cards/s",
         "target": ">= 1000"},
        {"name": "soak: events delivered per second (all clients)", "value": round(f["delivered_events"] / seconds),
         "unit": "events/s"},
        {"name": "soak: server RSS at the end", "value": round(f["rss_samples"][-1]["rss_mib"], 1), "unit": "MiB"},
        {"name": "soak: server RSS growth (last vs first quarter)", "value": round(growth, 1), "unit": "MiB"},
        {"name": "soak: clients resynced by snapshot", "value": f["clients_resynced"], "unit": "clients"},
        {"name": "soak: events lost (gaps)", "value": f["gaps"], "unit": "events", "target": "<= 0"},
        {"name": "soak: longest silence seen by a client while dealing", "value": f["max_silence_s"], "unit": "s"},
    ]  # fmt: skip
