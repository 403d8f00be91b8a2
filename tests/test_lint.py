"""``make lint`` as part of ``make test``: CI runs only the tests, and a lint error must not land unseen.

(One did: a test file imported its helpers as ``tests._web_server`` while the others say ``_web_server``, and
mypy then refused the whole tree, "source file found twice", for a stop and a half.) Each tool runs as
``make lint`` runs it, on the checkout; mypy with a cache of its own, so parallel runs do not share one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["lint-imports", "--no-cache"],
    ],
    ids=["ruff-check", "ruff-format", "import-linter"],
)
def test_lint_tool_passes(command: list[str]) -> None:
    r = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]


def test_mypy_strict_passes_on_the_whole_tree(tmp_path: Path) -> None:
    packages = ["dealer", "drivers", "firmware_protocol", "tests", "bench"]
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy"), *packages],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
