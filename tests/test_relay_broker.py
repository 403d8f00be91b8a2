"""The broker closed (#32 item 2), against a NATS server of this test's own with the configuration of
``docs/scale.md`` (users per role: the hall publishes its event's subject, relays only read it).

Original finding: with no credentials, a client on the NATS port published a bank "formed" at 999 and a commitment
"0000000000000000", and the relay served both to its viewers as real. Now: without credentials nobody connects;
with a relay's credentials nothing can be published; and what reaches the stream without the hall's signature
(the hall's credentials stolen, say) is dropped by the relay and counted, while the hall's own messages go on.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _relay_support import Relay, hall_key, unique_event
from _waiting import wait_progress
from _web_server import press_start, regulation, running_service, service_config

from dealer.app.public_wire import subject

HALL_PASSWORD = "hall-pw-5d1c9a0e7b"
RELAY_PASSWORD = "relay-pw-0f3e8b2a44"
FORGED = [
    {"type": "bank", "formed": 999, "target": 1000, "ledger_head": "f" * 64, "ledger_size": 999},
    {"type": "commitment", "label": "R1", "commitment": "0000000000000000", "deals": 999},
]


def nats_config(port: int, store: Path, event: str) -> str:
    """The configuration docs/scale.md shows, on this test's port and store."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "scale.md").read_text(encoding="utf-8")
    start = docs.index("```conf\n# nats-server.conf") + len("```conf\n")
    text = docs[start : docs.index("```", start)]
    return (
        text.replace("127.0.0.1:4222", f"127.0.0.1:{port}")
        .replace("/var/lib/nats", str(store))
        .replace("HALL_PASSWORD", HALL_PASSWORD)
        .replace("RELAY_PASSWORD", RELAY_PASSWORD)
        .replace("spb2026", event)
    )


@pytest.fixture
def event() -> str:
    return unique_event()


@pytest.fixture
def nats_port(tmp_path: Path, event: str) -> Iterator[int]:
    binary = shutil.which("nats-server")
    if binary is None:
        pytest.skip("no nats-server binary to start a server with credentials")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    conf = tmp_path / "nats.conf"
    conf.write_text(nats_config(port, tmp_path / "js", event), encoding="utf-8")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def up() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as c:
                return c.recv(4).startswith(b"INFO")
        except OSError:
            return proc.poll() is not None

    wait_progress(up, lambda: proc.poll(), "nats-server to listen", stall=30)
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    try:
        yield port
    finally:
        proc.kill()
        proc.wait(10)


async def publish_as(url: str, event: str, messages: list[dict[str, Any]]) -> list[str]:
    """Publish ``messages`` to the event's subject through JetStream as the URL's user; each outcome."""
    import nats

    outcomes = []
    errors: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errors.append(exc)

    nc = await nats.connect(url, connect_timeout=2, max_reconnect_attempts=0, allow_reconnect=False, error_cb=on_error)
    js = nc.jetstream()
    for i, msg in enumerate(messages):
        try:
            await js.publish(
                subject(event), json.dumps(msg).encode(), headers={"Nats-Msg-Id": f"forged-{i}"}, timeout=2
            )
            outcomes.append("stored")
        except Exception as exc:  # a permissions violation: no answer from the stream (timeout) or an error
            outcomes.append(f"refused: {type(exc).__name__}")
    await nc.close()
    return outcomes


