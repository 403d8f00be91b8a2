"""Nobody but the director learns anything of a draw before its reveal (issue #12).

A real server on loopback. After the bank is formed, every byte the service sends to anyone but the director is
captured — the audience's event stream, snapshot and page, the judge's websocket, state and page — while two
draws are prepared, shown, given their public value and run, and while the boards of the first are made on a
simulated machine that fouls copies. Before any reveal, none of it may hold a drawn deal, a card of one, K, or a
list of deals (the eligible set or the picks).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import websockets
from _web_server import press_start, running_service, service_config
from custody_support import unlocked
from test_web_stream import Capture, wait_for

from dealer.app.board_views import FOUL_PUBLIC_KEYS
from dealer.bank.store import SqliteBank
from dealer.draw.director import Director
from dealer.regulation import regulation_from_dict

CARD_NAME = re.compile(r"[♠♥♦♣][AKQJT2-9]|\b[SHDC][AKQJT2-9]\b")
DICE = {"witnesses": ["Ann", "Boris"], "rolls": 8}


class JudgeSocket:
    """The judge's websocket in a thread, keeping every text frame."""

    def __init__(self, port: int, secret: str) -> None:
        self.frames: list[str] = []
        self.stop = threading.Event()
        self.open = threading.Event()
        self.url = f"ws://127.0.0.1:{port}/judge/ws"
        self.headers = {"Authorization": f"Bearer {secret}"}
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        async with websockets.connect(self.url, additional_headers=self.headers) as ws:
            self.open.set()
            while not self.stop.is_set():
                try:
                    self.frames.append(str(await asyncio.wait_for(ws.recv(), 0.2)))
                except TimeoutError:
                    continue

    def __enter__(self) -> JudgeSocket:
        self.thread.start()
        assert self.open.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def _walk(value: Any, key: str, visit: Any) -> None:
    if visit(key, value) is False:  # the visitor took this part whole
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _walk(v, k, visit)
    elif isinstance(value, list):
        for v in value:
            _walk(v, key, visit)


