"""Public relays on NATS JetStream: the hall's public stream, served by stateless relays in other processes.

A relay killed mid-stream: its viewers reconnect to another relay with Last-Event-ID and miss nothing. Everything
published to NATS during a variant-2 session with a draw holds no hidden card, no drawn deal before the reveal and
no secret. A relay refuses every route that is not public, and needs, creates and holds no secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from _public_keys import PUBLIC_KEYS
from _relay_support import (
    Relay,
    Viewers,
    delete_stream,
    hall_key,
    nats_or_skip,
    relays,
    stream_messages,
    unique_event,
)
from _transport import FakeTransport
from _waiting import wait_progress
from _web_server import Running, regulation, running_service, service_config
from custody_support import TEST_KEYRING

from dealer.app.public import HALL_DRAW_KEYS
from dealer.app.public_wire import PUBLIC_TYPES, WireError, encode, subject
from dealer.bank.store import SqliteBank
from dealer.core import Card

K = 32
KEYS = PUBLIC_KEYS
COMMITMENT_KEYS = {"type", *HALL_DRAW_KEYS}


@pytest.fixture
def event() -> Any:
    nats_or_skip()
    name = unique_event()
    yield name
    delete_stream(name)


def wait_for(predicate: Any, timeout: float = 120.0, what: str = "a condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def judge(server: Running, action: str, **body: Any) -> None:
    r = httpx.post(
        f"{server.base}/api/judge/stations/A/{action}",
        json=body,
        headers={"Authorization": f"Bearer {server.judge}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text


def hall_config(tmp: Path, event: str, cards_per_second: float = 5000.0) -> Any:
    from _relay_support import NATS_URL

    return service_config(
        tmp,
        relay={"nats": NATS_URL, "event": event},
        stations=[{"name": "A", "cards_per_second": cards_per_second, "fault_rate": 0.0}],
    )


def published_all(server: Running) -> None:
    pub = server.service.relay_publisher
    assert pub is not None
    wait_for(lambda: pub.pending == 0 and pub.published > 0, what="the hall to publish to NATS")


# -- wire --------------------------------------------------------------------------------------------------
def test_wire_refuses_what_is_not_public() -> None:
    card = {"type": "card", "station": "A", "attempt": 1, "position": 3, "seat": "N", "card": 12}
    draw = {"type": "commitment", "label": "s1", "commitment": "ab" * 32, "deals": 2, "state": "committed"}
    assert encode({**draw, "state": "revealed", "drawn": [3, 9], "secret": "cd" * 16})
    assert encode(card) == b'{"type":"card","station":"A","attempt":1,"position":3,"seat":"N","card":12}'
    for bad, why in (
        ({**card, "hidden": [1, 2]}, "extra field"),
        ({**card, "card": 52}, "no such card"),
        ({**card, "seat": "X"}, "no such seat"),
        ({"type": "snapshot", "stations": []}, "a snapshot is folded by each relay"),
        ({"type": "deal", "deal": "N:AKQ..."}, "unknown type"),
        ({"type": "bank", "formed": 1, "target": 2}, "missing field"),
        ({**draw, "state": "drawn", "drawn": [3]}, "drawn deals before the reveal"),
        ({**draw, "state": "public-value", "secret": "ab" * 16}, "K before the reveal"),
    ):
        with pytest.raises(WireError):
            encode(bad)
        assert why
    assert "snapshot" not in PUBLIC_TYPES and {*KEYS, "commitment"} == PUBLIC_TYPES


# -- a relay killed mid-stream ----------------------------------------------------------------------------------
def test_viewers_of_a_killed_relay_resume_on_another_without_a_gap(tmp_path: Path, event: str) -> None:
    deals = 12
    cfg = hall_config(tmp_path, event, cards_per_second=400.0)
    with (
        running_service(cfg, regulation(2, K, target=deals), autostart=False) as server,
        relays(event, 2, key=hall_key(server)) as (a, b),
    ):
        viewers = Viewers([a.base, b.base], clients=40)  # viewers 0, 2, 4… start on relay a; 1, 3, 5… on b
        try:
            assert viewers.ready == 40
            judge(server, "connect", device="simulator")
            judge(server, "start")
            wait_for(lambda: a.last_id() >= 200, what="relay a to be mid-stream")
            a.kill()
            killed_at = server.service.hub.last_id
            wait_for(lambda: server.service.stations["A"].status == "target_reached", what="the bank target")
            published_all(server)
            total = stream_messages(event)[-1][0]
            # at least to ``total``: the hall may publish more after it was read (the ledger head, a state)
            wait_progress(lambda: b.last_id() >= total, b.last_id, "relay b to catch up")
            result = viewers.finish(total)
        finally:
            viewers.kill()
        assert killed_at < server.service.hub.last_id  # the kill came before the session's end
        assert result["complete"] == 40, result
        assert result["gaps"] == [0] * 40, result
        assert result["duplicates"] == 0
        assert result["reconnects"] >= 20  # every viewer of relay a moved
        assert result["snapshots"] == 40  # one at the first connect each, none on resuming
        # relay b's screen is the hall's screen
        hall = httpx.get(f"{server.base}/api/public/snapshot").json()
        remote = httpx.get(f"{b.base}/api/public/snapshot").json()
        assert remote == hall and hall["bank"]["formed"] == deals


# -- what NATS carries --------------------------------------------------------------------------------------
class Capture:
    """A plain NATS subscriber on ``>`` (every subject) in its own thread, from before the session starts."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.items: list[tuple[str, bytes]] = []
        self.ready = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        import nats

        nc = await nats.connect(self.url)

        async def keep(msg: Any) -> None:
            self.items.append((msg.subject, bytes(msg.data)))

        await nc.subscribe(">", cb=keep)
        await nc.flush()
        self.ready.set()
        while not self.done.is_set():
            await asyncio.sleep(0.02)
        await nc.flush()
        await nc.close()

    def __enter__(self) -> Capture:
        self.thread.start()
        assert self.ready.wait(20)
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(20)

    def snapshot(self) -> list[tuple[str, bytes]]:
        return list(self.items)


