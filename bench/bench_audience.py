"""The audience over real sockets: SSE viewers in separate processes, from the hall service and through relays.

Every figure is commit -> receipt: the wall-clock time the hall's hub was handed a public message (what a station
does right after a card is read and, at a deal's end, committed) to the wall-clock time a viewer process read the
bytes from its socket. Viewers are processes of ``bench/sse_viewers.c`` (epoll; compiled into a temporary
directory with the system's C compiler, ~5 µs of CPU per message received) or, without a compiler, of
``bench.sse_viewers`` (asyncio, ~20 µs per message: on 2 cores the clients' own time then shows in the tail); the
servers are processes of their own; all on loopback on this machine, sharing its cores with the viewers.

1. Hall service, 1,000 viewers: uvicorn on h11 + asyncio (the anchor: the stack measured in issue #17) against
   httptools + uvloop (``uvicorn[standard]``, where installed), same run, same load; then 5,000 viewers.
2. Relays: the hall publishes to NATS JetStream, 4 ``dealer relay`` processes serve 1,000 / 5,000 / 10,000
   viewers; latency includes the hall's publisher, NATS and the relay.
CPU per delivered event = CPU time of the serving processes (hall, or the 4 relays; not NATS, not the viewers)
during the publishing window / messages received by all viewers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.simproc import start_simulator

ROOT = Path(__file__).resolve().parents[1]
NATS_URL = os.environ.get("DEALER_BENCH_NATS", "nats://127.0.0.1:4222")
BUCKET = 1e-4
TICK = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _wait_http(url: str, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} not ready")
        time.sleep(0.05)


@contextlib.contextmanager
def _procs(cmds: list[list[str]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen(c, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cmds]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


@functools.cache
def viewer_command() -> tuple[str, ...]:
    """The viewer program: the C one where a compiler builds it, else the Python one."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is not None:
        out = Path(tempfile.mkdtemp(prefix="dealer-viewers-")) / "sse_viewers"
        built = subprocess.run([cc, "-O2", "-o", str(out), str(ROOT / "bench" / "sse_viewers.c")], capture_output=True)
        if built.returncode == 0:
            return (str(out),)
    return (sys.executable, "-m", "bench.sse_viewers")


VIEWER_NICE = int(os.environ.get("DEALER_BENCH_VIEWER_NICE", "10"))


def _viewer_priority() -> None:
    """Viewers stand in for browsers on other machines: at a lower priority, a viewer woken by a message does
    not preempt the server in the middle of its fan-out (on loopback every write wakes a reader at once)."""
    os.nice(VIEWER_NICE)


def viewer_kind() -> str:
    kind = "C epoll viewers" if len(viewer_command()) == 1 else "Python asyncio viewers"
    return f"{kind} at nice {VIEWER_NICE}"


class _ViewerProcs:
    def __init__(self, urls: list[str], clients: int, procs: int) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
        offset = 0
        for n in per:
            args = [*viewer_command(), "--clients", str(n), "--offset", str(offset)]
            args += ["--timeout", "180"] + [a for u in urls for a in ("--url", u)]
            self.procs.append(
                subprocess.Popen(
                    args,
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    preexec_fn=_viewer_priority,
                )
            )
            offset += n
        self.ready = 0
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            self.ready += int(line.split()[1]) if line.startswith("ready") else 0

    def finish(self, until: int, commits: dict[int, float]) -> list[dict[str, Any]]:
        payload = json.dumps({str(k): v for k, v in commits.items()})
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.write(f"until {until}\n{payload}\n")
            p.stdin.flush()
        out = []
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            p.wait(60)
            out.append(json.loads(line) if line else {"hist": {}, "received": 0, "gaps": [], "complete": 0})
        return out

    def kill(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)


def _percentile(hist: dict[int, int], q: float) -> float:
    total = sum(hist.values())
    if not total:
        return float("nan")
    rank = q / 100 * total
    seen = 0
    for bucket in sorted(hist):
        seen += hist[bucket]
        if seen >= rank:
            return (bucket + 0.5) * BUCKET * 1000  # ms
    return float("nan")


def _merge(results: list[dict[str, Any]]) -> dict[str, Any]:
    hist: dict[int, int] = {}
    for r in results:
        for k, v in r["hist"].items():
            hist[int(k)] = hist.get(int(k), 0) + v
    return {
        "p50": _percentile(hist, 50),
        "p99": _percentile(hist, 99),
        "received": sum(r["received"] for r in results),
        "gaps": sum(sum(r["gaps"]) for r in results),
        "complete": sum(r["complete"] for r in results),
    }


