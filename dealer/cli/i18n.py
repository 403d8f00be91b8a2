"""The command line in Russian: ``--help`` texts, the parser's own words (``dealer.cli.kit``), the error prefix.

The language is ``--lang`` when the command line has one, else ``language`` of ``config/service.toml`` when that
file is here, else ``LANG``, else Russian. Help texts are written in English in the command modules and looked up
in ``dealer/cli/i18n/ru.json`` (English text → Russian), so a module adds an option in one place; a test walks
every command and fails on a help text without a Russian entry. Messages the commands print (and the errors
they report) go through :func:`t`, keyed the same way (``messages`` in ``ru.json``; ``en.json`` holds the English
plural forms), and domain errors through :func:`dealer.i18n.error_text`. Machine output (``machine.py``) is not
translated.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from dealer.core.json_types import JsonObject
from dealer.i18n import LANGUAGES, is_plural_entry, pick_plural, plural_count, resolve_language

CONFIG = Path("config/service.toml")


@cache
def catalogue(lang: str = "ru") -> dict[str, JsonObject]:
    # the package's own file, read without importlib.resources (the command line's start goes without it)
    with open(os.path.join(os.path.dirname(__file__), "i18n", f"{lang}.json"), encoding="utf-8") as file:
        text = file.read()
    data: dict[str, JsonObject] = json.loads(text)
    return data


_CHOSEN: dict[str, str] = {}  # the language of this command line, once ``main`` (or a test) has chosen it


def set_language(lang: str) -> None:
    _CHOSEN["lang"] = lang


def language() -> str:
    """The command line's language (chosen by ``main``; else the config's, LANG's, or Russian)."""
    if "lang" not in _CHOSEN:
        _CHOSEN["lang"] = cli_language([])
    return _CHOSEN["lang"]


def t(template: str, /, **params: object) -> str:
    """A message for people in the command line's language: ``template`` is the English ``str.format`` text and
    the key of the catalogues; a plural entry agrees with ``n`` (or the first number among the fields)."""
    lang = language()
    entry: object = catalogue(lang)["messages"].get(template, template)
    if is_plural_entry(entry):
        count = plural_count(template, params)
        entry = entry["other"] if count is None else pick_plural(entry, lang, count)
    return printable(str(entry).format(**params) if params else str(entry))


# control characters a terminal acts on (ESC sequences, C1 controls such as CSI, bell, backspace, carriage return)
# and the bidirectional overrides that reorder what is shown; line feeds and tabs stay
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character a terminal would obey written as its escape (``\\x1b``): a file
    name like ``a\\x1b[2J.pbn`` is shown, not executed, by every message of the command line."""
    return _CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def os_reason(exc: OSError) -> str:
    """Why a file could not be read or written (or a port bound), in the command line's language."""
    from dealer.i18n import os_text

    return os_text(exc, language())


def error(exc: object) -> str:
    """An error (a DealerError's template, a Phrase) in the command line's language, with the command that does
    the action it names (:mod:`dealer.cli.hints`) when it names one."""
    from dealer.i18n import error_text

    from .hints import command_hint

    text = error_text(exc, language())
    command = command_hint(exc)
    if command is not None:
        text = t("{message} (on the command line: {command})", message=text, command=command)
    return printable(text)


def cli_language(argv: Sequence[str]) -> str:
    """The language of this command line (see the module's docstring); a bad ``--lang`` is left to the command."""
    explicit = None
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            explicit = argv[i + 1]
        elif arg.startswith("--lang="):
            explicit = arg.split("=", 1)[1]
    if explicit in LANGUAGES:
        return str(explicit)
    configured = None
    if CONFIG.is_file():
        import tomllib

        try:
            value = tomllib.loads(CONFIG.read_text(encoding="utf-8")).get("language")
        except (OSError, ValueError):
            value = None
        configured = value if value in LANGUAGES else None
    return resolve_language(None, configured)


def word(key: str, /, **fields: object) -> str:
    """One of the parser's own words (usage, errors, help headings): ``framework`` in the catalogue for Russian,
    the English key otherwise, its ``{fields}`` filled in."""
    text = str(catalogue()["framework"].get(key, key)) if language() == "ru" else key
    return text.format(**fields) if fields else text


# Any: a command or group of ``dealer.cli.kit`` (imported lazily: this module loads before it)
def help_texts(command: Any) -> list[str]:
    """Every help text of a command tree (for the catalogue-coverage test)."""
    out = [command.help] if command.help else []
    out += [p.help for p in command.params if p.help]
    for sub in getattr(command, "commands", {}).values():
        out += help_texts(sub)
    return out
