"""The audience stream over a real server: every open card in order, and no hidden card, byte by byte."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import h11
import httpx
import pytest
from _public_keys import PUBLIC_KEYS
from _web_server import Running, regulation, running_service, service_config

from dealer.bank.store import SqliteBank
from dealer.core import Card, Seat

DEALS = 50
K = 32
KEYS = {**PUBLIC_KEYS, "snapshot": {"type", "stations", "bank", "commitment"}}


class Capture:
    """An SSE client on a plain socket (HTTP parsed by h11) in a thread, keeping every body byte it receives."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.raw = bytearray()
        self.stop = threading.Event()
        parts = urlsplit(url)
        self.addr = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.target = parts.path
        self.headers = headers or {}
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.connected = threading.Event()
        self.content_type = ""

    def _run(self) -> None:
        conn = h11.Connection(h11.CLIENT)
        with socket.create_connection(self.addr, timeout=10) as sock:
            headers = [
                ("Host", f"{self.addr[0]}:{self.addr[1]}"),
                ("Accept", "text/event-stream"),
                *self.headers.items(),
            ]
            sock.sendall(conn.send(h11.Request(method="GET", target=self.target, headers=headers)))
            sock.sendall(conn.send(h11.EndOfMessage()))
            sock.settimeout(0.1)
            while not self.stop.is_set():
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    try:
                        data = sock.recv(65536)
                    except TimeoutError:
                        continue
                    conn.receive_data(data)
                elif isinstance(event, h11.Response):
                    self.content_type = dict(event.headers).get(b"content-type", b"").decode()
                    self.connected.set()
                elif isinstance(event, h11.Data):
                    self.raw += event.data
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    return

    def __enter__(self) -> Capture:
        self.thread.start()
        assert self.connected.wait(10)
        assert self.content_type.startswith("text/event-stream")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()  # hang up, as a viewer closing the page does
        self.thread.join(10)

    def messages(self) -> list[tuple[int | None, dict[str, Any]]]:
        return parse_sse(bytes(self.raw))


def parse_sse(raw: bytes) -> list[tuple[int | None, dict[str, Any]]]:
    """Parse complete SSE blocks and check that re-encoding them gives back exactly the bytes received."""
    complete = raw[: raw.rfind(b"\n\n") + 2]
    out: list[tuple[int | None, dict[str, Any]]] = []
    rebuilt = bytearray()
    for block in complete.split(b"\n\n")[:-1]:
        event_id: int | None = None
        data: dict[str, Any] | None = None
        for line in block.split(b"\n"):
            name, _, value = line.partition(b": ")
            if name == b"id":
                event_id = int(value)
            elif name == b"data":
                data = json.loads(value)
            elif name == b"retry":
                assert value == b"1000"
            else:
                assert name == b"" and value == b"keepalive", line
        rebuilt += block + b"\n\n"
        if data is not None:
            out.append((event_id, data))
    assert bytes(rebuilt) == complete  # nothing in the stream that the parsed messages do not account for
    return out


