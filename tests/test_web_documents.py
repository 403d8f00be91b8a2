"""Documents from the consoles over a real server: the technical judge records equipment checks with the
device's own figures and issues the equipment act; the chief judge issues the others; roles stay separate."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from hashlib import sha256
from pathlib import Path

import httpx
import pytest
from _web_server import deal_to_target, regulation, running_service, service_config

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler-utils (pdftotext) not installed")


def text_of(pdf: bytes, tmp: Path) -> str:
    path = tmp / "doc.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True, timeout=60)
    return " ".join(out.stdout.decode("utf-8").split())


def test_consoles_issue_documents(tmp_path: Path) -> None:
    cfg = service_config(tmp_path)
    reg = dataclasses.replace(
        regulation(3, None, target=40), title="Кубок города", chief_judge="Иванов И. И.", technical_judge="Петров П. П."
    )
    with running_service(cfg, reg) as server:
        deal_to_target(server)  # the technical judge starts the dealing
        judge = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.judge}"}, timeout=60)
        director = httpx.Client(
            base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}, timeout=60
        )
        with judge, director:
            bad = judge.post(
                "/api/judge/checks", json={"station": "A", "session": "s1", "phase": "later", "outcome": "ok"}
            )
            assert bad.status_code == 400 and "phase" in bad.json()["detail"]
            nobody = judge.post(
                "/api/judge/checks", json={"station": "Z", "session": "s1", "phase": "after", "outcome": "ok"}
            )
            assert nobody.status_code == 400 and "station" in nobody.json()["detail"]
            refused = judge.post("/api/judge/documents/equipment", json={"session": "s1"})
            assert refused.status_code == 400  # no check recorded yet
            r = judge.post(
                "/api/judge/checks",
                json={"station": "A", "session": "s1", "phase": "after", "outcome": "ok", "note": "всё в порядке"},
            )
            assert r.status_code == 200, r.text
            check = r.json()
            health = server.service.stations["A"].health()
            assert (
                check["deals"] == health["deals"] >= 40
                and check["device"]["serial"]
                and check["device"] == server.service.stations["A"].state()["device"]
            )
            listed = judge.get("/api/judge/checks", params={"session": "s1"}).json()
            assert [c["ledger_index"] for c in listed] == [check["ledger_index"]]
            r = judge.post("/api/judge/documents/equipment", json={"session": "s1", "lang": "ru"})
            assert r.status_code == 200, r.text
            doc = r.json()
            pdf = judge.get(doc["url"])
            assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
            assert sha256(pdf.content).hexdigest() == doc["sha256"]
            text = text_of(pdf.content, tmp_path)
            assert "Акт проверки оборудования" in text and "Петров П. П." in text and "Кубок города" in text
            assert f"{health['cards_read']} / {health['deals']} / {health['errors']}" in text
            # the judge issues no director document and downloads none
            assert judge.post("/api/director/documents/bank", json={}).status_code == 403

            r = director.post("/api/director/documents/bank", json={"lang": "en", "audit": False})
            assert r.status_code == 200, r.text
            bank_doc = r.json()
            assert judge.get(f"/api/judge/documents/{bank_doc['file']}").status_code == 404
            pdf = director.get(bank_doc["url"])
            assert sha256(pdf.content).hexdigest() == bank_doc["sha256"]
            text = text_of(pdf.content, tmp_path)
            assert "Deal bank formation act" in text and "40 deals" in text and "Иванов И. И." in text
            assert director.post("/api/director/documents/draw", json={"label": "nope"}).status_code == 400
            assert director.post("/api/director/documents/receipt", json={}).status_code == 404
            no_label = director.post("/api/director/documents/draw", json={})
            assert (no_label.status_code, no_label.json()["detail"]) == (
                422,
                "label: the draw document needs the session label",
            )
            no_day = director.post("/api/director/documents/day", json={"date": "2026-02-30"})
            assert (no_day.status_code, no_day.json()["detail"]) == (
                422,
                "date = '2026-02-30': expected a real date YYYY-MM-DD",
            )
            no_act = director.post("/api/director/documents/closed", json={})  # variant 2 here
            assert (no_act.status_code, no_act.json()["detail"]) == (
                400,
                "the closed dealing act is for variant 1 only",
            )
            assert director.get("/api/director/documents/..%2Fbank.sqlite").status_code == 404
            day = director.post("/api/director/documents/day", json={"lang": "ru"})
            assert day.status_code == 200, day.text
            text = text_of(director.get(day.json()["url"]).content, tmp_path)
            assert "Содержание" in text and doc["sha256"][:40] in "".join(text.split())  # the cell wraps the rest
