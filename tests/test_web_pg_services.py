"""Two dealing services on one PostgreSQL bank (``[bank] url``), two stations each, dealing at once: one ledger.

Each service runs in this process on its own uvicorn thread with its own bank connection, as two ``dealer serve``
processes would hold theirs; the database serialises their appends. Afterwards the bank verifies, deal ids run
1..n without a gap or a repeat, and every station's deals are in it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from _web_server import Running, regulation, running_service, service_config
from bank_engines import open_test_bank, pg_database

from dealer.draw.verify import verify_bank


def _start(server: Running, station: str) -> None:
    for action, body in (("connect", {"device": "simulator"}), ("start", {})):
        r = httpx.post(
            f"{server.base}/api/judge/stations/{station}/{action}",
            json=body,
            headers={"Authorization": f"Bearer {server.judge}"},
            timeout=30,
        )
        assert r.status_code == 200, r.text


def test_two_services_with_two_stations_each_form_one_valid_ledger(tmp_path: Path) -> None:
    target = 60
    with pg_database() as url:

        def cfg(name: str, stations: tuple[str, str]) -> Any:
            return service_config(
                tmp_path / name,
                bank={"url": url},
                stations=[{"name": s, "cards_per_second": 3000.0, "fault_rate": 0.0} for s in stations],
            )

        reg = regulation(2, 32, target=target)
        with (
            running_service(cfg("hall1", ("A", "B")), reg, autostart=False) as one,
            running_service(cfg("hall2", ("C", "D")), reg, autostart=False) as two,
        ):
            for server, names in ((one, "AB"), (two, "CD")):
                for name in names:
                    _start(server, name)
            deadline = time.monotonic() + 240
            stations = [*one.service.stations.values(), *two.service.stations.values()]
            while not all(s.status == "target_reached" for s in stations):
                assert time.monotonic() < deadline, [s.status for s in stations]
                time.sleep(0.05)
            formed = {"AB": one.service.hub.state.bank["formed"], "CD": two.service.hub.state.bank["formed"]}
        with open_test_bank(url, tmp_path) as bank:
            report = verify_bank(bank)
            assert report.ok, report.problem
            deals = list(bank.iter_deals())
            assert [d.deal_id for d in deals] == list(range(1, len(deals) + 1))
            assert len(deals) >= target
            assert len({d.deal.to_bytes() for d in deals}) == len(deals)
            assert {d.source["station"] for d in deals} == {"A", "B", "C", "D"}
            # each hall's audience counts the other hall's deals too: the bank figure is the shared bank's
            for names, shown in formed.items():
                own = sum(1 for d in deals if d.source["station"] in names)
                assert own < shown <= len(deals), (names, own, shown)
