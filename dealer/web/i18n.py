"""Message catalogues (``dealer/web/i18n/<lang>.json``): every string a page shows comes from here."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from .config import LANGUAGES


@cache
def catalogue(lang: str) -> dict[str, Any]:
    if lang not in LANGUAGES:
        raise KeyError(f"no catalogue for language {lang!r}")
    text = resources.files("dealer.web").joinpath(f"i18n/{lang}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def translate(lang: str, key: str, **params: object) -> str:
    value = catalogue(lang)[key]
    text = str(value)
    for name, param in params.items():
        text = text.replace("{" + name + "}", str(param))
    return text
