"""Languages, plural rules and dates for everything people read: pages, documents, the command line.

Russian is the default; English on request. The language comes from (first given wins) an explicit choice
(``--lang``, a page's ``?lang=``), the configuration's ``language``, the ``LANG`` environment variable, else
``ru``. Plural forms follow CLDR through Babel ("1 сдача, 2 сдачи, 5 сдач"); dates and times are written in
the locale (24-hour in Russian). Pure: no I/O beyond reading the environment mapping it is given.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, TypeGuard

from dealer.core.errors import DealerError, Lines
from dealer.core.json_types import JsonObject

if TYPE_CHECKING:  # Babel loads on the first plural, date or number (datetime and string on first use too): the
    # command line's start goes without them
    from datetime import date, datetime

    from babel import Locale

LANGUAGES = ("ru", "en")
DEFAULT_LANGUAGE = "ru"
PLURAL_CATEGORIES = ("zero", "one", "two", "few", "many", "other")


class LanguageError(DealerError, ValueError):
    pass


def check_language(lang: str, where: str = "language") -> str:
    if lang not in LANGUAGES:
        raise LanguageError(
            "{where} = {lang!r}: allowed {allowed}", where=where, lang=lang, allowed=", ".join(LANGUAGES)
        )
    return lang


def language_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """``ru`` or ``en`` from LC_ALL / LC_MESSAGES / LANG (``ru_RU.UTF-8`` → ``ru``), or None."""
    env = os.environ if env is None else env
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        code = value.split(".")[0].split("_")[0].split("-")[0].lower()
        if code in LANGUAGES:
            return code
        if value and value not in ("C", "POSIX") and not value.startswith("C."):
            return None  # a real locale in another language: neither ru nor en, fall back to the default
    return None


def resolve_language(
    explicit: str | None = None, configured: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """The language to speak: ``explicit`` (--lang) › ``configured`` (config) › LANG › ``ru``."""
    if explicit:
        return check_language(explicit, "--lang")
    if configured:
        return check_language(configured)
    return language_from_env(env) or DEFAULT_LANGUAGE


@cache
def _locale(lang: str) -> Locale:
    from babel import Locale

    return Locale.parse(check_language(lang))


def plural_category(lang: str, n: int | float) -> str:
    """CLDR plural category of ``n`` in ``lang``: ru 1 → one, 2 → few, 5 → many; en 1 → one, 2 → other."""
    return str(_locale(lang).plural_form(n))


def pick_plural(forms: Mapping[str, str], lang: str, n: int | float) -> str:
    """The form of ``forms`` (keys: CLDR categories) for ``n``; ``other`` when the category is absent."""
    return forms.get(plural_category(lang, n)) or forms["other"]


def is_plural_entry(value: object) -> TypeGuard[Mapping[str, str]]:
    return isinstance(value, dict) and "other" in value and set(value) <= set(PLURAL_CATEGORIES)


def fill(text: str, params: Mapping[str, object]) -> str:
    for name, param in params.items():
        text = text.replace("{" + name + "}", str(param))
    return text


def format_datetime(value: datetime, lang: str) -> str:
    """A moment in the locale, in this computer's time zone: ``30 нояб. 2026 г., 15:04:05``."""
    from babel.dates import format_datetime as _babel_datetime

    local = value.astimezone() if value.tzinfo else value
    return str(_babel_datetime(local, "medium", locale=_locale(lang)))


def format_date(value: date, lang: str, style: str = "long") -> str:
    from babel.dates import format_date as _babel_date

    return str(_babel_date(value, style, locale=_locale(lang)))


def format_dates(start: date, end: date, lang: str) -> str:
    """A span of days in the locale: ``1–5 декабря 2026 г.``, one day as ``1 декабря 2026 г.``."""
    from babel.dates import format_interval

    if start == end:
        return format_date(start, lang)
    text = str(format_interval(start, end, "yMMMd", locale=_locale(lang)))  # CLDR has no interval in full months
    months = _locale(lang).months["format"]
    for k in (start.month, end.month):  # the abbreviated month written out, as a document dates a day
        text = re.sub(r"(?<!\w)" + re.escape(months["abbreviated"][k]) + r"(?!\w)", months["wide"][k], text)
    return text


# patterns without grouping, as (fewest, most) fraction digits: written without Babel (a test checks they agree)
PLAIN_PATTERNS = {"0": (0, 0), "0.#": (0, 1), "0.##": (0, 2), "0.0": (1, 1), "0.00": (2, 2)}
DECIMAL_SIGN = {"ru": ",", "en": "."}  # CLDR's decimal symbol of each language


def format_number(value: float, lang: str, pattern: str = "#,##0.##") -> str:
    """A number in the locale: ru ``2,44`` and ``1 234``, en ``2.44`` and ``1,234``."""
    digits = PLAIN_PATTERNS.get(pattern)
    if digits is not None and type(value) in (int, float) and 0 <= value < 1e15 and not str(value).startswith("-"):
        return _plain_number(value, check_language(lang), *digits)
    from babel.numbers import format_decimal as _babel_decimal

    return str(_babel_decimal(value, pattern, locale=_locale(lang)))


def _plain_number(value: float, lang: str, fewest: int, most: int) -> str:
    """What Babel writes for a pattern without grouping: the decimal text of ``value`` rounded half to even (as
    Babel rounds ``Decimal(str(value))``), trailing zeros dropped down to ``fewest`` digits, the locale's sign."""
    from decimal import Decimal

    text = f"{Decimal(str(value)).quantize(Decimal(1).scaleb(-most)):f}"
    whole, _, fraction = text.partition(".")
    fraction = fraction[:most]
    while len(fraction) > fewest and fraction.endswith("0"):
        fraction = fraction[:-1]
    return whole + (DECIMAL_SIGN[lang] + fraction if fraction else "")


