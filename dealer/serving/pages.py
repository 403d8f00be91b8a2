"""Where the hall's pages' files are: ``dealer/web/{static,templates,i18n}``, owned by the web service's pages.

They are read as package data of ``dealer`` (by path, not through ``dealer.web``): the relay serves the same
audience page, its scripts and catalogues without importing the web service, beside which it stands.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable


def page_files(name: str) -> Traversable:
    """A folder of the pages: ``static``, ``templates`` or ``i18n``."""
    return resources.files("dealer").joinpath("web").joinpath(name)
