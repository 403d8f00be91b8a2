"""The command line starts light: the commands officials type at a desk import no numerical, vision or web stack.

Each command runs in a fresh interpreter (the real entry point, ``dealer.cli.app.main``) which then reports the
modules it had imported; heavy ones must be absent. Commands that run (not help, not a usage error) also leave
out typer's rich help layer with markdown_it and pygments, the event loop, PostgreSQL's driver, and the code of
other commands (the importer, the verifier, the draw). Timing is in ``bench/bench_cli.py``, not here.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dealer.cli import app as cli_app

ROOT = Path(__file__).resolve().parents[1]
HEAVY: tuple[str, ...] = ("numpy", "cv2", "fastapi", "starlette", "uvicorn", "endplay", "scipy", "matplotlib")
HEAVY += ("fpdf", "jinja2", "psycopg")  # psycopg: PostgreSQL's driver, only for a postgresql: bank
# what a command that runs (no help shown, no usage error) does not need either
NOT_RUNNING = (
    "typer.rich_utils",
    "markdown_it",
    "pygments",
    "asyncio",
    "dealer.bank_import.importer",
    "dealer.bank.verify",
)
# what the light command lines load none of either: no typer, click, rich or pydantic (the command line's own parser
# is dealer.cli.kit), and Babel only for a plural form or a date (none of these needs one)
FRONT_DOOR = ("typer", "click", "rich", "pydantic", "babel")
PBN = "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"

# Runs the real entry point, then prints which heavy modules were imported, whatever the exit code.
PROBE = """
import json, sys
sys.argv = ["dealer", *json.loads(sys.argv[1])]
from dealer.cli.app import main
try:
    main()
finally:
    sys.stdout.flush()
    wanted = json.loads(sys.argv[2])
    print("\\nLOADED " + json.dumps(sorted(m for m in sys.modules if m in wanted or m.split(".")[0] in wanted)))
