"""The simulated dealing machine as a process of its own (as real hardware is), for the benches."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_simulator(link: Path, timeout: float = 60.0) -> subprocess.Popen[bytes]:
    """``dealer simulate machine --pty`` at ``link``; returns once the pty link exists.

    Readiness is the link itself, not the simulator's banner: the banner is text for people, in their language.
    """
    cmd = [sys.executable, "-m", "dealer", "simulate", "machine", "--pty", "--link", str(link), "--pace", "0"]
    sim = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while not link.exists():
        if sim.poll() is not None:
            raise RuntimeError(f"the simulator exited with {sim.returncode} before opening {link}")
        if time.monotonic() > deadline:
            sim.kill()
            raise RuntimeError(f"the simulator did not open {link} in {timeout:g} s")
        time.sleep(0.02)
    return sim
