"""Equipment checks gate the day: «Старт» needs the station's "before" check in order, recorded today by the
technical judge, or the chief judge's override with its reason — both in the ledger."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from _web_server import press_start, regulation, running_service, service_config

from dealer.app.config import ConfigError, config_from_dict
from dealer.bank.store import SqliteBank


def test_start_waits_for_the_before_check(tmp_path: Path) -> None:
    cfg = service_config(
        tmp_path,
        require_equipment_check=True,
        stations=[{"name": "A", "cards_per_second": 3000.0}, {"name": "B", "cards_per_second": 3000.0}],
    )
    with running_service(cfg, regulation(2, 32, target=50), autostart=False) as server:
        judge = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.judge}"}, timeout=20)
        boss = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}, timeout=20)
        with judge, boss:
            for name in ("A", "B"):
                assert (
                    judge.post(f"/api/judge/stations/{name}/connect", json={"device": "simulator"}).status_code == 200
                )
            refused = judge.post("/api/judge/stations/A/start")
            assert refused.status_code == 400 and "'before' equipment check" in refused.text, refused.text
            ru = judge.post("/api/judge/stations/A/start", headers={"X-Dealer-Lang": "ru"})
            assert "проверка оборудования «до начала»" in ru.json()["detail"]
            # a "before" check found faulty does not open the gate; one in order does, for its station only
            check = {"station": "A", "session": "Сессия 1", "phase": "before", "outcome": "faulty"}
            assert judge.post("/api/judge/checks", json=check).status_code == 200
            assert judge.post("/api/judge/stations/A/start").status_code == 400
            assert judge.post("/api/judge/checks", json={**check, "outcome": "ok"}).status_code == 200
            assert judge.post("/api/judge/stations/A/start").status_code == 200
            assert judge.post("/api/judge/stations/B/start").status_code == 400
            # the chief judge's override: a reason required, the station named, recorded in the ledger
            assert boss.post("/api/director/equipment-override", json={"station": "B"}).status_code == 422
            assert (
                boss.post("/api/director/equipment-override", json={"station": "Z", "reason": "x"}).status_code == 400
            )
            reason = "машина проверена вчера вечером, акт № 3"
            done = boss.post("/api/director/equipment-override", json={"station": "B", "reason": reason})
            assert done.status_code == 200, done.text
            assert judge.post("/api/judge/stations/B/start").status_code == 200
            again = judge.post("/api/judge/stations/A/start")
            assert again.status_code == 200, again.text  # pressed again: still allowed
    bank = SqliteBank(cfg.bank_path)
    try:
        overrides = bank.entries_of_kind("equipment-override")
    finally:
        bank.close()
    assert [(e.data["station"], e.data["reason"]) for e in overrides] == [("B", reason)]


def test_the_gate_is_a_setting_refused_when_not_a_boolean() -> None:
    assert config_from_dict({}).require_equipment_check is True  # on unless the event turns it off
    assert config_from_dict({"require_equipment_check": False}).require_equipment_check is False
    with pytest.raises(ConfigError, match="require_equipment_check"):
        config_from_dict({"require_equipment_check": "yes"})


def test_start_pressed_again_and_again_while_dealing_never_stops_the_station(tmp_path: Path) -> None:
    """A second Start crossed the station's own request for its next deal: the machine answered busy ("deal 4 is
    still in progress", seen under load in a full run) and the station stopped. Start on a dealing station is a
    no-op now: 100 presses while it deals, every one answered 200, and it deals on."""
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 3000.0}])
    with running_service(cfg, regulation(2, 32, target=100_000)) as server:
        press_start(server)
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.judge}"}, timeout=20) as j:
            for _ in range(100):
                again = j.post("/api/judge/stations/A/start")
                assert again.status_code == 200, again.text
            station = server.service.stations["A"]
            assert station.running and str(station.status) == "dealing", station.status
            bank = server.service.bank.bank
            before = bank.deal_count()
            deadline = time.monotonic() + 30
            while bank.deal_count() < before + 3:  # still dealing after the presses
                assert time.monotonic() < deadline
                time.sleep(0.02)
