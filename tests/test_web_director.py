"""The director's console over a real server: seal, commit, publish, public value, draw, reveal, bundle."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
from _web_server import deal_to_target, regulation, running_service, service_config

from dealer.draw.bundle import verify_bundle

ROOT = Path(__file__).resolve().parents[1]


def test_director_runs_a_verifiable_draw_and_the_audience_sees_only_the_commitment(tmp_path: Path) -> None:
    cfg = service_config(tmp_path)
    with running_service(cfg, regulation(3, None, target=40)) as server:
        deal_to_target(server)
        auth = {"Authorization": f"Bearer {server.director}"}
        with httpx.Client(base_url=server.base, headers=auth, timeout=30) as d:
            status = d.get("/api/director/status").json()
            assert status["deals"] == 40 and status["seals"] == [] and status["draw_available"]
            dice = {"witnesses": ["Ann", "Boris"], "rolls": 8}
            refused = d.post("/api/director/draws", json={"label": "s1", **dice})
            assert refused.status_code == 400 and "seal" in refused.json()["detail"]
            seal = d.post("/api/director/seal").json()
            assert seal["last_deal"] == 40 and "warning" not in seal
            status = d.get("/api/director/status").json()
            assert status["plan"]["quota"] == 2 and status["plan"]["share"] == "5%"  # 5 % of 40, from the regulation
            weak = d.post("/api/director/draws", json={"label": "s1", "witnesses": ["Ann"], "rolls": 3})
            assert weak.status_code == 400 and "7.8 bits" in weak.json()["detail"]
            prepared = d.post("/api/director/draws", json={"label": "s1", **dice})
            assert prepared.status_code == 200, prepared.text
            assert prepared.json()["commitment"]["n"] == 1  # the regulation's one board a session
            early = d.post("/api/director/draws/s1/value", json={"dice": ["12345612", "65432165"]})
            assert early.status_code == 400 and "shown to the hall" in early.json()["detail"]
            published = d.post("/api/director/draws/s1/publish").json()
            snap = httpx.get(f"{server.base}/api/public/snapshot").json()
            hall = snap["commitment"]
            assert hall["commitment"] == published["commitment"] and hall["deals"] == 1
            head = hall["head"]
            assert head == published["head"] and re.fullmatch(r"\d+:[0-9a-f]{64}", head)
            assert hall["witnesses"] == ["Ann", "Boris"] and "16" not in hall["format"] and "d6" in hall["format"]
            assert hall.get("value") is None
            bad = d.post("/api/director/draws/s1/value", json={"dice": ["1234561", "65432165"]})
            assert bad.status_code == 400 and "Ann" in bad.json()["detail"]
            shown = d.post("/api/director/draws/s1/value", json={"public_value": "1234 5612, 6543 2165", "check": True})
            assert shown.json() == {"label": "s1", "public_value": "12345612/65432165", "stored": False}
            stored = d.post("/api/director/draws/s1/value", json={"dice": ["12345612", "65432165"]}).json()
            assert stored["public_value"] == "12345612/65432165" and stored["stored"]
            snap = httpx.get(f"{server.base}/api/public/snapshot").json()
            assert snap["commitment"]["value"] == "12345612/65432165"  # V on the hall the moment it is entered
            drawn = d.post("/api/director/draws/s1/run").json()["drawn"]
            assert len(drawn) == 1 and all(len(x["hands"]["N"]) == 13 for x in drawn)
            before = d.get("/api/director/draws/s1/bundle")
            assert before.status_code == 400  # the bundle holds K: only after reveal
            # nothing of the draw reaches the audience: no drawn ids, no K
            public = httpx.get(f"{server.base}/api/public/snapshot").text
            assert '"drawn":' not in public and all(x["pbn"] not in public for x in drawn)
            assert '"state":"drawn"' in public  # the hall knows the draw has run, not what it drew
            d.post("/api/director/draws/s1/reveal").raise_for_status()
            snap = httpx.get(f"{server.base}/api/public/snapshot").json()
            assert snap["commitment"]["state"] == "revealed" and snap["commitment"]["drawn"] == [drawn[0]["deal_id"]]
            bundle = d.get("/api/director/draws/s1/bundle")
            assert bundle.headers["content-disposition"].startswith("attachment")
            checks = verify_bundle(bundle.json())
            assert checks and all(c.ok for c in checks)
            # the ledger head the hall showed at publish is one the bundle proves: officials note it there
            (tmp_path / "b.json").write_bytes(bundle.content)
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            command = [sys.executable, "-m", "dealer", "--lang", "en", "draw", "verify", "b.json", "--head", head]
            verified = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            assert "right after the commitment" in verified.stdout
            # a judge cannot draw
            judge = httpx.post(f"{server.base}/api/director/seal", headers={"Authorization": f"Bearer {server.judge}"})
            assert judge.status_code == 403


def test_a_cyrillic_session_keeps_its_name_in_the_bundle_download() -> None:
    """«bundle-____1.json» was what a browser saved for «Сессия 1»: the name goes whole (RFC 5987), with a Latin
    fallback for old clients; the header itself stays ASCII."""
    from urllib.parse import unquote

    from dealer.export.names import session_slug
    from dealer.web.routes_export import attachment

    header = attachment(f"bundle-{session_slug('Сессия 1')}.json")
    assert header.isascii()
    assert 'filename="bundle-Sessiia_1.json"' in header
    assert unquote(header.split("filename*=UTF-8''")[1]) == "bundle-Сессия_1.json"
