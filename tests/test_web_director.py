"""The director's console over a real server: seal, commit, publish, public value, draw, reveal, bundle."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from _web_server import press_start, regulation, running_service, service_config

from dealer.draw.bundle import verify_bundle


def test_director_runs_a_verifiable_draw_and_the_audience_sees_only_the_commitment(tmp_path: Path) -> None:
    cfg = service_config(tmp_path)
    with running_service(cfg, regulation(3, None, target=40)) as server:
        press_start(server)
        deadline = time.monotonic() + 60
        while server.service.stations["A"].status != "target_reached":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        auth = {"Authorization": f"Bearer {server.director}"}
        with httpx.Client(base_url=server.base, headers=auth, timeout=30) as d:
            status = d.get("/api/director/status").json()
            assert status["deals"] == 40 and status["seals"] == [] and status["draw_available"]
            refused = d.post("/api/director/draws", json={"label": "s1", "share": 5})
            assert refused.status_code == 400 and "seal" in refused.json()["detail"]
            seal = d.post("/api/director/seal").json()
            assert seal["last_deal"] == 40
            too_many = d.post("/api/director/draws", json={"label": "s1", "share": 50})
            assert too_many.status_code == 400
            prepared = d.post(
                "/api/director/draws", json={"label": "s1", "share": 5, "witnesses": ["Ann", "Boris"], "digits": 3}
            )
            assert prepared.status_code == 200, prepared.text
            assert prepared.json()["commitment"]["n"] == 2
            published = d.post("/api/director/draws/s1/publish").json()
            snap = httpx.get(f"{server.base}/api/public/snapshot").json()
            assert snap["commitment"]["commitment"] == published["commitment"] and snap["commitment"]["deals"] == 2
            bad = d.post("/api/director/draws/s1/value", json={"dice": ["12", "345"]})
            assert bad.status_code == 400 and "Ann" in bad.json()["detail"]
            assert (
                d.post("/api/director/draws/s1/value", json={"dice": ["123", "456"]}).json()["public_value"]
                == "123/456"
            )
            drawn = d.post("/api/director/draws/s1/run").json()["drawn"]
            assert len(drawn) == 2 and all(len(x["hands"]["N"]) == 13 for x in drawn)
            before = d.get("/api/director/draws/s1/bundle")
            assert before.status_code == 400  # the bundle holds K: only after reveal
            # nothing of the draw reaches the audience: no drawn ids, no K
            public = httpx.get(f"{server.base}/api/public/snapshot").text
            assert "drawn" not in public and all(x["pbn"] not in public for x in drawn)
            d.post("/api/director/draws/s1/reveal").raise_for_status()
            bundle = d.get("/api/director/draws/s1/bundle")
            assert bundle.headers["content-disposition"].startswith("attachment")
            checks = verify_bundle(bundle.json())
            assert checks and all(c.ok for c in checks)
            # a judge cannot draw
            judge = httpx.post(f"{server.base}/api/director/seal", headers={"Authorization": f"Bearer {server.judge}"})
            assert judge.status_code == 403