def test_nats_carries_no_hidden_card_no_drawn_deal_and_no_secret(tmp_path: Path, event: str) -> None:
    import json

    from _relay_support import NATS_URL

    deals = 40
    cfg = hall_config(tmp_path, event)
    with Capture(NATS_URL) as cap:
        with running_service(cfg, regulation(2, K, target=deals), autostart=False) as server:
            judge(server, "connect", device="simulator")
            judge(server, "start")
            wait_for(lambda: server.service.stations["A"].status == "target_reached", what="the bank target")
            auth = {"Authorization": f"Bearer {server.director}"}
            with httpx.Client(base_url=server.base, headers=auth, timeout=30) as d:
                d.post("/api/director/seal").raise_for_status()
                dice = {"witnesses": ["Ann", "Boris"], "rolls": 8}
                d.post("/api/director/draws", json={"label": "s1", **dice}).raise_for_status()
                d.post("/api/director/draws/s1/publish").raise_for_status()
                d.post("/api/director/draws/s1/value", json={"dice": ["12345612", "65432165"]}).raise_for_status()
                drawn = d.post("/api/director/draws/s1/run").json()["drawn"]
                published_all(server)
                before_reveal = cap.snapshot()
                d.post("/api/director/draws/s1/reveal").raise_for_status()
                published_all(server)
            secrets = [server.judge, server.director]
        seed = TEST_KEYRING._seed()  # the chief judge's key, unlocked in the service for the draw
    everything = cap.snapshot()
    ours = [json.loads(data) for subj, data in everything if subj == subject(event)]
    assert ours and [json.loads(d) for _, d in stream_messages(event)] == ours  # the capture saw the whole stream

    # 1. only public message types, each with exactly its public fields
    for m in ours:
        if m["type"] == "commitment":
            assert set(m) <= COMMITMENT_KEYS and {"label", "commitment", "state"} <= set(m), m
        else:
            assert set(m) == KEYS[m["type"]], m
    # 2. no hidden card: each committed deal's cards past the K-th never appear in its attempt's messages
    bank = SqliteBank(cfg.bank_path)
    try:
        stored = bank.get_deals(list(range(1, bank.deal_count() + 1)))
    finally:
        bank.close()
    committed = {m["attempt"]: m["bank_deal"] for m in ours if m["type"] == "deal_committed"}
    assert len(committed) == deals
    for attempt, bank_deal in committed.items():
        order = [int(Card(c)) for c in stored[bank_deal - 1].dealing_order]
        shown = [m["card"] for m in ours if m["type"] == "card" and m["attempt"] == attempt]
        assert shown == order[:K]
        assert not set(order[K:]) & set(shown)
        hidden = [m for m in ours if m["type"] == "hidden" and m["attempt"] == attempt]
        assert len(hidden) == 52 - K
    # 3. no drawn deal (nor K) before the reveal, and no drawn deal's cards ever; no secret at all
    raw_before = b"\n".join(data for _, data in before_reveal)
    raw_all = b"\n".join(subj.encode() + b" " + data for subj, data in everything)
    assert drawn
    for x in drawn:
        assert x["pbn"].encode() not in raw_all
    draws_before = [json.loads(d) for s, d in before_reveal if s == subject(event)]
    draws_before = [m for m in draws_before if m["type"] == "commitment"]
    assert [m["state"] for m in draws_before] == ["committed", "public-value", "drawn"]
    assert all("drawn" not in m and "secret" not in m for m in draws_before)
    assert b'"drawn":' not in raw_before and b'"secret":' not in raw_before
    revealed = [m for m in ours if m["type"] == "commitment" and m["state"] == "revealed"]
    assert len(revealed) == 1 and revealed[0]["drawn"] == [x["deal_id"] for x in drawn]  # only after the reveal
    for secret in secrets:
        assert secret.encode() not in raw_all
    assert seed not in raw_all and seed.hex().encode() not in raw_all


