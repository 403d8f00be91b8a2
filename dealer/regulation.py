"""The competition's regulation: how deals are made and how many of the bank are played.

Loaded from TOML (``config/regulation.toml`` by default). Every bad value is refused with the key, the
value and the allowed range; unknown keys are refused, never ignored.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING

from .core.errors import DealerError, Phrase

if TYPE_CHECKING:  # the TOML reader, dates and decimals load when a regulation is read: the command line's help
    # (``dealer serve --help`` names the rehearsal's target) goes without them
    from datetime import date

OPEN_CARDS_RANGE = (28, 40)
SHARE_RANGE = (1.0, 10.0)
BOARDS_RANGE = (1, 200)
COPIES_RANGE = (1, 50)
BANK_TARGET_RANGE = (1, 10_000_000)
SESSIONS_RANGE = (1, 100)
SPARE_RANGE = (0, 10_000)


class DealingVariant(IntEnum):
    """Law 6: 1 closed, 2 partially open, 3 fully open."""

    CLOSED = 1
    PARTIALLY_OPEN = 2
    FULLY_OPEN = 3


class RegulationError(DealerError, ValueError):
    PREFIX = "{source}: "  # put before every template (the catalogue's keys include it)

    def __init__(self, template: str, source: str = "regulation", /, **params: object) -> None:
        self.source = source
        super().__init__(self.PREFIX + template, source=source, **params)


@dataclass(frozen=True, slots=True)
class Regulation:
    variant: DealingVariant
    open_cards: int | None
    share_percent: float
    deals_per_session: int
    boards_per_session: int
    copies: int
    bank_target: int
    title: str = ""
    sessions: int = 1  # the schedule: sessions of ``deals_per_session`` boards each …
    spare_deals: int = 0  # … plus spare deals for replacement boards
    share_bp: int = 500  # the share in hundredths of a percent (the exact figure the quota uses)
    chief_judge: str = ""  # [officials]: names printed under the signature lines of the documents
    technical_judge: str = ""
    secretary: str = ""
    venue: str = ""  # where the competition is held, printed on every document
    starts: date | None = None  # the competition's first and last day, printed on every document
    ends: date | None = None

    @property
    def total_deals(self) -> int:
        """Every deal the schedule may draw from the bank: sessions × boards + spare."""
        return self.sessions * self.deals_per_session + self.spare_deals

    def plan_text(self) -> str:
        return str(self.plan_phrase())

    def seal_warning(self, last_deal: int) -> Phrase | None:
        """The warning of a seal of ``last_deal`` deals below the bank target (a draw from it needs the director's
        override), else None: what the director's console and ``dealer bank seal`` both say."""
        if last_deal >= self.bank_target:
            return None
        return Phrase(
            "sealed {n} deals, below the regulation's target of {target} ({plan}): a draw from this bank "
            "needs the director's override",
            n=last_deal,
            target=self.bank_target,
            plan=self.plan_phrase(),
        )

    def plan_phrase(self) -> Phrase:
        """The schedule against the bank, as a phrase the catalogues translate (variant 1: its boards, no bank)."""
        if not self.banked:
            return Phrase(
                "{sessions} sessions × {boards} boards, dealt closed",
                sessions=self.sessions,
                boards=self.boards_per_session,
            )
        whole, frac = divmod(self.share_bp, 100)
        pct = str(whole) if not frac else f"{whole}.{frac:02d}".rstrip("0")
        return Phrase(
            "{sessions} sessions × {boards} boards + {spare} spare = {total} deals at {percent}% of the bank",
            sessions=self.sessions,
            boards=self.deals_per_session,
            spare=self.spare_deals,
            total=self.total_deals,
            percent=pct,
        )

    def open_count(self) -> int:
        """How many of the 52 cards of a deal are shown publicly."""
        if self.variant is DealingVariant.CLOSED:
            return 0
        if self.variant is DealingVariant.FULLY_OPEN:
            return 52
        assert self.open_cards is not None
        return self.open_cards

    def is_open(self, position: int) -> bool:
        """Whether the card dealt at 0-based ``position`` of a deal is shown."""
        return position < self.open_count()

    @property
    def banked(self) -> bool:
        """Variants 2 and 3 make deals for the bank."""
        return self.variant is not DealingVariant.CLOSED


_SCHEMA: dict[str, set[str]] = {
    "": {"title", "venue", "starts", "ends"},
    "dealing": {"variant", "open_cards"},
    "draw": {"share_percent", "deals"},
    "session": {"boards", "copies"},
    "bank": {"target"},
    "schedule": {"sessions", "spare"},
    "officials": {"chief_judge", "technical_judge", "secretary"},
}


