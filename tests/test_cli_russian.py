"""The command line speaks Russian unless told otherwise: its messages (catalogue ``dealer/cli/i18n``, keyed by the
English text, with plural forms), its errors (``dealer/core/i18n``) and the parser's own words (``framework``).

The catalogue tests walk the syntax trees of ``dealer/cli`` for every ``t("…")``; the run tests start the real
entry point in fresh processes under ``LANG=ru_RU.UTF-8`` and look for English words left in what people read.
"""

from __future__ import annotations

import ast
import json
import os
import re
import string
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dealer.cli import app as cli_app
from dealer.i18n import plural_category

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "dealer" / "cli"
RU: dict[str, Any] = json.loads((CLI / "i18n" / "ru.json").read_text(encoding="utf-8"))
EN: dict[str, Any] = json.loads((CLI / "i18n" / "en.json").read_text(encoding="utf-8"))
RU_CATEGORIES = {"one", "few", "many", "other"}
EN_CATEGORIES = {"one", "other"}
# messages the same in both languages on purpose (nothing to translate but fields)
SAME_ALLOWED: set[str] = set()

# Words that stay as they are in Russian text: proper names, format names, commands and option values people
# type, units and codes. Upper-case words (PBN, SHA, URL, NAME in help texts) are codes and pass anyway.
ALLOWED_WORDS = {
    # proper names
    "Big", "Deal", "Ed", "PostgreSQL", "SQLite", "Duplimate", "Jannersten", "Bernasconi", "Borel", "Windows",
    "Bridge", "Base", "Online", "Portable", "Notation", "Holm", "Wald", "DejaVu", "Sans", "bridge-dealer",
    "pyserial", "pyusb", "tistis", "nl",
    # keys and names people type or read in files: DLM fields and values, config keys, PBN tags, shuffler specs
    "Duplicates", "Sealed", "Show", "Status", "Board", "Enter", "Ctrl-C", "event", "fair", "gsr", "virtual",
    "deck", "synthetic-4c-fr", "order", "sorted", "shuffled", "seed", "level", "clean", "mild", "strong", "hard",
    "pty", "usb", "tcp", "stdout", "card", "unreadable", "md", "ru", "en", "html", "pdf", "pbn", "dlm", "dup",
    "json", "lin", "csv", "ber", "bhg", "bri", "dge", "audit-json", "wrong_pocket", "jam", "noise", "dealer",
}  # fmt: skip


def _commands() -> list[list[str]]:
    for module in cli_app.COMMAND_MODULES:
        __import__(module)
    paths: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        paths.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(cli_app.app, [])
    return paths


COMMANDS = _commands()
COMMAND_WORDS = {word for path in COMMANDS for name in path for word in re.split(r"[-_]", name)} | {
    name for path in COMMANDS for name in path
}


def english_words(text: str) -> list[str]:
    """Latin words left in ``text`` that are not allowed: options, paths, URLs, defaults and codes are skipped."""
    text = re.sub(r"\[по умолчанию: [^\]]*\]", "", text)
    text = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "", text)  # quoted data: file text, labels, examples
    left = []
    for token in text.split():
        token = token.strip("│╭╮╰╯─()[]{}<>,.;:!?«»…")
        if not token or token.startswith("-") or re.search(r"[/._=:@\\]|\d", token):
            continue
        for word in re.findall(r"[A-Za-z][A-Za-z'-]*[A-Za-z]", token):
            if word.isupper() or word in ALLOWED_WORDS or word in COMMAND_WORDS:
                continue
            left.append(word)
    return left


