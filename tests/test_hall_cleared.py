"""#27 item 4: once the bank reaches its target the hall and remote displays clear every deal's cards and bank
number; nothing of formation is in any public byte from the target until the reveal — a client that connects
afterwards, or resumes from an id before the target, gets the cleared picture, not the old cards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from _web_server import regulation, running_service, service_config
from test_web_stream import Capture, judge, wait_for

from dealer.bank.store import SqliteBank


def events(raw: bytes) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for block in raw.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            out.append((int(lines.get("id", "0")), json.loads(lines["data"])))
    return out


def test_after_the_target_no_public_byte_holds_a_deal_of_formation(tmp_path: Path) -> None:
    cfg = service_config(tmp_path, broadcast_delay=0.2)
    with running_service(cfg, regulation(2, 32, target=6), autostart=False) as server:
        with Capture(f"{server.base}/api/public/events") as during:
            judge(server, "connect", device="simulator")
            judge(server, "start")
            wait_for(lambda: server.service.stations["A"].status == "target_reached")
            wait_for(lambda: b'"cleared"' in bytes(during.raw))
        seen = events(bytes(during.raw))
        # a connected viewer gets the clearing as the message, or (its history dropped) as a cleared snapshot
        cleared_at = next(i for i, m in seen if m["type"] == "cleared" or b'"phase":"cleared"' in json.dumps(m,
                          separators=(",", ":")).encode())  # fmt: skip
        dealt_cards = [m["card"] for _, m in seen if m["type"] == "card"]
        committed = [int(m["bank_deal"]) for _, m in seen if m["type"] == "deal_committed"]
        assert len(committed) >= 5 and len(dealt_cards) >= 5 * 32  # the hall saw formation (32 open cards a deal)

        def picture(path: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
            with Capture(f"{server.base}{path}", headers) as late:
                wait_for(lambda: b"\n\n" in bytes(late.raw))
            return [m for _, m in events(bytes(late.raw))]

        hall = picture("/api/public/events")
        resumed = picture("/api/public/events", {"Last-Event-ID": str(cleared_at - 5)})
        wait_for(lambda: server.service.remote.last_id >= server.service.hub.last_id)  # the delay has passed
        remote = picture("/api/remote/events")
        snapshots = [httpx.get(f"{server.base}/api/{name}/snapshot").json() for name in ("public", "remote")]
        assert hall and resumed and remote
        for messages in (hall, resumed, remote, snapshots):
            for m in messages:
                assert m["type"] not in ("card", "hidden", "deal_committed"), m
                for st in m.get("stations", []):
                    assert st["bank_deal"] is None and st["phase"] == "cleared", st
                    assert all(not h["open"] for h in st["hands"].values()), st
        # the chief judge's command clears again, and a station that never reached a target too
        director = {"Authorization": f"Bearer {server.director}"}
        assert httpx.post(f"{server.base}/api/director/hall/clear", headers=director).json() == {"cleared": True}
        assert httpx.post(f"{server.base}/api/director/hall/clear").status_code == 401
    with SqliteBank(tmp_path / "var" / "bank.sqlite", read_only=True) as bank:
        assert bank.deal_count() == 6 and set(committed) <= set(range(1, 7))
