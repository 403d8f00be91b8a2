"""A station whose device is the camera scanner under manual dealing: config, the link alone, a real server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import cv2
import httpx
import pytest
from _waiting import wait_progress
from _web_server import regulation, running_service, service_config
from test_web_stream import Capture, judge

from dealer.app.config import ConfigError, StationConfig, config_from_dict
from dealer.app.devices import open_station_device
from dealer.bank.store import SqliteBank
from dealer.core import Card, Seat
from dealer.core.cards import ALL_CARDS
from dealer.core.events import CardSeen, DealEnded, DealStarted, DeviceEvent, DeviceFault, Disconnected, FaultKind
from drivers import DeviceOptions
from drivers.kinds.camera import CameraDevice, CameraDeviceError, calibrate_virtual, shuffled_deal, virtual_template

# the virtual camera's fastest settings that still read every card
FAST = "virtual:deck=synthetic-2c-en,level=clean,hold=3,slide=1,gap=0"
K = 32


def _camera(url: str, calibration: Path) -> CameraDevice:
    return CameraDevice("camera", url, DeviceOptions(name="A", calibration=calibration))


def _station(**keys: Any) -> StationConfig:
    return config_from_dict({"stations": [{"name": "A", **keys}]}, "service.toml").stations[0]


# -- configuration -----------------------------------------------------------------------------------------


def test_a_camera_station_is_configured_with_its_source_and_calibration() -> None:
    virtual = _station(kind="camera", url=FAST)
    assert virtual.kind == "camera" and virtual.url == FAST and virtual.calibration is None
    real = _station(kind="camera", url="0", calibration="var/deck.npz")
    assert real.calibration == Path("var/deck.npz")
    assert isinstance(open_station_device(virtual), CameraDevice)
    assert not open_station_device(virtual).can_deal


@pytest.mark.parametrize(
    ("keys", "named"),
    [
        ({"kind": "camera"}, "stations[0].url is required"),
        ({"kind": "camera", "url": "0"}, "stations[0].calibration is required"),
        ({"kind": "camera", "url": "cards/*.png", "calibration": ""}, "stations[0].calibration = ''"),
        ({"kind": "camera", "url": FAST, "calibration": 3}, "stations[0].calibration = 3"),
        ({"kind": "simulator", "calibration": "deck.npz"}, "stations[0].calibration = 'deck.npz'"),
        ({"kind": "camera", "url": FAST, "calibraton": "x"}, "unknown key stations[0].'calibraton'"),
        ({"kind": "webcam", "url": "0"}, "stations[0].kind = 'webcam'"),
    ],
)
def test_bad_camera_station_keys_are_refused_naming_the_key(keys: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as err:
        _station(**keys)
    assert str(err.value).startswith("service.toml: ") and named in str(err.value)


# -- the virtual source --------------------------------------------------------------------------------------


def test_every_virtual_deal_is_a_fresh_shuffle_of_the_whole_deck() -> None:
    template = virtual_template(FAST.replace("gap=0", "gap=0,order=sorted"))  # order is ignored: deals are shuffled
    assert (template.hold, template.slide, template.gap) == (3, 1, 0)
    deals = [shuffled_deal(template).items for _ in range(3)]
    assert all(sorted(d) == list(ALL_CARDS) for d in deals)
    assert len({tuple(d) for d in deals}) == 3


@pytest.fixture(scope="module")
def calibration_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cal") / "synthetic-2c-en.npz"
    calibrate_virtual(virtual_template(FAST), FAST).save(path)
    return path


async def _events_of_one_deal(link: CameraDevice) -> list[DeviceEvent]:
    events: list[DeviceEvent] = []
    await link.request_deal()
    while not events or not isinstance(events[-1], DealEnded):
        event = await asyncio.wait_for(link.next_event(), 60)
        assert event is not None
        events.append(event)
    return events


def test_the_link_reads_a_manual_deal_card_by_card(calibration_file: Path) -> None:
    async def scenario() -> tuple[list[list[DeviceEvent]], list[list[Any]], dict[str, Any], dict[str, Any], bool]:
        link = _camera(FAST, calibration_file)
        await link.open()
        deals, shown = [], []
        for _ in range(2):
            deals.append(await _events_of_one_deal(link))
            assert link._scanner is not None
            shown.append(list(link._scanner.source.source.items))  # type: ignore[attr-defined]
        injected = await link.inject_fault(FaultKind.JAM)
        info, status = link.info(), link.status()
        await link.close()
        tail = [await link.next_event(), await link.next_event()]
        assert isinstance(tail[0], Disconnected) and tail[1] is None
        return deals, shown, info, status, injected

    deals, shown, info, status, injected = asyncio.run(scenario())
    for deal_id, (events, order) in enumerate(zip(deals, shown, strict=True), start=1):
        assert isinstance(events[0], DealStarted) and events[0].deal_id == deal_id
        cards = events[1:-1]
        assert all(isinstance(e, CardSeen) and e.pocket is None and e.deal_id == deal_id for e in cards)
        seen = [e for e in cards if isinstance(e, CardSeen)]
        assert [e.position for e in seen] == list(range(52))
        assert [e.card for e in seen] == order  # every card read, in the order it was dealt
        assert isinstance(events[-1], DealEnded) and events[-1].deal_id == deal_id
    assert shown[0] != shown[1]
    assert not injected
    assert info["kind"] == "camera" and info["source"] == FAST and info["calibration"] == str(calibration_file)
    assert info["deck"] == "synthetic-2c-en"
    assert status["cards"] == 104 and status["unreadable"] == 0 and status["deal"] == 2
    assert status["frames"] > 104 and status["ms_per_frame"] > 0


def test_a_missing_calibration_file_or_source_is_named() -> None:
    async def fails(config: StationConfig) -> str:
        with pytest.raises(CameraDeviceError) as err:
            await open_station_device(config).open()
        return str(err.value)

    text = asyncio.run(fails(StationConfig("A", kind="camera", url=FAST, calibration=Path("/nowhere/deck.npz"))))
    assert "station A" in text and "/nowhere/deck.npz" in text and "not found" in text
    text = asyncio.run(fails(StationConfig("A", kind="camera", url="/nowhere/cards", calibration=Path("x.npz"))))
    assert "station A" in text and "/nowhere/cards" in text
    text = asyncio.run(fails(StationConfig("A", kind="camera", url=FAST + ",tilt=3")))
    assert "tilt" in text


# -- a real server with one camera station ------------------------------------------------------------------


def test_a_camera_station_banks_deals_and_the_audience_sees_only_open_cards(tmp_path: Path) -> None:
    station = {"name": "A", "kind": "camera", "url": FAST, "auto_redeal": True}
    cfg = service_config(tmp_path, stations=[station])
    with running_service(cfg, regulation(2, K, target=2), autostart=False) as server:
        with Capture(f"{server.base}/api/public/events") as cap:
            state = judge(server, "connect", device=f"camera:{FAST}")  # calibrates on the virtual sorted pass
            assert state["device"]["kind"] == "camera" and state["device"]["calibration"] == "virtual sorted pass"
            judge(server, "start")
            live = server.service.stations["A"]
            wait_progress(
                lambda: live.status == "target_reached",
                lambda: (live.status, live.state()["device_status"].get("frames")),
                "the camera station to reach its target",
            )
            wait_progress(  # the audience stream carries the second commit too (it follows the station's state)
                lambda: sum(m["type"] == "deal_committed" for _, m in cap.messages()) >= 2,
                lambda: len(cap.messages()),
                "the audience to see both deals committed",
            )
        snapshot = httpx.get(f"{server.base}/api/public/snapshot").json()
        status = server.service.stations["A"].state()["device_status"]
    messages = [m for _, m in cap.messages()]
    bank = SqliteBank(cfg.bank_path)
    try:
        stored = bank.get_deals(list(range(1, bank.deal_count() + 1)))
    finally:
        bank.close()
    assert len(stored) == 2
    assert all(d.source["shown"] == K and d.source["variant"] == 2 for d in stored)
    assert status["cards"] >= 104
    committed = {m["attempt"]: m["bank_deal"] for m in messages if m["type"] == "deal_committed"}
    assert sorted(committed.values()) == [1, 2]
    for attempt, bank_deal in committed.items():
        d = stored[bank_deal - 1]
        order = [Card(c) for c in d.dealing_order or b""]
        seats = [Seat((Seat.N + i) % 4) for i in range(52)]  # manual dealing: seats follow the dealing order
        assert [d.deal.seat_of(c) for c in order] == seats
        msgs = [m for m in messages if m.get("attempt") == attempt and m["type"] in ("card", "hidden")]
        opens = [m for m in msgs if m["type"] == "card"]
        assert [m["card"] for m in opens] == [int(c) for c in order[:K]]
        assert [m["position"] for m in msgs if m["type"] == "hidden"] == list(range(K, 52))
        assert all("card" not in m for m in msgs if m["type"] == "hidden")
    (st,) = snapshot["stations"]  # taken after the target: the displays keep no deal of formation (#27)
    assert st["bank_deal"] is None and st["phase"] == "cleared"
    assert all(not hand["open"] and not hand["hidden"] for hand in st["hands"].values())
    assert not {int(c) for c in order[K:]} & {c for h in st["hands"].values() for c in h["open"]}


def test_a_source_that_ends_before_52_cards_is_a_device_fault(calibration_file: Path, tmp_path: Path) -> None:
    template = virtual_template(FAST)
    cards = [Card.parse(code) for code in ("SA", "H7", "D2")]
    for i, c in enumerate(cards):  # three photographs of cards, read as a still-image source
        assert cv2.imwrite(str(tmp_path / f"img{i}.png"), template.render(c))

    async def scenario() -> list[list[DeviceEvent]]:
        link = _camera(str(tmp_path / "*.png"), calibration_file)
        await link.open()
        deals: list[list[DeviceEvent]] = []
        for _ in range(2):  # each deal reads the source afresh, under a new deal id
            await link.request_deal()
            events: list[DeviceEvent] = []
            while not events or not isinstance(events[-1], DeviceFault):
                event = await asyncio.wait_for(link.next_event(), 30)
                assert event is not None
                events.append(event)
            deals.append(events)
        await link.close()
        return deals

    for deal_id, events in enumerate(asyncio.run(scenario()), start=1):
        assert isinstance(events[0], DealStarted) and events[0].deal_id == deal_id
        assert [e.card for e in events[1:-1] if isinstance(e, CardSeen)] == cards
        fault = events[-1]
        assert isinstance(fault, DeviceFault) and fault.kind is FaultKind.MISSING_CARD
        assert fault.deal_id == deal_id and fault.position == 3 and "ended after 3 cards" in fault.detail
