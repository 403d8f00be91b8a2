"""The messages of the technical judge's console (WebSocket) and the station actions, as pydantic models: what
the application layer (the stations, the service) sends and takes, without any web framework.

Response and message models allow extra keys where a device or the bank adds its own (documented as open objects in
the schema); request bodies refuse unknown fields (a typo is named, not ignored) and numbers refuse NaN and
infinities. ``dealer.web.models`` holds the routes' own bodies and answers over these bases.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

from dealer.app.jobs import JobState
from dealer.app.station_state import StationStatus
from dealer.core.events import FaultKind

DEVICE_MAX = 256  # a device id ("serial:/dev/ttyUSB0", "tcp:host:port", "usb:…") (docs/service.md, "Limits")


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Reply(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- the technical judge --------------------------------------------------------------------------------------
class StationAction(StrEnum):
    CONNECT = "connect"
    DISCONNECT = "disconnect"
    START = "start"
    RESUME = "resume"
    PAUSE = "pause"
    STOP = "stop"
    REDEAL = "redeal"
    SHOW = "show"
    HIDE = "hide"
    INJECT = "inject"
    RESET = "reset"
    RETRY_BANK = "retry_bank"  # a deal waiting for the bank: try its ledger write now
    VOID_PENDING = "void_pending"  # a deal waiting for the bank: void it (a ledger entry, reason bank_unavailable)


class JudgeAction(Request):
    """Arguments of a station action: ``device`` for connect, ``kind`` for inject (a simulator's fault)."""

    device: Annotated[str, StringConstraints(min_length=1, max_length=DEVICE_MAX)] = "simulator"
    kind: FaultKind = FaultKind.JAM
    confirm: bool = False  # connect, disconnect or reset during a deal voids it (reason operator): asked first


class DeviceEntry(BaseModel):
    id: str
    kind: str
    description: str


class Health(BaseModel):
    cards_read: int
    deals: int
    accepted: int
    errors: int
    faults: dict[str, int]
    error_rate: float
    norm: float
    warning: bool


class Guidance(Reply):
    """A fault or a voided deal as the judge sees it: a catalogue key and its parameters."""

    time: float
    key: str
    params: dict[str, JsonValue]


class ShownCard(BaseModel):
    position: int
    seat: str
    card: int


class StationView(Reply):
    type: Literal["station"] = "station"
    station: str
    status: StationStatus
    running: bool
    variant: int
    open_count: int
    device: dict[str, JsonValue] | None
    device_status: dict[str, JsonValue] | None
    can_inject: bool
    attempt: int
    cards_dealt: int
    committed: int
    last_bank_deal: int | None
    target: int
    show_cards: bool
    faults: list[Guidance]
    voided: list[Guidance]
    health: Health
    in_deal: bool = False  # a deal is in progress: connect, disconnect and reset ask before voiding it
    closed: bool = False  # variant 1: deals go into boards, never into the bank
    boards_made: int | None = None
    pace: float | None = None  # seconds per accepted deal, measured (the console's ETA)
    pending: list[dict[str, JsonValue]] = Field(default_factory=list)  # ledger writes waiting for the bank


class StationViewShown(StationView):
    """A station's state while the judge sees the cards: the deal in progress too."""

    current: list[ShownCard]


class BankFigures(Reply):
    formed: int
    target: int
    ledger_head: str


class RelayPublisherState(BaseModel):
    """The hall's publisher to the relays (``[relay] nats``): whether NATS takes the messages now, how many wait
    for it, and how many were dropped past the queue's bound (the relays' viewers then miss those)."""

    connected: bool
    published: int
    pending: int
    dropped: int


class BankCopyState(BaseModel):
    """The bank's second copy (``[bank] copy``): where, the ledger (size, head) it holds, whether that is the
    bank's own at the last check, when it was made, and the last failure (a missing stick, a full disk).
    Sent to the judge's consoles whenever it changes (``same`` false: the copy is behind the bank)."""

    type: Literal["bank_copy"] = "bank_copy"
    path: str
    size: int
    head: str
    same: bool
    at: str | None = None
    error: str | None = None


class JudgeState(BaseModel):
    type: Literal["state"] = "state"
    stations: list[StationViewShown | StationView]
    bank: BankFigures
    relays: RelayPublisherState | None = None  # None: the hall publishes to no relays
    bank_copy: BankCopyState | None = None  # None: no [bank] copy configured


# -- operator messages (judge's WebSocket; never to the audience) ---------------------------------------------
class OperatorCard(BaseModel):
    """A card dealt, blind: its place only (the judge has not asked to see cards)."""

    type: Literal["card"] = "card"
    station: str
    attempt: int
    position: int
    seat: str
    open: bool


class OperatorCardShown(OperatorCard):
    """A card dealt, with the card itself (the judge has asked to see cards; recorded in the ledger)."""

    card: int


class OperatorFault(BaseModel):
    type: Literal["fault"] = "fault"
    time: float
    station: str
    key: str
    params: dict[str, JsonValue]
    kind: str


class OperatorCommitted(BaseModel):
    type: Literal["committed"] = "committed"
    station: str
    bank_deal: int
    formed: int
    ledger_head: str | None = None
    # the second copy ([bank] copy) checked to hold this deal before anyone was told; False: the copy is behind
    # (see bank_copy), the deal is in the laptop's bank only; None: no second copy configured
    copied: bool | None = None


class OperatorBoard(BaseModel):
    """Variant 1: a board was dealt face down into its pockets (its number only)."""

    type: Literal["board"] = "board"
    station: str
    board: int
    boards: int


class Heartbeat(BaseModel):
    type: Literal["heartbeat"] = "heartbeat"
    station: str
    device_status: dict[str, JsonValue]


class Devices(BaseModel):
    type: Literal["devices"] = "devices"
    devices: list[DeviceEntry]


class CommandOk(BaseModel):
    type: Literal["ok"] = "ok"
    cmd: str
    id: int | str | None = None


class CommandError(BaseModel):
    type: Literal["error"] = "error"
    message: str
    cmd: str | None = None
    id: int | str | None = None


# -- jobs (board making, hand records) ------------------------------------------------------------------------
class Foul(BaseModel):
    """A foul copy. The judge's console without Show cards gets board, copy, attempt, kind, pocket and position
    only (``card``, ``expected`` and ``reason`` name the card)."""

    board: int
    copy_: int = Field(alias="copy")
    attempt: int
    kind: str | None = None
    pocket: str | None = None
    position: int | None = None

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class FoulShown(Foul):
    """A foul copy with the card, the pocket it belongs in and the reason: the director's view, and the judge's
    once Show cards is on for board making (ledgered first)."""

    reason: str | None = None
    card: str | None = None
    expected: str | None = None


class BoardsView(BaseModel):
    type: Literal["boards"] = "boards"
    label: str
    state: JobState
    boards: int
    copies_total: int
    copies_done: int
    current: str
    made: list[tuple[int, int]]
    skipped: list[tuple[int, int]]
    fouls: list[FoulShown | Foul]
    error: str | None


class OperatorBank(BaseModel):
    """The bank's figures and the ledger's anchor (size, head), as the hall display shows them."""

    type: Literal["bank"] = "bank"
    formed: int
    target: int
    ledger_head: str
    ledger_size: int = 0


OperatorMessage = (
    OperatorBank
    | StationView
    | StationViewShown
    | JudgeState
    | OperatorCard
    | OperatorCardShown
    | OperatorFault
    | OperatorCommitted
    | OperatorBoard
    | BankCopyState
    | Heartbeat
    | Devices
    | CommandOk
    | CommandError
    | BoardsView
)