def test_nothing_of_two_draws_and_their_boards_leaves_the_service_before_reveal(tmp_path: Path) -> None:
    reg = regulation_from_dict(
        {
            "dealing": {"variant": 2, "open_cards": 32},
            "draw": {"share_percent": 10},
            "session": {"boards": 2, "copies": 2},
            "schedule": {"sessions": 2},
        }
    )  # 2 sessions × 2 boards at 10 %: a 40-deal bank
    assert reg.bank_target == 40
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 5000.0, "fault_rate": 0.0}])
    with running_service(cfg, reg) as server:
        press_start(server)  # the technical judge starts the dealing
        wait_for(lambda: server.service.stations["A"].status == "target_reached", 120)
        judge_secret = server.service.secrets.secret("judge")
        judge = {"Authorization": f"Bearer {judge_secret}"}
        director = httpx.Client(
            base_url=server.base, headers={"Authorization": f"Bearer {server.director}"}, timeout=60
        )
        public_extra: list[bytes] = []
        judge_extra: list[bytes] = []

        def look() -> None:  # what the audience and the judge can fetch at any moment
            public_extra.append(httpx.get(f"{server.base}/api/public/snapshot").content)
            judge_extra.append(httpx.get(f"{server.base}/api/judge/state", headers=judge).content)

        def draw(label: str, value: str) -> None:
            for path, body in (
                ("/api/director/draws", {"label": label, **DICE}),
                (f"/api/director/draws/{label}/publish", {}),
                (f"/api/director/draws/{label}/value", {"public_value": value}),
                (f"/api/director/draws/{label}/run", {}),
            ):
                r = director.post(path, json=body)
                assert r.status_code == 200, (path, r.text)
                look()

        with Capture(f"{server.base}/api/public/events") as audience, JudgeSocket(server.port, judge_secret) as ws:
            assert director.post("/api/director/seal").status_code == 200
            draw("R1", "12345612 65432165")
            r = director.post(
                "/api/director/draws/R1/boards",
                json={"device": "simulator", "pace": 0.01, "faults": "wrong_pocket@2,jam@3:30", "seed": 3},
            )
            assert r.status_code == 202, r.text

            def boards_done() -> bool:
                look()
                return bool(director.get("/api/director/draws/R1/boards").json()["state"] != "running")

            wait_for(boards_done, 240)
            made = director.get("/api/director/draws/R1/boards").json()
            assert made["state"] == "done" and len(made["fouls"]) >= 2, made
            assert any(f["card"] for f in made["fouls"])  # the director's own view names the card
            draw("R2", "36251441/22516363")  # prepared and run while R1 is still unrevealed
            look()
            public_extra.append(httpx.get(f"{server.base}/").content)
            judge_extra.append(httpx.get(f"{server.base}/judge", headers=judge).content)
        director.close()

    bank = unlocked(SqliteBank(tmp_path / "var" / "bank.sqlite"))  # the chief judge's key opens what was drawn
    try:
        records = [bank.get_draw(label) for label in ("R1", "R2")]
        chief = Director(bank)
        drawn_ids = [d.deal.deal_id for label in ("R1", "R2") for d in chief.drawn_deals(label)]
        secrets = [chief._secret(rec) for rec in records]  # K itself, opened
        deals = bank.get_deals(drawn_ids)
    finally:
        bank.close()
    assert len(drawn_ids) == 4 and len(set(drawn_ids)) == 4 and all(r.state == "drawn" for r in records)

    public_bytes = bytes(audience.raw) + b"".join(public_extra)
    judge_bytes = "".join(ws.frames).encode() + b"".join(judge_extra)
    everything = public_bytes + judge_bytes
    # no drawn deal in any form, no K
    for d in deals:
        for needle in (d.deal.to_pbn(), d.deal.to_bytes().hex(), str(d.deal.rank()), d.salt.hex(), d.commitment.hex()):
            assert needle.encode() not in everything, (d.deal_id, needle)
    for rec, secret in zip(records, secrets, strict=True):
        assert secret.hex().encode() not in everything and rec.secret.hex().encode() not in everything

    # every message, parsed: no card at all (the stations are idle), no card name, no list of deals
    messages = [m for _, m in audience.messages()] + [json.loads(f) for f in ws.frames]
    messages += [json.loads(b) for b in public_extra[:-1] + judge_extra[:-1]]
    fouls_seen: list[dict[str, Any]] = []
    formation: list[str] = []  # the last formed deal's open cards, as shown during formation (public then)

    def visit(key: str, value: Any) -> bool:
        if key == "hands":
            formation.append(json.dumps(value, sort_keys=True))
            return False
        assert key not in ("card", "eligible", "ranges", "drawn", "drawn_ids", "pbn"), (key, value)
        assert not (key == "cards" and isinstance(value, list)), value  # "cards": a count is fine
        if isinstance(value, str):
            assert not CARD_NAME.search(value), value
        if isinstance(value, list) and key not in ("made", "skipped") and all(type(x) is int for x in value):
            assert len(value) < 2 or not set(value) & set(drawn_ids), (key, value)
        if key == "fouls" and isinstance(value, list):
            fouls_seen.extend(value)
        return True

    for m in messages:
        _walk(m, "", visit)
    assert len(set(formation)) <= 1  # formation's last display, unchanged by the draws and the boards
    assert fouls_seen, "the judge's console was told of the foul copies"
    for f in fouls_seen:
        assert tuple(f) == FOUL_PUBLIC_KEYS and f["kind"] and f["pocket"] in (None, "N", "E", "S", "W"), f
    assert any(f["kind"].endswith("wrong_pocket") and f["position"] and f["pocket"] for f in fouls_seen), fouls_seen
    hall = [m for m in messages if m.get("type") == "commitment"]
    assert {m["label"] for m in hall} == {"R1", "R2"} and all("format" in m and m["witnesses"] for m in hall)
    assert {m["value"] for m in hall if m.get("value")} == {"12345612/65432165", "36251441/22516363"}
