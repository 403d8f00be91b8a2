"""The lean front door prints what typer prints: every light command line, run both ways, byte for byte.

Each command line runs in a fresh interpreter through the real entry point twice: as officials run it (the front
door ``dealer.cli.fast`` takes it) and with ``DEALER_CLI_FULL=1`` (typer runs it, as before the front door). The
standard output, the standard error and the exit code must be equal; and the run that should be the front door's
must not have loaded typer (else the comparison would compare typer with itself). Russian by default, English by
``--lang`` and by ``LANG``, several console widths, errors, and the cases the front door must hand over to typer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from custody_support import unlocked

ROOT = Path(__file__).resolve().parents[1]
PBN = "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"
MIXED = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT8643.T3.AJ4.Q6 752.A8.T52.JT842"

# runs the entry point, then writes whether typer was loaded to the file named by the first argument
PROBE = """
import json, sys
report = sys.argv[1]
sys.argv = ["dealer", *sys.argv[2:]]
from dealer.cli.app import main
try:
    main()
finally:
    sys.stdout.flush()
    sys.stderr.flush()
    with open(report, "w") as f:
        json.dump("typer" in sys.modules, f)
"""


def _env(tmp: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "DEALER_", "FORCE_COLOR"))}
    env.update({"PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp / "cache"), "COLUMNS": "100"})
    env.pop("NO_COLOR", None)
    env.pop("TTY_COMPATIBLE", None)
    env.update(extra)
    return env


def _run(tmp: Path, args: list[str], extra: dict[str, str]) -> tuple[bytes, bytes, int, bool]:
    report = tmp / "report.json"
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *args], capture_output=True, env=_env(tmp, extra), cwd=tmp,
        timeout=120,
    )  # fmt: skip
    return r.stdout, r.stderr, r.returncode, json.loads(report.read_text())


def _compare(tmp: Path, args: list[str], extra: dict[str, str], fast: bool) -> bytes:
    """Run both ways; equal output; the front door took the command line iff ``fast``. Returns stdout."""
    full_out, full_err, full_code, full_typer = _run(tmp, args, {**extra, "DEALER_CLI_FULL": "1"})
    out, err, code, typer_loaded = _run(tmp, args, extra)
    assert full_typer, "DEALER_CLI_FULL=1 runs typer"
    assert (out.decode(), err.decode(), code) == (full_out.decode(), full_err.decode(), full_code), args
    assert typer_loaded != fast, f"dealer {' '.join(args)}: front door expected {fast}\n{err.decode()}"
    return out


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory with an empty bank, a sealed bank with deals, and regulation files."""
    from dealer.bank.api import DealSource
    from dealer.bank.store import SqliteBank
    from dealer.core.numbering import deal_from_rank

    tmp = tmp_path_factory.mktemp("desk")
    SqliteBank(tmp / "empty.sqlite").close()
    with unlocked(SqliteBank(tmp / "bank.sqlite")) as bank:
        for k in range(1, 4):
            bank.commit_deal(deal_from_rank(1000 * k), DealSource("import", file="x.pbn", board=k, line=k))
        bank.seal()
    (tmp / "reg.toml").write_text(
        "[dealing]\nvariant = 3\n[session]\nboards = 24\n[schedule]\nsessions = 3\nspare = 2\n", encoding="utf-8"
    )
    (tmp / "bad.toml").write_text("[dealing]\nvariant = 9\n", encoding="utf-8")
    (tmp / "broken.toml").write_text("[dealing\n", encoding="utf-8")
    return tmp


LANGS: list[dict[str, str]] = [{}, {"LANG": "en_US.UTF-8"}, {"LANG": "ru_RU.UTF-8"}]


