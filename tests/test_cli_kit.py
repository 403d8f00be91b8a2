"""``dealer.cli.kit``, the command line's one parser, on a small command tree declared here.

Each case is a command line and what a reader of the declarations expects: the values the function receives,
or the exit code and the words of the usage error (English, the catalogue's key; Russian, its entry).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dealer.cli import i18n, kit

root = kit.Group(name="prog", help="A tree for the test.")
sub = kit.Group(help="A group.")
root.add_group(sub, name="grp")
calls: list[dict[str, object]] = []


@sub.command("run")
def run_cmd(
    files: list[Path] = kit.Argument(..., help="Files."),
    count: int = kit.Option(1, "--count", "-n", min=1, max=9, help="How many."),
    ratio: float | None = kit.Option(None, "--ratio", help="A ratio."),
    sealed: bool = kit.Option(True, "--sealed/--show", help="Sealed or shown."),
    quiet: bool = kit.Option(False, "--quiet", help="Say less."),
    tag: list[str] = kit.Option([], "--tag", help="A tag (repeat)."),
    secret: Path | None = kit.Option(None, "--secret", envvar="KIT_TEST_SECRET", help="A file."),
) -> None:
    """Run it."""
    calls.append(dict(files=files, count=count, ratio=ratio, sealed=sealed, quiet=quiet, tag=tag, secret=secret))


@root.command("one")
def one_cmd(label: str = kit.Argument(..., help="A label."), first: str | None = kit.Argument(None)) -> None:
    """One label, and perhaps another."""
    calls.append(dict(label=label, first=first))


@pytest.fixture(autouse=True)
def _english(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(i18n._CHOSEN, "lang", "en")
    monkeypatch.delenv("KIT_TEST_SECRET", raising=False)
    calls.clear()


def test_values_reach_the_function_typed() -> None:
    code = kit.run(root, ["grp", "run", "a.pbn", "-n", "3", "b.pbn", "--ratio=0.5", "--show", "--tag", "x", "--tag=y"])
    assert code == 0
    assert calls == [
        dict(
            files=[Path("a.pbn"), Path("b.pbn")],
            count=3,
            ratio=0.5,
            sealed=False,
            quiet=False,
            tag=["x", "y"],
            secret=None,
        )
    ]


def test_a_short_option_takes_its_value_attached_as_getopt_does() -> None:
    assert kit.run(root, ["grp", "run", "a.pbn", "-n3"]) == 0
    assert calls[-1]["count"] == 3


def test_defaults_environment_and_double_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIT_TEST_SECRET", "s.txt")
    assert kit.run(root, ["grp", "run", "--quiet", "--", "--odd-name"]) == 0
    assert calls == [
        dict(files=[Path("--odd-name")], count=1, ratio=None, sealed=True, quiet=True, tag=[], secret=Path("s.txt"))
    ]
    assert kit.run(root, ["one", "L"]) == 0 and calls[-1] == dict(label="L", first=None)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["grp", "run"], "Missing argument 'FILES...'."),
        (["grp", "run", "a", "-n", "x"], "Invalid value for '--count': 'x' is not a valid integer."),
        (["grp", "run", "a", "-n", "10"], "Invalid value for '--count': 10 is not in the range 1<=x<=9."),
        (["grp", "run", "a", "--ratio"], "Option '--ratio' requires an argument."),
        (["grp", "run", "a", "--quiet=1"], "Option '--quiet' does not take a value."),
        (["grp", "run", "a", "--qiuet"], "No such option: --qiuet Did you mean --quiet?"),
        (["grp", "run", "a", "-n10"], "Invalid value for '--count': 10 is not in the range 1<=x<=9."),
        (["grp", "run", "a", "-x3"], "No such option: -x3"),
        (["grp", "walk"], "No such command 'walk'."),
        (["one", "a", "b", "c"], "Got unexpected extra argument (c)"),
    ],
)
def test_usage_errors_exit_2_with_the_usage_line(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert kit.run(root, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("Usage: prog "), err
    assert f"Error: {words}" in err and calls == []


def test_usage_errors_in_russian(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(i18n._CHOSEN, "lang", "ru")
    assert kit.run(root, ["grp", "run", "a", "-n", "x"]) == 2
    err = capsys.readouterr().err
    assert "Использование: prog grp run [ПАРАМЕТРЫ]" in err and "Справка: 'prog grp run -h'." in err
    assert "Ошибка: Неверное значение '--count': 'x': нужно целое число." in err


def test_help_anywhere_wins_and_a_group_without_command_shows_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert kit.run(root, ["grp", "run", "--count", "x", "-h"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: prog grp run [OPTIONS] FILES...\n\n  Run it.\n")
    assert "--sealed/--show" in out and "-n, --count <int>" in out and "[env var: KIT_TEST_SECRET]" in out
    assert kit.run(root, ["grp"]) == 2
    assert "Commands:\n  run  Run it." in capsys.readouterr().out and calls == []
