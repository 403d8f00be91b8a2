"""The audience's messages, as the hub keeps them and the hall and the relays send them: one pydantic model each.

``dealer.app.public`` builds every public message through these models (from the session's public projection and
the bank's figures only); ``dealer.app.public_wire`` is the stricter check of what may travel to the relays. The
web's API documents the stream with ``PublicMessage``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, JsonValue


class PublicCard(BaseModel):
    type: Literal["card"] = "card"
    station: str
    attempt: int
    position: int
    seat: str
    card: int


class PublicHidden(BaseModel):
    type: Literal["hidden"] = "hidden"
    station: str
    attempt: int
    position: int
    seat: str
    count: int


class PublicDealStartedMsg(BaseModel):
    type: Literal["deal_started"] = "deal_started"
    station: str
    attempt: int
    variant: int
    open_count: int


class PublicDealVoidedMsg(BaseModel):
    type: Literal["deal_voided"] = "deal_voided"
    station: str
    attempt: int
    reason: str


class PublicDealCommittedMsg(BaseModel):
    type: Literal["deal_committed"] = "deal_committed"
    station: str
    attempt: int
    bank_deal: int
    ledger_head: str
    formed: int


class PublicStation(BaseModel):
    type: Literal["station"] = "station"
    station: str
    variant: int
    open_count: int
    status: str


class PublicBank(BaseModel):
    type: Literal["bank"] = "bank"
    formed: int
    target: int
    ledger_head: str
    ledger_size: int = 0


class PublicCommitment(BaseModel):
    """A draw before the hall (``public.commitment_message`` decides which keys it may carry)."""

    type: Literal["commitment"] = "commitment"
    label: str
    commitment: str
    head: str | None = None
    deals: int
    kind: str | None = None
    previous: JsonValue = None
    drawn_before: int | None = None
    public_value: str | None = None
    public_value_spec: dict[str, JsonValue] | None = None
    witnesses: list[str] | None = None
    format: str | None = None
    bits: float | None = None
    value: str | None = None
    state: str | None = None
    secret: str | None = None
    drawn: list[int] | None = None
    reason: str | None = None


PublicMessage = (
    PublicCard
    | PublicHidden
    | PublicDealStartedMsg
    | PublicDealVoidedMsg
    | PublicDealCommittedMsg
    | PublicStation
    | PublicBank
    | PublicCommitment
)