@pytest.mark.parametrize("env", LANGS)
@pytest.mark.parametrize(
    "args",
    [
        ["board", "1"],
        ["board", "7"],
        ["board", "16"],
        ["board", "0"],
        ["--lang", "en", "board", "3"],
        ["--lang=ru", "board", "4"],
        ["deal", "show", PBN],
        ["deal", "show", MIXED, "--ascii"],
        ["deal", "show", "--lang", "en", MIXED],
        ["deal", "show", MIXED, "--lang=ru"],
        ["--lang", "en", "deal", "show", MIXED, "--lang", "ru"],
        ["deal", "show", "N:AKQ"],
        ["regulation", "check"],
        ["--lang", "en", "regulation", "check"],
        ["regulation", "check", "reg.toml"],
        ["regulation", "check", "bad.toml"],
        ["regulation", "check", "broken.toml"],
        ["regulation", "check", "missing.toml"],
        ["bank", "status", "--bank", "empty.sqlite"],
        ["bank", "status", "--bank=bank.sqlite"],
        ["bank", "status", "--bank", "bank.sqlite", "--json"],
        ["bank", "status", "--bank", "missing.sqlite"],
        ["bank", "status"],
    ],
)
def test_light_command_lines_print_what_typer_prints(desk: Path, args: list[str], env: dict[str, str]) -> None:
    _compare(desk, args, env, fast=True)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["board", "1"], {"FORCE_COLOR": "1"}),
        (["board", "0"], {"FORCE_COLOR": "1"}),
        (["deal", "show", MIXED], {"TTY_COMPATIBLE": "1"}),
        (["regulation", "check", "reg.toml"], {"FORCE_COLOR": "1"}),
        (["--lang", "en", "regulation", "check"], {"FORCE_COLOR": "1", "TERM": "xterm-256color"}),
        (["regulation", "check"], {"COLUMNS": "72"}),
        (["deal", "show", MIXED], {"COLUMNS": "80"}),
        (["board", "1"], {"COLUMNS": "40"}),
        (["bank", "status", "--bank", "bank.sqlite"], {"COLUMNS": "80"}),  # the hash is below the table: it fits
        (["regulation", "check", "bad.toml"], {"COLUMNS": "30"}),  # errors are not wrapped
    ],
)
def test_terminals_and_widths(desk: Path, args: list[str], env: dict[str, str]) -> None:
    """On a terminal (as rich detects one) titles are italic and the error word bold red; widths that fit."""
    _compare(desk, args, env, fast=True)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["board", "x"], {}),
        (["board", "-1"], {}),
        (["board", "07"], {}),
        (["board", "1", "2"], {}),
        (["board", "--help"], {}),
        (["--lang", "de", "board", "1"], {}),
        (["deal", "show"], {}),
        (["deal", "show", PBN, "--lang", "de"], {}),
        (["deal", "show", PBN, "--ascii", "--ascii"], {}),
        (["deal", "show", PBN, "--bogus"], {}),
        (["regulation", "check", "a.toml", "b.toml"], {}),
        (["bank", "status", "--bank"], {}),
        (["bank", "status", "--bank", "empty.sqlite", "--json", "x"], {}),
        (["regulation", "check"], {"COLUMNS": "40"}),  # rich would wrap the table
        (["deal", "show", PBN], {"COLUMNS": "50"}),  # rich would wrap the diagram
        (["bank", "status", "--bank", "bank.sqlite"], {"COLUMNS": "40"}),  # the table is wider: rich shrinks it
        (["board", "0"], {"FORCE_COLOR": "1", "NO_COLOR": "1"}),
        (["regulation", "check"], {"TERM": "dumb", "TTY_COMPATIBLE": "1"}),
    ],
)
def test_anything_else_goes_to_typer(desk: Path, args: list[str], env: dict[str, str]) -> None:
    """Doubts are typer's: a usage error, an option the front door does not know, a width rich would wrap."""
    _compare(desk, args, env, fast=False)


@pytest.mark.parametrize("width", ["60", "100", "137"])
@pytest.mark.parametrize("args", [["--help"], [], ["-h"], ["--lang", "en", "--help"], ["--lang=ru", "--help"]])
def test_help_comes_from_typer_then_from_its_cache(tmp_path: Path, args: list[str], width: str) -> None:
    """The first help in given conditions is typer's (and kept); the next is the kept one, the same bytes."""
    first = _compare(tmp_path, args, {"COLUMNS": width}, fast=False)
    second = _compare(tmp_path, args, {"COLUMNS": width}, fast=True)
    assert first == second
    assert b"dealer" in first


