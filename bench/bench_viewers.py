"""Audience viewers against the officials' consoles: the judge API's latency with idle and active viewers.

Three processes: the real service (uvicorn, a simulated station dealing at a machine's pace, so the public stream
carries cards), a viewer process (N idle SSE connections that never read, M active ones reading everything), and
this one, which times ``GET /api/judge/state`` with the judge's secret, both while the viewers connect and once
they are all connected. Scenarios: no viewers (the anchor), the
viewers against the default cap (``limits.max_public_connections`` = 1,000: the rest get 503), and the same viewers
with the cap raised above their number (what the cap prevents). Rows give p50/p95/max latency and how many
viewers were served or refused.

The service listens as ``dealer serve`` does (``dealer.serving.accept``: a few new connections per event-loop turn);
the last scenario takes asyncio's own accept (the whole backlog at once) as the anchor.

Run alone: ``python -m bench --only viewers`` (``--quick``: 400 idle + 100 active).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from dealer.serving.accept import ACCEPT_BATCH

JUDGE = "j" * 32
DIRECTOR = "d" * 32


def _serve(config_path: str, batch: int = ACCEPT_BATCH) -> None:
    """In the server process: the real service on a free port, on the listening socket ``dealer serve`` makes
    (``--batch``: connections taken per loop turn; 0: asyncio's own, the whole backlog at once); prints the port,
    runs until killed."""
    import uvicorn

    from dealer.app.config import load_config
    from dealer.app.service import Service
    from dealer.cli.serve_cmds import bind
    from dealer.serving.accept import paced
    from dealer.web.app import create_app

    cfg = load_config(config_path)
    service = Service(cfg)
    app = create_app(service)
    sock = bind("127.0.0.1", 0)
    if batch != ACCEPT_BATCH:
        sock = paced(sock, batch or 1_000_000)
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="error")).run(sockets=[sock])


def _viewers(port: int, idle: int, active: int) -> None:
    """In the viewer process: open the connections, report how many were served, then hold them until stdin
    closes (active viewers keep reading)."""

    async def one(read: bool, served: list[int], refused: list[int]) -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            refused.append(1)
            return
        writer.write(f"GET /api/public/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " in status:
            served.append(1)
        else:
            refused.append(1)
            writer.close()
            return
        if read:
            while await reader.read(65536):
                pass
        else:
            await asyncio.Event().wait()  # never read: the server's buffers fill

    async def main() -> None:
        served: list[int] = []
        refused: list[int] = []
        tasks = []
        for i in range(idle + active):
            tasks.append(asyncio.create_task(one(i >= idle, served, refused)))
            if i % 500 == 499:
                await asyncio.sleep(0.01)  # a burst: 5,000 viewers in about a second, as fast as this client goes
        deadline = time.monotonic() + 120
        while len(served) + len(refused) < idle + active and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        print(json.dumps({"served": len(served), "refused": len(refused)}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the bench is done

    asyncio.run(main())


def _config(tmp: Path, cap: int) -> Path:
    tmp = Path(tempfile.mkdtemp(dir=tmp))  # a fresh bank for every scenario
    path = tmp / f"service-{cap}.toml"
    path.write_text(
        f"""var_dir = "{tmp / f"var-{cap}"}"
[bank]
path = "{tmp / f"var-{cap}" / "bank.sqlite"}"
[secrets]
judge = "{JUDGE}"
director = "{DIRECTOR}"
[limits]
max_public_connections = {cap}
[[stations]]
name = "A"
kind = "simulator"
cards_per_second = 8.7
fault_rate = 0.0
""",
        encoding="utf-8",
    )
    return path


def _latencies(c: httpx.Client, n: int) -> list[float]:
    """``n`` timed requests on the console's own kept-alive connection (a console stays connected: a new
    connection would queue behind the viewers' in the listen backlog, which is not the event loop's doing)."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        c.get("/api/judge/state").raise_for_status()
        out.append(time.perf_counter() - t0)
        time.sleep(0.02)
    return out


def _scenario(tmp: Path, cap: int, idle: int, active: int, samples: int, batch: int = ACCEPT_BATCH) -> dict[str, Any]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_viewers", "serve", str(_config(tmp, cap)), str(batch)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    viewers: subprocess.Popen[str] | None = None
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/public/snapshot", timeout=5).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        counts: dict[str, Any] = {"served": 0, "refused": 0, "connect_s": 0.0}
        burst: list[float] = []
        console = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {JUDGE}"}, timeout=60)
        console.get("/api/judge/state").raise_for_status()
        if idle + active:
            viewers = subprocess.Popen(
                [sys.executable, "-m", "bench.bench_viewers", "viewers", str(port), str(idle), str(active)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            out = viewers.stdout
            assert out is not None
            ready: list[str] = []
            t0 = time.monotonic()
            reader = threading.Thread(target=lambda: ready.append(out.readline()), daemon=True)
            reader.start()
            while not ready:  # the judge's console while the viewers connect
                burst += _latencies(console, 5)
            counts = json.loads(ready[0])
            counts["connect_s"] = time.monotonic() - t0
        lat = np.array(_latencies(console, samples)) * 1000
        console.close()
        during = np.array(burst or [float("nan")]) * 1000
        return {
            "p50": float(np.percentile(lat, 50)),
            "p95": float(np.percentile(lat, 95)),
            "max": float(lat.max()),
            "burst_p95": float(np.percentile(during, 95)),
            "burst_max": float(during.max()),
            **counts,
        }
    finally:
        if viewers is not None:
            viewers.kill()
            viewers.wait()
        server.kill()
        server.wait()


def run(quick: bool = False) -> list[dict[str, Any]]:
    idle, active, samples = (400, 100, 50) if quick else (4000, 1000, 200)
    rows: list[dict[str, Any]] = []
    paced = f"{ACCEPT_BATCH} accepts per loop turn"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, cap, i, a, batch in (
            ("no viewers (anchor)", 1000, 0, 0, ACCEPT_BATCH),
            (f"{idle} idle + {active} active, cap 1000, {paced}", 1000, idle, active, ACCEPT_BATCH),
            (f"{idle} idle + {active} active, no cap, {paced}", idle + active + 100, idle, active, ACCEPT_BATCH),
            (f"{idle} idle + {active} active, no cap, asyncio's accept (anchor)", idle + active + 100, idle, active, 0),
        ):
            r = _scenario(tmp, cap, i, a, samples, batch)
            note = f"viewers served {r['served']}, refused {r['refused']}; max {r['max']:.0f} ms"
            rows.append({"name": f"judge API p50, {name}", "value": round(r["p50"], 1), "unit": "ms", "note": note})
            rows.append({"name": f"judge API p95, {name}", "value": round(r["p95"], 1), "unit": "ms"})
            if i + a:
                burst = f"max {r['burst_max']:.0f} ms; the {i + a} viewers connected in {r['connect_s']:.1f} s"
                rows.append(
                    {
                        "name": f"judge API p95 during the {i + a}-viewer burst, {name}",
                        "value": round(r["burst_p95"], 1),
                        "unit": "ms",
                        "note": burst,
                    }
                )
    return rows


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "serve":
        _serve(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else ACCEPT_BATCH)
    elif command == "viewers":
        _viewers(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        for row in run(quick="--quick" in sys.argv):
            print(row)