# -- what a relay serves ---------------------------------------------------------------------------------------
def test_relay_refuses_every_route_that_is_not_public_and_holds_no_secret(tmp_path: Path, event: str) -> None:
    from _web_server import regulation as reg
    from fastapi.routing import APIRoute, APIWebSocketRoute

    from dealer.app.service import Service
    from dealer.web.app import create_app

    hall = create_app(Service(service_config(tmp_path / "hall"), reg(), autostart=False))
    paths: list[tuple[str, str]] = []
    for route in hall.routes:
        if isinstance(route, APIRoute | APIWebSocketRoute):
            path = route.path.replace("{name}", "A").replace("{action}", "start").replace("{label}", "s1")
            path = path.replace("{lang}", "ru")
            for part in ("{", "}"):
                assert part not in path or "{" in route.path
            methods = sorted(getattr(route, "methods", None) or {"GET"})
            paths += [(m, path) for m in methods]
    public = {"/", "/api/public/snapshot", "/api/public/events", "/i18n/ru.json"}
    private = [(m, p) for m, p in paths if p not in public]
    assert len(private) >= 10 and any(p.startswith("/api/director") for _, p in private)
    empty = tmp_path / "relay-cwd"
    empty.mkdir()
    relay = Relay(event, cwd=empty)
    try:
        with httpx.Client(base_url=relay.base, timeout=10) as c:
            assert c.get("/").status_code == 200
            assert c.get("/api/public/snapshot").json()["type"] == "snapshot"
            assert c.get("/i18n/ru.json").status_code == 200
            assert c.get("/static/audience.js").status_code == 200
            for method, path in private:
                for token in ("", "?token=" + "x" * 43):
                    r = c.request(method, path + token, headers={"Authorization": "Bearer " + "x" * 43})
                    assert r.status_code in (404, 405), (method, path, r.status_code)
            for method in ("POST", "PUT", "DELETE"):
                assert c.request(method, "/api/public/snapshot").status_code == 405
    finally:
        relay.stop()
    assert list(empty.iterdir()) == []  # it wrote nothing: no secret, no key, no bank


def test_relays_apply_the_broadcast_delay_and_the_hall_does_not(tmp_path: Path, event: str) -> None:
    delay = 1.5
    cfg = hall_config(tmp_path, event)
    with (
        running_service(cfg, regulation(2, K, target=1), autostart=False) as server,
        relays(event, 1, delay, hall_key(server)) as (r,),
    ):
        published_all(server)  # the service's start-up messages
        base = stream_messages(event)[-1][0]
        wait_for(lambda: r.last_id() >= base, what="the relay to hold the start-up messages")
        judge(server, "connect", device="simulator")
        start = time.monotonic()
        judge(server, "start")
        wait_for(lambda: server.service.stations["A"].status == "target_reached", what="the deal")
        hall_done = time.monotonic() - start
        published_all(server)
        total = stream_messages(event)[-1][0]
        # at least: the station's last status message may still be on its way to the stream when the test reads
        # its status (the loaded run met it: the relay passed ``total`` and never equalled it)
        wait_for(lambda: r.last_id() >= total, what="the relay to release the deal")
        relay_done = time.monotonic() - start
        assert server.service.hub.delay == 0  # the hall's own screen is real time
        assert relay_done >= delay > hall_done / 2