def dealer(*args: str, lang: str = "ru_RU.UTF-8", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LANG": lang, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    code = "import sys; from dealer.cli.app import main; sys.argv = ['dealer', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=cwd or ROOT, timeout=300
    )


# -- the catalogue ------------------------------------------------------------------------------------------------


def message_calls() -> list[tuple[str, int, str | None]]:
    """Every ``t(…)`` in dealer/cli: (file, line, the literal template or None when it is not literal)."""
    calls = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t":
                first = node.args[0] if node.args else None
                literal = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
                calls.append((path.name, node.lineno, literal))
    return calls


def fields(text: str) -> set[str]:
    return {f"{name}!{conv}:{spec}" for _, name, spec, conv in string.Formatter().parse(text) if name is not None}


def test_every_message_is_a_literal_with_a_russian_entry() -> None:
    calls = message_calls()
    assert len(calls) > 150  # the walk finds the commands' messages (about 200 when written)
    bad = [f"{f}:{n}" for f, n, literal in calls if literal is None]
    assert not bad, "t() with a non-literal template: " + ", ".join(bad)
    missing = sorted({literal for _, _, literal in calls if literal is not None and literal not in RU["messages"]})
    assert not missing, "messages without a Russian entry:\n" + "\n".join(str(m) for m in missing)
    stale = sorted(set(RU["messages"]) - {literal for _, _, literal in calls})
    assert not stale, f"entries no command uses: {stale}"


@pytest.mark.parametrize("key", sorted(RU["messages"]))
def test_message_entry_is_translated_with_the_same_fields(key: str) -> None:
    entry = RU["messages"][key]
    if isinstance(entry, dict):
        assert set(entry) == RU_CATEGORIES, f"{key}: Russian plural forms must be {sorted(RU_CATEGORIES)}"
        english = EN["messages"].get(key)
        assert isinstance(english, dict) and set(english) == EN_CATEGORIES, f"{key}: English plural forms missing"
        forms = [*entry.values(), *english.values()]
    else:
        forms = [entry]
        assert key not in EN["messages"], f"{key}: English forms for a message without plural forms"
    for form in forms:
        assert fields(form) == fields(key), f"{key!r} → {form!r}"
    for form in entry.values() if isinstance(entry, dict) else [entry]:
        if key not in SAME_ALLOWED:
            assert form != key, f"{key!r} is not translated"
            if re.search("[A-Za-z]{2}", re.sub(r"\{[^}]*\}", "", key)):  # words to translate, not only fields
                assert re.search("[а-яё]", form, re.IGNORECASE), f"{key!r} is not translated: {form!r}"


def test_english_catalogue_holds_only_plural_forms_of_known_messages() -> None:
    assert set(EN) == {"messages"}
    assert set(EN["messages"]) <= set(RU["messages"])


def test_plural_messages_agree_with_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from dealer.cli import i18n

    monkeypatch.setitem(i18n._CHOSEN, "lang", "ru")
    # by hand from the CLDR rule (1, 21: one; 2-4, 22: few; 5-20, 25: many)
    assert [i18n.t("{n} files", n=n) for n in (1, 2, 5, 21, 22, 25)] == [
        "1 файл", "2 файла", "5 файлов", "21 файл", "22 файла", "25 файлов",
    ]  # fmt: skip
    assert i18n.t("imported {imported} of {n} deals", imported=5, n=5) == "импортировано 5 из 5 сдач"
    assert i18n.t("{n} seals", n=3) == "3 печати" and plural_category("ru", 3) == "few"
    monkeypatch.setitem(i18n._CHOSEN, "lang", "en")
    assert [i18n.t("{n} files", n=n) for n in (1, 2)] == ["1 file", "2 files"]
    assert i18n.t("Deal number {number}", number=7) == "Deal number 7"


# -- real runs ----------------------------------------------------------------------------------------------------


def test_help_of_every_command_is_russian() -> None:
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda path: (path, dealer(*path, "--help")), COMMANDS))
    assert len(runs) > 40
    for path, run in runs:
        assert run.returncode == 0, (path, run.stderr)
        assert "Использование:" in run.stdout and "Usage:" not in run.stdout, path
        left = english_words(run.stdout)
        assert not left, f"dealer {' '.join(path)} --help: English words {sorted(set(left))}"


PBN_DEAL = "N:AKQJ.T98.765.432 T98.765.432.AKQJ 765.432.AKQJ.T98 432.AKQJ.T98.765"


def test_board_and_deal_show_in_russian() -> None:
    board = dealer("board", "1")
    # the vulnerability as the acts write it
    assert board.returncode == 0 and board.stdout.strip() == "Коробка 1: сдающий Север, все до зоны"
    show = dealer("deal", "show", PBN_DEAL)
    assert show.returncode == 0 and "Север" in show.stdout and "Номер сдачи" in show.stdout
    assert not english_words(show.stdout), show.stdout
    english = dealer("--lang", "en", "board", "1")
    assert english.stdout.strip() == "Board 1: dealer N, vulnerable None"
    assert "Deal number" in dealer("deal", "show", PBN_DEAL, "--lang", "en").stdout


