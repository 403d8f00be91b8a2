"""Devices behind one interface: ``drivers.open_device`` for every built-in kind on real parts (the simulator on a
real pty, over TCP and behind its USB backend, the camera on its virtual source), a kind added by another package
through an entry point that a web station uses with no web change, and discovery asking every kind."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _waiting import wait_progress
from _web_server import press_start, regulation, running_service, service_config

from dealer.bank.store import SqliteBank
from dealer.core import Deal
from dealer.core.events import CardSeen, DealEnded, DealStarted, DeviceEvent
from drivers import DealingDevice, DeviceError, device_kinds, open_device, parse_device_id
from drivers.discovery import Candidate, candidates
from drivers.registry import BUILTIN, GROUP, UnknownDeviceKind
from drivers.simulator import SimulatorThread, VirtualMachine

ROOT = Path(__file__).resolve().parents[1]
FAST_CAMERA = "virtual:deck=synthetic-2c-en,level=clean,hold=3,slide=1,gap=0"


async def one_deal(device: DealingDevice) -> list[DeviceEvent]:
    """Ask for a deal and collect its events up to its end."""
    await device.request_deal()
    events: list[DeviceEvent] = []
    while not events or not isinstance(events[-1], DealEnded):
        event = await asyncio.wait_for(device.next_event(), 120)
        assert event is not None, events
        events.append(event)
    return events


def assert_whole_deal(events: list[DeviceEvent], pockets: bool = True) -> None:
    cards = [e for e in events if isinstance(e, CardSeen)]
    assert isinstance(events[0], DealStarted) and isinstance(events[-1], DealEnded)
    assert [e.position for e in cards] == list(range(52))
    assert sorted(int(c.card) for c in cards if c.card is not None) == list(range(52))
    if pockets:  # a machine says where each card went: 13 to each pocket, as its own record says
        seats = bytearray(52)
        for c in cards:
            assert c.card is not None and c.pocket is not None
            seats[c.card] = c.pocket
        assert isinstance(events[-1], DealEnded)
        record = events[-1].record
        assert record == Deal(bytes(seats)).to_bytes()


async def open_deal_close(kind: str, url: str, **options: Any) -> tuple[list[DeviceEvent], dict[str, Any]]:
    device = open_device(kind, url, **options)
    await device.open()
    try:
        events = await one_deal(device)
        info = device.info()
        assert device.status()["connected"] is True
    finally:
        await device.close()
    return events, info


# -- the built-in kinds ---------------------------------------------------------------------------------------


def test_the_built_in_kinds_are_the_entry_points_of_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["entry-points"][GROUP] == BUILTIN
    assert device_kinds()[: len(BUILTIN)] == list(BUILTIN)


def test_simulator_kind_deals_over_a_real_pty() -> None:
    events, info = asyncio.run(open_deal_close("simulator", "pty", name="T", cards_per_second=5000.0))
    assert_whole_deal(events)
    assert info["kind"] == "simulator" and info["serial"] == "SIM-T" and info["url"].startswith("/")


def test_simulator_kind_deals_behind_its_usb_backend() -> None:
    events, info = asyncio.run(open_deal_close("simulator", "usb", name="U", cards_per_second=5000.0))
    assert_whole_deal(events)
    assert info["serial"] == "SIM-U" and info["url"].startswith("usb:1209:0001")


@pytest.mark.parametrize("medium", ["pty", "tcp", "usb"])
def test_machine_kinds_deal_with_a_simulated_machine(medium: str) -> None:
    machine = VirtualMachine(pace=0, serial=f"SIM-{medium}")
    options: dict[str, Any] = {}
    with SimulatorThread(machine, medium) as sim:  # type: ignore[arg-type]
        if medium == "pty":
            kind, url = "serial", sim.url
        elif medium == "tcp":
            kind, url = "tcp", sim.url.removeprefix("socket://")  # a tcp station may omit tcp://
        else:
            kind, url, options = "usb", "1209:0001", {"usb_backend": sim.backend}
        events, info = asyncio.run(open_deal_close(kind, url, **options))
    assert_whole_deal(events)
    assert info["kind"] == kind and info["serial"] == f"SIM-{medium}"
    assert info["url"] == {"serial": url, "tcp": f"tcp://{url}", "usb": "usb:1209:0001"}[kind]


def test_camera_kind_reads_a_manual_deal_from_its_virtual_source() -> None:
    events, info = asyncio.run(open_deal_close("camera", FAST_CAMERA, name="C"))
    assert_whole_deal(events, pockets=False)
    assert info["kind"] == "camera" and info["calibration"] == "virtual sorted pass"
    assert not open_device("camera", FAST_CAMERA).can_deal


def test_inprocess_kind_deals_without_a_wire() -> None:
    events, info = asyncio.run(open_deal_close("inprocess", "", name="I", cards_per_second=1e9))
    assert_whole_deal(events, pockets=False)
    assert info["serial"] == "I"


def test_only_simulators_offer_fault_injection() -> None:
    offered = {k: open_device(k, u).can_inject for k, u in
               [("simulator", ""), ("inprocess", ""), ("serial", "/dev/ttyUSB9"), ("tcp", "h:1"), ("usb", "1209:0001"),
                ("camera", FAST_CAMERA)]}  # fmt: skip
    assert offered == {"simulator": True, "inprocess": True, "serial": False, "tcp": False, "usb": False,
                       "camera": False}  # fmt: skip


def test_devices_that_cannot_make_boards_say_so() -> None:
    with pytest.raises(DeviceError, match="cannot make boards"):
        open_device("camera", FAST_CAMERA).board_machine()
    with pytest.raises(DeviceError, match="not open"):
        open_device("serial", "/dev/ttyUSB9").board_machine()


def test_an_unknown_kind_or_a_bad_url_is_named() -> None:
    with pytest.raises(UnknownDeviceKind) as err:
        open_device("webcam", "0")
    assert "'webcam'" in str(err.value) and "serial" in str(err.value)
    with pytest.raises(DeviceError, match="'pty' .*'usb'"):
        open_device("simulator", "/dev/ttyS0")
    with pytest.raises(DeviceError, match="needs url"):
        open_device("tcp", "")


@pytest.mark.parametrize(
    ("device", "expected"),
    [
        ("simulator", ("simulator", "")),
        ("serial:/dev/ttyUSB0", ("serial", "/dev/ttyUSB0")),
        ("/dev/ttyUSB0", ("serial", "/dev/ttyUSB0")),
        ("COM3", ("serial", "COM3")),
        ("usb:1209:0001:AB12", ("usb", "usb:1209:0001:AB12")),
        ("tcp://10.0.0.5:7000", ("tcp", "tcp://10.0.0.5:7000")),
        ("tcp:10.0.0.5:7000", ("tcp", "10.0.0.5:7000")),
        ("socket://10.0.0.5:7000", ("serial", "socket://10.0.0.5:7000")),
        ("rfc2217://10.0.0.5:7000", ("serial", "rfc2217://10.0.0.5:7000")),
        ("camera:virtual:deck=x", ("camera", "virtual:deck=x")),
    ],
)
def test_device_ids_name_a_kind_and_a_url(device: str, expected: tuple[str, str]) -> None:
    assert parse_device_id(device) == expected


# -- a kind from another package ------------------------------------------------------------------------------

TOY = '''
"""A toy device kind: deals seeded deals card by card with pockets, as a machine would."""

import asyncio
import random
import time

from dealer.core.events import CardSeen, DealEnded, DealStarted, Disconnected
from drivers.device import DeviceError
from drivers.discovery import Candidate

OPENED = []


class ToyDevice:
    can_deal = True
    can_inject = False

    def __init__(self, kind, url, options):
        self.kind, self.url, self.options = kind, url, options
        self._queue = asyncio.Queue()
        self._rng = random.Random(options.seed)
        self._deal = 0

    @classmethod
    def discover(cls, kind):
        return [Candidate(f"{kind}:table-9", kind, "toy table 9")]

    async def open(self):
        OPENED.append((self.url, self.options.name, dict(self.options.extra)))

    def info(self):
        return {"kind": self.kind, "url": self.url, "model": "toy"}

    def status(self):
        return {"state": "idle", "heartbeat": time.time(), "connected": True}

    async def request_deal(self):
        self._deal += 1
        cards = list(range(52))
        self._rng.shuffle(cards)
        seats = [i % 4 for i in range(52)]
        self._rng.shuffle(seats)
        record = bytearray(52)
        self._queue.put_nowait(DealStarted(self._deal, time.time()))
        for position, (card, seat) in enumerate(zip(cards, seats)):
            record[card] = seat
            self._queue.put_nowait(CardSeen(self._deal, position, card, seat, 1.0, time.time()))
        self._queue.put_nowait(DealEnded(self._deal, time.time()))

    async def next_event(self):
        return await self._queue.get()

    async def inject_fault(self, kind):
        return False

    async def abort(self):
        pass

    async def close(self):
        self._queue.put_nowait(Disconnected("closed", time.time(), None))
        self._queue.put_nowait(None)

    def board_machine(self):
        raise DeviceError("a toy cannot make boards")
'''


@pytest.fixture
def toy_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution ``toy-dealer`` on sys.path whose metadata registers the kind ``toy`` (as ``pip install``
    of another package would): a module and an entry point, nothing else."""
    site = tmp_path / "site"
    info = site / "toy_dealer-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-dealer\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\ntoy = toy_dealer_kind:ToyDevice\n", encoding="utf-8")
    (site / "toy_dealer_kind.py").write_text(textwrap.dedent(TOY), encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    yield "toy"
    sys.modules.pop("toy_dealer_kind", None)


def test_a_kind_from_an_entry_point_is_known_opened_and_discovered(toy_kind: str) -> None:
    assert toy_kind in device_kinds() and device_kinds()[: len(BUILTIN)] == list(BUILTIN)
    device = open_device(toy_kind, "table-1", name="Z", seed=3, colour="green")
    asyncio.run(device.open())
    import toy_dealer_kind  # type: ignore[import-not-found]

    assert toy_dealer_kind.OPENED == [("table-1", "Z", {"colour": "green"})]  # its own option reaches it
    assert Candidate("toy:table-9", "toy", "toy table 9") in candidates()
    assert parse_device_id("toy:table-9") == ("toy", "table-9")


def test_a_kind_whose_module_is_missing_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = tmp_path / "broken_kind-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-kind\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\nbroken = no_such_module:Device\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DeviceError, match="'broken' cannot be loaded.*no_such_module"):
        open_device("broken", "x")
    assert any(c.kind == "error" and "broken" in c.description for c in candidates())


def test_a_web_station_deals_on_a_kind_added_by_an_entry_point(toy_kind: str, tmp_path: Path) -> None:
    station = {"name": "A", "kind": toy_kind, "url": "table-1", "seed": 5, "auto_redeal": True}
    cfg = service_config(tmp_path, stations=[station])
    with running_service(cfg, regulation(2, 32, target=3)) as server:
        auth = {"Authorization": f"Bearer {server.judge}"}
        listed = httpx.get(f"{server.base}/api/judge/devices", headers=auth, timeout=20)
        assert {"id": "toy:table-9", "kind": "toy", "description": "toy table 9"} in listed.json()
        press_start(server)
        a = server.service.stations["A"]
        wait_progress(lambda: a.status == "target_reached", lambda: a.cards_read, "the toy station to reach 3 deals")
        view = a.view()
        connect = f"{server.base}/api/judge/stations/A/connect"  # the judge picks the listed toy table
        reply = httpx.post(connect, json={"device": "toy:table-9"}, headers=auth, timeout=20)
        assert reply.status_code == 200, reply.text
        assert reply.json()["device"]["url"] == "table-9"
    assert view.device is not None and view.device["model"] == "toy" and view.device["kind"] == "toy"
    assert view.device["url"] == "table-1"
    bank = SqliteBank(cfg.bank_path)
    try:
        assert bank.deal_count() == 3
    finally:
        bank.close()


# -- discovery ------------------------------------------------------------------------------------------------


def test_discovery_asks_every_kind_and_a_failing_listing_spoils_only_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from drivers import discovery

    def broken() -> list[dict[str, Any]]:
        raise OSError("permission denied: /dev/serial")

    usb = {"bus": "1:7", "usb": "1209:0001", "serial": "X1", "profile": "opendealer", "open": "usb:1209:0001:X1"}
    monkeypatch.setattr(discovery, "serial_rows", broken)
    monkeypatch.setattr(discovery, "usb_rows", lambda: ([usb], None))
    found = candidates()
    assert found[0] == Candidate("simulator", "simulator", "simulated dealing machine (pty)")
    assert found[1].kind == "error" and "serial" in found[1].description and "permission denied" in found[1].description
    assert found[2:] == [Candidate("usb:1209:0001:X1", "usb", "opendealer 1:7")]
    assert parse_device_id(found[2].id) == ("usb", "usb:1209:0001:X1")
