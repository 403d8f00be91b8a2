"""A package's names loaded on first use (PEP 562): its ``__getattr__``, from a table of name -> module."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(package: str, home: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: a name of ``home`` imports its module (``.module``) once, and is
    kept in the package's namespace after; any other name is an AttributeError."""

    def __getattr__(name: str) -> object:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