def test_a_relay_behind_the_viewer_waits_for_its_ids_instead_of_sending_an_older_snapshot() -> None:
    from dealer.app.hub import PublicHub

    def card(k: int) -> dict[str, Any]:
        return {"type": "card", "station": "A", "attempt": 1, "position": k, "seat": "NESW"[k % 4], "card": k}

    async def go() -> list[bytes]:
        hub = PublicHub(keepalive=0)
        hub.wait_ahead = True
        for seq in (1, 2, 3):
            hub.emit_at(seq, card(seq))
        stream = hub.stream(5)  # the viewer saw up to 5 on a relay further along
        got = [await anext(stream)]
        nxt = asyncio.ensure_future(anext(stream))
        hub.emit_at(4, card(4))
        hub.emit_at(5, card(5))
        await asyncio.sleep(0.05)
        assert not nxt.done()  # 4 and 5 it has: nothing to send
        hub.emit_at(6, card(6))
        got.append(await asyncio.wait_for(nxt, 5))
        hub.emit_at(6, card(6))  # a redelivery of a held id changes nothing
        assert hub.last_id == 6
        hub.emit_at(9, card(9))  # a jump (a message refused by the relay): the history restarts there
        assert hub._since(6) is None
        hub.close()
        return got

    head, live = asyncio.run(go())
    assert head == b"retry: 1000\n\n"
    assert live.startswith(b"id: 6\n") and live.count(b"id: ") == 1


def _publish_until_delivered(event: str, count: int) -> None:
    """From a thread of its own: ``count`` cards into the stream, then wait until the server has sent them all to
    the one consumer on it (the relay's, whose loop this call holds meanwhile)."""
    from _relay_support import NATS_URL

    async def go() -> None:
        import nats

        from dealer.app.public_wire import stream_name

        nc = await nats.connect(NATS_URL)
        js = nc.jetstream()
        for k in range(count):
            msg = {"type": "card", "station": "A", "attempt": 1, "position": k, "seat": "NESW"[k % 4], "card": k}
            await js.publish(subject(event), encode(msg))
        deadline = time.monotonic() + 60
        while True:
            (consumer,) = await js.consumers_info(stream_name(event))
            if consumer.delivered is not None and consumer.delivered.stream_seq == count:
                break
            assert time.monotonic() < deadline, f"the server sent {consumer.delivered} of {count}"
            await asyncio.sleep(0.01)
        await nc.close()

    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(go())
        except BaseException as exc:  # the test's thread raises it: a failure here is the test's
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


def test_messages_that_reach_a_relay_together_go_out_to_its_viewers_in_one_write(event: str) -> None:
    """The hall sends what it emits together (a deal's start and its first card) in one fan-out; a relay must too.
    Here the relay's loop is held while the server sends it 40 messages, so they arrive in one read: every viewer
    gets them in one write. Reading them one by one (the client's message iterator yields to the loop after each)
    sent the first alone and held the rest for the hub's pause after a fan-out."""
    from _relay_support import NATS_URL

    from dealer.app.hub import HEAD, PublicHub
    from dealer.app.public_wire import stream_name
    from dealer.relay.feed import RelayFeed

    count = 40

    async def go() -> list[bytes]:
        import nats

        hub = PublicHub(keepalive=0)
        viewer = FakeTransport()
        hub.attach(viewer, None, chunked=False)
        feed = RelayFeed(hub, NATS_URL, event)
        feed.start()
        nc = await nats.connect(NATS_URL)
        js = nc.jetstream()
        deadline = time.monotonic() + 60
        while True:  # the relay's consumer is on the stream
            with contextlib.suppress(Exception):
                if await js.consumers_info(stream_name(event)):
                    break
            assert time.monotonic() < deadline, "the relay made no consumer"
            await asyncio.sleep(0.01)
        await nc.close()
        _publish_until_delivered(event, count)  # holds this loop, the relay's, until all are sent to it
        while hub.last_id < count or len(viewer.written) < 2:
            assert time.monotonic() < deadline, f"the relay holds {hub.last_id} of {count}"
            await asyncio.sleep(0.01)
        hub.close()
        await feed.close()
        return viewer.written

    opening, *live = asyncio.run(go())
    assert opening.startswith(HEAD)
    ids = [int(line[4:]) for write in live for line in write.split(b"\n") if line.startswith(b"id: ")]
    assert ids == list(range(1, count + 1))
    assert len(live) == 1, [w.count(b"id: ") for w in live]


# -- NATS down and back ------------------------------------------------------------------------------------------
class NatsServer:
    """A NATS server with JetStream of this test's own (port, store folder), to stop and start again."""

    def __init__(self, store: Path) -> None:
        import shutil
        import socket

        binary = shutil.which("nats-server")
        if binary is None:
            pytest.skip("no nats-server binary to stop and restart (the shared one at 4222 must stay up)")
        self.binary = binary
        self.store = store
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"nats://127.0.0.1:{self.port}"
        self.proc: Any = None
        self.start()

    def start(self) -> None:
        import socket
        import subprocess

        args = [self.binary, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.store)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def up() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    return s.recv(4).startswith(b"INFO")
            except OSError:
                assert self.proc.poll() is None, "nats-server exited"
                return False

        wait_for(up, what="nats-server to listen")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill()


