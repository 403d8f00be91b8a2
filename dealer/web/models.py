"""Typed edges of the web service: every request body, every response and every message, as pydantic models.

Bodies are validated by FastAPI itself, so a bad field is answered 422 with the field's place (``loc``), never a
500. Each text field has a length limit and each number a range (``docs/service.md``, "Limits"); numbers refuse
NaN and infinities. Request bodies refuse unknown fields (a typo is named, not ignored). Response and message
models allow extra keys where a device or the bank adds its own (documented as open objects in the schema).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from fastapi import Path
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, JsonValue, StringConstraints

from dealer.app.jobs import JobState
from dealer.app.station_state import StationStatus
from dealer.core.errors import DealerError
from dealer.core.events import FaultKind

# -- limits (docs/service.md, "Limits") -------------------------------------------------------------------------
LABEL_MAX = 64  # a draw's session label
NAME_MAX = 64  # a station name, a witness's name
FILE_NAME_MAX = 128  # a file name asked for download
TEXT_MAX = 200  # titles, event names, a named public value's description
DEVICE_MAX = 256  # a device id ("serial:/dev/ttyUSB0", "tcp:host:port", "usb:…")
FAULT_PLAN_MAX = 256  # a simulator's fault plan
LIST_MAX = 20  # witnesses, dice groups, formats
DICE_MAX = 16  # one witness's digits
MAX_BOARDS_FIRST = 9999
MAX_COPIES = 50


class FieldValueError(DealerError, ValueError):
    """A field's value a validator refuses: pydantic reports it as a value_error, and the 422 answer says it in the
    request's language through the core catalogue (dealer.serving.limits)."""


def _printable(value: str) -> str:
    if not value.isprintable():
        raise FieldValueError("must be printable text (no control characters)")
    return value


Label = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=LABEL_MAX), AfterValidator(_printable)
]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_MAX)]
Text = Annotated[str, StringConstraints(max_length=TEXT_MAX)]
Dice = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=DICE_MAX)]


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


CONSOLE_COMMANDS = ("devices", "state")


def _command(value: str) -> str:
    if value not in CONSOLE_COMMANDS and value not in StationAction.__members__.values():
        allowed = ", ".join([*CONSOLE_COMMANDS, *StationAction])
        raise FieldValueError("unknown action {value!r} (allowed: {allowed})", value=value, allowed=allowed)
    return value


class JudgeCommand(JudgeAction):
    """One command on the judge's WebSocket: a station action, or ``devices`` / ``state``."""

    cmd: Annotated[str, StringConstraints(max_length=32), AfterValidator(_command)]
    station: Annotated[str, StringConstraints(max_length=NAME_MAX)] | None = None
    id: int | Annotated[str, StringConstraints(max_length=NAME_MAX)] | None = None


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


class BoardCards(Request):
    """Show (or hide) the cards of board making on the judge's console; showing is ledgered first."""

    show: bool


class BoardCardsShown(BaseModel):
    show: bool


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


class SeatView(BaseModel):
    open: list[int]
    hidden: int


class StationSnapshot(Reply):
    station: str
    variant: int
    open_count: int
    status: str
    attempt: int
    phase: str
    reason: str | None
    bank_deal: int | None
    hands: dict[str, SeatView]


class CommitmentView(Reply):
    label: str
    commitment: str
    deals: int


class PublicSnapshot(BaseModel):
    type: Literal["snapshot"] = "snapshot"
    stations: list[StationSnapshot]
    bank: BankFigures
    commitment: CommitmentView | None


def _comma_list(value: object) -> object:
    """``"Ann, Boris"`` as ``["Ann", "Boris"]`` (the console's one text field); anything else as it is."""
    if isinstance(value, str):
        return [w.strip() for w in value.split(",") if w.strip()]
    return value


