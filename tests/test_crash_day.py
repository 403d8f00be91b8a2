"""Crash safety of a tournament day: the server killed with SIGKILL at random (seeded) moments while the bank is
formed and while the boards are made, and restarted each time on the same ``var`` directory — with the bank in a
SQLite file and on PostgreSQL (``[bank] url``; skipped, saying why, where no server answers).

After every kill: every deal the audience was told is committed is in the bank; the ledger verifies
(``dealer bank verify`` in its own process: chain, commitments, every deal whole); each deal that was being
dealt at the kill is voided in the ledger on restart ("interrupted") and formation goes on to the target.
Board making restarted by the director skips every copy finished before the kill and re-makes none of them.
"""

from __future__ import annotations

import asyncio
import json
import random
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
    director,
    draw_round,
    formation_done,
    judge_state,
    make_boards,
    wait_until,
)
from bank_engines import ENGINES, bank_target

from dealer.bank.engines import open_bank_at
from dealer.export.names import session_folder

LABEL = "Round 1"


def _bank_facts(cfg: DayConfig) -> dict[str, Any]:
    """What is in the bank, read with the server dead (or alongside it: SQLite WAL readers, PostgreSQL)."""
    with open_bank_at(cfg.bank, cfg.var, create=False) as bank:
        ids = {d.deal_id for d in bank.iter_deals()}
        deal_entries = bank.entries_of_kind("deal")
        voids = [e.data for e in bank.entries_of_kind("void")]
    return {"ids": ids, "deal_entries": len(deal_entries), "voids": voids}


def _opened(cfg: DayConfig, path: Path) -> bytes:
    """A file of ``var/export`` as the chief judge's key opens it (the service seals them at rest before play)."""
    from custody_support import TEST_PASSPHRASE

    from dealer.custody import unlock_record
    from dealer.custody.files import read_record
    from dealer.export.at_rest import SEALED_MARK, AtRest

    raw = path.read_bytes()
    assert raw[:1] == SEALED_MARK and b'"done"' not in raw  # the account that runs the service reads nothing there
    with open_bank_at(cfg.bank, cfg.var, create=False) as bank:
        bank_id, key_dir = bank.bank_id, bank.key_dir
    keyring = unlock_record(read_record(key_dir), TEST_PASSPHRASE)  # the chief judge's passphrase
    return AtRest(lambda: keyring, bank_id, LABEL).opened(path.name, raw)


def _interrupted(voids: list[dict[str, Any]]) -> int:
    return sum(1 for v in voids if v["reason"] == "interrupted")


def _expected_interrupted(cfg: DayConfig, markers: list[Path]) -> int:
    """Markers whose deal was not committed just before the kill (then there is nothing to void)."""
    n = 0
    with open_bank_at(cfg.bank, cfg.var, create=False) as bank:
        for m in markers:
            mark = json.loads(m.read_text())
            station = m.name.removeprefix("station-").removesuffix(".dealing")
            if not any(e.station == station for e in bank.deal_entries(int(mark["ledger_size"]))):
                n += 1
    return n


