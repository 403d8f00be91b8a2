"""The documents the consoles issue, framework-free: which director documents exist, what variant 1 (closed
dealing) refuses, the day's date, the session label a document needs, variant 1's boards named by the variant, and
the issuer of each kind. ``dealer.web.routes_documents`` parses the request, calls here, answers the refusals with
their status (``DocumentKindUnknown`` 404, ``DocumentFieldError`` 422, any other ``DealerError`` 400) and renders
the issued document.

Documents are issued off the bank's thread (rendering, and the bank act's audit, must not hold up deals being
committed; the bank's connection is shared under its own lock, each read and the final record atomic), one at a
time: each takes the next number of its kind.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from dealer.core.errors import DealerError

if TYPE_CHECKING:
    from dealer.documents.issue import Issued

    from .service import Service

T = TypeVar("T")
P = ParamSpec("P")

DIRECTOR_KINDS = ("bank", "draw", "draw-annex", "boards", "day", "closed")
NO_CLOSED_KINDS = ("bank", "draw", "draw-annex")  # variant 1 has no bank and no draw
LABELLED_KINDS = ("draw", "draw-annex", "boards")  # documents of one session


class DocumentKindUnknown(DealerError):
    """No director document of that kind (the console answers 404)."""


class WrongVariant(DealerError):
    """A document the event's variant does not have (variant 1's closed act, or a bank or draw one under it)."""


class DocumentFieldError(DealerError):
    """A field of the request the document cannot be issued with: the day's date, the session label (422)."""


@dataclass(frozen=True, slots=True)
class DirectorOrder:
    """A director document as it will be issued: its kind, the session label (variant 1's boards: the closed
    boards' own label), the name shown for it (variant 1's boards act), and the day (the day's record)."""

    kind: str
    label: str | None = None
    shown: str | None = None
    day: date | None = None


def director_order(
    kind: str,
    *,
    closed: bool,
    label: str | None,
    day: str | None,
    variant_name: str,
    today: date | None = None,
) -> DirectorOrder:
    """What the chief judge asked for, checked: ``closed`` (variant 1) refuses the bank and draw documents, the
    closed act is variant 1's only; the day's record takes ``day`` (YYYY-MM-DD, else ``today``); the draw, annex and
    boards documents need the session ``label``; under variant 1 the boards act is of the closed boards, named
    ``variant_name`` (the variant's name in the document's language, never «closed»), as is a closed act without a
    label."""
    from dealer.app.closed import CLOSED_LABEL

    if kind not in DIRECTOR_KINDS:
        raise DocumentKindUnknown(
            "no document kind {kind!r} (available: {available})", kind=kind, available=", ".join(DIRECTOR_KINDS)
        )
    if kind in NO_CLOSED_KINDS and closed:
        raise WrongVariant("variant 1 (closed dealing) has no bank and no draw: no {kind} document", kind=kind)
    if kind == "closed":
        if not closed:
            raise WrongVariant("the closed dealing act is for variant 1 only")
        return DirectorOrder(kind, label=label or variant_name)
    if kind == "day":
        try:
            return DirectorOrder(kind, day=date.fromisoformat(day or (today or date.today()).isoformat()))
        except ValueError as exc:
            raise DocumentFieldError("date = {date!r}: expected a real date YYYY-MM-DD", date=day) from exc
    if kind not in LABELLED_KINDS:
        return DirectorOrder(kind)
    if label is None:
        raise DocumentFieldError("label: the {kind} document needs the session label", kind=kind)
    if kind == "boards" and closed:  # variant 1: the boards the stations dealt, named by the variant
        return DirectorOrder(kind, label=CLOSED_LABEL, shown=variant_name)
    return DirectorOrder(kind, label=label)


class DocumentDesk:
    """The service's documents: issued into ``VAR/documents/``, one at a time, off the bank's thread.
    ``variant_name`` gives variant 1's name in a language (the pages' catalogue, above this layer)."""

    def __init__(self, service: Service, variant_name: Callable[[str], str]) -> None:
        self.service = service
        self.folder = service.config.var_dir / "documents"
        self.variant_name = variant_name
        self._numbering = threading.Lock()

    def language(self, lang: str | None) -> str:
        """The document's language: the asked one, else the service's."""
        return lang or self.service.config.language

    async def issuing(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn`` run off the bank's thread, under the numbering lock (one document at a time)."""

        def locked() -> T:
            with self._numbering:  # one document at a time: each takes the next number
                return fn(*args, **kwargs)

        return await asyncio.to_thread(locked)

    async def equipment(self, session: str, *, lang: str | None, witnesses: Sequence[str]) -> Issued:
        """The technical judge's equipment check act of ``session``."""
        from dealer.documents.issuers import issue_equipment_act

        s = self.service
        return await self.issuing(
            issue_equipment_act, s.bank.bank, s.regulation, self.language(lang), self.folder, session, list(witnesses)
        )

    async def director(
        self,
        kind: str,
        *,
        label: str | None = None,
        day: str | None = None,
        lang: str | None = None,
        witnesses: Sequence[str] = (),
        audit: bool = True,
    ) -> Issued:
        """The chief judge's document of ``kind`` (``director_order``'s refusals first, then the issuer's)."""
        from dealer.documents import issuers
        from dealer.documents.issue import issue_day
        from dealer.export.names import board_journal

        s = self.service
        language = self.language(lang)
        closed = s.closed
        order = director_order(
            kind, closed=closed is not None, label=label, day=day, variant_name=self.variant_name(language)
        )
        b, reg, folder, names = s.bank.bank, s.regulation, self.folder, list(witnesses)
        if order.kind == "closed":
            assert closed is not None and order.label is not None
            deals = closed.audit_deals() if audit else []
            return await self.issuing(
                issuers.issue_closed_act, b, reg, language, folder, order.label, closed.records(), deals, names
            )
        if order.kind == "bank":
            return await self.issuing(issuers.issue_bank_act, b, reg, language, folder, names, audit)
        if order.kind == "day":
            assert order.day is not None
            return await self.issuing(issue_day, b, folder, order.day, language)
        assert order.label is not None
        if order.kind == "draw":
            return await self.issuing(issuers.issue_draw_protocol, b, reg, language, folder, order.label, names)
        if order.kind == "draw-annex":
            return await self.issuing(issuers.issue_draw_annex, b, reg, language, folder, order.label, names)
        journal = board_journal(s.config.var_dir, order.label)
        return await self.issuing(
            issuers.issue_boards_act, b, reg, language, folder, order.label, journal, names, order.shown
        )
