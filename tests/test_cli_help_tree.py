"""Every command's help, walked over the whole command tree, renders in Russian and in English.

The tree is walked from the root the entry point runs (``dealer.cli.app``, every command module imported); each
command's ``--help`` runs in-process through the one parser (``dealer.cli.kit``). What is expected comes from the
declarations themselves (each option's names, each help text) and from the catalogue file read here as JSON:
the English help shows every option and help text as written; the Russian one shows the catalogue's translation
of each, and none of the English texts that have one.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from dealer.cli import app as cli_app
from dealer.cli import i18n
from dealer.cli.kit import Command, Group, run

ROOT = Path(__file__).resolve().parents[1]
RU = json.loads((ROOT / "dealer" / "cli" / "i18n" / "ru.json").read_text(encoding="utf-8"))


def _tree() -> list[tuple[tuple[str, ...], Command | Group]]:
    for module in cli_app.COMMAND_MODULES:
        importlib.import_module(module)
    found: list[tuple[tuple[str, ...], Command | Group]] = []

    def walk(node: Command | Group, path: tuple[str, ...]) -> None:
        found.append((path, node))
        if isinstance(node, Group):
            for name, sub in node.commands.items():
                walk(sub, (*path, name))

    walk(cli_app.app, ())
    return found


TREE = _tree()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help(path: tuple[str, ...], lang: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(i18n._CHOSEN, "lang", lang)
    monkeypatch.setenv("COLUMNS", "100")
    assert run(cli_app.app, [*path, "--help"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


def test_the_walk_finds_the_whole_tree() -> None:
    names = {" ".join(path) for path, _ in TREE}
    assert len(TREE) > 40
    assert {"", "bank import", "draw verify", "export boards", "serve", "custody init"} <= names


@pytest.mark.parametrize(("path", "node"), TREE, ids=[" ".join(p) or "dealer" for p, _ in TREE])
def test_help_renders_in_english(
    path: tuple[str, ...], node: Command | Group, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _help(path, "en", capsys, monkeypatch)
    assert out.startswith(" ".join(("Usage: dealer", *path)) + " [OPTIONS]"), out
    flat = _flat(out)
    assert "Options:" in out and "-h, --help" in out
    assert "[default: ]" not in flat  # an empty default is no default to show
    assert all(param.help for param in node.params), (path, [p.name for p in node.params if not p.help])
    for param in node.params:
        if param.is_option:
            assert all(name in out for name in param.decls), (path, param.decls)
        if param.help:
            assert _flat(param.help) in flat, (path, param.name)
    if node.help:
        assert _flat(node.help.split("\n\n")[0]) in flat, path
    if isinstance(node, Group):
        assert "Commands:" in out and all(f"\n  {name} " in out or f"\n  {name}\n" in out for name in node.commands)


@pytest.mark.parametrize(("path", "node"), TREE, ids=[" ".join(p) or "dealer" for p, _ in TREE])
def test_help_renders_in_russian(
    path: tuple[str, ...], node: Command | Group, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _help(path, "ru", capsys, monkeypatch)
    assert out.startswith(" ".join(("Использование: dealer", *path)) + " [ПАРАМЕТРЫ]"), out
    assert "Usage:" not in out and "Options:" not in out and "Параметры:" in out
    assert "[по умолчанию: ]" not in _flat(out)
    flat = _flat(out)
    texts = [p.help for p in node.params if p.help] + ([node.help] if node.help else [])
    for text in texts:
        russian = RU["help"][text]
        assert russian != text, text
        shown = russian if text != node.help else russian.split("\n\n")[0]
        assert _flat(shown) in flat, (path, text)
        assert _flat(text) not in flat, (path, text)
    if isinstance(node, Group):
        assert "Команды:" in out
