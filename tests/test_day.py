"""A whole tournament day as one test, against a real ``dealer serve`` process and real clients.

Two stations: a simulated machine on a pseudo-terminal (A) and one behind the pyusb backend (B), both at full
speed with seeded random faults, plus faults the technical judge injects from the console; variant 2 with 32
open cards. The bank is formed, sealed, a 5% draw for "Round 1" runs with a public value from three witnesses,
the boards are made with 2 copies each on a simulated machine with faults, the files are written (PBN, DLM
sealed), the draw is revealed, its bundle is verified by ``dealer draw verify`` in a separate process that has
only the bundle, hand records are produced; then "Round 2" is drawn from the same bank and repeats no deal of
round 1.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from _day_support import (
    AudienceClient,
    DayConfig,
    ServerProcess,
    bank_verify,
    boards_progress,
    dealer_cli,
    director,
    director_headers,
    draw_round,
    formation_done,
    judge_command,
    judge_console,
    judge_headers,
    make_boards,
    station_progress,
    wait_until,
)

from dealer.core import Deal, board_dealer, board_vulnerability
from dealer.formats import by_name, load_all

BOARD_FAULTS = "wrong_pocket@2,jam@5:30,wrong_pocket~0.04,jam~0.03"


def _deal_of(drawn: dict[str, Any]) -> bytes:
    return Deal.from_pbn(drawn["pbn"]).to_bytes()


async def _download(http: httpx.AsyncClient, server: ServerProcess, label: str, name: str) -> bytes:
    r = await http.get(server.base + f"/api/director/draws/{label}/files/{name}", headers=director_headers())
    assert r.status_code == 200, f"{name}: {r.status_code} {r.text}"
    return r.content


def _check_deal_file(fmt: str, data: bytes, drawn: list[dict[str, Any]]) -> None:
    load_all()
    result = by_name(fmt).read(data, source=f"day.{fmt}")
    assert not result.problems, result.problems
    assert [r.deal.to_bytes() for r in result.records] == [_deal_of(d) for d in drawn]
    for number, rec in enumerate(result.records, start=1):
        assert rec.board == number
        assert rec.dealer == board_dealer(number)
        assert rec.vulnerability == board_vulnerability(number)


async def _verify_bundle_elsewhere(
    http: httpx.AsyncClient, server: ServerProcess, label: str, tmp: Path, earlier: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Download the bundle (and those of the earlier draws), copy only them into an empty directory, verify
    there in a separate process."""
    alone = tmp / f"verifier-{label.replace(' ', '_')}"
    alone.mkdir()
    names = []
    for k, which in enumerate((label, *earlier)):
        r = await http.get(server.base + f"/api/director/draws/{which}/bundle", headers=director_headers())
        assert r.status_code == 200, r.text
        names.append(f"bundle-{k}.json")
        (alone / names[-1]).write_bytes(r.content)
    res = dealer_cli("draw", "verify", *names, cwd=alone)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "checks passed" in res.stdout
    assert sorted(p.name for p in alone.iterdir()) == sorted(names)  # the verifier needed (and made) nothing else
    return dict(json.loads((alone / names[0]).read_bytes()))


