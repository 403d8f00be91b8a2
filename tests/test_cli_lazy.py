"""``dealer.cli.lazy.when_imported``: the function runs once the module is imported, and not before.

Each case runs in a fresh interpreter, on standard-library modules nothing else here imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_runs_after_the_first_import_not_before() -> None:
    out = _run(
        "import sys\n"
        "from dealer.cli.lazy import when_imported\n"
        "seen = []\n"
        "when_imported('colorsys', lambda m: seen.append(m.rgb_to_hsv(1.0, 0.0, 0.0)))\n"
        "print('colorsys' in sys.modules, seen)\n"
        "import colorsys\n"
        "print(seen)\n"
        "import colorsys\n"
        "print(seen)\n"
    )
    assert out.splitlines() == ["False []", "[(0.0, 1.0, 1.0)]", "[(0.0, 1.0, 1.0)]"]


def test_runs_at_once_when_already_imported_and_sees_the_changes_made() -> None:
    out = _run(
        "import colorsys\n"
        "from dealer.cli.lazy import when_imported\n"
        "when_imported('colorsys', lambda m: setattr(m, 'ONE_THIRD', 'patched'))\n"
        "print(colorsys.ONE_THIRD)\n"
    )
    assert out.strip() == "patched"


def test_the_module_keeps_its_source_and_other_modules_are_untouched() -> None:
    out = _run(
        "import inspect\n"
        "from dealer.cli.lazy import when_imported\n"
        "when_imported('colorsys', lambda m: setattr(m, 'X', 1))\n"
        "import colorsys, wave\n"
        "print(colorsys.X, 'def rgb_to_hsv' in inspect.getsource(colorsys), hasattr(wave, 'X'))\n"
    )
    assert out.strip() == "1 True False"
