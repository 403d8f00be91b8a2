"""Typed edges of the web service: every request body, every response and every message, as pydantic models.

Bodies are validated by FastAPI itself, so a bad field is answered 422 with the field's place (``loc``), never a
500. Each text field has a length limit and each number a range (``docs/service.md``, "Limits"); numbers refuse
NaN and infinities. Request bodies refuse unknown fields (a typo is named, not ignored). Response and message
models allow extra keys where a device or the bank adds its own (documented as open objects in the schema).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Path
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, JsonValue, StringConstraints

from dealer.app.director_console import DrawnBoard
from dealer.app.operator_messages import DEVICE_MAX, BankFigures, JudgeAction, Reply, Request, StationAction
from dealer.core.errors import DealerError

# -- limits (docs/service.md, "Limits") -------------------------------------------------------------------------
LABEL_MAX = 64  # a draw's session label
NAME_MAX = 64  # a station name, a witness's name
FILE_NAME_MAX = 128  # a file name asked for download
TEXT_MAX = 200  # titles, event names, a named public value's description
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


class BoardCards(Request):
    """Show (or hide) the cards of board making on the judge's console; showing is ledgered first."""

    show: bool


class BoardCardsShown(BaseModel):
    show: bool


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
    witnesses: list[str] = Field(default=[])  # pydantic copies a default per instance
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
    drawn: list[DrawnBoard] | None = None


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
    drawn: list[DrawnBoard]


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
    formats: Annotated[list[FormatName], Field(min_length=1, max_length=LIST_MAX)] = Field(default=["pbn", "dlm"])
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
