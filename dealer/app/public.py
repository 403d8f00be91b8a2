"""Public messages: built only from the session's public projection and bank progress figures.

Nothing here takes a ``DealComplete``, a ``CardAccepted`` or a ``Deal``: a hidden card's identity cannot reach
the audience through these functions. The snapshot the audience gets on (re)connect is folded from the same
messages (``PublicState.apply``), so it cannot hold more than the messages do.
"""

from __future__ import annotations

import copy

from dealer.app.station_state import StationStatus
from dealer.core.json_types import JsonObject
from dealer.session import (
    PublicCardHidden,
    PublicCardOpen,
    PublicDealCommitted,
    PublicDealStarted,
    PublicDealVoided,
    PublicEvent,
)

from .public_messages import (
    PublicBank,
    PublicCard,
    PublicCommitment,
    PublicDealCommittedMsg,
    PublicDealStartedMsg,
    PublicDealVoidedMsg,
    PublicHidden,
    PublicMessage,
    PublicStation,
)

Message = JsonObject  # a public message as the hub keeps it: built only through the models below
SEATS = "NESW"


def typed(station: str, event: PublicEvent) -> PublicMessage:
    """The public message for one event of a session's public projection."""
    if isinstance(event, PublicCardOpen):
        return PublicCard(
            station=station,
            attempt=event.attempt,
            position=event.position,
            seat=SEATS[event.seat],
            card=int(event.card),
        )
    if isinstance(event, PublicCardHidden):
        return PublicHidden(
            station=station,
            attempt=event.attempt,
            position=event.position,
            seat=SEATS[event.seat],
            count=event.hidden_in_seat,
        )
    if isinstance(event, PublicDealStarted):
        return PublicDealStartedMsg(
            station=station, attempt=event.attempt, variant=event.variant, open_count=event.open_count
        )
    if isinstance(event, PublicDealVoided):
        return PublicDealVoidedMsg(station=station, attempt=event.attempt, reason=event.reason)
    if isinstance(event, PublicDealCommitted):
        return PublicDealCommittedMsg(
            station=station,
            attempt=event.attempt,
            bank_deal=event.bank_deal,
            ledger_head=event.ledger_head,
            formed=event.formed,
        )
    raise TypeError(f"not a public projection: {type(event).__name__}")  # pragma: no cover


def from_projection(station: str, event: PublicEvent) -> Message:
    return typed(station, event).model_dump()


def station_message(station: str, variant: int, open_count: int, status: str) -> Message:
    return PublicStation(station=station, variant=variant, open_count=open_count, status=status).model_dump()


def board_message(station: str, board: int, boards: int) -> Message:
    """Variant 1: a board was dealt face down. Only its number: nothing of a card."""
    return {"type": "board", "station": station, "board": board, "boards": boards}


def bank_message(formed: int, target: int, ledger_head: str, ledger_size: int = 0) -> Message:
    """Bank progress and the ledger's anchor (size and head hash), shown live so officials can note it."""
    return PublicBank(formed=formed, target=target, ledger_head=ledger_head, ledger_size=ledger_size).model_dump()


HALL_DRAW_KEYS = (
    "label", "commitment", "head", "deals", "kind", "previous", "drawn_before", "public_value", "public_value_spec",
    "witnesses", "format", "bits", "value", "state", "secret", "drawn", "reason",
)  # fmt: skip


def commitment_message(view: JsonObject) -> Message:
    """A draw as the hall sees it: its commitment hash, witnesses and the format of V; V once entered;
    K and the drawn ids only once revealed. Never the eligible set, never a drawn deal before the reveal."""
    msg: JsonObject = {key: view[key] for key in HALL_DRAW_KEYS if key in view}
    if msg.get("state") not in ("revealed", "void"):
        msg.pop("secret", None)
    if msg.get("state") != "revealed":
        msg.pop("drawn", None)
    return {"type": "commitment", **PublicCommitment.model_validate(msg).model_dump(exclude_unset=True)}


def _empty_hands() -> JsonObject:
    return {s: {"open": [], "hidden": 0} for s in SEATS}


class PublicState:
    """What a newly connected audience client needs to draw the screen, folded from public messages."""

    def __init__(self) -> None:
        self.stations: dict[str, JsonObject] = {}
        self.bank: JsonObject = {"formed": 0, "target": 0, "ledger_head": "", "ledger_size": 0}
        self.commitment: JsonObject | None = None

    def _station(self, name: str) -> JsonObject:
        st = self.stations.get(name)
        if st is None:
            st = {
                "station": name,
                "variant": 0,
                "open_count": 0,
                "status": StationStatus.IDLE.value,
                "attempt": 0,
                "phase": "waiting",
                "reason": None,
                "bank_deal": None,
                "board": None,
                "boards": None,
                "hands": _empty_hands(),
            }
            self.stations[name] = st
        return st

    def apply(self, msg: Message) -> None:
        kind = msg["type"]
        if kind == "bank":
            self.bank = {k: msg.get(k, 0) for k in ("formed", "target", "ledger_head", "ledger_size")}
            return
        if kind == "commitment":
            self.commitment = {k: v for k, v in msg.items() if k != "type"}
            return
        if kind == "cleared":  # nothing of the deals shown during formation stays on screen
            names = list(self.stations) if msg.get("station") is None else [msg["station"]]
            for name in names:
                self._station(name).update(
                    phase="cleared", attempt=0, reason=None, bank_deal=None, hands=_empty_hands()
                )  # fmt: skip
            return
        st = self._station(msg["station"])
        if kind == "station":
            st.update(variant=msg["variant"], open_count=msg["open_count"], status=msg["status"])
        elif kind == "deal_started":
            st.update(
                attempt=msg["attempt"],
                variant=msg["variant"],
                open_count=msg["open_count"],
                phase="dealing",
                reason=None,
                bank_deal=None,
                hands=_empty_hands(),
            )
        elif kind == "card":
            st["hands"][msg["seat"]]["open"].append(msg["card"])
        elif kind == "hidden":
            st["hands"][msg["seat"]]["hidden"] = msg["count"]
        elif kind == "deal_voided":
            st.update(phase="voided", reason=msg["reason"])
        elif kind == "board":
            st.update(phase="board", board=msg["board"], boards=msg["boards"])
        elif kind == "deal_committed":
            st.update(phase="committed", bank_deal=msg["bank_deal"])
            self.bank.update(formed=msg["formed"], ledger_head=msg["ledger_head"])

    def snapshot(self) -> Message:
        return {
            "type": "snapshot",
            "stations": [copy.deepcopy(self.stations[k]) for k in sorted(self.stations)],
            "bank": dict(self.bank),
            "commitment": dict(self.commitment) if self.commitment else None,
        }
