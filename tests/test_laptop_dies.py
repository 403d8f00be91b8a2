"""The laptop dies mid-event (#32 item 7), with real processes: a real ``dealer serve`` deals with a second copy
of the bank on another disk (``[bank] copy``); the judge's console and a hall display note every deal they are
told is committed; the service is killed with SIGKILL while it deals and its whole ``var/`` is deleted (the disk
is gone). ``dealer bank restore`` makes the copy the bank of a fresh folder (the custody record comes with it,
still sealed), a new ``dealer serve`` starts there, the chief judge unlocks the key, the stations deal on to a
larger target, the director seals and draws; ``dealer bank verify`` passes and no deal any client was told is
committed is missing.

Before the copy was made inside each commit (it followed once a second), a kill right after an announced commit
lost it: the announcement left before the copy held the deal.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
from _day_support import (
    AudienceClient,
    DayConfig,
    ServerProcess,
    bank_verify,
    dealer_cli,
    director,
    draw_round,
    formation_done,
    judge_console,
    wait_until,
)

from dealer.bank.engines import open_bank_at

KILL_AFTER = 12  # deals the judge's console was told are committed before the disk dies
MORE = 8  # deals dealt on the second laptop


class Told:
    """What the clients were told: every deal announced committed to the judge's console (with whether the second
    copy held it) and to a hall display."""

    def __init__(self) -> None:
        self.judge: dict[int, bool | None] = {}
        self.enough = asyncio.Event()

    async def listen(self, server: ServerProcess) -> None:
        with contextlib.suppress(Exception):  # the service dies under it: what arrived before is what was told
            async with judge_console(server) as ws:
                async for raw in ws:
                    msg = json.loads(raw)
                    if msg["type"] == "committed":
                        self.judge[int(msg["bank_deal"])] = msg["copied"]
                        if len(self.judge) >= KILL_AFTER:
                            self.enough.set()


def _bank_ids(bank: str, keys: Path) -> set[int]:
    with open_bank_at(bank, keys, create=False) as b:
        return {d.deal_id for d in b.iter_deals()}


async def _first_laptop(server: ServerProcess) -> tuple[Told, AudienceClient]:
    told, hall = Told(), AudienceClient(server.base)
    async with httpx.AsyncClient(timeout=None) as http:
        stop = asyncio.Event()
        listening = asyncio.create_task(told.listen(server))
        watching = asyncio.create_task(hall.run(http, stop))
        await asyncio.to_thread(server.press_start)
        await asyncio.wait_for(told.enough.wait(), 300)  # on progress: the stations deal at full speed
        server.kill()  # SIGKILL while the stations deal
        for task in (listening, watching):  # what was already on its way to the clients still counts as told
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 30)
    return told, hall


def test_the_laptop_dies_and_the_event_goes_on_from_the_second_copy(tmp_path: Path) -> None:
    usb = tmp_path / "usb"
    usb.mkdir()  # the stick is mounted
    copy = usb / "bank-copy.sqlite"
    first = DayConfig(tmp_path / "laptop1", target=400, fault_rate=0.05, bank_copy=copy)
    server = ServerProcess(first)
    server.start(press_start=False)
    try:
        told, hall = asyncio.run(_first_laptop(server))
    finally:
        server.stop()
    assert len(told.judge) >= KILL_AFTER and set(told.judge.values()) == {True}  # each one checked in the copy
    acknowledged = set(told.judge) | hall.committed
    assert hall.committed  # the hall was told too

    shutil.rmtree(first.var)  # the laptop's disk is gone: bank, custody record, documents
    second = DayConfig(tmp_path / "laptop2", target=0, fault_rate=0.05)
    restored = Path(second.bank)
    r = dealer_cli("--lang", "en", "bank", "restore", str(copy), "--bank", str(restored), cwd=tmp_path)
    assert r.returncode == 0 and "restored" in r.stdout, r.stderr
    assert (restored.parent / "custody.json").read_bytes() == copy.with_name(copy.name + ".custody.json").read_bytes()
    in_copy = _bank_ids(str(restored), restored.parent)
    missing = acknowledged - in_copy
    assert not missing, f"deals told committed but not in the copy: {sorted(missing)}"

    # the event goes on on the second laptop: more deals, a seal and a draw, with the restored key
    target = len(in_copy) + MORE
    second = DayConfig(tmp_path / "laptop2", target=target, fault_rate=0.05)
    server = ServerProcess(second)
    server.start()  # signs in: the restored custody record is unlocked with the chief judge's passphrase

    async def go_on() -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=60) as http:
            state = await wait_until(lambda: formation_done(http, server, target), 600, "dealing on laptop 2")
            await director(http, server, "/api/director/seal")
            drawn = await draw_round(http, server, "Round 1", ["1357", "2468", "9753"])
            return {"state": state, "drawn": drawn}

    try:
        after = asyncio.run(go_on())
    finally:
        server.stop()
    final = _bank_ids(second.bank, second.var)
    assert acknowledged <= final and len(final) == after["state"]["bank"]["formed"] >= target
    assert after["drawn"]["drawn"]
    out = bank_verify(second)
    print(
        f"\nlaptop dies: {len(told.judge)} deals told to the judge ({len(hall.committed)} to the hall) before "
        f"SIGKILL, {len(in_copy)} restored, 0 missing; {len(final)} after dealing on; verify: {out.strip()}"
    )