def _int(value: object, key: str, lo: int, hi: int, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RegulationError(
            "{key} = {value!r} must be a whole number in {lo}..{hi}", source, key=key, value=value, lo=lo, hi=hi
        )
    if not lo <= value <= hi:
        raise RegulationError(
            "{key} = {value} is out of range: allowed {lo}..{hi}", source, key=key, value=value, lo=lo, hi=hi
        )
    return value


def _check_keys(data: Mapping[str, object], source: str) -> None:
    for key, value in data.items():
        if key in _SCHEMA and key:
            if not isinstance(value, dict):
                raise RegulationError("[{key}] must be a table, got {value!r}", source, key=key, value=value)
            unknown = sorted(set(value) - _SCHEMA[key])
            if unknown:
                allowed = ", ".join(sorted(_SCHEMA[key]))
                raise RegulationError(
                    "unknown key {key}.{unknown} (allowed in [{key}]: {allowed})",
                    source,
                    key=key,
                    unknown=unknown[0],
                    allowed=allowed,
                )
        elif key not in _SCHEMA[""]:
            allowed = ", ".join(sorted([*_SCHEMA[""], *(f"[{t}]" for t in _SCHEMA if t)]))
            raise RegulationError("unknown key {key!r} (allowed: {allowed})", source, key=key, allowed=allowed)


def _table(data: Mapping[str, object], key: str, source: str) -> dict[str, object]:
    value = data.get(key, {})
    if not isinstance(value, dict):  # _check_keys refused it already; this tells the type checker
        raise RegulationError("[{key}] must be a table, got {value!r}", source, key=key, value=value)
    return value


def regulation_from_dict(data: Mapping[str, object], source: str = "regulation") -> Regulation:
    from datetime import date, datetime
    from decimal import Decimal

    _check_keys(data, source)
    dealing, draw, session, bank, schedule, officials = (
        _table(data, key, source) for key in ("dealing", "draw", "session", "bank", "schedule", "officials")
    )

    if "variant" not in dealing:
        raise RegulationError("dealing.variant is required (1 closed, 2 partially open, 3 fully open)", source)
    variant = DealingVariant(_int(dealing["variant"], "dealing.variant", 1, 3, source))
    open_cards: int | None = None
    if variant is DealingVariant.PARTIALLY_OPEN:
        if "open_cards" not in dealing:
            lo, hi = OPEN_CARDS_RANGE
            raise RegulationError(
                "dealing.open_cards is required for variant 2 (allowed {lo}..{hi})", source, lo=lo, hi=hi
            )
        open_cards = _int(dealing["open_cards"], "dealing.open_cards", *OPEN_CARDS_RANGE, source)
    elif "open_cards" in dealing:
        raise RegulationError(
            "dealing.open_cards = {value!r} is only allowed with variant 2 (variant 1 shows no cards)"
            if variant is DealingVariant.CLOSED
            else "dealing.open_cards = {value!r} is only allowed with variant 2 (variant 3 shows all cards)",
            source,
            value=dealing["open_cards"],
        )

    boards = _int(session.get("boards", 24), "session.boards", *BOARDS_RANGE, source)
    copies = _int(session.get("copies", 2), "session.copies", *COPIES_RANGE, source)
    sessions = _int(schedule.get("sessions", 1), "schedule.sessions", *SESSIONS_RANGE, source)
    spare = _int(schedule.get("spare", 0), "schedule.spare", *SPARE_RANGE, source)
    target_given = "target" in bank
    target = _int(bank["target"], "bank.target", *BANK_TARGET_RANGE, source) if target_given else 0

    if "share_percent" in draw and "deals" in draw:
        raise RegulationError("give either draw.share_percent or draw.deals, not both", source)
    lo_s, hi_s = SHARE_RANGE
    drawn = variant is not DealingVariant.CLOSED  # variant 1 forms no bank and draws nothing: no share to check
    if "deals" in draw and drawn:
        deals = _int(draw["deals"], "draw.deals", 1, BANK_TARGET_RANGE[1], source)
        if not target_given:
            raise RegulationError("draw.deals needs bank.target to check its share of the bank", source)
        share = 100.0 * deals / target
        if not lo_s <= share <= hi_s:
            raise RegulationError(
                "draw.deals = {deals} is {share:.2f}% of bank.target = {target}: allowed {lo_s:g}%..{hi_s:g}%",
                source,
                deals=deals,
                share=share,
                target=target,
                lo_s=lo_s,
                hi_s=hi_s,
            )
        total = sessions * deals + spare
        share_bp = max(-(-total * 10000 // target), 100)  # the whole schedule's share of the bank, rounded up
        if share_bp > 1000:
            raise RegulationError(
                "the schedule's {total} deals ({sessions} sessions × {deals} + {spare} spare) are {share:g}% of "
                "bank.target = {target}: allowed {lo_s:g}%..{hi_s:g}%",
                source,
                total=total,
                sessions=sessions,
                deals=deals,
                spare=spare,
                share=share_bp / 100,
                target=target,
                lo_s=lo_s,
                hi_s=hi_s,
            )
    else:
        raw = draw.get("share_percent", 5)
        if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
            raise RegulationError(
                "draw.share_percent = {raw!r} must be a number in {lo_s:g}..{hi_s:g}",
                source,
                raw=raw,
                lo_s=lo_s,
                hi_s=hi_s,
            )
        share = float(raw)
        if not lo_s <= share <= hi_s:
            raise RegulationError(
                "draw.share_percent = {raw} is out of range: allowed {lo_s:g}..{hi_s:g}",
                source,
                raw=raw,
                lo_s=lo_s,
                hi_s=hi_s,
            )
        exact = Decimal(str(raw)) * 100
        if exact != exact.to_integral_value():
            raise RegulationError("draw.share_percent = {raw} has more than two decimals", source, raw=raw)
        share_bp = int(exact)
        deals = boards
        total = sessions * deals + spare
        if target_given and drawn:
            allowed = target * share_bp // 10000
            if allowed < total:
                raise RegulationError(
                    "bank.target = {target} at {share:g}% gives {allowed} deals, fewer than the schedule's {total} "
                    "({sessions} sessions × {deals} boards + {spare} spare)",
                    source,
                    target=target,
                    share=share,
                    allowed=allowed,
                    total=total,
                    sessions=sessions,
                    deals=deals,
                    spare=spare,
                )
        else:
            target = -(-total * 10000 // share_bp)  # ceil(total × 100 / p)
    if deals < boards:
        raise RegulationError(
            "draw.deals = {deals} is fewer than session.boards = {boards}", source, deals=deals, boards=boards
        )

    title = data.get("title", "")
    if not isinstance(title, str):
        raise RegulationError("title = {title!r} must be a string", source, title=title)
    venue = data.get("venue", "")
    if not isinstance(venue, str) or not venue.isprintable():
        raise RegulationError("venue = {venue!r} must be a place (printable text)", source, venue=venue)
    days: dict[str, date | None] = {}
    for key in ("starts", "ends"):
        value = data.get(key)
        if value is not None and (isinstance(value, datetime) or not isinstance(value, date)):
            raise RegulationError(
                "{key} = {value!r} must be a date written as 2026-12-01 (no quotes)", source, key=key, value=value
            )
        days[key] = value
    starts, ends = days["starts"], days["ends"]
    if starts is not None and ends is not None and ends < starts:
        raise RegulationError("ends = {ends} is before starts = {starts}", source, ends=ends, starts=starts)
    if ends is not None and starts is None:
        starts = ends
    names: dict[str, str] = {}
    for key, name in officials.items():
        if not isinstance(name, str) or not name.isprintable():
            raise RegulationError(
                "officials.{key} = {name!r} must be a name (printable text)", source, key=key, name=name
            )
        names[key] = name.strip()
    return Regulation(
        variant=variant,
        open_cards=open_cards,
        share_percent=share,
        deals_per_session=deals,
        boards_per_session=boards,
        copies=copies,
        bank_target=target,
        title=title,
        sessions=sessions,
        spare_deals=spare,
        share_bp=share_bp,
        chief_judge=names.get("chief_judge", ""),
        technical_judge=names.get("technical_judge", ""),
        secretary=names.get("secretary", ""),
        venue=venue.strip(),
        starts=starts,
        ends=ends or starts,
    )


def parse_regulation(text: str, source: str = "regulation") -> Regulation:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegulationError("not valid TOML: {exc}", source, exc=exc) from exc
    return regulation_from_dict(data, source)


def default_regulation_text() -> str:
    # the package's own file, read without importlib.resources (8 ms of the command line's start)
    return (Path(__file__).parent / "config" / "regulation.toml").read_text(encoding="utf-8")


def load_regulation(path: str | Path | None = None) -> Regulation:
    """Load a regulation file, or the embedded default when ``path`` is None."""
    if path is None:
        return parse_regulation(default_regulation_text(), "config/regulation.toml")
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RegulationError("cannot read: {strerror}", str(p), strerror=exc.strerror) from exc
    except UnicodeDecodeError as exc:
        raise RegulationError("not UTF-8 text at byte {start}", str(p), start=exc.start) from exc
    return parse_regulation(text, str(p))


REHEARSAL_TARGET = 12  # deals (variants 2 and 3) or boards (variant 1) of a rehearsal


def rehearsal_regulation(reg: Regulation, target: int = REHEARSAL_TARGET) -> Regulation:
    """The regulation of a rehearsal: a bank of ``target`` deals from which one session of one board can really
    be drawn (10% of 12 deals is a quota of 1), so the whole day (seal, draw, reveal, boards) can be tried."""
    return dataclasses.replace(
        reg,
        bank_target=target,
        boards_per_session=min(reg.boards_per_session, target),
        deals_per_session=1,
        sessions=1,
        spare_deals=0,
        share_percent=10.0,
        share_bp=1000,
    )
