"""The ``draws`` table and the draw's state machine: committed → public-value → drawn → revealed, or void.

The bank keeps each draw's secret K, state, public value and result, and writes each step's ledger entry in
the same transaction as the state change. What a draw's documents say (the commitment, its chain to the
previous draw) is ``dealer.draw``'s to read: the bank stores them as given and hands the earlier ones to the
``ChainCheck`` the draw passes in, inside the transaction, so two processes cannot both chain onto one draw.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, NamedTuple

from dealer.core.json_types import JsonObject
from dealer.integrity.ledger import Entry, EntryKind

from .deals import DealsTable
from .errors import BankError
from .ledger_table import LedgerTable
from .schema import Connection, insert_sql, select_sql


class DrawState(StrEnum):
    COMMITTED = "committed"
    PUBLIC_VALUE = "public-value"
    DRAWN = "drawn"
    REVEALED = "revealed"
    VOID = "void"


RUN_ORDER = (DrawState.COMMITTED, DrawState.PUBLIC_VALUE, DrawState.DRAWN, DrawState.REVEALED)


SECRET_SIZE = 32  # K, open; before reveal (or void) the row holds it sealed under the chief judge's key


class DrawRow(NamedTuple):
    """A row of ``draws`` as stored (``verify_bank`` checks them raw)."""

    label: str
    state: str
    commit_index: int
    secret: bytes  # K sealed (docs/custody.md) until the reveal or void, then K itself
    public_value: str | None
    drawn: str | None  # run: JSON {"count", "sealed"} (the result sealed); revealed: JSON list of deal ids


class DrawRecord(NamedTuple):
    """A draw as the bank keeps it. Before the reveal, ``secret`` is K sealed and the result is only
    ``sealed_result`` (the chief judge's key opens them, ``dealer.draw.director``); after it, both are open.
    A named tuple, as ``api.DealSource``."""

    label: str
    state: DrawState
    commit_index: int
    secret: bytes
    public_value: str | None
    drawn: tuple[int, ...] | None  # the drawn deal ids once open (revealed, or a bank of before custody)
    sealed_result: bytes | None = None
    drawn_count: int = 0

    @property
    def secret_open(self) -> bool:
        return len(self.secret) == SECRET_SIZE

    @classmethod
    # Any: a sqlite3/psycopg row's column values, named by ``DrawRow``
    def of(cls, row: Sequence[Any]) -> DrawRecord:
        r = DrawRow(*row)
        drawn: tuple[int, ...] | None = None
        sealed: bytes | None = None
        count = 0
        if r.drawn is not None:
            stored = json.loads(r.drawn)
            if isinstance(stored, dict):
                sealed, count = bytes.fromhex(stored["sealed"]), int(stored["count"])
            else:
                drawn = tuple(stored)
                count = len(drawn)
        return cls(r.label, DrawState(r.state), r.commit_index, bytes(r.secret), r.public_value, drawn, sealed, count)


class PriorDraw(NamedTuple):
    """An earlier draw of the bank, as a new commitment's ``ChainCheck`` sees it."""

    label: str
    commit: Entry  # its draw-commit entry: the signed commitment document, as the draw wrote it
    drawn: int  # how many deals it drew (0 before it ran, or when void)


ChainCheck = Callable[[Sequence[PriorDraw]], None]
"""Raises (a ``DealerError``) unless the new commitment follows the earlier draws, in commit order."""


class DrawsTable:
    INSERT = insert_sql("draws")

    def __init__(self, ledger: LedgerTable, deals: DealsTable) -> None:
        self.ledger = ledger
        self.deals = deals

    # -- the state machine (each step inside the caller's transaction) ------------------------------------
    def commit(
        self, db: Connection, label: str, secret: bytes, data: JsonObject, ts: str, follows: ChainCheck
    ) -> Entry:
        if db.execute("SELECT 1 FROM draws WHERE label=?", (label,)).fetchone():
            raise BankError("a draw labelled {label!r} exists already: choose another session label", label=label)
        open_draw = db.execute(
            "SELECT label FROM draws WHERE state IN (?, ?)", (DrawState.COMMITTED, DrawState.PUBLIC_VALUE)
        ).fetchone()
        if open_draw:
            raise BankError(
                "draw {label!r} is prepared but not run: run it (or void it with a reason) first", label=open_draw[0]
            )
        follows(self.prior(db))
        entry = self.ledger.append(db, EntryKind.DRAW_COMMIT, data, ts)
        db.execute(
            self.INSERT,
            tuple(DrawRow(label, DrawState.COMMITTED, entry.index, secret, public_value=None, drawn=None)),
        )
        return entry

    def publish(self, db: Connection, label: str, data: JsonObject, ts: str) -> Entry:
        """The commitment was put before the hall: from now on the public value may be entered."""
        self.expect(db, label, RUN_ORDER)
        return self.ledger.append(db, EntryKind.DRAW_PUBLISHED, data, ts)

    def void(self, db: Connection, label: str, secret: bytes, data: JsonObject, ts: str, after_publish: bool) -> Entry:
        """Only before the public value is entered, and once the commitment is before the hall only as the
        regulation allows (``after_publish``): once the witnesses make V, whoever could read K would know the
        result, and a void would let them throw away a draw they did not like (docs/custody.md)."""
        self.expect(db, label, (DrawState.COMMITTED,))
        if self.published(db, label) and not after_publish:
            raise BankError(
                "draw {label!r}: its commitment is before the hall, and the regulation allows no more voids after "
                "that: run the draw with the witnesses' value",
                label=label,
            )
        entry = self.ledger.append(db, EntryKind.DRAW_VOID, data, ts)
        db.execute("UPDATE draws SET state=?, secret=? WHERE label=?", (DrawState.VOID, secret, label))
        return entry

    def public_value(self, db: Connection, label: str, value: str, data: JsonObject, ts: str) -> Entry:
        self.expect(db, label, (DrawState.COMMITTED,))
        if not self.published(db, label):
            raise BankError(
                "draw {label!r}: its commitment has not been shown to the hall yet: publish it before "
                "the public value is made",
                label=label,
            )
        entry = self.ledger.append(db, EntryKind.PUBLIC_VALUE, data, ts)
        db.execute("UPDATE draws SET state=?, public_value=? WHERE label=?", (DrawState.PUBLIC_VALUE, value, label))
        return entry

    def result(self, db: Connection, label: str, sealed: bytes, count: int, data: JsonObject, ts: str) -> Entry:
        """The result, sealed: neither the row nor the deals' states tell which deals were drawn before reveal."""
        self.expect(db, label, (DrawState.PUBLIC_VALUE,))
        entry = self.ledger.append(db, EntryKind.DRAW, data, ts)
        stored = json.dumps({"count": count, "sealed": sealed.hex()}, sort_keys=True)
        db.execute("UPDATE draws SET state=?, drawn=? WHERE label=?", (DrawState.DRAWN, stored, label))
        return entry

    def reveal(
        self, db: Connection, label: str, secret: bytes, drawn: Sequence[int], data: JsonObject, ts: str
    ) -> Entry:
        self.expect(db, label, (DrawState.DRAWN,))
        earlier = db.execute(
            "SELECT label FROM draws WHERE state=? AND commit_index < "
            "(SELECT commit_index FROM draws WHERE label=?) ORDER BY commit_index LIMIT 1",
            (DrawState.DRAWN, label),
        ).fetchone()
        if earlier:  # its positions would tell which deals the earlier draw took
            raise BankError("draw {label!r} is drawn but not revealed: reveal the draws in order", label=earlier[0])
        entry = self.ledger.append(db, EntryKind.REVEAL, data, ts)
        db.execute(
            "UPDATE draws SET state=?, secret=?, drawn=? WHERE label=?",
            (DrawState.REVEALED, secret, json.dumps(list(drawn)), label),
        )
        changed = self.deals.mark_drawn(db, label, drawn)
        if changed != len(drawn):
            raise BankError(
                "draw {label!r}: {missing} of the drawn deals were no longer in the bank",
                label=label,
                missing=len(drawn) - changed,
            )
        self.deals.mark_played(db, label)
        return entry

    def expect(self, db: Connection, label: str, states: Sequence[DrawState]) -> None:
        row = db.execute("SELECT state FROM draws WHERE label=?", (label,)).fetchone()
        if row is None:
            raise BankError("no draw labelled {label!r}", label=label)
        if row[0] not in states:
            raise BankError(
                "draw {label!r} is {state}; this step needs it {needed}",
                label=label,
                state=row[0],
                needed=" or ".join(states),
            )

    # -- reading ------------------------------------------------------------------------------------------
    def prior(self, db: Connection) -> list[PriorDraw]:
        records = self.all(db)
        bodies = self.ledger.bodies(db, [r.commit_index for r in records])
        return [PriorDraw(r.label, Entry.decode(bytes(bodies[r.commit_index])), r.drawn_count) for r in records]

    def published(self, db: Connection, label: str) -> bool:
        return any(e.data.get("label") == label for e in self.ledger.of_kind(db, EntryKind.DRAW_PUBLISHED))

    def get(self, db: Connection, label: str) -> DrawRecord:
        row = db.execute(select_sql("draws", "label=?"), (label,)).fetchone()
        if row is None:
            raise BankError("no draw labelled {label!r}", label=label)
        return DrawRecord.of(row)

    def all(self, db: Connection) -> list[DrawRecord]:
        return [DrawRecord.of(r) for r in self.rows(db)]

    def rows(self, db: Connection) -> list[DrawRow]:
        return [DrawRow(*r) for r in db.execute(select_sql("draws", tail="ORDER BY commit_index")).fetchall()]
