"""The hall service for the audience benchmark, in its own process: ``python -m bench.audience_server``.

The real hall application (``create_app`` over a ``Service`` with no station started) on uvicorn, with the HTTP
parser and event loop chosen on the command line, plus one bench-only route: ``POST /bench/publish?count=N&rate=R``
publishes N public card messages through the hall's hub at R messages/s (the same call a station makes after a
card is read and committed) and answers with each message's hall id and its wall-clock publish time. With
``--nats`` the hall also publishes to the relays' stream, as ``[relay] nats`` does. With ``--pipeline PTY``
the hall has one station on that serial link (a simulator process's pty) and ``POST /bench/pipeline`` deals
until the bank target: the whole path, card read -> driver -> session -> SQLite bank -> every viewer.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.audience_server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--http", default="h11", choices=("h11", "httptools"))
    parser.add_argument("--loop", default="asyncio", choices=("asyncio", "uvloop"))
    parser.add_argument("--nats", default=None)
    parser.add_argument("--event", default="bench")
    parser.add_argument("--relay-key", default=None, help="the hall's relay signing key file (made if absent)")
    parser.add_argument("--max-viewers", type=int, default=20_000)
    parser.add_argument("--pipeline", default=None, help="a simulator's pty: one station dealing from it")
    parser.add_argument("--deals", type=int, default=100, help="the bank target with --pipeline")
    args = parser.parse_args()

    import uvicorn

    from dealer.app.config import config_from_dict
    from dealer.app.devices import open_station_device
    from dealer.app.service import Service
    from dealer.cli.serve_cmds import bind
    from dealer.regulation import DealingVariant, Regulation, regulation_from_dict
    from dealer.web.app import create_app

    tmp = Path(tempfile.mkdtemp(prefix="dealer-bench-"))
    data: dict[str, Any] = {"var_dir": str(tmp), "bank": {"path": str(tmp / "bank.sqlite")}}
    data["limits"] = {"max_public_connections": args.max_viewers}
    if args.nats:
        data["relay"] = {"nats": args.nats, "event": args.event}
        if args.relay_key:
            data["relay"]["key"] = args.relay_key
    if args.pipeline:
        data["stations"] = [{"name": "A", "kind": "serial", "url": args.pipeline}]
    cfg = config_from_dict(data, "bench")
    if args.pipeline:
        reg = Regulation(DealingVariant.PARTIALLY_OPEN, 32, 5.0, 24, 24, 2, args.deals)
    else:
        reg = regulation_from_dict({"dealing": {"variant": 3}, "bank": {"target": 100}, "session": {"boards": 1}})
    service = Service(cfg, reg, autostart=False)
    app = create_app(service)

    async def publish(count: int, rate: float) -> dict[str, Any]:
        if service.relay_publisher is not None:
            await service.relay_publisher.flush(30)
        times: list[float] = []
        first = service.hub.last_id + 1
        loop = asyncio.get_running_loop()
        start = loop.time()
        for k in range(count):
            at = start + k / rate
            delay = at - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            pos = k % 52
            if pos == 0:
                service.hub.publish(
                    {"type": "deal_started", "station": "A", "attempt": k // 52 + 1, "variant": 3, "open_count": 52}
                )
                times.append(time.time())
            msg = {"type": "card", "station": "A", "attempt": k // 52 + 1, "position": pos, "seat": "NESW"[k % 4]}
            service.hub.publish({**msg, "card": pos})
            times.append(time.time())
        if service.relay_publisher is not None:
            await service.relay_publisher.flush(30)
        return {"first": first, "times": times}

    async def bench_publish(count: int = 100, rate: float = 20.0) -> dict[str, Any]:
        return await publish(count, rate)

    async def bench_pipeline() -> dict[str, Any]:
        """Deal from the pty simulator until the bank target; cards/s over the whole run, the process's CPU."""
        station = service.stations["A"]
        await station.connect(open_station_device(station.config))
        cpu0, t0 = time.process_time(), time.perf_counter()
        await station.start()
        while station.status != "target_reached":
            await asyncio.sleep(0.005)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        await station.disconnect()
        return {"cards": station.cards_read, "deals": station.committed, "wall": wall, "cpu": cpu}

    app.add_api_route("/bench/publish", bench_publish, methods=["POST"])
    app.add_api_route("/bench/pipeline", bench_pipeline, methods=["POST"])
    sock = bind("127.0.0.1", args.port)  # the listening socket `dealer serve` makes
    uvicorn.Server(uvicorn.Config(app, http=args.http, loop=args.loop, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