def test_a_big_deal_number_is_grouped_as_the_language_writes_it() -> None:
    """«6 365 545 …» (no-break spaces, as Babel's ru locale groups) in Russian, never «6,365,545,…»; commas in
    English (Big Deal's .goe style); the grouped Russian number read back gives the same deal."""
    import decimal

    from babel.numbers import format_decimal

    from dealer.core import Deal

    rank = Deal.from_pbn(PBN_DEAL).rank()
    russian = dealer("deal", "show", PBN_DEAL).stdout
    with decimal.localcontext() as ctx:
        ctx.prec = 40  # a deal number has up to 29 digits: more than the default context's 28
        grouped, english = format_decimal(rank, locale="ru"), format_decimal(rank, locale="en")
    assert f"Номер сдачи {grouped}" in russian and "," not in russian.split("Номер сдачи")[1]
    assert f"Deal number {english}" in dealer("deal", "show", PBN_DEAL, "--lang", "en").stdout
    back = dealer("deal", "unrank", grouped)
    assert back.returncode == 0 and back.stdout.strip() == Deal.from_pbn(PBN_DEAL).to_pbn()


def test_regulation_and_formats_in_russian() -> None:
    for args in (("regulation", "check"), ("formats",)):
        run = dealer(*args)
        assert run.returncode == 0, run.stderr
        left = english_words(run.stdout)
        assert not left, f"dealer {' '.join(args)}: {sorted(set(left))}"


def test_bad_input_to_convert_and_import_is_reported_in_russian(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbn"
    bad.write_text('[Board "1"]\n[Deal "N:AKQ"]\n', encoding="utf-8")
    convert = dealer("convert", str(bad), str(tmp_path / "out.dlm"))
    assert convert.returncode == 1
    assert "ошибка:" in convert.stderr and "коробка не читается" in convert.stderr
    assert "в руке N должно быть 4 масти" in convert.stderr
    assert not english_words(convert.stderr.replace(str(tmp_path), "")), convert.stderr
    missing = dealer("convert", str(tmp_path / "none.pbn"), str(tmp_path / "out.dlm"))
    assert missing.returncode == 1 and "нет такого файла или каталога" in missing.stderr
    imported = dealer("bank", "import", str(tmp_path), "--bank", str(tmp_path / "bank.sqlite"))
    assert imported.returncode != 0 and "ошибка:" in imported.stderr
    english = dealer("--lang", "en", "convert", str(bad), str(tmp_path / "out.dlm"))
    assert "error:" in english.stderr and "board(s) cannot be read" in english.stderr


def test_a_draw_error_is_russian(tmp_path: Path) -> None:
    run = dealer("draw", "prepare", "S1", "--witness", "Анна", "--rolls", "1", "--bank", str(tmp_path / "b.sqlite"))
    assert run.returncode == 1
    assert run.stderr.startswith("ошибка: публичное значение несёт"), run.stderr
    assert not english_words(run.stderr), run.stderr
    usage = dealer("draw", "prepare", "S1", "--bank", str(tmp_path / "b.sqlite"))
    assert usage.returncode == 1 and "укажите свидетелей" in usage.stderr
    english = dealer("draw", "prepare", "S1", "--witness", "Ann", "--rolls", "1", lang="en_US.UTF-8")
    assert "error: the public value carries" in english.stderr


def test_usage_errors_are_russian() -> None:
    run = dealer("board", "x")
    assert run.returncode == 2
    assert "Ошибка" in run.stderr and "нужно целое число" in run.stderr and not english_words(run.stderr)
    assert "Нет такой команды" in dealer("nosuch").stderr


@pytest.mark.parametrize("lang", ["ru_RU.UTF-8", "en_US.UTF-8"])
@pytest.mark.parametrize("path", [[], ["board"], ["bank", "import"], ["draw", "verify"]])
def test_minus_h_is_help_as_the_usage_line_says(path: list[str], lang: str, tmp_path: Path) -> None:
    """Every usage error ends "Справка: 'dealer … -h'": ``-h`` must then be the help, in both languages, the same
    as ``--help`` (the Russian command tree once built its help option with ``--help`` only)."""
    short = dealer(*path, "-h", lang=lang, cwd=tmp_path)
    long = dealer(*path, "--help", lang=lang, cwd=tmp_path)
    assert (short.returncode, short.stderr) == (0, ""), short.stderr
    assert short.stdout == long.stdout
    assert f"dealer {' '.join(path)}".strip() in short.stdout
