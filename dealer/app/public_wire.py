"""What may travel to the relays: the public message types, checked field by field, and the stream's names.

Pure (no I/O). Only the messages that cannot hold a hidden card are allowed: an open card (``card``), the
number of hidden cards in a seat (``hidden``), a deal's start, void and commit (bank number and ledger head),
a station's status, the bank's progress and a draw's published commitment. Every message is validated against
its model (unknown fields are refused), so a field added to the hall's messages later does not reach NATS
unless it is added here too.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from dealer.core.errors import DealerError
from dealer.core.json_types import JsonObject

SEAT = Literal["N", "E", "S", "W"]
_EVENT_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class WireError(DealerError, ValueError):
    """A message that may not (or cannot) travel to the relays."""


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class CardMsg(_Msg):
    type: Literal["card"]
    station: str
    attempt: int
    position: int = Field(ge=0, le=51)
    seat: SEAT
    card: int = Field(ge=0, le=51)


class HiddenMsg(_Msg):
    type: Literal["hidden"]
    station: str
    attempt: int
    position: int = Field(ge=0, le=51)
    seat: SEAT
    count: int = Field(ge=0, le=13)


class DealStartedMsg(_Msg):
    type: Literal["deal_started"]
    station: str
    attempt: int
    variant: int = Field(ge=1, le=3)
    open_count: int = Field(ge=0, le=52)


class DealVoidedMsg(_Msg):
    type: Literal["deal_voided"]
    station: str
    attempt: int
    reason: str


class DealCommittedMsg(_Msg):
    type: Literal["deal_committed"]
    station: str
    attempt: int
    bank_deal: int
    ledger_head: str
    formed: int


class StationMsg(_Msg):
    type: Literal["station"]
    station: str
    variant: int
    open_count: int
    status: str


class ClearedMsg(_Msg):
    """The hall forgets what it showed of a station's deals (``station``) or of all (null): at the bank's target
    and on the chief judge's command, so nothing shown during formation stays on screen during the draw or play."""

    type: Literal["cleared"]
    station: str | None


class BankMsg(_Msg):
    type: Literal["bank"]
    formed: int
    target: int
    ledger_head: str
    ledger_size: int = 0


class CommitmentMsg(_Msg):
    """A draw as the hall sees it (``dealer.app.public.commitment_message``): K and the drawn ids only once it is
    revealed (K also once voided) — a message saying otherwise is refused here, whatever built it."""

    type: Literal["commitment"]
    label: str
    commitment: str
    head: str | None = None
    deals: int
    kind: str | None = None
    previous: str | None = None
    drawn_before: int | None = None
    public_value: str | None = None
    public_value_spec: JsonObject | None = None
    witnesses: list[str] | None = None
    format: str | None = None
    bits: float | int | None = None
    value: str | None = None
    state: str | None = None
    secret: str | None = None
    drawn: list[int] | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _nothing_before_the_reveal(self) -> CommitmentMsg:
        if self.drawn is not None and self.state != "revealed":
            raise ValueError(f"drawn deals of a draw that is {self.state!r}, not revealed")
        if self.secret is not None and self.state not in ("revealed", "void"):
            raise ValueError(f"the secret K of a draw that is {self.state!r}, not revealed or void")
        return self


PublicWireMessage = Annotated[
    CardMsg
    | HiddenMsg
    | DealStartedMsg
    | DealVoidedMsg
    | DealCommittedMsg
    | StationMsg
    | ClearedMsg
    | BankMsg
    | CommitmentMsg,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[PublicWireMessage] = TypeAdapter(PublicWireMessage)
PUBLIC_TYPES = frozenset(
    ("card", "hidden", "deal_started", "deal_voided", "deal_committed", "station", "cleared", "bank", "commitment")
)


def check_event(name: str) -> str:
    if not _EVENT_RE.match(name):
        raise WireError("event name {name!r}: use 1..64 letters, digits, '-' or '_'", name=name)
    return name


def stream_name(event: str) -> str:
    return f"DEALER_PUBLIC_{check_event(event)}"


def subject(event: str) -> str:
    return f"dealer.public.{check_event(event)}"


def encode(msg: JsonObject) -> bytes:
    """The bytes published for ``msg``; refuses anything but a valid public message."""
    if msg.get("type") not in PUBLIC_TYPES:
        raise WireError("message type {get!r} is not public", get=msg.get("type"))
    try:
        _ADAPTER.validate_python(msg)
    except ValidationError as exc:
        raise WireError(
            "not a public message: {field}: {problem}", field=exc.errors()[0]["loc"], problem=exc.errors()[0]["msg"]
        ) from exc
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode()


def decode(data: bytes) -> JsonObject:
    """A message read from the stream, validated the same way (a relay serves nothing else)."""
    try:
        msg = json.loads(data)
    except ValueError as exc:
        raise WireError("not JSON: {exc}", exc=exc) from exc
    if not isinstance(msg, dict) or msg.get("type") not in PUBLIC_TYPES:
        raise WireError("not a public message")
    try:
        _ADAPTER.validate_python(msg)
    except ValidationError as exc:
        raise WireError(
            "not a public message: {field}: {problem}", field=exc.errors()[0]["loc"], problem=exc.errors()[0]["msg"]
        ) from exc
    return msg