"""


def _loaded(
    args: list[str], cwd: Path, modules: tuple[str, ...] = HEAVY
) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    code = PROBE.replace("sys.argv[1]", repr(json.dumps(args))).replace("sys.argv[2]", repr(json.dumps(modules)))
    probe = ["-c", code]
    r = subprocess.run([sys.executable, *probe], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    line = next(x for x in r.stdout.splitlines() if x.startswith("LOADED "))
    return json.loads(line.removeprefix("LOADED ")), r


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["board", "7"],
        ["deal", "show", "1"],
        ["deal", "rank", "N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"],
        ["bank", "status", "--json"],
        ["bank", "--help"],
        ["formats"],
        ["regulation", "check"],
        ["draw", "verify", "missing-bundle.json"],
        ["--lang", "ru", "--help"],
        ["scanner", "--help"],
        ["serve", "--help"],
    ],
)
def test_light_commands_import_no_heavy_module(args: list[str], tmp_path: Path) -> None:
    loaded, r = _loaded(args, tmp_path)
    assert loaded == [], f"dealer {' '.join(args)} imported {loaded}\n{r.stderr}"


@pytest.mark.parametrize(
    "args",
    [
        ["board", "1"],
        ["deal", "show", PBN],
        ["deal", "rank", PBN],
        ["regulation", "check"],
        ["--lang", "en", "board", "7"],
    ],
)
def test_running_commands_leave_out_help_and_other_commands_code(args: list[str], tmp_path: Path) -> None:
    loaded, r = _loaded(args, tmp_path, HEAVY + NOT_RUNNING)
    assert r.returncode == 0, r.stderr
    assert loaded == [], f"dealer {' '.join(args)} imported {loaded}\n{r.stderr}"


@pytest.mark.parametrize(
    "args",
    [
        ["board", "1"],
        ["--lang", "en", "board", "7"],
        ["deal", "show", PBN],
        ["deal", "show", PBN, "--lang", "en", "--ascii"],
        ["regulation", "check"],
        ["--lang", "en", "regulation", "check"],
        ["board", "0"],  # an error, printed in Russian without typer
    ],
)
def test_light_commands_load_no_typer_rich_pydantic_or_babel(args: list[str], tmp_path: Path) -> None:
    loaded, r = _loaded(args, tmp_path, HEAVY + NOT_RUNNING + FRONT_DOOR)
    assert loaded == [], f"dealer {' '.join(args)} imported {loaded}\n{r.stderr}"


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--lang", "ru", "--help"], ["bank", "--help"], ["draw", "verify", "--help"], ["board", "x"]],
)
def test_help_and_usage_errors_load_no_typer_rich_or_pydantic(args: list[str], tmp_path: Path) -> None:
    loaded, r = _loaded(args, tmp_path, HEAVY + FRONT_DOOR)
    assert r.returncode in (0, 2) and loaded == [], (loaded, r.stderr)


def test_help_and_usage_errors_are_russian(tmp_path: Path) -> None:
    _, r = _loaded(["--lang", "ru", "board", "x"], tmp_path)
    assert r.returncode == 2 and "Ошибка" in r.stderr, r.stderr
    _, r = _loaded(["--lang", "ru", "--help"], tmp_path)
    assert r.returncode == 0 and "Параметры" in r.stdout and "Команды" in r.stdout, r.stdout


@pytest.mark.parametrize(
    ("args", "unused"),
    [
        (["serve", "--help"], ("tomllib", "decimal", "datetime")),  # it names the rehearsal's target, reads no TOML
        (["formats"], ("csv",)),  # the formats are listed, no file is read
        (["board", "1"], ("datetime", "string")),  # the messages' dates and format fields load when one is written
        (["deal", "rank", PBN], ("datetime", "string")),
    ],
)
def test_commands_leave_out_the_standard_modules_they_do_not_use(
    args: list[str], unused: tuple[str, ...], tmp_path: Path
) -> None:
    """Each module a command's start loads costs every run of it (``bench_cli``: within 3x ``python -c pass``):
    those loaded only for one path (reading a regulation, a CSV file, a date) load on that path."""
    loaded, r = _loaded(args, tmp_path, unused)
    assert r.returncode == 0, r.stderr
    assert loaded == [], f"dealer {' '.join(args)} imported {loaded}"


def test_bank_path_default_is_the_stores() -> None:
    """``dealer.cli.options`` names the default bank without importing the store: the two must agree."""
    from dealer.bank.store import DEFAULT_BANK_PATH
    from dealer.cli.options import DEFAULT_BANK_PATH as CLI_DEFAULT

    assert CLI_DEFAULT == DEFAULT_BANK_PATH


# the draw's operations, protocol and bundle, and the regulation reader: the public status needs none of them; nor
# the bank interface's protocols (its types: the status runs on the engine's bank)
DRAWING: tuple[str, ...] = ("dealer.draw.director", "dealer.draw.protocol", "dealer.draw.bundle", "dealer.regulation")
DRAWING += ("tomllib", "dealer.bank.protocols", "dealer.bank.repository")
# what reading a bank's counts, seals and draws needs none of (a third of ``python -c pass`` for the dataclasses
# machinery with ``inspect``, an eighth for hashlib with OpenSSL): the bank's records are named tuples and plain
# classes, its hashes are taken where it writes, and the cards' classes load with the first deal read
READING = ("dataclasses", "inspect", "hashlib", "dealer.core.deal", "dealer.core.cards", "dealer.bank.bulk")


def test_bank_status_runs_on_a_real_bank_without_heavy_modules(tmp_path: Path) -> None:
    from dealer.bank.api import DealSource
    from dealer.bank.store import SqliteBank
    from dealer.core.numbering import deal_from_rank

    with SqliteBank(tmp_path / "bank.sqlite") as bank:
        bank.commit_deal(deal_from_rank(12345), DealSource("import", file="x.pbn", board=1, line=1))
    for args in (["bank", "status", "--json"], ["bank", "status"]):
        loaded, r = _loaded(
            [*args, "--bank", str(tmp_path / "bank.sqlite")],
            tmp_path,
            HEAVY + NOT_RUNNING + FRONT_DOOR + DRAWING + READING,
        )
        assert r.returncode == 0, r.stderr
        assert loaded == [], (args, loaded)
    loaded, r = _loaded(["bank", "status", "--json", "--bank", str(tmp_path / "bank.sqlite")], tmp_path)
    assert json.loads(r.stdout.split("\nLOADED ")[0])["deals"] == 1


def test_bank_status_of_seals_and_draws_reads_them_without_hashing_or_dataclasses(tmp_path: Path) -> None:
    """A bank sealed, with a draw revealed and one prepared: the status lists them (its ledger entries read and
    decoded) and still loads none of ``READING``; what it says is ``public_status``'s, in the same process."""
    from draw_support import DICE, full_draw, make_bank, regulation

    from dealer.draw.director import Director
    from dealer.draw.status import public_status

    path = tmp_path / "bank.sqlite"
    reg = regulation(boards=4, sessions=2, share=10)  # 8 deals drawn of an 80-deal bank
    with make_bank(path, 80, key_dir=tmp_path) as bank:
        director = Director(bank)
        director.seal()
        full_draw(director, "S1", reg)
        director.prepare("S2", DICE, reg)
        expected = json.loads(json.dumps(public_status(bank)))
    assert [s["state"] for s in expected["draws"]] == ["revealed", "committed"] and expected["seals"]
    loaded, r = _loaded(["bank", "status", "--json", "--bank", str(path)], tmp_path, READING)
    assert r.returncode == 0, r.stderr
    assert loaded == [], loaded
    assert json.loads(r.stdout.split("\nLOADED ")[0]) == expected


