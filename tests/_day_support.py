"""A tournament day against a real ``dealer serve`` process: config, the server process, and real clients.

The server is started as a separate process (``python -m dealer serve``) on a free loopback port with a
temporary config, regulation and ``var`` directory, so it can be killed with SIGKILL and restarted on the same
bank. Clients are the real ones a judge, a director and the audience use: httpx for HTTP and Server-Sent Events,
websockets for the judge's console. The CLI is used only where a director would use it (``dealer bank verify``,
``dealer draw verify`` on a published bundle).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import websockets
from _waiting import wait_progress_async
from custody_support import TEST_PASSPHRASE, passphrase_file

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]
JUDGE = "judge-secret-for-the-day-test-0123456789"
DIRECTOR = "director-secret-for-the-day-test-9876543210"
WITNESSES = ("Ivanova", "Petrov", "Smith")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["PYTHONUNBUFFERED"] = "1"
    return e


_CHIEF_JUDGE = Path(tempfile.mkdtemp(prefix="dealer-chief-judge-"))  # their own folder, not the event's


def dealer_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``dealer ARGS`` as a separate process (as a director would at a terminal; the chief judge's passphrase
    in a file of theirs, for the steps that need the key)."""
    e = {**env(), "DEALER_PASSPHRASE_FILE": str(passphrase_file(_CHIEF_JUDGE))}
    return subprocess.run(
        [sys.executable, "-m", "dealer", *args], cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout
    )


@dataclass(frozen=True)
class DayConfig:
    root: Path
    target: int
    fault_rate: float = 0.1
    seed: int = 2026
    cards_per_second: float = 1e6  # the simulator at full speed
    open_cards: int = 32
    copies: int = 2
    bank_url: str | None = None  # a postgresql:// bank ([bank] url) instead of the SQLite file in var
    bank_copy: Path | None = None  # [bank] copy: the bank's second copy (another disk)

    @property
    def var(self) -> Path:
        return self.root / "var"

    @property
    def bank(self) -> str:
        """Where the bank is: the SQLite file's path, or the PostgreSQL URL (``--bank`` takes either)."""
        return self.bank_url if self.bank_url is not None else str(self.var / "bank.sqlite")

    def write(self) -> Path:
        """Write the service config and the regulation; return the config path."""
        self.var.mkdir(parents=True, exist_ok=True)
        reg = self.root / "regulation.toml"
        reg.write_text(
            f'title = "Day test"\n[dealing]\nvariant = 2\nopen_cards = {self.open_cards}\n'
            f"[draw]\nshare_percent = 10\n[session]\nboards = {min(200, max(1, self.target // 20))}\n"
            f"copies = {self.copies}\n[schedule]\nsessions = 2\n"
            f"[bank]\ntarget = {self.target}\n"
        )
        cfg = self.root / "service.toml"
        bank_key = "path" if self.bank_url is None else "url"
        stations = []
        for name, url, seed in (("A", "pty", self.seed), ("B", "usb", self.seed + 1)):
            stations.append(
                f'[[stations]]\nname = "{name}"\nkind = "simulator"\nurl = "{url}"\n'
                f"cards_per_second = {self.cards_per_second}\nfault_rate = {self.fault_rate}\n"
                f"auto_redeal = true\nseed = {seed}\n"
            )
        cfg.write_text(
            f'var_dir = "{self.var}"\nregulation = "{reg}"\n'
            "require_equipment_check = false\n"  # the day's tests press Start at once (tests/test_start_gate.py)
            f'[bank]\n{bank_key} = "{self.bank}"\n'
            + (f'copy = "{self.bank_copy}"\n' if self.bank_copy is not None else "")
            + f'[secrets]\njudge = "{JUDGE}"\ndirector = "{DIRECTOR}"\n'
            + "\n".join(stations)
        )
        return cfg