async def _listen(server: ServerProcess, audience: AudienceClient, seconds: float) -> None:
    """An audience client connected for ``seconds``; the server is killed while it is still connected."""
    async with httpx.AsyncClient(timeout=None) as http:
        stop = asyncio.Event()
        task = asyncio.create_task(audience.run(http, stop))
        await asyncio.sleep(seconds)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def crash_day(
    root: Path, target: int, formation_kills: int, board_kills: int, seed: int, bank_url: str | None = None
) -> dict[str, Any]:
    rng = random.Random(seed)
    cfg = DayConfig(root, target=target, fault_rate=0.05, seed=seed, bank_url=bank_url)
    server = ServerProcess(cfg)
    acknowledged: set[int] = set()
    figures: dict[str, Any] = {"formation_kills": 0, "interrupted": 0, "board_kills": 0}
    server.start()
    try:
        # -- bank formation, killed again and again ------------------------------------------------------
        for _ in range(formation_kills):
            audience = AudienceClient(server.base, keep=False)
            asyncio.run(_listen(server, audience, rng.uniform(0.4, 1.6)))
            acknowledged |= audience.committed
            server.kill()
            markers = sorted(cfg.var.glob("station-*.dealing"))
            facts = _bank_facts(cfg)
            lost = acknowledged - facts["ids"]
            assert not lost, f"acknowledged deals lost after SIGKILL: {sorted(lost)}"
            assert facts["deal_entries"] == len(facts["ids"])  # no deal row without its ledger entry, or back
            bank_verify(cfg)
            expected = _expected_interrupted(cfg, markers)
            before = _interrupted(facts["voids"])
            figures["formation_kills"] += 1
            server.start()
            after = _interrupted(_bank_facts(cfg)["voids"])
            assert after - before == expected, (markers, before, after)
            figures["interrupted"] += expected

        async def finish_formation() -> dict[str, Any]:
            async with httpx.AsyncClient(timeout=60) as http:
                st = await wait_until(lambda: formation_done(http, server, target), 600, "formation")
                return dict(st)

        state = asyncio.run(finish_formation())
        facts = _bank_facts(cfg)
        assert acknowledged <= facts["ids"] and len(facts["ids"]) == state["bank"]["formed"] >= target
        assert _interrupted(facts["voids"]) == figures["interrupted"]
        figures["deals"] = len(facts["ids"])
        bank_verify(cfg)

        # -- seal, draw, boards on a machine killed mid-way -------------------------------------------------
        async def prepare() -> int:
            async with httpx.AsyncClient(timeout=60) as http:
                await director(http, server, "/api/director/seal")
                drawn = await draw_round(http, server, LABEL, ["1357", "2468", "9753"])
                return len(drawn["drawn"])

        boards = asyncio.run(prepare())
        all_copies = {(b, c) for b in range(1, boards + 1) for c in (1, 2)}
        journal = cfg.var / "export" / session_folder(LABEL) / "Round_1.journal.json"
        body = {"device": "simulator", "pace": 0.4, "faults": "wrong_pocket~0.05,jam~0.05", "seed": seed}
        finished: set[tuple[int, int]] = set()  # copies the director saw finished
        remade: list[tuple[int, int]] = []

        async def board_run(kill_after: int | None) -> dict[str, Any]:
            async with httpx.AsyncClient(timeout=60) as http:
                await make_boards(http, server, LABEL, body)

                async def progressed() -> dict[str, Any] | None:
                    p = await boards_progress(http, server, LABEL)
                    if p["state"] != "running" or (kill_after is not None and len(p["made"]) >= kill_after):
                        return p
                    return None

                p = await wait_until(progressed, 600, "board making", interval=0.05)
                if kill_after is not None and p["state"] == "running":
                    await asyncio.sleep(rng.uniform(0.0, 0.3))  # somewhere inside the next copy
                    p = await boards_progress(http, server, LABEL)
                return dict(p)

        for _ in range(board_kills):
            finished_before = set(finished)
            p = asyncio.run(board_run(kill_after=rng.randint(1, 2)))
            made = {tuple(x) for x in p["made"]}
            remade += [c for c in made if c in finished_before]
            assert {tuple(x) for x in p["skipped"]} == finished_before  # resumed where it stopped
            finished |= made
            if p["state"] != "running":
                break  # finished before the kill
            server.kill()
            figures["board_kills"] += 1
            on_disk = {tuple(x) for x in json.loads(_opened(cfg, journal))["done"]}
            assert finished <= on_disk, "a copy reported finished is missing from the journal"
            finished = on_disk  # the copy in progress at the kill may have finished just before it
            bank_verify(cfg)
            server.start()

            async def after_restart() -> dict[str, Any]:
                async with httpx.AsyncClient(timeout=60) as http:
                    return await boards_progress(http, server, LABEL)

            shown = asyncio.run(after_restart())  # the console shows where board making stopped
            assert shown["state"] == "interrupted" and {tuple(x) for x in shown["skipped"]} == finished
        p = asyncio.run(board_run(kill_after=None))
        assert p["state"] == "done", p
        assert {tuple(x) for x in p["skipped"]} == finished
        made = {tuple(x) for x in p["made"]}
        remade += [c for c in made if c in finished]
        assert not remade, f"finished copies made again: {remade}"
        assert finished | made == all_copies
        figures["copies"] = len(all_copies)
        figures["ledger"] = bank_verify(cfg).strip()

        async def last_look() -> dict[str, Any]:
            async with httpx.AsyncClient(timeout=60) as http:
                return await judge_state(http, server)

        reasons = [v["reason"] for s in asyncio.run(last_look())["stations"] for v in s["voided"]]
        figures["voided_reasons_since_last_start"] = sorted(set(reasons))
    finally:
        server.stop()
    print(f"\ncrash day: {json.dumps(figures)}")
    return figures


def _url(engine: str, target: str) -> str | None:
    return None if engine == "sqlite" else target  # SQLite: the default file in var (DayConfig.bank)


# PostgreSQL's run took 46 s (SQLite's 51 s) on the shared 2-core machine: over 30 s, so it is a soak (make soak)
@pytest.mark.parametrize("engine", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_crash_day(engine: str, tmp_path: Path) -> None:
    with bank_target(engine, tmp_path) as target:
        f = crash_day(tmp_path, target=60, formation_kills=3, board_kills=2, seed=7, bank_url=_url(engine, target))
    assert f["formation_kills"] == 3 and f["board_kills"] >= 1


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("engine", ENGINES)
def test_crash_day_many_kills(engine: str, tmp_path: Path) -> None:
    with bank_target(engine, tmp_path) as target:
        f = crash_day(
            tmp_path, target=200, formation_kills=15, board_kills=6, seed=20261129, bank_url=_url(engine, target)
        )
    assert f["formation_kills"] == 15 and f["board_kills"] >= 3