def _stream_last(event: str) -> int:
    async def go() -> int:
        import nats

        from dealer.app.public_wire import stream_name

        nc = await nats.connect(NATS_URL)
        try:
            info = await nc.jetstream().stream_info(stream_name(event))
            return int(info.state.last_seq)
        finally:
            await nc.close()

    return asyncio.run(go())


def _delete_stream(event: str) -> None:
    async def go() -> None:
        import nats

        from dealer.app.public_wire import stream_name

        nc = await nats.connect(NATS_URL)
        with contextlib.suppress(Exception):
            await nc.jetstream().delete_stream(stream_name(event))
        await nc.close()

    with contextlib.suppress(Exception):
        asyncio.run(go())


def _hall(clients: int, procs: int, count: int, rate: float, http: str, loop: str) -> dict[str, Any]:
    port = _free_port()
    cmd = [sys.executable, "-m", "bench.audience_server", "--port", str(port), "--http", http, "--loop", loop]
    with _procs([cmd]) as (server,):
        base = f"http://127.0.0.1:{port}"
        _wait_http(f"{base}/api/public/snapshot", server)
        viewers = _ViewerProcs([base], clients, procs)
        try:
            cpu0 = _cpu(server.pid)
            r = httpx.post(f"{base}/bench/publish", params={"count": count, "rate": rate}, timeout=600).json()
            cpu = _cpu(server.pid) - cpu0
            commits = {r["first"] + i: t for i, t in enumerate(r["times"])}
            m = _merge(viewers.finish(max(commits), commits))
        finally:
            viewers.kill()
    m.update(ready=viewers.ready, cpu_us=cpu / max(m["received"], 1) * 1e6, messages=len(commits))
    return m


def _pipeline(clients: int, procs: int, deals: int) -> dict[str, Any]:
    """The pty simulator process -> driver -> session -> SQLite bank (fsync per deal) -> the hall's hub -> viewers
    in other processes: cards/s sustained over whole deals, and whether every viewer got every message."""
    with tempfile.TemporaryDirectory() as tmp:
        link = str(Path(tmp) / "ttySIM")
        sim = start_simulator(Path(link))
        try:
            port = _free_port()
            cmd = [sys.executable, "-m", "bench.audience_server", "--port", str(port), "--pipeline", link]
            with _procs([[*cmd, "--deals", str(deals)]]) as (server,):
                base = f"http://127.0.0.1:{port}"
                _wait_http(f"{base}/api/public/snapshot", server)
                viewers = _ViewerProcs([base], clients, procs)
                try:
                    r = httpx.post(f"{base}/bench/pipeline", timeout=900).json()
                    last = int(httpx.get(f"{base}/api/public/snapshot").headers["x-event-id"])
                    m = _merge(viewers.finish(last, {}))
                finally:
                    viewers.kill()
        finally:
            sim.terminate()
            sim.wait(10)
    return {**r, **m, "ready": viewers.ready, "cards_per_s": r["cards"] / r["wall"]}


def _relays(clients: int, procs: int, count: int, rate: float, relays: int = 4) -> dict[str, Any]:
    event = f"bench{uuid.uuid4().hex[:8]}"
    port = _free_port()
    http, loop = _stacks()[-1]
    hall_cmd = [sys.executable, "-m", "bench.audience_server", "--port", str(port), "--http", http]
    from dealer.app.relay_signing import load_or_create_key

    key = Path(tempfile.mkdtemp(prefix="dealer-bench-key-")) / "relay.key"
    load_or_create_key(key)  # made before the processes start: the relays read its public half at start
    hall_cmd += ["--loop", loop, "--nats", NATS_URL, "--event", event, "--relay-key", str(key)]
    relay_ports = [_free_port() for _ in range(relays)]
    relay = [sys.executable, "-m", "dealer", "relay", "--nats", NATS_URL, "--event", event, "--hall-key", f"{key}.pub"]
    relay_cmds = [[*relay, "--port", str(p)] for p in relay_ports]
    try:
        with _procs([hall_cmd, *relay_cmds]) as (hall, *relay_procs):
            base = f"http://127.0.0.1:{port}"
            _wait_http(f"{base}/api/public/snapshot", hall)
            urls = [f"http://127.0.0.1:{p}" for p in relay_ports]
            for u, p in zip(urls, relay_procs, strict=True):
                _wait_http(f"{u}/api/public/health", p)
            viewers = _ViewerProcs(urls, clients, procs)
            try:
                cpu0 = sum(_cpu(p.pid) for p in relay_procs)
                r = httpx.post(f"{base}/bench/publish", params={"count": count, "rate": rate}, timeout=600).json()
                last = _stream_last(event)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and any(_relay_last(u) < last for u in urls):
                    time.sleep(0.05)
                first_seq = last - len(r["times"]) + 1
                commits = {first_seq + i: t for i, t in enumerate(r["times"])}
                m = _merge(viewers.finish(last, commits))
                cpu = sum(_cpu(p.pid) for p in relay_procs) - cpu0
            finally:
                viewers.kill()
    finally:
        _delete_stream(event)
    m.update(ready=viewers.ready, cpu_us=cpu / max(m["received"], 1) * 1e6, messages=len(commits))
    return m


