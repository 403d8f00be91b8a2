"""The suite beside CPU burners, as CI on a busy machine would run it (``make test-loaded``, part of ``make soak``).

Starts one busy loop per core (``python -c "while 1: pass"``), runs ``pytest -m "not slow"`` with the given
arguments, stops the burners it started (by their process ids) and exits with pytest's status. Tests must
wait on events and progress, never on wall time, so this run passes as the quiet one does (only slower).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(os.cpu_count() or 2)]
    started = time.monotonic()
    try:
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-m", "not slow", *argv])
    finally:
        for proc in burners:
            proc.terminate()
        for proc in burners:
            proc.wait()
    print(f"loaded run: {len(burners)} CPU burners beside the suite, {time.monotonic() - started:.0f} s, exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