def test_the_broker_takes_no_anonymous_client_no_relay_publishes_and_the_relay_drops_what_the_hall_did_not_sign(
    tmp_path: Path, nats_port: int, event: str, capsys: pytest.CaptureFixture[str]
) -> None:
    hall_url = f"nats://hall:{HALL_PASSWORD}@127.0.0.1:{nats_port}"
    relay_url = f"nats://relay:{RELAY_PASSWORD}@127.0.0.1:{nats_port}"
    cfg = service_config(
        tmp_path, relay={"nats": hall_url, "event": event}, stations=[{"name": "A", "cards_per_second": 400.0}]
    )
    with running_service(cfg, regulation(2, 32, target=2), autostart=False) as server:
        pub = server.service.relay_publisher
        assert pub is not None
        wait_progress(lambda: pub.published > 0 and pub.pending == 0, lambda: pub.published, "the hall to publish")
        relay = Relay(event, url=relay_url, hall_key=hall_key(server))
        try:
            # the relay reads the stream with its read-only credentials
            before = wait_progress(relay.last_id, lambda: relay.health()["lag_s"], "the relay to read", stall=30)

            # 1. no credentials: no connection at all
            async def anonymous() -> str:
                import nats

                try:
                    nc = await nats.connect(
                        f"nats://127.0.0.1:{nats_port}",
                        connect_timeout=2,
                        max_reconnect_attempts=0,
                        allow_reconnect=False,
                    )
                except Exception as exc:
                    return f"refused: {exc}"
                await nc.close()
                return "connected"

            assert asyncio.run(anonymous()).startswith("refused"), "an anonymous client connected"
            # 2. a relay's credentials: nothing can be published
            as_relay = asyncio.run(publish_as(relay_url, event, FORGED))
            assert all(o.startswith("refused") for o in as_relay), as_relay
            # 3. the hall's credentials without the hall's key: stored by the broker, dropped by the relay
            as_thief = asyncio.run(publish_as(hall_url, event, FORGED))
            assert as_thief == ["stored", "stored"], as_thief
            wait_progress(lambda: relay.health()["forged"] == 2, lambda: relay.health()["forged"], "the drops")
            # the hall goes on: its next message (a judge's action) reaches the relay past the forged ones
            r = httpx.post(
                f"{server.base}/api/judge/stations/A/connect",
                json={"device": "simulator"},
                headers={"Authorization": f"Bearer {server.judge}"},
                timeout=30,
            )
            assert r.status_code == 200, r.text
            wait_progress(
                lambda: relay.last_id() > before + 2, lambda: relay.last_id(), "the hall's next message at the relay"
            )
            snap = httpx.get(f"{relay.base}/api/public/snapshot", timeout=10).json()
            assert snap["bank"]["formed"] != 999 and snap["bank"]["target"] == 2, snap["bank"]
            assert "0000000000000000" not in json.dumps(snap)
            health = relay.health()
        finally:
            relay.stop()
    log = relay.proc.stderr.read().decode() if relay.proc.stderr else ""
    assert "dropped (unsigned)" in log and RELAY_PASSWORD not in log and HALL_PASSWORD not in log, log[-2000:]
    with capsys.disabled():
        print(
            f"\nforged messages: anonymous connect refused; {len(as_relay)} refused with a relay's credentials; "
            f"{len(as_thief)} stored with the hall's stolen credentials, {health['forged']} dropped by the relay, "
            "0 served"
        )


