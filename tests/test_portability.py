"""The laptops officials have (#28): mostly Windows. Every POSIX-only call in ``dealer`` and ``drivers`` is listed
here with the fallback that stands in for it elsewhere (a new one fails until it is listed, a listed one that
went away fails too), and ``dealer serve`` deals from an event folder «Чемпионат» under a Cyrillic home with the
POSIX-only modules and calls taken away, its simulated machine then on loopback TCP (no pty) through the same
driver. This runs on Linux: it does not prove Windows, it proves the code does not lean on what Windows lacks."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _web_server import free_port

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "posix", "syslog", "crypt"}
OS_NAMES = {"fork", "forkpty", "memfd_create", "MFD_CLOEXEC", "getuid", "geteuid", "getgid", "setsid", "killpg",
            "mkfifo", "link", "openpty", "ttyname", "sched_getaffinity", "getpgid", "waitpid", "wait", "set_blocking",
            "getloadavg", "fchmod", "fchown", "chown", "lchown", "pipe2", "posix_spawn", "setpgrp", "nice",
            "statvfs", "O_NOFOLLOW", "WNOHANG", "umask"}  # fmt: skip
SIGNALS = {"SIGKILL", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGALRM", "SIGQUIT", "SIGPIPE", "SIGSTOP",
           "alarm", "setitimer", "pthread_kill"}  # fmt: skip
OWNER_ONLY = (
    "Windows: the mode only sets read-only; the file is private by the ACL of the folder it is in (var/ or the"
    " user's profile), as docs/service.md says"
)
FORK = "only when bank.file_reading.second_core_idle() (sys.platform == 'linux'): elsewhere one process does it all"
PTY = "the pty simulator: drivers.kinds.simulator takes loopback TCP where there is no termios (HAS_PTY)"
# (file, function, use) -> the portable fallback
LISTED: dict[tuple[str, str, str], str] = {
    ("dealer/bank_import/file_reading.py", "", "/proc"): "the load is read only under second_core_idle's Linux check",
    ("dealer/bank_import/file_reading.py", "parse_files", "os.fork"): FORK,
    ("dealer/bank_import/file_reading.py", "parse_files", "os.waitpid"): FORK,
    ("dealer/bank_import/import_json.py", "_FormattingProcess._stop", "os.waitpid"): FORK,
    ("dealer/bank_import/import_json.py", "_FormattingProcess._stop", "signal.SIGKILL"): FORK,
    ("dealer/bank_import/import_json.py", "_FormattingProcess.start", "os.MFD_CLOEXEC"): FORK,
    ("dealer/bank_import/import_json.py", "_FormattingProcess.start", "os.fork"): FORK,
    ("dealer/bank_import/import_json.py", "_FormattingProcess.start", "os.memfd_create"): FORK,
    ("dealer/bank/migrate.py", "_sqlite_destination", "mode 0o600"): OWNER_ONLY,
    ("dealer/bank/store.py", "SqliteEngine.__init__", "mode 0o600"): OWNER_ONLY,
    ("dealer/bank/store.py", "SqliteEngine.copy_to", "mode 0o600"): OWNER_ONLY,
    ("dealer/cli/bank_cmds.py", "restore_cmd", "mode 0o600"): OWNER_ONLY,
    ("dealer/cli/draw_cmds.py", "_write_drawn", "mode 0o600"): OWNER_ONLY,
    ("dealer/custody/files.py", "write_record", "mode 0o700"): OWNER_ONLY,
    ("dealer/app/closed.py", "ClosedBoards.add", "mode 0o600"): OWNER_ONLY,
    ("dealer/app/custody.py", "keep_memory_private", "ctypes.CDLL"): "prctl only on Linux (sys.platform check)",
    ("drivers/camera/blas.py", "single_thread_blas", "ctypes.CDLL"): "numpy's OpenBLAS as .so or .dll; none: skipped",
    ("dealer/serving/guard.py", "raise_file_limit", "import resource"): "no resource module: a fixed socket figure",
    ("dealer/app/relay_signing.py", "load_or_create_key", "mode 0o600"): OWNER_ONLY,
    ("dealer/app/secrets.py", "load_or_create_secret", "mode 0o600"): OWNER_ONLY,
    ("dealer/app/tls.py", "write_certificate", "mode 0o600"): OWNER_ONLY,
    ("dealer/app/secrets.py", "load_or_create_secret", "mode 0o700"): OWNER_ONLY,
    ("drivers/simulator/endpoints.py", "PtyEndpoint._open", "import termios"): PTY,
    ("drivers/simulator/endpoints.py", "PtyEndpoint._open", "import tty"): PTY,
    ("drivers/simulator/endpoints.py", "PtyEndpoint._open", "os.openpty"): PTY,
    ("drivers/simulator/endpoints.py", "PtyEndpoint._open", "os.set_blocking"): PTY,
    ("drivers/simulator/endpoints.py", "PtyEndpoint._open", "os.ttyname"): PTY,
}


def _uses(path: Path) -> list[tuple[str, str, str]]:
    source = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT).as_posix()
    out: list[tuple[str, str, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{where}.{child.name}" if where else child.name
            if isinstance(child, ast.Import):
                out.extend((rel, inner, f"import {a.name}") for a in child.names if a.name.split(".")[0] in MODULES)
            elif isinstance(child, ast.ImportFrom) and child.module and child.module.split(".")[0] in MODULES:
                out.append((rel, inner, f"import {child.module}"))
            elif isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name):
                if (child.value.id, child.attr in OS_NAMES) == ("os", True):
                    out.append((rel, inner, f"os.{child.attr}"))
                elif child.value.id == "signal" and child.attr in SIGNALS:
                    out.append((rel, inner, f"signal.{child.attr}"))
                elif (child.value.id, child.attr) == ("ctypes", "CDLL"):
                    out.append((rel, inner, "ctypes.CDLL"))
            elif isinstance(child, ast.Attribute) and child.attr == "add_signal_handler":
                out.append((rel, inner, "add_signal_handler"))
            elif isinstance(child, ast.Constant) and isinstance(child.value, str) and child.value.startswith("/proc/"):
                out.append((rel, inner, "/proc"))
            elif isinstance(child, ast.Constant) and type(child.value) is int:
                text = ast.get_source_segment(source, child) or ""
                if text in ("0o600", "0o700", "0o400", "0o640", "0o750"):
                    out.append((rel, inner, f"mode {text}"))
            visit(child, inner)

    visit(ast.parse(source), "")
    return out


def test_every_posix_only_call_is_listed_with_its_fallback() -> None:
    found = {use for folder in ("dealer", "drivers") for p in sorted((ROOT / folder).rglob("*.py")) for use in _uses(p)}
    # add_signal_handler: allowed only where NotImplementedError (Windows' loops) is caught around it
    handlers = {u for u in found if u[2] == "add_signal_handler"}
    for rel, _, _ in handlers:
        assert "suppress(NotImplementedError)" in (ROOT / rel).read_text(encoding="utf-8"), rel
    found -= handlers
    assert sorted(found - LISTED.keys()) == [], "a POSIX-only call without a listed fallback"
    assert sorted(LISTED.keys() - found) == [], "listed but gone: take it off the list"


PREAMBLE = """
import os, signal, sys
import serial  # pyserial picks its backend by os.name (serialwin32 on Windows) before the POSIX modules go
for name in ("fcntl", "termios", "tty", "pty", "pwd", "grp", "resource"):
    sys.modules[name] = None  # import fails, find_spec finds nothing: as on Windows
