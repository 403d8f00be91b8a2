"""A real dealing service for tests: uvicorn on a free loopback port, in a thread, with a real SQLite bank."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from custody_support import TEST_KEYRING, write_custody

from dealer.app.config import ServiceConfig, config_from_dict
from dealer.app.service import Service
from dealer.regulation import Regulation, regulation_from_dict
from dealer.web.app import create_app


def startup_message(proc: subprocess.Popen[str]) -> str:
    """What ``dealer serve`` prints up to its last start-up line («Ctrl-C …»); fails if it exits first."""
    assert proc.stdout is not None
    lines: list[str] = []
    while not lines or "Ctrl-C" not in lines[-1]:
        line = proc.stdout.readline()
        assert line, "".join(lines)
        lines.append(line)
    return "".join(lines)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def regulation(variant: int = 2, open_cards: int | None = 32, target: int = 50) -> Regulation:
    dealing: dict[str, Any] = {"variant": variant}
    if variant == 2:
        dealing["open_cards"] = open_cards
    reg = regulation_from_dict({"dealing": dealing, "bank": {"target": 100}, "session": {"boards": 1}})
    return dataclasses.replace(reg, bank_target=target)  # small banks for tests


def service_config(tmp: Path, **over: Any) -> ServiceConfig:
    data: dict[str, Any] = {
        "language": "en",  # the page tests read English words; Russian is the default (tests/test_i18n.py)
        "var_dir": str(tmp / "var"),
        "bank": {"path": str(tmp / "var" / "bank.sqlite")},
        "stations": [{"name": "A", "cards_per_second": 5000.0, "fault_rate": 0.0}],
        "require_equipment_check": False,  # tests of dealing press Start at once; tests/test_start_gate.py checks it
    }
    data.update(over)
    return config_from_dict(data, "test")


@dataclass
class Running:
    service: Service
    base: str
    port: int
    custody_token: str | None = None  # the chief judge's sign-in, as a browser holds it in its cookie

    @property
    def judge(self) -> str:
        return self.service.secrets.secret("judge")

    @property
    def director(self) -> str:
        """The director's credential as the signed-in chief judge presents it: SECRET.CUSTODY (SECRET alone reaches
        no step that needs the key)."""
        secret = self.service.secrets.secret("director")
        return f"{secret}.{self.custody_token}" if self.custody_token else secret


def press_start(running: Running, *names: str) -> None:
    """The technical judge presses Start on these stations (all when none named): nothing deals before that."""
    import httpx

    auth = {"Authorization": f"Bearer {running.judge}"}
    for name in names or tuple(running.service.stations):
        reply = httpx.post(f"{running.base}/api/judge/stations/{name}/start", headers=auth, timeout=20)
        reply.raise_for_status()


def deal_to_target(running: Running, station: str = "A", timeout: float = 60.0) -> None:
    """The technical judge presses Start and the station deals until the bank reaches its target."""
    press_start(running)
    deadline = time.monotonic() + timeout
    while running.service.stations[station].status != "target_reached":
        assert time.monotonic() < deadline, running.service.stations[station].status
        time.sleep(0.05)


@contextmanager
def running_service(
    config: ServiceConfig, reg: Regulation, autostart: bool = True, custody: bool = True
) -> Iterator[Running]:
    """``custody``: the chief judge's custody set up (the test key and passphrase) and unlocked, as after sign-in."""
    service = Service(config, reg, autostart=autostart)
    bank = service.bank.bank
    token = None
    if custody:
        write_custody(bank.key_dir)
        bank.unlock(TEST_KEYRING)
        token = service.custody.sign_in()  # what the console's sign-in does besides unlocking
        service.custody.touch(time.monotonic())
    app = create_app(service)
    # the socket is bound here and handed to uvicorn: no other process (a parallel test worker, another run on
    # the machine) can take the port between choosing it and listening on it, as it could with free_port()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield Running(service, f"http://127.0.0.1:{port}", port, token)
    finally:
        service.begin_shutdown()
        server.should_exit = True
        thread.join(30)
        sock.close()
