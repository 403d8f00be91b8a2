"""Message catalogues (``dealer/web/i18n/<lang>.json``): every string a page shows comes from here.

An entry is a text (with ``{name}`` parameters), a list, or plural forms ``{"one": …, "few": …, "many": …,
"other": …}`` picked by CLDR rules (Babel here, ``Intl.PluralRules`` in the pages).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from .config import LANGUAGES


@cache
def catalogue(lang: str) -> dict[str, Any]:  # Any: json.loads; entries are texts or plural-form tables
    if lang not in LANGUAGES:
        raise KeyError(f"no catalogue for language {lang!r}")
    text = resources.files("dealer.web").joinpath(f"i18n/{lang}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)  # Any: json.loads of the catalogue
    return data


def translate(lang: str, key: str, **params: object) -> str:
    """The text of ``key``; an entry with plural forms takes ``n`` (CLDR rules through Babel)."""
    from dealer.i18n import Messages

    return Messages(lang, catalogue(lang))(key, **params)