def test_a_relay_refuses_to_start_with_a_key_that_is_not_one(tmp_path: Path) -> None:
    import os
    import sys

    root = Path(__file__).resolve().parents[1]
    r = subprocess.run(
        [sys.executable, "-m", "dealer", "--lang", "en", "relay", "--nats", "nats://127.0.0.1:1", "--hall-key", "zz"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=60,
        cwd=tmp_path,
    )
    assert r.returncode == 2 and "--hall-key" in r.stderr and "Traceback" not in r.stderr, r.stderr


RELAY_DELAY = 1.0
RELAY_DEALS = 5


def test_no_event_reaches_a_relay_viewer_before_the_delay_after_the_hall_showed_it(
    tmp_path: Path, nats_port: int, event: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The delay as an invariant for relays (#32 item 3), over every event, against a NATS server with credentials.

    "The hall showed it" is when the hall's hub wrote the event to its screen (recorded in the hall's service; the
    relay is another process on the same machine). Both ends are read on the wall clock, the one the hall stamps
    and the relay releases by (the monotonic clock may run apart from it by the NTP slew, up to 0.5 ms a
    second). A relay viewer
    that stays, one that reconnects with ``Last-Event-ID`` after every 7 events and one that asks for ids ahead
    record when each event reached them; none may be less than the delay after the hall. Relays used to count the
    delay from when NATS stored a message, and the hall sent it to NATS before its own screen showed it."""
    import threading
    import time

    from test_web_delay import Capture, read_stream

    hall_url = f"nats://hall:{HALL_PASSWORD}@127.0.0.1:{nats_port}"
    relay_url = f"nats://relay:{RELAY_PASSWORD}@127.0.0.1:{nats_port}"
    station = {"name": "A", "cards_per_second": 150.0, "fault_rate": 0.1, "auto_redeal": True}
    cfg = service_config(tmp_path, relay={"nats": hall_url, "event": event}, stations=[station])
    with running_service(cfg, regulation(2, 32, target=RELAY_DEALS), autostart=True) as server:
        hall = server.service.hub
        shown: dict[int, float] = {}  # the hall's event id -> when its hub first wrote it to the hall's screen
        hall_msgs: dict[int, dict[str, Any]] = {}

        forward = hall.on_shown  # the remote stream's and the relays' listeners

        def record(up_to: int, at: float) -> None:
            now = time.time()  # read before the hall's publisher stamps the same showing
            for i in range(len(shown) + 1, up_to + 1):
                shown.setdefault(i, now)
            assert forward is not None
            forward(up_to, at)

        def keep(event_id: int, data: bytes) -> None:
            hall_msgs[event_id] = json.loads(data.split(b"\ndata: ", 1)[1])

        hall.on_shown = record
        hall.on_emit = keep
        relay = Relay(event, RELAY_DELAY, url=relay_url, hall_key=hall_key(server))
        ends = time.monotonic() + 180
        stop = threading.Event()
        hall_screen, steady, hopping, ahead = (
            Capture("hall"),
            Capture("steady"),
            Capture("reconnecting"),
            Capture("ahead"),
        )
        contents: dict[int, dict[str, Any]] = {}  # relay id -> what the steady viewer got under it

        def run_hall() -> None:
            while not stop.is_set():
                read_stream(server.base, "/api/public/events", None, ends, hall_screen, 10**9)

        def run_steady() -> None:
            while not stop.is_set():
                with httpx.stream("GET", relay.base + "/api/public/events", timeout=httpx.Timeout(10, read=3)) as r:
                    steady.connections += 1
                    event_id = None
                    try:
                        for line in r.iter_lines():
                            now = time.time()
                            if line.startswith("id: "):
                                event_id = int(line[4:])
                            elif line.startswith("data: ") and event_id is not None:
                                steady.seen.append((event_id, now))
                                contents[event_id] = json.loads(line[6:])
                            if stop.is_set():
                                break
                    except httpx.ReadTimeout:
                        pass

        def run_hopping() -> None:
            last: int | None = None
            while not stop.is_set():
                last = read_stream(relay.base, "/api/public/events", last, ends, hopping, 7, time.time)

        def run_ahead() -> None:
            while not stop.is_set():
                read_stream(relay.base, "/api/public/events", hall.last_id + 5, ends, ahead, 3, time.time)

        def guarded(run: Any) -> Any:
            def go() -> None:
                try:
                    run()
                except httpx.TransportError:
                    assert stop.is_set(), "a viewer lost its server before the end"

            return go

        threads = [
            threading.Thread(target=guarded(f), daemon=True) for f in (run_hall, run_steady, run_hopping, run_ahead)
        ]
        try:
            for t in threads:
                t.start()
            wait_progress(lambda: hall.clients >= 1 and steady.connections >= 1, lambda: len(shown), "the viewers")
            base = hall.last_id  # the start-up messages, published before the hall's screen connected
            press_start(server)
            wait_progress(
                lambda: (
                    hall.state.bank["formed"] >= RELAY_DEALS
                    and max((i for i, _ in steady.seen), default=0) >= hall.last_id
                ),
                lambda: (hall.last_id, len(steady.seen)),
                "the session to reach the relay's steady viewer",
            )
        finally:
            stop.set()
            for t in threads:
                t.join(15)
            relay.stop()
    # the relay's ids are the stream's numbers; the hall sent every message, in order: the same numbers
    events = {i: m for i, m in contents.items() if i > base and m["type"] != "snapshot"}
    top = max(events)  # the hall may have published more after the wait ended (the station's last status)
    assert sorted(events) == list(range(base + 1, top + 1)), "the steady viewer missed an event"
    assert all(m == hall_msgs[i] for i, m in events.items()), "a relay event is not the hall's event of its id"
    checked, early, closest = 0, [], float("inf")
    for cap in (steady, hopping, ahead):
        for event_id, arrived in cap.seen:
            if event_id <= base:
                continue  # shown before the hall's screen was there to record it
            margin = arrived - shown[event_id] - RELAY_DELAY
            closest = min(closest, margin)
            checked += 1
            if margin < 0:
                early.append((cap.name, event_id, round(margin, 4)))
    assert not early, f"{len(early)} of {checked} early: {early[:10]}"
    cards = sum(1 for m in hall_msgs.values() if m["type"] == "card")
    assert cards >= RELAY_DEALS * 32 and hopping.connections > 3 and ahead.connections >= 2
    with capsys.disabled():
        print(
            f"\nrelay delay {RELAY_DELAY} s: {checked} relay-viewer arrivals checked ({top - base} events, "
            f"{cards} open cards; {hopping.connections} reconnections with Last-Event-ID, {ahead.connections} with "
            f"an id ahead), early: 0; closest {closest * 1000:.1f} ms past the delay"
        )