def test_import_as_json_runs_without_typer_rich_or_pydantic(tmp_path: Path) -> None:
    """``bank import --json`` (what scripts run, file by file as they come) starts as lean as the desk's
    commands: the importer and the bank, no typer, rich, pydantic or Babel, no heavy module."""
    deal = "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 QT8643.T3.AJ4.Q6 752.A8.T52.JT842"
    (tmp_path / "a.pbn").write_text(f'[Board "1"]\n[Deal "{deal}"]\n\n[Board "2"]\n[Deal "{deal}"]\n')
    loaded, r = _loaded(["bank", "import", "--json", "a.pbn", "--bank", "b.sqlite"], tmp_path, HEAVY + FRONT_DOOR)
    assert r.returncode == 0, r.stderr
    assert loaded == [], loaded
    report = json.loads(r.stdout.split("\nLOADED ")[0])
    assert (report["records"], report["imported"], report["duplicates"]) == (2, 1, 1)


def test_heavy_commands_do_load_what_they_need(tmp_path: Path) -> None:
    """The probe can fail: a command that needs numpy and OpenCV is seen importing them."""
    loaded, r = _loaded(["scanner", "read", "--source", "virtual:seed=1", "--calibration", "missing.npz"], tmp_path)
    assert r.returncode != 0
    assert "numpy" in loaded and "cv2" in loaded


def test_every_command_is_mapped_to_its_modules() -> None:
    """``COMMANDS`` (what main imports for a command) names every top-level command, and only its modules."""
    from dealer.cli.kit import Command

    for module in cli_app.COMMAND_MODULES:
        importlib.import_module(module)
    group = cli_app.app
    assert set(group.commands) == set(cli_app.COMMANDS)
    for name, modules in cli_app.COMMANDS.items():
        assert set(modules) <= set(cli_app.COMMAND_MODULES), name
        command = group.commands[name]
        if isinstance(command, Command):
            assert command.function.__module__ in modules, (name, command.function.__module__)
        for sub, subcommand in getattr(command, "commands", {}).items():  # a group's subcommands too
            where = getattr(getattr(subcommand, "function", None), "__module__", "")
            assert not where.startswith("dealer.cli.") or where in modules, (name, sub, where)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["board", "1"], ("dealer.cli.deal_cmds",)),
        (["--help"], cli_app.COMMAND_MODULES),
        ([], cli_app.COMMAND_MODULES),
        (
            ["bank", "import", "x.pbn"],
            ("dealer.cli.bank_cmds", "dealer.cli.bank_migrate_cmds", "dealer.cli.audit_cmds"),
        ),
        (["no-such-command"], cli_app.COMMAND_MODULES),
    ],
)
def test_modules_for_command_line(argv: list[str], expected: tuple[str, ...]) -> None:
    assert cli_app.modules_for(argv) == expected
