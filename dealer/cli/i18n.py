"""The command line in Russian: ``--help`` texts, click's and typer's own words, the error prefix.

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
from types import ModuleType
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
    """An error (a DealerError's template, a Phrase) in the command line's language."""
    from dealer.i18n import error_text

    return printable(error_text(exc, language()))


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


# Any: a click/typer command or group, whose attributes (help, params, commands) differ by class and are
# read with getattr where they may be absent
def _walk(command: Any, help_texts: dict[str, str], help_names: list[str] | None = None) -> None:
    words = catalogue()["framework"]
    # the root's help spellings (-h, --help), which every subcommand's context inherits; click keeps the help
    # option it first builds, so it must be built with them (a bare context has only --help: "dealer -h" failed)
    help_names = help_names or command.context_settings.get("help_option_names") or ["--help"]
    if getattr(command, "options_metavar", None) == "[OPTIONS]":
        command.options_metavar = words["[OPTIONS]"]
    if getattr(command, "subcommand_metavar", None) == "COMMAND [ARGS]...":
        command.subcommand_metavar = words["COMMAND [ARGS]..."]
    if command.help:
        command.help = help_texts.get(command.help, command.help)
    if command.short_help:
        command.short_help = help_texts.get(command.short_help, command.short_help)
    option = command.get_help_option(command.context_class(command, help_option_names=help_names))
    if option is not None and option.help:
        option.help = catalogue()["framework"].get(option.help, option.help)
    arguments = catalogue()["arguments"]
    for param in command.params:
        if param.param_type_name == "argument" and param.name in arguments:
            param.metavar = arguments[param.name]  # the argument's name in usage lines and help (English: as named)
        text = getattr(param, "help", None)
        if text:
            param.help = help_texts.get(text, text)
    for sub in getattr(command, "commands", {}).values():
        _walk(sub, help_texts, help_names)


# Any: the click command tree typer builds (see ``_walk``)
def localize(command: Any, lang: str) -> None:
    """Put the click command tree (and click's and typer's own words) into ``lang``; English is left as it is."""
    if lang != "ru":
        return
    import gettext as stdlib_gettext
    import sys

    from .lazy import when_imported

    words = catalogue()["framework"]

    def gettext(message: str) -> str:
        return str(words.get(message, message))

    # click (and the copy typer carries, typer._click) look their words up through gettext's ``_``
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("click", "typer") and getattr(module, "_", None) is stdlib_gettext.gettext:
            module._ = gettext  # type: ignore[attr-defined]
    _vendored_click(words)
    _type_names(catalogue()["types"])

    def rich_words(ru: ModuleType) -> None:  # typer's rich layer loads only for help and errors: its words then
        for name in ("ARGUMENTS_PANEL_TITLE", "OPTIONS_PANEL_TITLE", "COMMANDS_PANEL_TITLE", "ERRORS_PANEL_TITLE",
                     "ABORTED_TEXT", "DEFAULT_STRING", "REQUIRED_LONG_STRING", "RICH_HELP",
                     "ENVVAR_STRING"):  # fmt: skip
            setattr(ru, name, gettext(getattr(ru, name)))

    when_imported("typer.rich_utils", rich_words)
    _walk(command, catalogue()["help"])


# click's usage errors as typer's copy of click words them (f-strings, no gettext): rewritten after formatting
ERRORS = (
    (r"^Missing argument '(.*)'\.", "Не хватает аргумента '\\1'."),
    (r"^Missing option '(.*)'\.", "Не хватает параметра '\\1'."),
    (r"^Missing parameter: ", "Не хватает параметра: "),
    (r"^Invalid value for (.*?): ", "Неверное значение \\1: "),
    (r"^Invalid value: ", "Неверное значение: "),
    (r"^No such option: ", "Нет такого параметра: "),
    (r"^No such command '(.*)'\.", "Нет такой команды '\\1'."),
    (r"^Got unexpected extra argument\(s\) ", "Лишние аргументы "),
    (r"^Option '(.*)' requires an argument\.", "Параметру '\\1' нужно значение."),
    (r" Did you mean (.*)\?$", " Может быть, \\1?"),
    # typer checks values through pydantic, whose words come last
    (r"Input should be a valid integer, unable to parse string as an integer", "нужно целое число"),
    (r"Input should be a valid number, unable to parse string as a number", "нужно число"),
    (r"Input should be a valid integer", "нужно целое число"),
    (r"Input should be a valid number", "нужно число"),
    (r"Input should be a valid boolean", "нужно да или нет (true/false)"),
    (r"Input should be greater than or equal to (\S+)", "нужно не меньше \\1"),
    (r"Input should be less than or equal to (\S+)", "нужно не больше \\1"),
    (r"Input should be greater than (\S+)", "нужно больше \\1"),
    (r"Input should be less than (\S+)", "нужно меньше \\1"),
)


def _vendored_click(words: dict[str, str]) -> None:
    import re

    import typer._click.exceptions as exc
    import typer._click.formatting as fmt

    write_usage = fmt.HelpFormatter.write_usage

    # Any: typer's vendored click HelpFormatter, patched at runtime
    def usage(self: Any, prog: str, args: str = "", prefix: str | None = None) -> None:
        write_usage(self, prog, args, prefix if prefix is not None else words["Usage:"] + " ")

    fmt.HelpFormatter.write_usage = usage  # type: ignore[method-assign]
    for cls in vars(exc).values():
        if isinstance(cls, type) and issubclass(cls, exc.ClickException) and "format_message" in vars(cls):
            original = vars(cls)["format_message"]

            # Any: the ClickException subclass being patched and its original method (click's, untyped here)
            def format_message(self: Any, _original: Any = original) -> str:
                text = str(_original(self))
                for pattern, replacement in ERRORS:
                    text = re.sub(pattern, replacement, text)
                return text

            cls.format_message = format_message  # type: ignore[method-assign]


def _type_names(types: dict[str, str]) -> None:
    """typer's value types in help (``<int>``, ``<path>``) in Russian."""
    import typer.core as core

    display_type = core._TyperParameter.display_type
    if getattr(display_type, "localized", False):
        return

    # Any: typer's private _TyperParameter and click Context, patched at runtime
    def localized(self: Any, ctx: Any) -> str:
        text = str(display_type(self, ctx))
        return types.get(text, text)

    localized.localized = True  # type: ignore[attr-defined]
    core._TyperParameter.display_type = localized  # type: ignore[method-assign]


# Any: the click command tree typer builds (see ``_walk``)
def help_texts(command: Any) -> list[str]:
    """Every help text of a command tree (for the catalogue-coverage test)."""
    out = [t for t in (command.help, command.short_help) if t]
    out += [p.help for p in command.params if getattr(p, "help", None)]
    for sub in getattr(command, "commands", {}).values():
        out += help_texts(sub)
    return out
