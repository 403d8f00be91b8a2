"""Build the reference C library (firmware_protocol/c) into a temporary directory and run its example device.

Everything compiles into a pytest temp dir (no binary is ever written to the source tree); without a C
compiler the tests that need one skip, naming what is missing.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

C_DIR = Path(__file__).resolve().parent.parent / "firmware_protocol" / "c"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Wconversion"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1"]


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc, gcc or clang): .ci/run installs gcc")
    return cc


def build(out_dir: Path, name: str, sources: list[str], flags: list[str]) -> Path:
    """Compile ``sources`` (file names in firmware_protocol/c) into ``out_dir/name``; fail with the log."""
    target = out_dir / name
    cmd = [compiler(), *STRICT, *flags, *(str(C_DIR / s) for s in sources), "-o", str(target)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr}"
    return target


def sanitizers_work(out_dir: Path) -> bool:
    probe = out_dir / "probe.c"
    probe.write_text("int main(void) { return 0; }\n", encoding="utf-8")
    cmd = [compiler(), *SANITIZE, str(probe), "-o", str(out_dir / "probe")]
    ok = subprocess.run(cmd, capture_output=True, timeout=120, check=False).returncode == 0
    return ok and subprocess.run([str(out_dir / "probe")], capture_output=True, check=False).returncode == 0


def write_decks(path: Path, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    decks = []
    for _ in range(count):
        deck = list(range(52))
        rng.shuffle(deck)
        decks.append(deck)
    path.write_text("# deck orders for the example device\n" + "".join(" ".join(map(str, d)) + "\n" for d in decks))
    return decks


@contextlib.contextmanager
def example_device(binary: Path, decks: Path, link: Path) -> Iterator[subprocess.Popen[str]]:
    """Run the example device; yields once it printed "ready" (its pty is at ``link``)."""
    proc = subprocess.Popen(
        [str(binary), "--link", str(link), "--cards", str(decks)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready"), (
            f"example device did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        )
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