def test_the_hall_deals_on_while_nats_is_down_and_the_relays_get_every_event_after(tmp_path: Path) -> None:
    """NATS is killed mid-session: the hall keeps dealing and serving its own screen, the judge sees the
    publisher waiting; NATS comes back: the stream holds every hall message once, in order, and the relay's viewers
    have them all, without a gap."""
    import json

    nats_server = NatsServer(tmp_path / "js")
    event = unique_event()
    deals = 8
    cfg = service_config(
        tmp_path,
        relay={"nats": nats_server.url, "event": event},
        stations=[{"name": "A", "cards_per_second": 150.0, "fault_rate": 0.0}],
    )
    hall_messages: dict[int, bytes] = {}
    relay: Relay | None = None
    viewers: Viewers | None = None
    try:
        with running_service(cfg, regulation(2, K, target=deals), autostart=False) as server:
            hub = server.service.hub
            hub.on_emit = lambda event_id, data: hall_messages.__setitem__(event_id, data)
            relay = Relay(event, url=nats_server.url, hall_key=hall_key(server))
            viewers = Viewers([relay.base], clients=10)
            assert viewers.ready == 10
            pub = server.service.relay_publisher
            assert pub is not None

            def relays_state() -> dict[str, Any]:
                r = httpx.get(f"{server.base}/api/judge/state", headers={"Authorization": f"Bearer {server.judge}"})
                r.raise_for_status()
                state: dict[str, Any] = r.json()["relays"]
                return state

            assert relays_state()["connected"] is True
            judge(server, "connect", device="simulator")
            judge(server, "start")
            wait_progress(lambda: relay.last_id() >= 60, relay.last_id, "the relay to be mid-stream")

            nats_server.kill()
            down_at = hub.last_id
            with HallScreen(server) as hall_screen:
                # the hall deals on and serves its own screen; the publisher keeps what it cannot send
                wait_progress(lambda: hub.last_id >= down_at + 100, lambda: hub.last_id, "dealing while NATS is down")
                wait_for(lambda: hall_screen.received() > 0, what="the hall's own stream to carry messages")

            def publisher_waiting() -> dict[str, Any] | None:
                s = relays_state()
                return s if s["connected"] is False and s["pending"] > 0 else None

            state = wait_progress(publisher_waiting, lambda: hub.last_id, "the judge to see the publisher waiting")
            assert state is not None and state["dropped"] == 0
            assert relay.health()["nats"] is False  # the relay reports it too (its health answers 503)

            nats_server.start()  # same port, same store: the stream is still there
            wait_progress(
                lambda: server.service.stations["A"].status == "target_reached",
                lambda: hub.last_id,
                "the bank target",
            )
            wait_progress(lambda: pub.pending == 0 and pub.connected, lambda: pub.published, "the queue to drain")
            final = relays_state()
            assert final == {**final, "connected": True, "pending": 0, "dropped": 0}
            expected = hub.last_id  # the hall may publish more meanwhile (its ledger head): at least these
            wait_progress(lambda: pub.pending == 0, lambda: pub.published, "the queue to drain")
            stored = stream_messages(event, nats_server.url)
            total = len(stored)
            # every hall message once, in order: stream sequence n is hall id n
            assert [seq for seq, _ in stored] == list(range(1, total + 1)) and total >= expected
            for seq, payload in stored:
                if seq in hall_messages:
                    line = next(x for x in hall_messages[seq].split(b"\n") if x.startswith(b"data: "))
                    assert json.loads(payload) == json.loads(line[6:]), seq
            assert len(hall_messages) >= total - 10 and down_at < total - 100
            wait_progress(lambda: relay.last_id() >= total, relay.last_id, "the relay to catch up")
            result = viewers.finish(total)
        assert result["complete"] == 10, result
        assert result["gaps"] == [0] * 10, result
        assert result["duplicates"] == 0
    finally:
        if viewers is not None:
            viewers.kill()
        if relay is not None:
            relay.stop()
        nats_server.stop()


class HallScreen:
    """The hall's own public stream, read in a thread: how many messages it carried."""

    def __init__(self, server: Running) -> None:
        self.url = f"{server.base}/api/public/events"
        self.count = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.stream("GET", self.url, timeout=30) as r:
            for chunk in r.iter_raw():
                self.count += chunk.count(b"\nid: ") + chunk.startswith(b"id: ")
                if self.stop.is_set():
                    return

    def received(self) -> int:
        return self.count

    def __enter__(self) -> HallScreen:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