def wait_for(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def judge(server: Running, action: str, **body: Any) -> dict[str, Any]:
    r = httpx.post(  # connecting a camera calibrates it first: seconds on a loaded machine, not milliseconds
        f"{server.base}/api/judge/stations/A/{action}",
        json=body,
        headers={"Authorization": f"Bearer {server.judge}"},
        timeout=120,
    )
    assert r.status_code == 200, r.text
    result: dict[str, Any] = r.json()
    return result


@pytest.fixture(scope="module")
def fifty(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[tuple[int | None, dict[str, Any]]], list[Any]]:
    tmp = tmp_path_factory.mktemp("stream")
    cfg = service_config(tmp)
    with running_service(cfg, regulation(2, K, target=DEALS), autostart=False) as server:
        with Capture(f"{server.base}/api/public/events") as cap:
            judge(server, "connect", device="simulator")
            judge(server, "start")
            wait_for(lambda: server.service.stations["A"].status == "target_reached")
            time.sleep(0.3)
        messages = cap.messages()
    bank = SqliteBank(cfg.bank_path)
    try:
        stored = bank.get_deals(list(range(1, bank.deal_count() + 1)))
    finally:
        bank.close()
    return messages, stored


def test_fifty_deals_reach_the_bank(fifty: tuple[list[Any], list[Any]]) -> None:
    messages, stored = fifty
    assert len(stored) == DEALS
    committed = [m for _, m in messages if m["type"] == "deal_committed"]
    assert [m["bank_deal"] for m in committed] == list(range(1, DEALS + 1))
    assert all(d.source["shown"] == K and d.source["variant"] == 2 for d in stored)


def test_every_message_has_only_public_fields(fifty: tuple[list[Any], list[Any]]) -> None:
    messages, _ = fifty
    ids = [i for i, _ in messages]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for _, m in messages:
        assert set(m) == KEYS[m["type"]], m


def test_audience_gets_every_open_card_in_order_and_no_hidden_card(fifty: tuple[list[Any], list[Any]]) -> None:
    messages, stored = fifty
    by_attempt: dict[int, list[dict[str, Any]]] = {}
    bank_deal_of: dict[int, int] = {}
    for _, m in messages:
        if m["type"] in ("card", "hidden"):
            by_attempt.setdefault(m["attempt"], []).append(m)
        elif m["type"] == "deal_committed":
            bank_deal_of[m["attempt"]] = m["bank_deal"]
        elif m["type"] == "snapshot":
            for st in m["stations"]:
                assert all(not h["open"] and h["hidden"] == 0 for h in st["hands"].values())  # taken before dealing
    assert len(bank_deal_of) == DEALS
    for attempt, bank_deal in bank_deal_of.items():
        d = stored[bank_deal - 1]
        order = [Card(c) for c in d.dealing_order]
        msgs = by_attempt[attempt]
        opens = [m for m in msgs if m["type"] == "card"]
        hidden = [m for m in msgs if m["type"] == "hidden"]
        assert [m["card"] for m in opens] == [int(c) for c in order[:K]]
        assert [m["position"] for m in opens] == list(range(K))
        assert [m["seat"] for m in opens] == [d.deal.seat_of(c).letter for c in order[:K]]
        assert [m["position"] for m in hidden] == list(range(K, 52))
        assert [m["seat"] for m in hidden] == [d.deal.seat_of(c).letter for c in order[K:]]
        hidden_cards = {int(c) for c in order[K:]}
        assert not hidden_cards & {m["card"] for m in opens}
        per_seat = {s.letter: 0 for s in Seat}
        for m in hidden:
            per_seat[m["seat"]] += 1
            assert m["count"] == per_seat[m["seat"]]


def _history(server: Running) -> list[tuple[int, dict[str, Any]]]:
    """The hall hub's held messages, parsed (what a resuming client is served from)."""
    hub = server.service.hub
    out = []
    for data in hub._history:
        lines = dict(line.split(": ", 1) for line in data.decode().splitlines() if ": " in line)
        out.append((int(lines["id"]), json.loads(lines["data"])))
    return out


def test_snapshot_on_reconnect_and_last_event_id_resumption(tmp_path: Path) -> None:
    cfg = service_config(tmp_path)
    with running_service(cfg, regulation(2, K, target=3), autostart=False) as server:
        judge(server, "connect", device="simulator")
        judge(server, "start")
        wait_for(lambda: server.service.stations["A"].status == "target_reached")
        last = server.service.hub.last_id
        # a fresh client gets the snapshot first: the bank is formed, so no deal of formation is on it (#27)
        with Capture(f"{server.base}/api/public/events") as cap:
            wait_for(lambda: b"\n\n" in cap.raw[20:])
        (first_id, snap), *_ = cap.messages()
        assert snap["type"] == "snapshot" and first_id == last
        (st,) = snap["stations"]
        assert st["phase"] == "cleared" and st["bank_deal"] is None
        assert sum(len(h["open"]) for h in st["hands"].values()) == 0
        # a client resuming from an id after the clearing gets exactly the messages after it, no snapshot
        cleared = max(i for i, m in _history(server) if m["type"] == "cleared")
        with Capture(f"{server.base}/api/public/events", {"Last-Event-ID": str(cleared)}) as cap:
            wait_for(lambda: cap.raw.count(b"\n\n") >= 1 + last - cleared)
        resumed = cap.messages()
        assert [i for i, _ in resumed] == list(range(cleared + 1, last + 1))
        assert all(m["type"] != "snapshot" for _, m in resumed)
        # one from before the clearing gets the (cleared) snapshot, not the old cards
        with Capture(f"{server.base}/api/public/events", {"Last-Event-ID": str(cleared - 10)}) as cap:
            wait_for(lambda: cap.raw.count(b"\n\n") >= 2)
        assert cap.messages()[0][1]["type"] == "snapshot"
        # an id older than the history gets a snapshot
        server.service.hub.forget_history()
        with Capture(f"{server.base}/api/public/events", {"Last-Event-ID": "1"}) as cap:
            wait_for(lambda: cap.raw.count(b"\n\n") >= 2)
        assert cap.messages()[0][1]["type"] == "snapshot"