# -- the director ------------------------------------------------------------------------------------------------
class PrepareDraw(Request):
    """Commit to a draw; its size comes from the regulation's schedule. With ``witnesses`` the public value V is
    their dice (``rolls`` each of a ``faces``-sided die); otherwise ``named`` describes a public number: ``numbers``
    numbers in ``min``..``max`` (``width`` digits, ``as_drawn`` order, ``repeats`` allowed, ``separator``)."""

    label: Label
    witnesses: Annotated[list[Name], BeforeValidator(_comma_list), Field(max_length=LIST_MAX)] | None = None
    rolls: Annotated[int, Field(ge=1, le=100)] = 8
    faces: Annotated[int, Field(ge=2, le=100)] = 6
    named: Text | None = None
    numbers: Annotated[int, Field(ge=0, le=100)] = 0
    min: Annotated[int, Field(ge=0, le=10**18)] = 1
    max: Annotated[int, Field(ge=0, le=10**18)] = 0
    width: Annotated[int, Field(ge=1, le=20)] | None = None
    as_drawn: bool = False
    repeats: bool = False
    separator: Annotated[str, StringConstraints(max_length=8)] = "-"
    replacement: bool = False
    override: Text | None = None


class PublicValue(Request):
    """The public value of a draw: the witnesses' dice digits, or the typed value (``public_value``, or
    ``named``); ``check`` shows the canonical form back without storing it."""

    dice: Annotated[list[Dice], Field(max_length=LIST_MAX)] | None = None
    named: Text | None = None
    public_value: Text | None = None
    check: bool = False


class RunDraw(Request):
    """Run a draw, entering its public value first when given (``public_value``: every witness's digits in order
    for a dice draw, the value itself for a named one)."""

    dice: Annotated[list[Dice], Field(max_length=LIST_MAX)] | None = None
    public_value: Text | None = None


class VoidDraw(Request):
    """Abandon a prepared draw publicly, with the reason (ledgered with K)."""

    reason: Text = ""


class CustodyPassphrase(Request):
    """The chief judge's custody passphrase (docs/custody.md): to unlock the key, or to set up the custody."""

    passphrase: Annotated[str, StringConstraints(min_length=1, max_length=1024)]


class HallCleared(BaseModel):
    cleared: bool


class CustodyView(BaseModel):
    state: str  # none | locked | unlocked (for this browser) | elsewhere (for another browser)
    public_key: str | None = None
    idle_lock_minutes: int


class Voided(BaseModel):
    label: str
    reason: str


class HallView(Reply):
    """A draw as the hall is shown it: its hash, the witnesses and the format of V; V once entered; K and the
    drawn ids only once revealed (``secret``, ``drawn``), the reason once voided."""

    label: str
    commitment: str
    head: str | None = None  # SIZE:HASH of the ledger once the commitment was in it
    deals: int
    kind: str
    previous: JsonValue = None
    drawn_before: int | None = None
    public_value: str | None = None
    public_value_spec: dict[str, JsonValue] | None = None
    witnesses: list[str] = []
    format: str | None = None
    bits: float | None = None
    value: str | None = None
    state: str
    secret: str | None = None
    drawn: list[int] | None = None
    reason: str | None = None


class SealView(Reply):
    index: int
    last_deal: int
    root: str
    size: int
    ts: str
    time: str | None = None
    warning: str | None = None  # sealed below the regulation's target


class DrawnDealView(BaseModel):
    """A drawn deal as the session's board: number, Law 2 dealer and vulnerability."""

    board: int
    dealer: str
    vulnerability: str
    deal_id: int
    position: int
    pbn: str
    hands: dict[str, list[int]]


class DrawView(Reply):
    label: str
    state: str
    kind: str = "session"
    n: int
    deals: int
    eligible: int
    commitment: str
    published: bool = False
    public_value: str | None
    drawn: list[DrawnDealView] | None = None


class DirectorStatus(Reply):
    bank: str
    deals: int
    in_bank: int
    drawn: int
    played: int
    sealed_deals: int
    unsealed_deals: int
    eligible: int
    ledger_size: int
    ledger_head: str
    seals: list[SealView]
    draws: list[DrawView]
    target: int
    plan: dict[str, JsonValue]
    draw_available: bool
    variant: int = 2
    closed: dict[str, JsonValue] | None = None  # variant 1: the boards dealt closed (label, made, total, boards)


class Prepared(BaseModel):
    commitment: dict[str, JsonValue]
    signature: JsonValue


class ValueEntered(BaseModel):
    label: str
    public_value: str
    stored: bool


class Drawn(BaseModel):
    label: str
    drawn: list[DrawnDealView]


class Revealed(Reply):
    label: str
    drawn: list[int]
    secret: str


