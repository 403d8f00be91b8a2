"""The technical judge's console over a real server and the simulator on a pty: control, faults, health, blindness."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from _web_server import Running, regulation, running_service, service_config

from dealer.bank.store import SqliteBank


class Console:
    """A judge's console: the WebSocket, every message it got, and commands."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []

    async def cmd(self, cmd: str, **extra: Any) -> dict[str, Any]:
        await self.ws.send(json.dumps({"cmd": cmd, "station": "A", **extra}))
        return await self.until(lambda m: m["type"] in ("ok", "error") and m.get("cmd") == cmd)

    async def until(self, predicate: Callable[[dict[str, Any]], object], timeout: float = 20.0) -> dict[str, Any]:
        try:
            async with asyncio.timeout(timeout):
                while True:
                    msg: dict[str, Any] = json.loads(await self.ws.recv())
                    self.seen.append(msg)
                    if predicate(msg):
                        return msg
        except TimeoutError:
            trail = [
                (m["type"], m.get("status", m.get("message", m.get("key"))), m.get("params"))
                for m in self.seen
                if m["type"] not in ("card", "heartbeat")
            ][-12:]
            raise AssertionError(f"timed out; last console messages: {trail}") from None


def station_msg(status: str) -> Any:
    return lambda m: m["type"] == "station" and m["status"] == status


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Running]:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 2000.0}])
    with running_service(cfg, regulation(2, 32, target=6), autostart=False) as running:
        yield running


def run_console(server: Running, script: Any) -> Console:
    async def main() -> Console:
        headers = {"Cookie": f"dealer_judge={server.judge}", "Origin": server.base}
        async with websockets.connect(f"ws://127.0.0.1:{server.port}/judge/ws", additional_headers=headers) as ws:
            console = Console(ws)
            first = await console.until(lambda m: True)
            assert first["type"] == "state" and first["stations"][0]["station"] == "A"
            await script(console)
            return console

    return asyncio.run(main())


def test_connect_simulator_start_and_reach_the_target_blind(server: Running) -> None:
    async def script(c: Console) -> None:
        await c.ws.send(json.dumps({"cmd": "devices"}))
        listed = await c.until(lambda m: m["type"] == "devices")
        assert listed["devices"][0]["id"] == "simulator"
        assert (await c.cmd("connect", device="simulator"))["type"] == "ok"
        ready = await c.until(station_msg("ready"))
        assert ready["device"]["serial"] == "SIM-A" and ready["device"]["kind"] == "simulator"
        assert ready["device_status"]["connected"] is True
        assert (await c.cmd("start"))["type"] == "ok"
        done = await c.until(station_msg("target_reached"))
        assert done["committed"] == 6 and done["health"]["cards_read"] == 6 * 52 and done["health"]["warning"] is False
        await c.until(lambda m: m["type"] == "heartbeat")

    console = run_console(server, script)
    cards = [m for m in console.seen if m["type"] == "card"]
    assert len(cards) == 6 * 52
    assert all("card" not in m for m in cards)  # blind by default
    assert not any("current" in m for m in console.seen if m["type"] == "station")


def test_showing_cards_is_recorded_in_the_ledger_first(server: Running) -> None:
    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        assert (await c.cmd("show"))["type"] == "ok"
        await c.cmd("start")
        await c.until(station_msg("target_reached"))

    console = run_console(server, script)
    cards = [m for m in console.seen if m["type"] == "card"]
    assert cards and all(isinstance(m["card"], int) for m in cards)
    bank = SqliteBank(server.service.config.bank_path)
    try:
        shown = bank.entries_of_kind("cards_shown")
    finally:
        bank.close()
    assert len(shown) == 1 and shown[0].data["station"] == "A" and shown[0].data["by"] == "judge"


def test_a_fault_voids_the_deal_with_guidance_and_redeal_recovers(server: Running) -> None:
    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        assert (await c.cmd("inject", kind="duplicate_card"))["type"] == "ok"
        await c.cmd("start")
        waiting = await c.until(station_msg("needs_redeal"))
        (void,) = waiting["voided"]
        assert void["key"].startswith("guide.") and void["params"]["pos"] >= 1
        assert waiting["health"]["errors"] == 1 and waiting["health"]["warning"] is True  # 1 error in 1 board
        fault = next(m for m in c.seen if m["type"] == "fault")
        assert fault["key"] == void["key"]
        assert (await c.cmd("redeal"))["type"] == "ok"
        done = await c.until(station_msg("target_reached"))
        assert done["committed"] == 6 and done["health"]["deals"] == 7

    run_console(server, script)
    bank = SqliteBank(server.service.config.bank_path)
    try:
        voids = bank.entries_of_kind("void")
        assert len(voids) == 1 and voids[0].data["station"] == "A"
        assert bank.deal_count() == 6
    finally:
        bank.close()


