"""The public hub: resumption, a slow client never stalls the others, broadcast delay, clean close."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator

import pytest
from _transport import FakeTransport

from dealer.app.hub import PublicHub, parse_last_event_id
from dealer.app.public import PublicState, from_projection
from dealer.core import Card, Seat
from dealer.session import PublicCardHidden, PublicCardOpen, PublicDealStarted


def card(pos: int) -> dict[str, object]:
    return from_projection("A", PublicCardOpen(1, pos, Seat(pos % 4), Card(pos)))


def ids(chunk: bytes) -> list[int]:
    return [int(line[4:]) for line in chunk.split(b"\n") if line.startswith(b"id: ")]


def datas(chunk: bytes) -> list[dict[str, object]]:
    return [json.loads(line[6:]) for line in chunk.split(b"\n") if line.startswith(b"data: ")]


def test_fast_clients_get_everything_while_a_stalled_one_is_resynced() -> None:
    async def main() -> None:
        hub = PublicHub(client_buffer=10, coalesce=0.0)
        fast = hub.stream(None)
        slow = hub.stream(None)
        assert isinstance(fast, AsyncGenerator) and isinstance(slow, AsyncGenerator)  # closed below
        assert datas(await anext(fast))[0]["type"] == "snapshot"
        assert datas(await anext(slow))[0]["type"] == "snapshot"
        got: list[int] = []
        for pos in range(30):
            hub.publish(card(pos))
            got += ids(await asyncio.wait_for(anext(fast), 1))  # the fast client is never held up
        assert got == list(range(1, 31))
        # the stalled client, 30 messages behind with room for 10, gets one fresh snapshot instead
        chunk = await asyncio.wait_for(anext(slow), 1)
        (snap,) = datas(chunk)
        assert snap["type"] == "snapshot" and ids(chunk) == [30] and hub.resyncs == 1
        stations = snap["stations"]
        assert isinstance(stations, list) and len(stations[0]["hands"]["N"]["open"]) == 8
        hub.publish(card(30))
        assert ids(await asyncio.wait_for(anext(slow), 1)) == [31]
        await fast.aclose()
        await slow.aclose()
        assert hub.clients == 0

    asyncio.run(main())


def test_resume_from_last_event_id_or_snapshot() -> None:
    async def main() -> None:
        hub = PublicHub(history=8)
        for pos in range(5):
            hub.publish(card(pos))
        assert ids(await anext(hub.stream(2))) == [3, 4, 5]
        assert await anext(hub.stream(5)) == b"retry: 1000\n\n"  # up to date: nothing to replay
        for pos in range(5, 30):
            hub.publish(card(pos))
        old = await anext(hub.stream(3))  # long gone from the history
        assert datas(old)[0]["type"] == "snapshot"
        assert datas(await anext(hub.stream(999)))[0]["type"] == "snapshot"  # from another server's life

    asyncio.run(main())


def test_broadcast_delay_holds_messages_and_the_snapshot_back() -> None:
    async def main() -> None:
        hub = PublicHub(delay=0.2)
        hub.publish(card(0))
        assert hub.last_id == 0 and hub.state.snapshot()["stations"] == []
        await asyncio.sleep(0.3)
        assert hub.last_id == 1 and hub.state.snapshot()["stations"][0]["hands"]["N"]["open"] == [0]

    asyncio.run(main())


def test_close_ends_every_stream() -> None:
    async def main() -> None:
        hub = PublicHub()
        stream = hub.stream(None)
        await anext(stream)
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.01)
        hub.close()
        try:
            await asyncio.wait_for(waiting, 1)
        except StopAsyncIteration:
            pass
        else:
            raise AssertionError("the stream should have ended")

    asyncio.run(main())


def test_state_folds_only_public_messages() -> None:
    state = PublicState()
    state.apply(from_projection("A", PublicDealStarted(1, 2, 32)))
    state.apply(card(0))
    state.apply(from_projection("A", PublicCardHidden(1, 32, Seat.S, 1)))
    (st,) = state.snapshot()["stations"]
    assert st["hands"]["N"]["open"] == [0] and st["hands"]["S"]["hidden"] == 1 and st["phase"] == "dealing"


def test_last_event_id_parsing() -> None:
    assert parse_last_event_id(" 12 ") == 12
    assert parse_last_event_id("x") is None and parse_last_event_id("-3") is None and parse_last_event_id(None) is None


# -- attached connections: the hub writes to their transports itself ----------------------------------------------
def unchunk(parts: list[bytes]) -> bytes:
    """HTTP/1.1 chunked framing undone by hand: size in hex, CRLF, data, CRLF."""
    out = b""
    raw = b"".join(parts)
    while raw:
        size_text, _, raw = raw.partition(b"\r\n")
        size = int(size_text, 16)
        assert raw[size : size + 2] == b"\r\n"
        out, raw = out + raw[:size], raw[size + 2 :]
    return out


def test_attached_viewers_get_one_framed_write_per_wake_up_and_a_stalled_one_a_snapshot() -> None:
    async def main() -> None:
        hub = PublicHub(coalesce=0.0, write_limit=1000, client_buffer=3)
        fast, stalled, resumed = FakeTransport(), FakeTransport(), FakeTransport()
        viewers = [hub.attach(fast, None), hub.attach(stalled, None)]
        assert hub.clients == 2
        assert unchunk(fast.written).startswith(b"retry: 1000\n\n") and b'"type":"snapshot"' in fast.written[0]
        stalled.backlog = 5000  # stops reading
        for pos in range(3):
            hub.publish(card(pos))
        await asyncio.sleep(0.01)
        assert len(fast.written) == 2  # the opening, then the three messages in one write
        assert ids(unchunk(fast.written)) == [0, 1, 2, 3]  # the snapshot's id 0, then 1..3
        assert len(stalled.written) == 1  # skipped while it does not read
        hub.attach(resumed, 2)  # Last-Event-ID 2: the replay of 3 only
        assert ids(unchunk(resumed.written)) == [3]
        stalled.backlog = 0
        hub.publish(card(3))
        await asyncio.sleep(0.01)
        assert ids(unchunk(fast.written))[-1] == 4 and ids(unchunk(resumed.written)) == [3, 4]
        caught_up = datas(unchunk(stalled.written[1:]))
        assert [d["type"] for d in caught_up] == ["snapshot"] and hub.resyncs == 1  # 4 missed > 3: folded
        for viewer in viewers:
            hub.detach(viewer)
            hub.detach(viewer)  # twice: counted once
        assert hub.clients == 1
        ended = hub.ended()
        hub.close()
        assert ended.done()

    asyncio.run(main())


def test_one_slow_fan_out_does_not_hold_the_next_message_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a fan-out the next waits FANOUT_GAP x the median cost of the last fan-outs: one slowed 7 ms -> 30 ms
    (the machine took the core) leaves the gap at 3 x 7 ms, not 3 x 30 ms; a lasting 30 ms moves it to 3 x 30 ms
    (the viewers' writes still take about a quarter of the loop). The CPU clock and the loop's clock are scripted."""
    import time

    from dealer.app import hub as hub_module

    readings: list[float] = []  # thread_time() answers: each fan-out's start, then its end

    def thread_time() -> float:
        return readings.pop(0)

    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        monkeypatch.setattr(loop, "time", lambda: 100.0)
        monkeypatch.setattr(time, "thread_time", thread_time)
        hub = PublicHub(coalesce=0.0)
        hub.attach(FakeTransport(), None)
        gaps = []
        for cost in [0.007] * 8 + [0.030] + [0.007] + [0.030] * 8:
            readings.extend([50.0, 50.0 + cost])
            hub._flush()
            gaps.append(hub._quiet_until - 100.0)
        hub.close()
        return gaps

    gaps = asyncio.run(main())
    assert hub_module.FANOUT_GAP == 3.0 and hub_module.FANOUT_SAMPLES == 9
    assert gaps[0] == pytest.approx(0.021) and gaps[7] == pytest.approx(0.021)
    assert gaps[8] == pytest.approx(0.021)  # the slow one: its median is still 7 ms
    assert gaps[9] == pytest.approx(0.021)
    assert gaps[-1] == pytest.approx(0.090)  # eight of the last nine took 30 ms
    assert readings == []
