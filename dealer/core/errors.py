"""Errors of the domain core. Each names the problem and where it is.

Every error people read is a :class:`DealerError` built from an English ``str.format`` template with named
fields and the values of those fields: ``raise BankError("deal {deal_id} is not in the bank", deal_id=d)``.
``str(exc)`` is the English text (what logs and tests read); ``exc.template`` and ``exc.params`` let the
catalogues say it in another language (``dealer/core/i18n/ru.json``, keyed by the English template, rendered by
``dealer.i18n.error_text``). Raise sites write a literal template, never an f-string: a test walks every raise
site and checks that its template is in the Russian catalogue.
"""

from __future__ import annotations


class DealerError(Exception):
    """Base of every error that is the user's input's fault; the CLI prints it and exits with 1.

    ``template`` is an English ``str.format`` template with named fields and ``params`` their values: ``str(exc)``
    is the English text, and the catalogues translate ``template`` (keyed by the English text) with ``params``.
    """

    def __init__(self, template: str = "", /, **params: object) -> None:
        self.template = template
        self.params = params
        super().__init__(render_template(template, params))


class Phrase:
    """A phrase inside an error's params (a state, a kind) that the catalogues translate like a template."""

    __slots__ = ("params", "template")

    def __init__(self, template: str, /, **params: object) -> None:
        self.template = template
        self.params = params

    def __str__(self) -> str:
        return render_template(self.template, self.params)

    def __repr__(self) -> str:
        return repr(str(self))

    @classmethod
    def stored(cls, template: str, params: dict[str, object]) -> Phrase:
        """A phrase read back from a record (a journal): its template was a literal where it was written, and
        the catalogue test checked it there."""
        return cls(template, **params)


class Lines:
    """Phrases (or errors) inside an error's params, one a line: each said in the reader's language."""

    __slots__ = ("indent", "items")

    def __init__(self, items: list[object], indent: str = "") -> None:
        self.items = items
        self.indent = indent

    def __str__(self) -> str:
        return "\n".join(self.indent + str(item) for item in self.items)


def render_template(template: str, params: dict[str, object]) -> str:
    """``template`` filled with ``params`` (``str.format``); a template without params is taken as it is."""
    return template.format(**params) if params else template


class DealError(DealerError, ValueError):
    """A deal (or its textual form) is not valid."""


class CardTokenError(DealError):
    """Bad text at ``position``: ``reason`` (a template, with its own params) then the token and where."""

    SUFFIX = " {token!r} at position {position}"

    def __init__(self, token: str, position: int, reason: str = "unknown card token", /, **params: object) -> None:
        self.token = token
        self.position = position
        super().__init__(reason + self.SUFFIX, token=token, position=position, **params)


class DuplicateCardError(DealError):
    def __init__(self, card: str, first_seat: str, second_seat: str) -> None:
        self.card = card
        self.seats = (first_seat, second_seat)
        if first_seat == second_seat:
            super().__init__("duplicate card {card}: twice in {seat}", card=card, seat=first_seat)
        else:
            super().__init__(
                "duplicate card {card}: in {first} and {second}", card=card, first=first_seat, second=second_seat
            )


class HandSizeError(DealError):
    def __init__(self, seat: str, count: int, expected: int = 13) -> None:
        self.seat = seat
        self.count = count
        super().__init__(
            "hand {seat} has {count} cards, expected {expected}", seat=seat, count=count, expected=expected
        )


class DealNumberError(DealError):
    pass


class BoardNumberError(DealerError, ValueError):
    def __init__(self, board: int) -> None:
        self.board = board
        super().__init__("board number {board} is out of range: boards are numbered from 1", board=board)