@pytest.mark.parametrize("env", [{"LANG": "en_US.UTF-8"}, {"FORCE_COLOR": "1"}, {"TERMINAL_WIDTH": "70"}])
def test_help_cache_is_keyed_by_what_changes_the_rendering(tmp_path: Path, env: dict[str, str]) -> None:
    """A language, a terminal or typer's own width variable that differs is a new rendering, not the kept one."""
    _compare(tmp_path, ["--help"], {}, fast=False)
    _compare(tmp_path, ["--help"], {}, fast=True)
    _compare(tmp_path, ["--help"], env, fast=False)
    _compare(tmp_path, ["--help"], env, fast=True)


def test_help_cache_follows_the_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A help text edited (any file of dealer/cli touched) is rendered anew: the key holds their mtimes."""
    import shutil

    from dealer.cli import fast

    copy = tmp_path / "dealer" / "cli"
    shutil.copytree(ROOT / "dealer" / "cli", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fast, "__file__", str(copy / "fast.py"))
    key = fast._help_key(["--help"])
    assert key is not None and fast._help_key(["--help"]) == key
    catalogue = copy / "i18n" / "en.json"
    stat = catalogue.stat()
    os.utime(catalogue, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert fast._help_key(["--help"]) != key
    os.utime(catalogue, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert fast._help_key(["--help"]) == key
    assert fast._help_key(["--lang", "en", "--help"]) != key


def test_render_env_names_every_variable_rich_and_typer_read() -> None:
    """The help cache's key lists the environment variables the rendering libraries read (read from their
    sources, so an upgrade that reads a new one fails here)."""
    import re

    import rich.console
    import typer.core
    import typer.main
    import typer.rich_utils

    from dealer.cli.fast import RENDER_ENV

    pattern = re.compile(r"""(?:getenv|environ\.get|_environ\.get|environ\[)\(?\s*["']([A-Z_][A-Z0-9_]*)["']""")
    found: set[str] = set()
    for module in (rich.console, typer.rich_utils, typer.core, typer.main):
        assert module.__file__ is not None
        found |= set(pattern.findall(Path(module.__file__).read_text(encoding="utf-8")))
    assert found, "the pattern finds the variables"
    assert found <= set(RENDER_ENV), found - set(RENDER_ENV)


def test_help_cache_believes_only_the_users_own_private_file(tmp_path: Path) -> None:
    """A kept rendering that others could have written (group- or world-writable) is not printed: typer renders
    the help again and keeps it privately."""
    _compare(tmp_path, ["--help"], {}, fast=False)
    (kept,) = (tmp_path / "cache" / "bridge-dealer").glob("help-*.json")
    assert kept.stat().st_mode & 0o777 == 0o600
    kept.write_text(json.dumps({"stdout": "planted\n", "stderr": "", "code": 0}), encoding="utf-8")
    kept.chmod(0o666)
    assert _compare(tmp_path, ["--help"], {}, fast=False) != b"planted\n"
    assert kept.stat().st_mode & 0o777 == 0o600
    _compare(tmp_path, ["--help"], {}, fast=True)


@pytest.mark.parametrize("full", ["", "1"], ids=["front-door", "typer"])
def test_a_reader_gone_away_ends_the_command_quietly(full: str) -> None:
    """``dealer board 5 | head -c 0``: exit 1 and nothing on stderr, as click does for typer's commands."""
    read, write = os.pipe()
    os.close(read)  # the first write meets a closed pipe
    try:
        r = subprocess.run(
            [sys.executable, "-m", "dealer", "board", "5"],
            stdout=write,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT), "DEALER_CLI_FULL": full},
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert (r.returncode, r.stderr) == (1, b"")