def _stacks() -> list[tuple[str, str]]:
    """h11 + asyncio always; httptools + uvloop (``uvicorn[standard]``) where installed."""
    if importlib.util.find_spec("httptools") is None or importlib.util.find_spec("uvloop") is None:
        return [("h11", "asyncio")]
    return [("h11", "asyncio"), ("httptools", "uvloop")]


def _relay_last(url: str) -> int:
    """A relay's last released id (-1 while it is too busy to answer: the caller asks again)."""
    try:
        return int(httpx.get(f"{url}/api/public/health", timeout=30).json()["last_id"])
    except httpx.HTTPError:
        return -1


def _guarded(label: str, fn: Any, *args: Any) -> dict[str, Any] | dict[str, str]:
    try:
        result: dict[str, Any] = fn(*args)
        return result
    except Exception as exc:  # one scenario failing must not hide the others' figures
        return {"failed": f"{label}: {type(exc).__name__}: {exc}"}


def _nats_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 4222), timeout=2) as s:
            return s.recv(64).startswith(b"INFO")
    except OSError:
        return False


def _rows(label: str, m: dict[str, Any], clients: int, target_p99: str | None) -> list[dict[str, Any]]:
    note = (
        f"{m['messages']} msgs, {m['received']:,} deliveries, {m['ready']}/{clients} connected, "
        f"{m['complete']}/{clients} complete, gaps {m['gaps']}; {viewer_kind()}"
    )
    return [
        {"name": f"{label}: p50", "value": round(m["p50"], 2), "unit": "ms", "note": note},
        {"name": f"{label}: p99", "value": round(m["p99"], 2), "unit": "ms", "target": target_p99, "note": note},
        {"name": f"{label}: CPU per delivery", "value": round(m["cpu_us"], 2), "unit": "µs"},
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    count = 60 if quick else 200
    rate = 20.0  # messages/s: a fast dealing machine's card rate, twice a real one's
    stacks = _stacks()

    def add(label: str, m: dict[str, Any], clients: int, target: str | None) -> None:
        if "failed" in m:
            rows.append({"name": f"{label}: FAILED", "value": None, "unit": "", "note": m["failed"]})
        else:
            rows.extend(_rows(label, m, clients, target))

    for http, loop in stacks:
        label = f"hall {http}+{loop}, 1,000 viewers"
        add(label, _guarded(label, _hall, 1000, 2, count, rate, http, loop), 1000, "<= 20")
    if not quick:
        http, loop = stacks[-1]
        label = f"hall {http}+{loop}, 5,000 viewers"
        add(label, _guarded(label, _hall, 5000, 4, count, rate / 2, http, loop), 5000, None)
    deals = 20 if quick else 100
    label = f"pipeline: pty simulator process -> driver -> session -> SQLite bank -> {1000:,} viewers"
    p: dict[str, Any] = _guarded(label, _pipeline, 1000, 2, deals)
    if "failed" in p:
        rows.append({"name": f"{label}: FAILED", "value": None, "unit": "", "note": p["failed"]})
    else:
        note = (
            f"{p['deals']} deals, fsync per deal; {p['complete']}/1000 viewers complete, gaps {p['gaps']}, "
            f"server CPU {p['cpu'] / p['cards'] * 1e6:.0f} µs per card; {viewer_kind()}"
        )
        rows.append(
            {"name": label, "value": round(p["cards_per_s"]), "unit": "cards/s", "target": ">= 1000", "note": note}
        )
    if not _nats_up():
        rows.append({"name": "relays", "value": None, "unit": "", "note": f"skipped: no NATS at {NATS_URL}"})
        return rows
    sizes = [(1000, 2, rate)] if quick else [(1000, 2, rate), (5000, 4, rate / 2), (10000, 4, rate / 4)]
    for clients, procs, r in sizes:
        label = f"4 relays, {clients:,} viewers"
        n = count if clients < 10000 else count // 2
        add(label, _guarded(label, _relays, clients, procs, n, r), clients, "<= 20" if clients == 1000 else None)
    return rows