# -- the director's export -------------------------------------------------------------------------------------
def _known_format(name: str) -> str:
    from dealer.formats import by_name, load_all

    load_all()
    try:
        return by_name(name).name
    except DealerError as exc:
        raise FieldValueError("{reason}", reason=exc) from None  # the format's own words, translated


FormatName = Annotated[str, StringConstraints(min_length=1, max_length=32), AfterValidator(_known_format)]
First = Annotated[int, Field(ge=1, le=MAX_BOARDS_FIRST)]
Copies = Annotated[int, Field(ge=1, le=MAX_COPIES)]


class WriteFiles(Request):
    formats: Annotated[list[FormatName], Field(min_length=1, max_length=LIST_MAX)] = ["pbn", "dlm"]
    first: First = 1
    copies: Copies | None = None
    event: Text | None = None
    sealed: bool = True


class FilesWritten(BaseModel):
    label: str
    boards: int
    files: list[str]


class MakeBoards(Request):
    """Make a session's boards on a machine: ``device`` is ``simulator`` or a device URL."""

    device: Annotated[str, StringConstraints(min_length=1, max_length=DEVICE_MAX)] = "simulator"
    pace: Annotated[float, Field(ge=0, le=60)] = 0.5
    copy_timeout: Annotated[float, Field(gt=0, le=3600)] | None = None
    faults: Annotated[str, StringConstraints(max_length=FAULT_PLAN_MAX)] = ""
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None
    max_attempts: Annotated[int, Field(ge=1, le=20)] = 3
    first: First = 1
    copies: Copies | None = None


HandRecordKind = Literal["html", "pdf", "pbn"]  # dealer.handrecords.publish.OUTPUTS


class HandRecords(Request):
    formats: Annotated[list[HandRecordKind], Field(min_length=1, max_length=LIST_MAX)] | None = None
    lang: Literal["en", "ru"] | None = None
    first: First = 1
    title: Text | None = None
    subtitle: Text = ""


class ErrorDetail(BaseModel):
    detail: str


# -- path parameters ---------------------------------------------------------------------------------------------
LabelParam = Annotated[str, Path(min_length=1, max_length=LABEL_MAX, description="a draw's session label")]
StationParam = Annotated[str, Path(min_length=1, max_length=NAME_MAX, description="a station's name")]
FileParam = Annotated[str, Path(min_length=1, max_length=FILE_NAME_MAX, description="a file of the session")]
LangParam = Annotated[str, Path(min_length=1, max_length=8)]


# -- documents (the judge's equipment checks; the acts and protocols the officials sign) -----------------------------
NOTE_MAX = 500
Witnesses = Annotated[list[Name], BeforeValidator(_comma_list), Field(max_length=LIST_MAX)]
Lang = Literal["ru", "en"]


IsoDate = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")]


def _empty_as_none(value: object) -> object:
    """An empty form field is no value at all."""
    return None if value == "" else value


class RecordCheck(Request):
    """One equipment check by the technical judge; the device's figures are filled in by the service."""

    station: Name
    session: Label
    phase: Annotated[str, StringConstraints(min_length=1, max_length=32)]
    outcome: Annotated[str, StringConstraints(min_length=1, max_length=32)]
    note: Annotated[str, StringConstraints(max_length=NOTE_MAX)] = ""


class CheckRecorded(Reply):
    ledger_index: int


class EquipmentOverride(Request):
    """The chief judge lets a station start without its "before" equipment check, with the reason recorded."""

    station: Name
    reason: Annotated[str, StringConstraints(min_length=1, max_length=NOTE_MAX)]


class OverrideRecorded(Reply):
    ledger_index: int
    station: str
    reason: str


class EquipmentDocument(Request):
    session: Label
    witnesses: Witnesses = Field(default_factory=list)
    lang: Lang | None = None


class DirectorDocument(Request):
    """What a chief judge's document needs: ``label`` for a draw's protocol, its annex and the board-making act,
    ``date`` for the day's record, ``audit`` for the bank formation act."""

    label: Label | None = None
    witnesses: Witnesses = Field(default_factory=list)
    lang: Lang | None = None
    audit: bool = True
    date: Annotated[IsoDate | None, BeforeValidator(_empty_as_none)] = None


class IssuedDocument(Reply):
    number: int
    kind: str
    title: str
    file: str
    sha256: str
    ledger_index: int
    url: str
