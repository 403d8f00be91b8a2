"""Hand records as one self-contained HTML page (inline CSS, no external resources)."""

from __future__ import annotations

from importlib import resources

import jinja2

from .view import DocumentView


def _environment() -> jinja2.Environment:
    loader = jinja2.FunctionLoader(
        lambda name: resources.files("dealer.handrecords").joinpath("templates", name).read_text(encoding="utf-8")
    )
    return jinja2.Environment(loader=loader, autoescape=True, trim_blocks=True, lstrip_blocks=True)


def render_html(doc: DocumentView) -> str:
    return _environment().get_template("handrecords.html.j2").render(doc=doc)