@pytest.mark.parametrize(
    ("kind", "reasons", "key"),
    [
        ("jam", {"fault"}, "guide.jam"),
        ("unreadable_card", {"fault", "unreadable_card"}, "guide.unreadable_card"),
        ("cover_open", {"fault"}, "guide.cover_open"),
        ("disconnected", {"disconnected"}, "guide.disconnected"),  # the cable pulled mid-deal
    ],
)
def test_machine_faults_each_void_with_their_reason(server: Running, kind: str, reasons: set[str], key: str) -> None:
    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("inject", kind=kind)
        await c.cmd("start")
        waiting = await c.until(station_msg("needs_redeal"))
        (void,) = waiting["voided"]
        assert void["reason"] in reasons and void["key"] == key
        assert void["cards_dealt"] < 52
        # the judge re-deals whenever asked to (after a pulled cable, once the heartbeat shows the device back)
        for _ in range(5):
            await c.until(lambda m: m["type"] == "heartbeat" and m["device_status"]["connected"])
            await c.cmd("redeal")
            end = await c.until(lambda m: m["type"] == "station" and m["status"] in ("target_reached", "needs_redeal"))
            if end["status"] == "target_reached":
                break
        assert end["status"] == "target_reached" and end["committed"] == 6

    run_console(server, script)


def test_pause_stop_and_errors_are_reported(server: Running) -> None:
    async def script(c: Console) -> None:
        err = await c.cmd("start")
        assert err["type"] == "error" and "connect a device first" in err["message"]
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("start")
        await c.until(lambda m: m["type"] == "committed")
        await c.cmd("pause")
        await c.until(station_msg("paused"))
        await c.cmd("stop")
        stopped = await c.until(station_msg("stopped"))
        assert stopped["running"] is False
        bad = await c.cmd("explode")
        assert bad["type"] == "error" and "unknown action" in bad["message"]
        await c.cmd("disconnect")
        await c.until(station_msg("disconnected"))

    run_console(server, script)


@pytest.mark.parametrize("kind", ["unreadable_card", "duplicate_card", "jam"])
def test_one_fault_is_one_entry_and_one_count_in_health(server: Running, kind: str) -> None:
    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("inject", kind=kind)
        await c.cmd("start")
        await c.until(station_msg("needs_redeal"))
        await c.cmd("redeal")
        done = await c.until(station_msg("target_reached"))  # every late report of the fault has arrived by now
        assert len(done["faults"]) == 1, done["faults"]
        assert sum(done["health"]["faults"].values()) == 1, done["health"]
        assert done["health"]["errors"] == 1 and len(done["voided"]) == 1
        assert sum(1 for m in c.seen if m["type"] == "fault") == 1

    run_console(server, script)


@pytest.fixture
def slow(tmp_path: Path) -> Iterator[Running]:
    cfg = service_config(tmp_path, stations=[{"name": "A", "cards_per_second": 20.0}])  # a deal in 2.6 s
    with running_service(cfg, regulation(2, 32, target=6), autostart=False) as running:
        yield running


@pytest.mark.parametrize(("action", "status"), [("disconnect", "disconnected"), ("reset", "ready")])
def test_disconnect_or_reset_during_a_deal_asks_first_and_voids_as_the_operators(
    slow: Running, action: str, status: str
) -> None:
    async def script(c: Console) -> None:
        await c.cmd("connect", device="simulator")
        await c.until(station_msg("ready"))
        await c.cmd("start")
        await c.until(lambda m: m["type"] == "card")  # a deal is being dealt
        refused = await c.cmd(action)
        assert refused["type"] == "error" and "confirm" in refused["message"]
        assert (await c.cmd(action, confirm=True))["type"] == "ok"
        end = await c.until(station_msg(status))
        assert end["running"] is False
        (void,) = end["voided"]
        assert void["reason"] == "operator"
        assert end["health"]["errors"] == 0 and end["health"]["faults"] == {}  # never counted against the device
        assert end["faults"] == []

    run_console(slow, script)
    bank = SqliteBank(slow.service.config.bank_path)
    try:
        (void,) = bank.entries_of_kind("void")
        assert void.data["reason"] == "operator"
    finally:
        bank.close()


def test_no_phantom_serial_ports_are_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A motherboard UART with nothing behind it (/dev/ttyS0: description "n/a", no USB ids) is no device."""
    from dealer.app.devices import available_devices
    from drivers import discovery

    rows = [
        {"device": "/dev/ttyS0", "usb": "", "serial": "", "description": "n/a", "profile": ""},
        {"device": "/dev/ttyS1", "usb": "", "serial": "", "description": "", "profile": ""},
        {"device": "/dev/ttyUSB0", "usb": "0403:6001", "serial": "A1", "description": "FT232R", "profile": ""},
        {"device": "/dev/ttyAMA0", "usb": "", "serial": "", "description": "ttyAMA0", "profile": ""},
    ]
    monkeypatch.setattr(discovery, "serial_rows", lambda: rows)
    monkeypatch.setattr(discovery, "usb_rows", lambda: ([], None))
    ids = [d["id"] for d in available_devices()]
    assert ids == ["simulator", "serial:/dev/ttyUSB0", "serial:/dev/ttyAMA0"]