async def tournament_day(server: ServerProcess, cfg: DayConfig, tmp: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    t0 = time.monotonic()
    async with httpx.AsyncClient(timeout=60) as http, httpx.AsyncClient(timeout=None) as stream_http:
        audience = AudienceClient(server.base)
        stop = asyncio.Event()
        sse = asyncio.create_task(audience.run(stream_http, stop))

        # -- bank formation: both stations deal at once; the judge injects faults at each -------------------
        async with judge_console(server) as ws:
            first = json.loads(await ws.recv())
            assert first["type"] == "state" and {s["station"] for s in first["stations"]} == {"A", "B"}
            for station, kind in (("A", "jam"), ("B", "duplicate_card"), ("A", "unreadable_card"), ("B", "misfeed")):
                reply = await judge_command(ws, station, "inject", kind=kind)
                assert reply["type"] == "ok", reply
            restarted: list[str] = []
            state = await wait_until(
                lambda: formation_done(http, server, cfg.target, restarted),
                120,  # seconds without a deal, a void or a status change: stuck, not slow
                "the bank to be formed",
                progress=lambda: station_progress(http, server),
            )
        figures["formation_s"] = round(time.monotonic() - t0, 1)
        figures["judge_restarts"] = len(restarted)
        assert len(restarted) <= 10, restarted  # a fault now and then, not a station that never deals
        formed = state["bank"]["formed"]
        assert formed >= cfg.target
        by_station = {s["station"]: s for s in state["stations"]}
        for name in ("A", "B"):
            st = by_station[name]
            assert st["committed"] > 0, f"station {name} committed nothing"
            assert st["health"]["errors"] >= 1 and st["voided"], f"station {name} had no fault"
            assert st["open_count"] == 32 and st["variant"] == 2
        assert sum(s["committed"] for s in state["stations"]) == formed
        assert "pyusb" in json.dumps(by_station["B"]["device"]) or "usb" in by_station["B"]["device"]["url"]
        figures["voided"] = {n: len(s["voided"]) for n, s in by_station.items()}
        figures["deals"] = formed

        # -- seal ----------------------------------------------------------------------------------------------
        seal = await director(http, server, "/api/director/seal")
        assert seal["last_deal"] == formed

        # the technical judge cannot draw
        r = await http.post(server.base + "/api/director/draws", headers=judge_headers(), json={"label": "x"})
        assert r.status_code == 403

        # -- Round 1: 5% with three witnesses' dice -------------------------------------------------------------
        round1 = await draw_round(http, server, "Round 1", ["3141", "5926", "5358"])
        drawn1 = round1["drawn"]
        assert round1["commitment"]["n"] == len(drawn1) and abs(len(drawn1) - formed * 0.05) <= 1
        assert round1["commitment"]["public_value"]["witnesses"] == ["Ivanova", "Petrov", "Smith"]

        # hand records wait for the reveal
        r = await http.post(server.base + "/api/director/draws/Round 1/handrecords", headers=director_headers())
        assert r.status_code == 403, r.text

        # -- boards made on a simulated machine with faults, 2 copies each -----------------------------------
        await make_boards(
            http, server, "Round 1", {"device": "simulator", "pace": 0.05, "faults": BOARD_FAULTS, "seed": 9}
        )

        last: list[dict[str, Any]] = []

        async def boards_finished() -> dict[str, Any] | None:
            p = await boards_progress(http, server, "Round 1")
            last[:] = [p]
            return p if p["state"] != "running" else None

        try:
            boards = await wait_until(
                boards_finished, 120, "the boards to be made", progress=lambda: boards_progress(http, server, "Round 1")
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {last}") from None
        assert boards["state"] == "done", boards
        expected = [[b, c] for b in range(1, len(drawn1) + 1) for c in (1, 2)]
        assert sorted(boards["made"]) == expected and boards["copies_done"] == len(expected)
        assert len(boards["fouls"]) >= 2, boards["fouls"]  # the scripted faults at least, each re-made
        assert all(f["reason"] for f in boards["fouls"])
        figures["board_fouls"] = len(boards["fouls"])

        # -- files for other software: PBN and DLM (sealed) ---------------------------------------------------
        files = await director(http, server, "/api/director/draws/Round 1/files", {"formats": ["pbn", "dlm"]})
        assert sorted(files["files"]) == ["Round_1.dlm", "Round_1.pbn"]
        pbn = await _download(http, server, "Round 1", "Round_1.pbn")
        dlm = await _download(http, server, "Round 1", "Round_1.dlm")
        _check_deal_file("pbn", pbn, drawn1)
        _check_deal_file("dlm", dlm, drawn1)
        assert b"Status=Sealed" in dlm

        # -- reveal, the bundle verified with nothing but the bundle ----------------------------------------
        revealed = await director(http, server, "/api/director/draws/Round 1/reveal")
        assert revealed["drawn"] == [d["deal_id"] for d in drawn1]
        bundle = await _verify_bundle_elsewhere(http, server, "Round 1", tmp)
        assert [d["deal_id"] for d in bundle["drawn"]] == revealed["drawn"]

        # -- hand records -----------------------------------------------------------------------------------------
        hr = await director(http, server, "/api/director/draws/Round 1/handrecords", {"lang": "en"})
        names = sorted(hr["files"])
        assert names == ["Round_1.handrecords.html", "Round_1.handrecords.pbn", "Round_1.handrecords.pdf"]
        pdf = await _download(http, server, "Round 1", "Round_1.handrecords.pdf")
        assert pdf.startswith(b"%PDF")
        hr_pbn = await _download(http, server, "Round 1", "Round_1.handrecords.pbn")
        load_all()
        records = by_name("pbn").read(hr_pbn, source="handrecords.pbn").records
        assert [r.deal.to_bytes() for r in records] == [_deal_of(d) for d in drawn1]
        assert b"OptimumResultTable" in hr_pbn or b"DoubleDummyTricks" in hr_pbn

        # -- Round 2 from the same bank: never a deal of round 1 ---------------------------------------------
        round2 = await draw_round(http, server, "Round 2", ["2718", "2818", "2845"])
        ids1 = {d["deal_id"] for d in drawn1}
        ids2 = {d["deal_id"] for d in round2["drawn"]}
        assert round2["commitment"]["eligible"]["count"] == formed - len(ids1)
        assert ids2 and not ids1 & ids2
        await director(http, server, "/api/director/draws/Round 2/reveal")
        await _verify_bundle_elsewhere(http, server, "Round 2", tmp, ("Round 1",))

        # -- the audience saw the bank grow and the commitments, with no gap in its stream ---------------------
        async def both_rounds_seen() -> bool:
            return {m["label"] for _, m in audience.events if m["type"] == "commitment"} >= {"Round 1", "Round 2"}

        async def audience_count() -> int:
            return audience.count

        await wait_until(both_rounds_seen, 60, "the audience to see both commitments", progress=audience_count)
        stop.set()
        sse.cancel()
        await asyncio.gather(sse, return_exceptions=True)
        assert not audience.gaps, audience.gaps[:5]
        assert audience.committed and audience.committed <= set(range(1, formed + 1))
        labels = {m["label"] for _, m in audience.events if m["type"] == "commitment"}
        assert labels == {"Round 1", "Round 2"}
        figures["audience_events"] = audience.count
    figures["ledger"] = bank_verify(cfg).strip()
    figures["total_s"] = round(time.monotonic() - t0, 1)
    return figures


def run_day(tmp_path: Path, target: int) -> dict[str, Any]:
    cfg = DayConfig(tmp_path, target=target)
    server = ServerProcess(cfg)
    server.start()
    try:
        figures = asyncio.run(tournament_day(server, cfg, tmp_path))
    finally:
        code = server.stop()
    log = (tmp_path / "server.log").read_text()
    # Ctrl-C: uvicorn shuts down gracefully, then re-raises SIGINT (exit status 130 by convention)
    assert code in (0, 130) and "Traceback" not in log, log[-3000:]
    print(f"\nday with {target} deals: {json.dumps(figures)}")
    return figures


@pytest.mark.timeout(1800)  # a guard against a hang only: the waits inside fail on a stall, not on slowness
def test_tournament_day(tmp_path: Path) -> None:
    run_day(tmp_path, 200)


def test_draw_verify_refuses_a_tampered_bundle(tmp_path: Path) -> None:
    """The separate verifier is not a rubber stamp: one changed salt in a real day's bundle fails it."""
    cfg = DayConfig(tmp_path, target=40, fault_rate=0.0)
    server = ServerProcess(cfg)
    server.start()

    async def go() -> bytes:
        async with httpx.AsyncClient(timeout=60) as http:
            await wait_until(
                lambda: formation_done(http, server, 40),
                120,
                "the bank",
                progress=lambda: station_progress(http, server),
            )
            await director(http, server, "/api/director/seal")
            await draw_round(http, server, "R", ["1111", "2222", "3333"])
            await director(http, server, "/api/director/draws/R/reveal")
            r = await http.get(server.base + "/api/director/draws/R/bundle", headers=director_headers())
            return r.content

    try:
        raw = asyncio.run(go())
    finally:
        server.stop()
    bundle = json.loads(raw)
    salt = bundle["drawn"][0]["salt"]
    bundle["drawn"][0]["salt"] = ("0" if salt[0] != "0" else "1") + salt[1:]
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "bundle.json").write_text(json.dumps(bundle))
    res = dealer_cli("draw", "verify", "bundle.json", cwd=alone)
    assert res.returncode == 1 and "FAILED" in res.stdout
    shutil.rmtree(alone)
