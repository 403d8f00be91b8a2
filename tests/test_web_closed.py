"""Variant 1 (closed dealing) on the simulator: deals go into numbered boards, never into the bank or a draw, and
nothing of any card reaches the audience, which sees only "board n of m"."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import httpx
from _web_server import regulation, running_service, service_config

from dealer.bank.store import SqliteBank
from dealer.core import Deal, board_dealer

BOARDS = 4


def pdf_text(data: bytes) -> str:
    out = subprocess.run(["pdftotext", "-", "-"], input=data, capture_output=True, check=True, timeout=60)
    return " ".join(out.stdout.decode("utf-8").replace("\u00a0", " ").split())


# Law 2, boards 1-4 (the printed table of the Laws): dealer N E S W; vulnerability None, N-S, E-W, All
LAW2 = [("N", "None"), ("E", "NS"), ("S", "EW"), ("W", "All")]


def test_a_variant_1_station_deals_boards_and_the_audience_learns_nothing_of_a_card(tmp_path: Path) -> None:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 3000.0}])
    reg = dataclasses.replace(regulation(2, 32, target=50), boards_per_session=BOARDS, copies=3)
    reg = dataclasses.replace(reg, variant=type(reg.variant)(1), open_cards=None)
    raw = bytearray()
    with running_service(cfg, reg, autostart=False) as server:
        got_all = threading.Event()
        ready = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", f"{server.base}/api/public/events", timeout=30) as resp:
                for chunk in resp.iter_raw():
                    raw.extend(chunk)
                    ready.set()
                    if f'"board":{BOARDS},'.encode() in raw:
                        got_all.set()
                        return

        reader = threading.Thread(target=listen, daemon=True)
        reader.start()
        assert ready.wait(20)
        auth = {"Authorization": f"Bearer {server.judge}"}
        with httpx.Client(base_url=server.base, headers=auth, timeout=20) as client:
            assert client.post("/api/judge/stations/A/connect", json={"device": "simulator"}).status_code == 200
            assert client.post("/api/judge/stations/A/start").status_code == 200
            assert got_all.wait(60), raw[-400:]
            deadline = time.monotonic() + 20
            while (state := client.get("/api/judge/state").json()["stations"][0])["status"] != "target_reached":
                assert time.monotonic() < deadline, state["status"]
                time.sleep(0.05)
            assert state["closed"] is True and state["boards_made"] == BOARDS
            shown = client.post("/api/judge/stations/A/show")
            assert shown.status_code == 400 and "never shown" in shown.text  # not even on the judge's console
            snapshot = httpx.get(f"{server.base}/api/public/snapshot").content
            remote = httpx.get(f"{server.base}/api/remote/snapshot").content
        director = {"Authorization": f"Bearer {server.director}"}
        with httpx.Client(base_url=server.base, headers=director, timeout=60) as client:
            status = client.get("/api/director/status").json()
            listed = [(b["board"], b["dealer"], b["vulnerability"], b["copies"]) for b in status["closed"]["boards"]]
            assert listed == [(n + 1, d, v, 3) for n, (d, v) in enumerate(LAW2)]
            assert all("pbn" not in b for b in status["closed"]["boards"])
            files = client.post("/api/director/draws/closed/files", json={"formats": ["pbn"]})
            assert files.status_code == 200 and files.json()["boards"] == BOARDS, files.text
            pbn = client.get(f"/api/director/draws/closed/files/{files.json()['files'][0]}").text
            name = {"ru": "Закрытая сдача", "en": "Closed dealing"}[cfg.language]  # the variant's name, not «closed»
            assert f'[Event "{name}"]' in pbn and '[Date "?"]' not in pbn, pbn[:300]
            assert re.search(r'\[Date "\d{4}\.\d{2}\.\d{2}"\]', pbn)
            records = client.post("/api/director/draws/closed/handrecords", json={"formats": ["html"]})
            assert records.status_code == 200 and records.json()["boards"] == BOARDS, records.text
            # the boards made on a machine: the board-making act names the session by the variant, not «closed»
            made = client.post("/api/director/draws/closed/boards", json={"device": "simulator", "pace": 0})
            assert made.status_code == 202, made.text
            deadline = time.monotonic() + 60
            while client.get("/api/director/draws/closed/boards").json()["state"] == "running":
                assert time.monotonic() < deadline
                time.sleep(0.1)
            last = client.get("/api/director/draws/closed/boards").json()["current"]
            assert last == "board 4 of 4 (no. 4), copy 3 of 3"  # from the catalogue, in the service's language
            boards_act = client.post("/api/director/documents/boards", json={"label": "Сессия 1", "lang": "ru"})
            assert boards_act.status_code == 200, boards_act.text
            boards_pdf = client.get(boards_act.json()["url"]).content
            # variant 1 has its own act; the bank's and the draw's are refused, their panels hidden
            act = client.post("/api/director/documents/closed", json={"label": "Сессия 1", "lang": "ru"})
            assert act.status_code == 200, act.text
            pdf = client.get(act.json()["url"]).content
            # issued with no session named (a script's POST): the variant's name stands for it, never «closed»
            unnamed = client.post("/api/director/documents/closed", json={"lang": "ru"})
            assert unnamed.status_code == 200, unnamed.text
            unnamed_pdf = client.get(unnamed.json()["url"]).content
            for kind in ("bank", "draw"):
                refused = client.post(f"/api/director/documents/{kind}", json={"label": "Сессия 1"})
                assert refused.status_code == 400 and "variant 1" in refused.text
            page = client.get("/director?lang=ru").text
            assert 'id="bankpanel" hidden' in page and 'id="drawpanel" hidden' in page
            assert 'data-doc="closed"' in page and 'data-doc="bank"' not in page
        reader.join(5)
    lines = (tmp_path / "var" / "boards" / "closed.jsonl").read_text().splitlines()
    boards = [json.loads(line) for line in lines]
    assert [b["board"] for b in boards] == [1, 2, 3, 4]
    assert all(b["copies"] == 3 and b["station"] == "A" for b in boards)
    deals = [Deal.from_pbn(b["deal"]) for b in boards]
    assert len({d.to_pbn() for d in deals}) == BOARDS
    bank = SqliteBank(cfg.bank_path)
    try:
        assert bank.deal_count() == 0  # never in the bank (so never in a draw)
        # but every board is on record in the tamper-evident ledger: its salted hash, never its deal
        entries = bank.entries_of_kind("closed-board")
    finally:
        bank.close()
    assert [e.data["board"] for e in entries] == [1, 2, 3, 4]
    for entry, line in zip(entries, boards, strict=True):
        deal = Deal.from_pbn(line["deal"])
        assert entry.data["deal_sha256"] == hashlib.sha256(bytes.fromhex(line["salt"]) + deal.to_bytes()).hexdigest()
        assert entry.data["copies"] == 3 and entry.data["station"] == "A"
        assert line["deal"] not in json.dumps(entry.data)
    if shutil.which("pdftotext") is None:  # poppler-utils absent: the act's words go unread
        return
    (tmp_path / "closed-act.pdf").write_bytes(pdf)
    text = pdf_text(pdf)
    for phrase in (
        "Акт закрытой сдачи",
        "Вариант 1 — закрытая сдача",
        "4 коробки из 4 по Положению",
        "3 комплекта",
        "каждая коробка записана в журнал, хэши сдач совпадают",
        "Проверка случайности сдач",
    ):
        assert phrase in text, phrase
    assert "банка сдач" not in text.split("SHA-256 этого файла")[0]  # no bank figures on the closed act
    unnamed_text = pdf_text(unnamed_pdf)
    assert "Закрытая сдача Вариант 1 — закрытая сдача" in unnamed_text and "closed" not in unnamed_text, unnamed_text
    made_text = pdf_text(boards_pdf)
    on_act = made_text.replace("closed.journal.json", "")  # the journal file keeps its own name
    assert "Закрытая сдача" in on_act and "closed" not in on_act and "4 коробки" in made_text
    assert "3 комплекта" in made_text and "РАСХОЖДЕНИЕ" not in made_text
    messages = [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    kinds = {m["type"] for m in messages if m["type"] != "snapshot"}
    assert "card" not in kinds and "hidden" not in kinds, kinds
    progress = [(m["board"], m["boards"]) for m in messages if m["type"] == "board"]
    assert progress == [(n, BOARDS) for n in range(1, BOARDS + 1)]
    public = bytes(raw) + snapshot + remote
    for deal in deals:  # not the deal, nor any hand of it, in any public byte
        assert deal.to_pbn().encode() not in public
        for hand in deal.to_pbn()[2:].split(" "):
            assert hand.encode() not in public
    for m in messages:
        if m["type"] == "snapshot":
            for st in m["stations"]:
                assert all(h == {"open": [], "hidden": 0} for h in st["hands"].values())
    for board, deal in zip(boards, deals, strict=True):  # the director's files hold each board's deal
        dealer = board_dealer(board["board"])  # a PBN deal is written from the board's dealer round
        assert f'[Board "{board["board"]}"]' in pbn and f'[Deal "{deal.to_pbn(dealer)}"]' in pbn