class ServerProcess:
    """``dealer serve`` in its own process; start, kill -9, restart on the same var directory."""

    def __init__(self, cfg: DayConfig) -> None:
        self.cfg = cfg
        self.config_path = cfg.write()
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log = cfg.root / "server.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/judge/ws"

    def start(self, timeout: float = 60, press_start: bool = True) -> None:
        """Start the process and, as the technical judge, press Start on every station once it is connected."""
        self._launch(timeout)
        if press_start:
            self.press_start(timeout)

    def press_start(self, timeout: float = 60) -> None:
        judge = {"Authorization": f"Bearer {JUDGE}"}
        deadline = time.monotonic() + timeout
        pending: set[str] | None = None
        while True:
            state = httpx.get(self.base + "/api/judge/state", headers=judge, timeout=10).json()
            names = {st["station"] for st in state["stations"]} if pending is None else pending
            for st in state["stations"]:
                if st["station"] in names and st["device"] is not None and st["status"] == "ready":
                    httpx.post(f"{self.base}/api/judge/stations/{st['station']}/start", headers=judge, timeout=10)
                    names.discard(st["station"])
                elif st["station"] in names and st["status"] in ("dealing", "target_reached"):
                    names.discard(st["station"])
            pending = names
            if not pending:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"stations never ready for Start: {sorted(pending)}")
            time.sleep(0.05)

    def _launch(self, timeout: float) -> None:
        self.starts += 1
        with self.log.open("ab") as log:
            log.write(f"\n--- start {self.starts} ---\n".encode())
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dealer", "serve", "--config", str(self.config_path), "--port", str(self.port)],
                cwd=self.cfg.root,
                env=env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dealer serve exited with {self.proc.returncode}:\n{self.log.read_text()[-4000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.base + "/api/public/snapshot", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"dealer serve did not answer:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.05)
        self.sign_in()

    def sign_in(self) -> None:
        """The chief judge on the director's console: sets the custody up on the first start, unlocks the key on
        every start after (a restarted service holds no key)."""
        state = httpx.get(self.base + "/api/director/custody", headers=director_headers(), timeout=30).json()["state"]
        if state == "unlocked":
            return
        path = "/api/director/custody/setup" if state == "none" else "/api/director/custody/unlock"
        r = httpx.post(self.base + path, headers=director_headers(), json={"passphrase": TEST_PASSPHRASE}, timeout=60)
        assert r.status_code == 200 and r.json()["state"] == "unlocked", r.text
        _signed_in[0] = r.cookies["dealer_custody"]  # the console's browser keeps it in a cookie; scripts after a dot

    def kill(self) -> None:
        """SIGKILL: no clean-up at all, as a power cut of the process."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def rss_kib(self) -> int:
        """Resident set size of the server process (kB), from /proc."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


_signed_in: list[str] = [""]  # the chief judge's latest sign-in on the console (one service runs at a time here)


def director_headers() -> dict[str, str]:
    """The director's link, and the chief judge's sign-in once made: SECRET.CUSTODY."""
    token = _signed_in[0]
    return {"Authorization": f"Bearer {DIRECTOR}.{token}" if token else f"Bearer {DIRECTOR}"}


def judge_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {JUDGE}"}


@dataclass
class AudienceClient:
    """One audience display: an SSE stream, every event kept with its id; checks the sequence as it goes."""

    base: str
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    gaps: list[tuple[int, int]] = field(default_factory=list)  # (expected id, got id) not covered by a snapshot
    snapshots: int = 0
    bytes: int = 0
    last_id: int | None = None
    keep: bool = True  # keep every event (False: only count, for the soak's many clients)
    count: int = 0
    committed: set[int] = field(default_factory=set)  # bank deal ids the audience was told are committed

    async def run(self, client: httpx.AsyncClient, stop: asyncio.Event) -> None:
        headers = {"Last-Event-ID": str(self.last_id)} if self.last_id is not None else {}
        async with client.stream("GET", self.base + "/api/public/events", headers=headers, timeout=None) as resp:
            resp.raise_for_status()
            event_id: int | None = None
            data: list[str] = []
            async for line in resp.aiter_lines():
                self.bytes += len(line) + 1
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    assert event_id is not None
                    self._accept(event_id, json.loads("\n".join(data)))
                    data, event_id = [], None
                if stop.is_set():
                    return

    def _accept(self, event_id: int, msg: dict[str, Any]) -> None:
        self.count += 1
        if msg["type"] == "snapshot":
            self.snapshots += 1
        elif self.last_id is not None and event_id != self.last_id + 1:
            self.gaps.append((self.last_id + 1, event_id))
        self.last_id = event_id
        if msg["type"] == "deal_committed":
            self.committed.add(int(msg["bank_deal"]))
        if self.keep:
            self.events.append((event_id, msg))


@contextlib.asynccontextmanager
async def judge_console(server: ServerProcess) -> AsyncIterator[Any]:
    async with websockets.connect(server.ws, additional_headers=judge_headers(), max_size=None) as ws:
        yield ws


async def judge_command(ws: Any, station: str, cmd: str, **args: Any) -> dict[str, Any]:
    """Send a console command and wait for its reply (other messages on the way are skipped)."""
    ident = f"{cmd}-{time.monotonic_ns()}"
    await ws.send(json.dumps({"cmd": cmd, "station": station, "id": ident, **args}))
    while True:
        msg = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if msg.get("id") == ident:
            return dict(msg)


async def wait_until(
    predicate: Callable[[], Awaitable[T | None]],
    timeout: float,
    what: str,
    interval: float = 0.1,
    progress: Callable[[], Awaitable[object]] | None = None,
) -> T:
    """Poll an async predicate until it returns something truthy.

    With ``progress`` (an async callable returning anything comparable) the wait is on progress, not on wall
    time: it fails only when ``progress()`` has not changed for ``timeout`` seconds, so a loaded machine that
    deals slowly passes and a stuck one fails.
    """
    if progress is not None:
        found = await wait_progress_async(predicate, progress, what, stall=timeout, interval=interval)
        assert found is not None  # wait_progress_async returns only a truthy value
        return found
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(interval)


async def station_progress(http: httpx.AsyncClient, server: ServerProcess) -> Any:
    """What moves while stations deal: the bank's count and each station's status, deals and voids."""
    st = await judge_state(http, server)
    return st["bank"]["formed"], tuple(
        (s["station"], s["status"], s["committed"], len(s["voided"])) for s in st["stations"]
    )


async def director_status(http: httpx.AsyncClient, server: ServerProcess) -> dict[str, Any]:
    r = await http.get(server.base + "/api/director/status", headers=director_headers())
    r.raise_for_status()
    return dict(r.json())


async def judge_state(http: httpx.AsyncClient, server: ServerProcess) -> dict[str, Any]:
    r = await http.get(server.base + "/api/judge/state", headers=judge_headers())
    r.raise_for_status()
    return dict(r.json())


async def formation_done(
    http: httpx.AsyncClient, server: ServerProcess, target: int, restarted: list[str] | None = None
) -> dict[str, Any] | None:
    """Both stations stopped at the target (their last deal committed).

    As the technical judge does, a station waiting for a redeal after a fault it could not recover from by
    itself (on a loaded machine, a simulated device that answers late) is started again; each such restart is
    appended to ``restarted`` so a test can bound them.
    """
    st = await judge_state(http, server)
    statuses = {s["station"]: s["status"] for s in st["stations"]}
    if st["bank"]["formed"] >= target and all(v == "target_reached" for v in statuses.values()):
        return st
    for name, status in statuses.items():
        if restarted is not None and status == "needs_redeal":
            r = await http.post(server.base + f"/api/judge/stations/{name}/start", headers=judge_headers(), json={})
            if r.status_code == 200:
                restarted.append(name)
    return None


async def director(http: httpx.AsyncClient, server: ServerProcess, path: str, body: dict[str, Any] | None = None,
                   expect: int = 200) -> Any:  # fmt: skip
    r = await http.post(server.base + path, headers=director_headers(), json=body or {})
    assert r.status_code == expect, f"POST {path}: {r.status_code} {r.text}"
    return r.json()


async def draw_round(http: httpx.AsyncClient, server: ServerProcess, label: str, dice: list[str]) -> dict[str, Any]:
    """Prepare, publish, public value from three witnesses, run: the drawn deals (director only)."""
    prepared = await director(
        http, server, "/api/director/draws", {"label": label, "witnesses": list(WITNESSES), "rolls": 4, "faces": 10}
    )
    await director(http, server, f"/api/director/draws/{label}/publish")
    await director(http, server, f"/api/director/draws/{label}/value", {"dice": dice})
    run = await director(http, server, f"/api/director/draws/{label}/run")
    return {"commitment": prepared["commitment"], "drawn": run["drawn"]}


async def make_boards(http: httpx.AsyncClient, server: ServerProcess, label: str, body: dict[str, Any]) -> None:
    await director(http, server, f"/api/director/draws/{label}/boards", body, expect=202)


async def boards_progress(http: httpx.AsyncClient, server: ServerProcess, label: str) -> dict[str, Any]:
    r = await http.get(server.base + f"/api/director/draws/{label}/boards", headers=director_headers())
    r.raise_for_status()
    return dict(r.json())


def bank_verify(cfg: DayConfig) -> str:
    """``dealer bank verify`` in a separate process; the output on success, AssertionError otherwise."""
    res = dealer_cli("bank", "verify", "--bank", cfg.bank, cwd=cfg.root)
    assert res.returncode == 0, f"bank verify failed: {res.stdout}{res.stderr}"
    return res.stdout
