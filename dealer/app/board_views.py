"""Board making as the consoles see it, framework-free: the director's view, and the technical judge's, which
hides every card unless Show cards is on (ledgered first; ``dealer.app.exports.show_board_cards``).

A foul copy's card, the pocket it belongs in and the reason (which names the card) are left out of the blind view,
and a failed run's error has its card names blanked out. The reason is said by the caller's ``reason_text`` (the
request's language, a layer above this one).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dealer.core.errors import Phrase
from dealer.export.journal import FoulCopy

from .exports import BoardProgress
from .jobs import Job, JobState
from .operator_messages import BoardsView, Foul, FoulShown

ReasonText = Callable[[Phrase], str]  # a foul's reason as people read it

_CARD_NAME = re.compile(r"[♠♥♦♣][AKQJT2-9]|\b[SHDC][AKQJT2-9]\b")

FOUL_PUBLIC_KEYS = ("board", "copy", "attempt", "kind", "pocket", "position")  # all the blind console gets


def card_free(text: str) -> str:
    """An error text with every card name blanked out (the reason of a foul names the card)."""
    return _CARD_NAME.sub("…", text)


def foul_view(f: FoulCopy, cards: bool, reason_text: ReasonText) -> Foul:
    """A foul copy; without ``cards`` (the judge's console without Show cards) which pocket and which card
    position went wrong only, never the card (nor the pocket it belongs in, nor the reason, which names it)."""
    if not cards:
        return Foul(board=f.board, copy=f.copy, attempt=f.attempt, kind=f.kind, pocket=f.pocket, position=f.position)
    return FoulShown(
        board=f.board,
        copy=f.copy,
        attempt=f.attempt,
        kind=f.kind,
        pocket=f.pocket,
        position=f.position,
        reason=reason_text(f.reason_phrase()),
        card=f.card,
        expected=f.expected,
    )


def boards_view(
    label: str,
    state: JobState,
    p: BoardProgress,
    reason_text: ReasonText,
    error: str | None = None,
    cards: bool = False,
) -> BoardsView:
    """A board-making run of ``label`` as a console sees it: with ``cards``, every foul's card and reason and the
    error as it is; without, neither card nor reason, and the error's card names blanked out."""
    return BoardsView(
        label=label,
        state=state,
        boards=p.boards,
        copies_total=p.total_copies,
        copies_done=p.copies_done,
        current=p.current,
        made=list(p.made),
        skipped=list(p.skipped),
        fouls=[foul_view(f, cards, reason_text) for f in p.fouls],
        error=error if cards or error is None else card_free(error),
    )


def job_view(job: Job[BoardProgress], cards: bool, reason_text: ReasonText) -> BoardsView:
    """A board-making job as a console sees it (``boards_view``)."""
    return boards_view(job.key, job.state, job.progress, reason_text, job.error, cards)
