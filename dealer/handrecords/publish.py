"""Producing the hand-record files of a session, behind the reveal gate.

Drawn deals stay secret until the session is revealed (DESIGN.md §6). Whoever publishes hand records from
the bank passes a ``RevealGate`` (the bank or the session service implements it); ``publish`` asks it
before computing or writing anything. Deals that are public already (a deal file given on the command
line) pass ``gate=None`` explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypedDict, Unpack

from dealer.core import Deal
from dealer.core.errors import DealerError
from dealer.formats.base import BoardRecord, ExportMeta

from .analysis import BATCH, BoardAnalysis, analyse
from .html import render_html
from .pbn import handrecords_pbn
from .pdf import render_pdf
from .view import document_view

OUTPUTS = ("html", "pdf", "pbn")


class NotRevealedError(DealerError, PermissionError):
    """Hand records of deals that are not yet revealed may not be published."""


class RevealGate(Protocol):
    def ensure_revealed(self, session: str) -> None:
        """Return if ``session``'s deals are revealed; raise ``NotRevealedError`` otherwise."""
        ...


def render(analyses: Sequence[BoardAnalysis], kind: str, *, title: str, subtitle: str, lang: str,
           meta: ExportMeta) -> bytes:  # fmt: skip
    if kind == "pbn":
        return handrecords_pbn(analyses, meta)
    doc = document_view(list(analyses), title=title, subtitle=subtitle, lang=lang)
    if kind == "html":
        return render_html(doc).encode("utf-8")
    if kind == "pdf":
        return render_pdf(doc)
    raise DealerError(
        "unknown hand-record output {kind!r}: expected one of {OUTPUTS}", kind=kind, OUTPUTS=", ".join(OUTPUTS)
    )


class PublishOptions(TypedDict, total=False):
    """``publish``'s optional keywords, passed on by ``publish_session``."""

    kinds: Sequence[str]
    title: str
    subtitle: str
    lang: str
    meta: ExportMeta
    batch: int
    progress: Callable[[int, int], None] | None


def publish(
    records: Sequence[BoardRecord],
    out_dir: Path,
    stem: str,
    *,
    gate: RevealGate | None,
    session: str = "",
    kinds: Sequence[str] = OUTPUTS,
    title: str = "",
    subtitle: str = "",
    lang: str = "en",
    meta: ExportMeta = ExportMeta(),
    batch: int = BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Analyse the boards and write ``stem.html``/``.pdf``/``.pbn`` atomically; gated on reveal."""
    from dealer.fsutil import write_atomic

    if gate is not None:
        gate.ensure_revealed(session)
    for kind in kinds:
        if kind not in OUTPUTS:
            raise DealerError(
                "unknown hand-record output {kind!r}: expected one of {OUTPUTS}", kind=kind, OUTPUTS=", ".join(OUTPUTS)
            )
    analyses = analyse(records, batch=batch, progress=progress)
    rendered = [
        (out_dir / f"{stem}.{kind}", render(analyses, kind, title=title, subtitle=subtitle, lang=lang, meta=meta))
        for kind in kinds
    ]
    for path, data in rendered:
        write_atomic(path, data)
    return [p for p, _ in rendered]


def publish_session(
    pairs: Sequence[tuple[int, Deal]],
    out_dir: Path,
    stem: str,
    *,
    gate: RevealGate,
    session: str,
    **options: Unpack[PublishOptions],
) -> list[Path]:
    """Hand records of a drawn session given as (board number, deal) pairs; always behind the reveal gate."""
    from dealer.export.boards import boards_from_pairs

    records = [b.record() for b in boards_from_pairs(pairs)]
    return publish(records, out_dir, stem, gate=gate, session=session, **options)
