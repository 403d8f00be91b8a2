"""Errors of the domain core. Each names the problem and where it is."""

from __future__ import annotations


class DealerError(Exception):
    """Base of every error that is the user's input's fault; the CLI prints it and exits with 1.

    ``template`` is an English ``str.format`` template with named fields and ``params`` their values: ``str(exc)``
    is the English text, and the catalogues translate ``template`` (keyed by the English text) with ``params``.
    """

    def __init__(self, template: str = "", /, **params: object) -> None:
        self.template = template
        self.params = params
        super().__init__(template.format(**params) if params else template)


class DealError(DealerError, ValueError):
    """A deal (or its textual form) is not valid."""


class CardTokenError(DealError):
    def __init__(self, token: str, position: int, reason: str = "unknown card token") -> None:
        self.token = token
        self.position = position
        super().__init__(f"{reason} {token!r} at position {position}")


class DuplicateCardError(DealError):
    def __init__(self, card: str, first_seat: str, second_seat: str) -> None:
        self.card = card
        self.seats = (first_seat, second_seat)
        where = "twice in " + first_seat if first_seat == second_seat else f"in {first_seat} and {second_seat}"
        super().__init__(f"duplicate card {card}: {where}")


class HandSizeError(DealError):
    def __init__(self, seat: str, count: int, expected: int = 13) -> None:
        self.seat = seat
        self.count = count
        super().__init__(f"hand {seat} has {count} cards, expected {expected}")


class DealNumberError(DealError):
    pass


class BoardNumberError(DealerError, ValueError):
    def __init__(self, board: int) -> None:
        self.board = board
        super().__init__(f"board number {board} is out of range: boards are numbered from 1")