for name in ("fork", "forkpty", "getuid", "geteuid", "getgid", "memfd_create", "setsid", "killpg", "mkfifo",
             "openpty", "ttyname"):
    if hasattr(os, name):
        delattr(os, name)
for name in ("SIGKILL", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGCHLD", "SIGALRM", "SIGQUIT"):
    if hasattr(signal, name):
        delattr(signal, name)
import runpy
sys.argv = ["dealer", *sys.argv[1:]]
runpy.run_module("dealer", run_name="__main__", alter_sys=True)
"""


def test_serve_deals_without_posix_modules_from_a_cyrillic_event_folder(tmp_path: Path) -> None:
    home = tmp_path / "Иванов"
    event = home / "Чемпионат"
    (event / "config").mkdir(parents=True)
    port = free_port()
    (event / "config" / "service.toml").write_text(
        f'port = {port}\nlanguage = "ru"\n[[stations]]\nname = "Стол 1"\ncards_per_second = 300.0\n', encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(home), "USERPROFILE": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-c", PREAMBLE, "serve", "--event", str(event)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=home,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:  # up, and the simulated machine connected
            assert proc.poll() is None, proc.stdout.read().decode("utf-8", "replace") if proc.stdout else ""
            try:
                snap = httpx.get(f"{base}/api/public/snapshot", timeout=2).json()
                if snap["stations"] and snap["stations"][0]["status"] == "ready":
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the station did not connect"
            time.sleep(0.2)
        secret = (event / "var" / "judge.secret").read_text(encoding="utf-8").strip()
        headers = {"Authorization": f"Bearer {secret}"}
        check = {"station": "Стол 1", "session": "Сессия 1", "phase": "before", "outcome": "ok"}
        assert httpx.post(f"{base}/api/judge/checks", headers=headers, json=check, timeout=5).status_code == 200
        started = httpx.post(f"{base}/api/judge/stations/Стол 1/start", headers=headers, timeout=5)
        assert started.status_code == 200, started.text
        while httpx.get(f"{base}/api/public/snapshot", timeout=2).json()["bank"]["formed"] < 3:
            assert time.monotonic() < deadline, "the service did not deal"
            time.sleep(0.2)
        state = httpx.get(f"{base}/api/judge/state", headers=headers, timeout=5).json()
        device = json.dumps(state["stations"][0]["device"], ensure_ascii=False)
        assert "socket://127.0.0.1:" in device, device  # no pty: the simulator on loopback TCP
        assert (event / "var" / "bank.sqlite").is_file()
    finally:
        proc.kill()
        proc.wait()


def test_windows_port_names_and_the_simulator_without_a_pty(tmp_path: Path) -> None:
    """``COM3``-style ports are device ids and station urls as typed on Windows; without a pty the simulator sits
    on loopback TCP; a station named in Cyrillic gets an ASCII serial for the protocol."""
    from dealer.app.config import config_from_dict
    from drivers.kinds.simulator import medium_of, sim_serial
    from drivers.registry import parse_device_id

    assert parse_device_id("COM3") == ("serial", "COM3") and parse_device_id("serial:COM12") == ("serial", "COM12")
    cfg = config_from_dict(
        {"var_dir": str(tmp_path / "var"), "stations": [{"name": "Стол 1", "kind": "serial", "url": "COM3"}]}, "t"
    )
    assert (cfg.stations[0].kind, cfg.stations[0].url) == ("serial", "COM3")
    assert [medium_of(u, has_pty=False) for u in ("", "pty", "tcp", "usb")] == ["tcp", "tcp", "tcp", "usb"]
    assert [medium_of(u, has_pty=True) for u in ("", "pty", "tcp", "usb")] == ["pty", "pty", "tcp", "usb"]
    assert sim_serial("A") == "SIM-A" and sim_serial("Стол 1").isascii() and sim_serial("Стол 1").startswith("SIM-")
