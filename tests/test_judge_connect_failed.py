"""A device that does not open: the judge's Connect is refused and the station is not left "connecting" (in which the
console offers no button at all: Connect, Disconnect and Start were all off until the service was restarted)."""

from __future__ import annotations

from pathlib import Path

import httpx
from _web_server import regulation, running_service, service_config


def test_a_device_that_does_not_open_leaves_the_station_connectable(tmp_path: Path) -> None:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 3000.0}])
    with running_service(cfg, regulation(2, 32, target=10), autostart=False) as server:
        judge = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.judge}"}, timeout=20)
        with judge:
            assert judge.post("/api/judge/stations/A/connect", json={"device": "simulator"}).status_code == 200
            missing = str(tmp_path / "no-such-tty")  # a serial port that is not there
            refused = judge.post("/api/judge/stations/A/connect", json={"device": missing})
            assert refused.status_code == 400 and missing in refused.json()["detail"], refused.text
            (station,) = judge.get("/api/judge/state").json()["stations"]
            assert station["status"] not in ("connecting", "ready") and station["device"] is None, station
            again = judge.post("/api/judge/stations/A/connect", json={"device": "simulator"})
            assert again.status_code == 200, again.text
            (station,) = judge.get("/api/judge/state").json()["stations"]
            assert station["status"] == "ready" and station["device"] is not None, station