def parse_timestamp(text: str) -> datetime | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None


class Messages:
    """One catalogue (a JSON object of key → text, list, or plural forms) in one language."""

    def __init__(self, lang: str, entries: Mapping[str, object]) -> None:
        self.lang = check_language(lang)
        self.entries = entries

    def __call__(self, key: str, **params: object) -> str:
        value = self.entries[key]
        if is_plural_entry(value):
            if "n" not in params:
                raise KeyError(f"{key} has plural forms: give n")
            n = params["n"]
            assert isinstance(n, int | float)
            return fill(pick_plural(value, self.lang, n), params)
        return fill(str(value), params)

    def plural(self, key: str, n: int | float, **params: object) -> str:
        return self(key, n=n, **params)

    def list(self, key: str) -> list[str]:
        value = self.entries[key]
        assert isinstance(value, list)
        return [str(v) for v in value]

    def number(self, value: float, pattern: str = "#,##0.##") -> str:
        return format_number(value, self.lang, pattern)

    def percent(self, value: float, pattern: str = "0.##") -> str:
        """``5 %`` (ru, with a no-break space) or ``5%`` (en)."""
        return f"{self.number(value, pattern)}\u00a0%" if self.lang == "ru" else f"{self.number(value, pattern)}%"

    def when(self, value: datetime | str | None) -> str:
        """A ledger timestamp (ISO text) or a datetime, in the locale; ``—`` when absent."""
        if isinstance(value, str):
            parsed = parse_timestamp(value)
            if parsed is None:
                return value
            value = parsed
        return "—" if value is None else format_datetime(value, self.lang)


@cache
def error_catalogue(lang: str) -> JsonObject:
    """English template → text in ``lang`` (``dealer/core/i18n/ru.json``); English needs none."""
    if check_language(lang) == "en":
        return {}
    import dealer.core

    # the package's own file, read without importlib.resources (12 ms of a command's start, 0.4x a bare Python's,
    # measured on `dealer bank status`): the command line's catalogue (dealer.cli.i18n) is read the same way
    folder = os.path.dirname(dealer.core.__file__ or "")
    with open(os.path.join(folder, "i18n", f"{lang}.json"), encoding="utf-8") as file:
        data: JsonObject = json.loads(file.read())
    return data


def plural_count(template: str, params: Mapping[str, object]) -> int | float | None:
    """The number a plural entry agrees with: ``n`` when given, else the first numeric field of the template."""
    if isinstance(params.get("n"), int | float):
        value = params["n"]
        assert isinstance(value, int | float)
        return value
    import string

    for _, field, _, _ in string.Formatter().parse(template):
        value = params.get((field or "").split(".")[0].split("[")[0])
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
    return None


def error_text(error: object, lang: str) -> str:
    """An error (or a :class:`~dealer.core.errors.Phrase`) in ``lang``: its template looked up in the error
    catalogue, plural forms picked by the count, params that are errors or phrases themselves rendered the same
    way. English, an error without a template, or a template the catalogue lacks: ``str(error)``."""
    template = getattr(error, "template", None)
    params = getattr(error, "params", None)
    if lang == "en" or not isinstance(template, str) or not isinstance(params, dict):
        return str(error)
    entry = error_catalogue(lang).get(template)
    if entry is None:
        return str(error)
    if is_plural_entry(entry):
        count = plural_count(template, params)
        entry = entry["other"] if count is None else pick_plural(entry, lang, count)
    shown = {k: _param_text(v, lang) for k, v in params.items()}
    try:
        return str(entry).format(**shown) if params else str(entry)
    except (KeyError, IndexError, ValueError, AttributeError):
        return str(error)


def os_text(reason: object, lang: str) -> str:
    """The system's words for a failed file or socket operation (``No such file or directory``, an OSError) in
    ``lang``: the catalogue's ``os:`` entries, else as the system gave them."""
    text = str(reason.strerror or reason) if isinstance(reason, OSError) else str(reason)
    if lang == "en":
        return text
    entry = error_catalogue(lang).get("os:" + text)
    return str(entry) if isinstance(entry, str) else text


def _localized(text: str, lang: str) -> str:
    """Python's ``1,234.5`` in the locale's symbols: ru ``1 234,5`` (no-break space, as Babel/CLDR write it)."""
    from babel.numbers import get_decimal_symbol, get_group_symbol

    table = {ord(","): get_group_symbol(_locale(lang)), ord("."): get_decimal_symbol(_locale(lang))}
    return text.translate(table)


class _DecimalComma(float):
    """A float that formats with a decimal comma and Russian grouping (2,6 бит, 5,25 %, 12 345,5)."""

    def __format__(self, spec: str) -> str:
        return _localized(format(float(self), spec), "ru")


class _GroupedInt(int):
    """An int whose ``{n:,}`` groups thousands the Russian way: ``1 000 000`` with no-break spaces, not commas."""

    def __format__(self, spec: str) -> str:
        return _localized(format(int(self), spec), "ru")


def _param_text(value: object, lang: str) -> object:
    if isinstance(value, Lines):
        return "\n".join(value.indent + str(_param_text(item, lang)) for item in value.items)
    if hasattr(value, "template"):
        return error_text(value, lang)
    if lang == "ru" and isinstance(value, float):
        return _DecimalComma(value)
    if lang == "ru" and isinstance(value, int) and not isinstance(value, bool):
        return _GroupedInt(value)
    if isinstance(value, OSError | str) and not isinstance(value, DealerError):
        translated = os_text(value, lang)
        return translated if translated != str(value) else value
    return value
