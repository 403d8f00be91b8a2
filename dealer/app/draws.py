"""The director's steps of a draw that are rules, not I/O: the drawn deals numbered as a session's boards (Law 2),
the public value read by the kind the commitment announced (dice or a named value), and the reveal gate of hand
records. The web's director console and the command line call them; ``dealer.draw.director.Director`` does the
bank's part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from dealer.bank.draws import DrawState
from dealer.export.boards import SessionBoard, number_deals
from dealer.handrecords.publish import NotRevealedError

if TYPE_CHECKING:
    from dealer.draw.director import Director, DrawnDeal
    from dealer.draw.protocol import PublicValueSpec

DICE = "dice"  # a public value of the witnesses' dice; any other kind is a named value (a lottery's numbers)


def drawn_boards(drawn: Sequence[DrawnDeal], *, first: int = 1, copies: int = 1) -> list[SessionBoard]:
    """The drawn deals as the session's boards: ``first``, ``first + 1``, ... in draw order (Law 2 dealer and
    vulnerability by number)."""
    return number_deals([item.deal.deal for item in drawn], first=first, copies=copies)


def renumbered(boards: Sequence[SessionBoard], *, first: int = 1, copies: int = 1) -> list[SessionBoard]:
    """Boards numbered from 1 (variant 1's, as the stations dealt them) as a session continuing from ``first``."""
    return [SessionBoard(b.number + first - 1, b.deal, copies) for b in boards]


class ValueAsked(Protocol):
    """What the director asks of a draw's public value (the web's ``PrepareDraw`` carries these): the witnesses'
    dice when witnesses are named, else a named public number."""

    @property
    def witnesses(self) -> Sequence[str] | None: ...
    @property
    def rolls(self) -> int: ...
    @property
    def faces(self) -> int: ...
    @property
    def named(self) -> str | None: ...
    @property
    def numbers(self) -> int: ...
    @property
    def min(self) -> int: ...
    @property
    def max(self) -> int: ...
    @property
    def width(self) -> int | None: ...
    @property
    def as_drawn(self) -> bool: ...
    @property
    def repeats(self) -> bool: ...
    @property
    def separator(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Asked:
    """A ``ValueAsked`` for callers without a request model of their own (the command line's options)."""

    witnesses: Sequence[str] | None = None
    rolls: int = 8
    faces: int = 6
    named: str | None = None
    numbers: int = 0
    min: int = 1
    max: int = 0
    width: int | None = None
    as_drawn: bool = False
    repeats: bool = False
    separator: str = "-"


def value_spec(asked: ValueAsked, language: str) -> PublicValueSpec:
    """The public value's kind and description as the commitment will sign them: dice in the words of
    ``language`` (the one who prepares the draw), or a named public number."""
    from dealer.draw.protocol import dice_description, dice_spec, named_spec
    from dealer.i18n import error_text

    if asked.witnesses:
        words = error_text(dice_description(asked.witnesses, asked.rolls, asked.faces), language)
        return dice_spec(asked.witnesses, asked.rolls, asked.faces, words)
    order = "as drawn" if asked.as_drawn else "ascending"
    return named_spec(
        asked.named or "", asked.numbers, asked.min, asked.max, asked.width, order, not asked.repeats,
        asked.separator or "-",
    )  # fmt: skip


def value_kind(director: Director, label: str) -> str:
    """The kind of public value the draw's published commitment announced (``dice`` or a named value's)."""
    return str(director.commitment(label)["commitment"]["public_value"]["kind"])


def normalise_value(director: Director, label: str, dice: list[str] | None, typed: str | None) -> str:
    """The canonical public value for what was typed (shown back before it is stored), read as the commitment's
    kind says: each witness's digits (``dice``, or all of them in the one field ``typed``), or a named value."""
    if value_kind(director, label) == DICE:
        return director.normalise(label, dice=dice if dice else [typed or ""])
    return director.normalise(label, named=typed or "")


def enter_value(director: Director, label: str, dice: list[str] | None, typed: str | None) -> str:
    """Store the draw's public value (once: a value already stored is returned as it is)."""
    rec = director.bank.get_draw(label)
    if rec.public_value is not None:
        return rec.public_value
    if dice is not None:
        return director.enter_public_value(label, dice=dice)
    if value_kind(director, label) == DICE:
        return director.enter_public_value(label, dice=[typed or ""])
    return director.enter_public_value(label, named=typed or "")


class _Draw(Protocol):
    @property
    def state(self) -> DrawState: ...


class DrawLookup(Protocol):
    """What the reveal gate reads of the bank: a draw's state."""

    def get_draw(self, label: str) -> _Draw: ...


class RevealGate:
    """Hand records wait for the reveal; variant 1's boards (``closed_label``, when the service deals them) are no
    draw: their hand records are the director's to publish. ``ensure_revealed`` runs on the bank's thread."""

    def __init__(self, bank: DrawLookup, closed_label: str | None = None) -> None:
        self.bank = bank
        self.closed_label = closed_label

    def ensure_revealed(self, session: str) -> None:
        if self.closed_label is not None and session == self.closed_label:
            return
        if self.bank.get_draw(session).state != DrawState.REVEALED:
            raise NotRevealedError(
                "session {session!r} is not revealed: hand records wait for the reveal", session=session
            )
