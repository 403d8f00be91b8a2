"""The four documents of a tournament day, built from the bank's ledger and the regulation (no I/O here):

- ``bank_act``: Акт формирования банка сдач — regulation, period, deals, stations and devices, voids by
  reason, imports by source, seals with their roots, the fairness audit's verdict;
- ``draw_protocol``: Протокол жеребьёвки — session, commitment hash, witnesses, public value, bank and quota
  figures (never the drawn deals); ``draw_annex``: its sealed annex with the drawn deals as boards, refused
  before the reveal;
- ``boards_act``: Акт изготовления комплектов — boards and copies made, the machine, foul copies and re-makes;
- ``equipment_act``: Акт проверки оборудования — the technical judge's checks before, during and after play.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from importlib import resources
from typing import Protocol

from dealer.bank.errors import BankError
from dealer.bank.store import DrawRecord, Seal, StoredDeal
from dealer.core import Seat, Vulnerability, board_dealer, board_vulnerability
from dealer.core.cards import Card
from dealer.core.diagram import RANK_DISPLAY, SUIT_DISPLAY, seat_hand_line
from dealer.core.errors import DealerError, Phrase
from dealer.core.json_types import JsonObject
from dealer.draw.protocol import commitment_hash
from dealer.export.boards import number_deals
from dealer.i18n import Messages, check_language, format_dates
from dealer.integrity.ledger import Entry, EntryKind, entry_hash
from dealer.regulation import Regulation

from .model import Block, Document, Fields, Signature, Table, Text

DOCUMENT_ENTRY = "document"  # ledger kind of an issued document
CHECK_ENTRY = "equipment-check"  # ledger kind of one equipment check by the technical judge
CLOSED_BOARD_ENTRY = "closed-board"  # ledger kind of one board dealt closed (variant 1)
OVERRIDE_ENTRY = "equipment-override"  # ledger kind of the chief judge's leave to start without the "before" check
KINDS = ("bank", "draw", "draw-annex", "boards", "equipment", "closed")
PHASES = ("before", "during", "after")
OUTCOMES = ("ok", "faulty")


class DocumentError(DealerError, ValueError):
    """A document cannot be issued (not revealed yet, nothing recorded, …), saying why."""


DRAW_STATES = {
    "committed": Phrase("commitment published"),
    "public-value": Phrase("public value entered"),
    "drawn": Phrase("drawn"),
    "revealed": Phrase("revealed"),
    "void": Phrase("void"),
}


def not_revealed(label: str, state: str) -> DocumentError:
    return DocumentError(
        "The annex is printed only after draw '{label}' is revealed (now: {state}).",
        label=label,
        state=DRAW_STATES.get(state, state),
    )


def no_checks(session: str) -> DocumentError:
    return DocumentError("No equipment check is recorded for session '{label}'", label=session)


class LedgerReader(Protocol):
    bank_id: str

    def entries_of_kind(self, kind: str) -> list[Entry]: ...
    def entry(self, index: int) -> Entry: ...
    def seals(self) -> list[Seal]: ...
    def deal_count(self) -> int: ...
    def ledger_head(self) -> str: ...
    def ledger_size(self) -> int: ...
    def get_draw(self, label: str) -> DrawRecord: ...
    def get_deals(self, deal_ids: Sequence[int]) -> list[StoredDeal]: ...


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    passed: bool
    text: str  # the audit's own verdict in the document's language
    deals: int


@dataclass(frozen=True, slots=True)
class Context:
    """What every document carries: language, regulation (tournament, officials), number and issue time."""

    lang: str
    regulation: Regulation
    number: int
    issued: datetime
    witnesses: tuple[str, ...] = ()


@cache
def _catalogue(lang: str) -> JsonObject:
    def read(path: str) -> JsonObject:
        data: JsonObject = json.loads(resources.files("dealer").joinpath(path).read_text(encoding="utf-8"))
        return data

    # the pages' catalogue is read as a file, not through dealer.web: the documents sit below the web service
    merged: JsonObject = {**read(f"web/i18n/{lang}.json"), **read(f"documents/i18n/{lang}.json")}
    return merged


def messages(lang: str) -> Messages:
    """The documents' words (their own catalogue over the pages' one: fault and void reasons come from there)."""
    return Messages(check_language(lang), _catalogue(lang))


# -- common parts ----------------------------------------------------------------------------------------------
def _officials(ctx: Context, m: Messages, roles: Sequence[str]) -> list[Signature]:
    reg = ctx.regulation
    names = {"chief_judge": reg.chief_judge, "technical_judge": reg.technical_judge, "secretary": reg.secretary}
    return [Signature(m(f"role.{r}"), names[r]) for r in roles]


def _witnesses(names: Sequence[str], m: Messages) -> list[Signature]:
    return [Signature(m("role.witness"), w) for w in dict.fromkeys(n.strip() for n in names if n.strip())]


def _document(
    kind: str, ctx: Context, m: Messages, blocks: Sequence[Block], signatures: Sequence[Signature]
) -> Document:
    return Document(
        kind=kind,
        lang=ctx.lang,
        title=m(f"{kind.split('-')[0]}.title") if kind != "draw-annex" else m("annex.title"),
        number=ctx.number,
        number_label=m("doc.number", n=ctx.number),
        issued=ctx.issued.isoformat(timespec="seconds"),
        issued_text=m.when(ctx.issued),
        tournament=ctx.regulation.title or m("doc.tournament_unnamed"),
        blocks=tuple(blocks),
        signatures=tuple(signatures),
        event=event_line(ctx.regulation, ctx.lang),
        labels={
            "page": m("doc.page"),
            "signatures": m("doc.signatures"),
            "signature": m("doc.signature"),
            "name": m("doc.name_blank"),
            "hash_note": m("doc.hash_note"),
        },
    )


def event_line(reg: Regulation, lang: str) -> str:
    """The venue and the competition's dates as the regulation gives them (``Москва · 1–5 декабря 2026 г.``)."""
    parts = [reg.venue] if reg.venue else []
    if reg.starts is not None:
        parts.append(format_dates(reg.starts, reg.ends or reg.starts, lang))
    return " · ".join(parts)


def _regulation_fields(reg: Regulation, m: Messages) -> Fields:
    items = [(m("bank.variant"), m(f"variant.{int(reg.variant)}"))]
    if reg.banked:
        items.append((m("bank.open_cards"), m.plural("count.open_cards", reg.open_count())))
    items += [
        (m("bank.target"), m.plural("count.deals", reg.bank_target)),
        (m("bank.share"), m.percent(reg.share_percent)),
    ]
    return Fields(m("bank.regulation"), tuple(items))


def _reason(reason: str, m: Messages) -> str:
    """A void or fault reason in words (the pages' catalogue), or as recorded when it has none."""
    for key in (f"void.{reason}", f"fault.{reason}"):
        if key in m.entries:
            return m(key)
    return reason


def _kind(kind: object, m: Messages) -> str:
    """What went wrong with a foul copy, without naming a card (``wrong_pocket``, ``fault:jam``, …)."""
    text = str(kind or "")
    if not text:
        return m("doc.dash")
    return _reason(text.split(":", 1)[1] if text.startswith("fault:") else text, m)


def _revealed(bank: LedgerReader, label: str) -> bool:
    """Whether the session's draw is revealed (its deals may then be named); an unknown draw is not."""
    try:
        return bank.get_draw(label).state == "revealed"
    except BankError:  # no such draw (boards made from a file): nothing says its deals are public
        return False


def _card_text(card: object, m: Messages) -> str:
    """A card the board-making journal names (``♠A``, as the machine wrote it) in the act's language: ``♠Т``."""
    if not card:
        return m("doc.dash")
    try:
        parsed = Card.parse(str(card))
    except ValueError:
        return str(card)
    ranks = RANK_DISPLAY.get(m.lang, RANK_DISPLAY["en"])
    return f"{SUIT_DISPLAY['unicode'][parsed.suit]}{ranks[parsed.rank]}"


def _pocket(letter: object, m: Messages) -> str:
    """A pocket as the machine names it (N, E, S, W) in the document's letters (С, В, Ю, З)."""
    if isinstance(letter, str) and letter in ("N", "E", "S", "W"):
        return m.list("seat.letters")["NESW".index(letter)]
    return str(letter) if letter else m("doc.dash")


def _vul(v: Vulnerability, m: Messages) -> str:
    return m({"None": "vul.none", "NS": "vul.ns", "EW": "vul.ew", "All": "vul.all"}[v.value])


CARDS_SHOWN = "cards_shown"  # the ledger's record of «Показать карты» on the technical judge's console


def card_views(bank: LedgerReader, m: Messages, board_making: bool) -> Table | None:
    """Every «Показать карты» on the technical judge's console, recorded before a card was shown: during the bank's
    formation (a station's deals) or during board making (the boards' cards). People who saw deals are named on
    the act, never left to the ledger alone."""
    rows = []
    for e in bank.entries_of_kind(CARDS_SHOWN):
        making = e.data.get("what") == "board making"
        if making != board_making:
            continue
        what = m("views.boards") if making else m("views.station", station=e.data.get("station"),
                                                   attempt=e.data.get("attempt"))  # fmt: skip
        by = str(e.data.get("by"))
        rows.append((m.when(e.ts), what, m("role.technical_judge") if by == "judge" else by))
    if not rows:  # a line of the act's facts says so (a table's heading for «none» pushed the signatures over)
        return None
    return Table(
        m("views.title"),
        (m("bank.col.time"), m("views.col.what"), m("views.col.by")),
        tuple(rows),
        (2.2, 3.4, 2.4),
        m("doc.none"),
    )


# -- Акт формирования банка сдач --------------------------------------------------------------------------------
def devices_by_station(bank: LedgerReader) -> dict[str, JsonObject]:
    """The latest device each station reported in an equipment check (DEVICE_INFO: model, serial, firmware)."""
    out: dict[str, JsonObject] = {}
    for e in bank.entries_of_kind(CHECK_ENTRY):
        device = e.data.get("device")
        if isinstance(device, dict):
            out[str(e.data.get("station"))] = device
    return out


def bank_act(bank: LedgerReader, ctx: Context, audit: AuditVerdict | None) -> Document:
    m = messages(ctx.lang)
    deals = bank.entries_of_kind(EntryKind.DEAL)
    voids = bank.entries_of_kind(EntryKind.VOID)
    imports = bank.entries_of_kind(EntryKind.IMPORT)
    seals = bank.seals()
    by_station = Counter(str(e.data["src"].get("station")) for e in deals if e.data["src"].get("kind") != "import")
    dealt = sum(by_station.values())
    total = bank.deal_count()
    views = card_views(bank, m, board_making=False)
    period = m("doc.dash")
    if deals:
        period = m("doc.from_to", start=m.when(deals[0].ts), end=m.when(deals[-1].ts))
    formed = Fields(
        m("bank.formed"),
        (
            (m("bank.id"), bank.bank_id),
            (m("bank.period"), period),
            (m("bank.committed"), m.plural("count.deals", total)),
            (m("bank.dealt"), m.plural("count.deals", dealt)),
            (m("bank.imported"), m.plural("count.deals", total - dealt)),
            (m("bank.ledger"), m.plural("count.entries", bank.ledger_size())),
            # SIZE:HASH, as `dealer bank seal` prints it: issued right after the seal, `dealer draw verify --head`
            # checks a draw's bundle against it; at any moment `dealer bank verify --head` checks the ledger
            (m("bank.ledger_head"), f"{bank.ledger_size()}:{bank.ledger_head()}"),
            *([(m("views.title"), m("views.none_short"))] if views is None else []),
        ),
    )
    devices = devices_by_station(bank)
    station_rows = []
    for station in sorted(set(by_station) | set(devices)):
        dev = devices.get(station)
        station_rows.append(
            (
                station,
                str(by_station.get(station, 0)),
                str(dev.get("model", "")) if dev else m("bank.no_device"),
                str(dev.get("serial", "")) if dev else "",
                str(dev.get("firmware", "")) if dev else "",
            )
        )
    stations = Table(
        m("bank.stations"),
        (
            m("bank.col.station"),
            m("bank.col.deals"),
            m("bank.col.device"),
            m("bank.col.serial"),
            m("bank.col.firmware"),
        ),
        tuple(station_rows),
        (1.2, 1, 3, 2.2, 1.6),
        m("doc.none"),
    )
    reasons = Counter(str(e.data.get("reason")) for e in voids)
    void_rows = tuple((_reason(r, m), str(n)) for r, n in sorted(reasons.items()))
    void_table = Table(
        m("bank.voids"), (m("bank.col.reason"), m("bank.col.count")), void_rows, (5, 1), m("bank.no_voids")
    )
    # one row an import (its ledger entry: how many files, deals accepted, repeats), then one row a file: an import
    # of a hundred files is a hundred short rows that break across pages, never one cell taller than a page
    import_rows = tuple(
        (
            str(e.index),
            str(len(e.data.get("files", []))),
            str(e.data.get("imported", 0)),
            str(e.data.get("duplicates", 0)),
        )
        for e in imports
    )
    import_table = Table(
        m("bank.imports"),
        (m("bank.col.entry"), m("bank.col.files"), m("bank.col.imported"), m("bank.col.duplicates")),
        import_rows,
        (1, 1, 1, 1),
        m("bank.no_imports"),
    )
    file_rows = tuple(
        (str(e.index), str(f.get("file")), str(f.get("format")), str(f.get("records", "")), str(f.get("sha256")))
        for e in imports
        for f in e.data.get("files", [])
    )
    file_table = Table(
        m("bank.import_files"),
        (m("bank.col.entry"), m("bank.col.file"), m("bank.col.format"), m("bank.col.records"), m("bank.col.file_sha")),
        file_rows,
        (1, 3, 1.1, 1.1, 4.4),
        m("bank.no_imports"),
    )
    seal_table = Table(
        m("bank.seals"),
        (m("bank.col.seal"), m("bank.col.size"), m("bank.col.last_deal"), m("bank.col.root"), m("bank.col.time")),
        tuple((str(k), str(s.size), str(s.last_deal), s.root, m.when(s.ts)) for k, s in enumerate(seals, start=1)),
        (0.8, 0.9, 1.1, 5, 2.2),
        m("bank.no_seals"),
    )
    if audit is None:
        verdict = Text(m("bank.audit"), m("bank.audit_skipped"))
    else:
        head = m("bank.audit_passed") if audit.passed else m("bank.audit_failed")
        verdict = Text(m("bank.audit"), f"{head} ({m.plural('count.deals', audit.deals)}). {audit.text}")
    blocks: list[Block] = [
        _regulation_fields(ctx.regulation, m),
        formed,
        stations,
        void_table,
        *(
            [import_table, file_table] if import_rows else []
        ),  # none: «из них публичных сдач (импорт): 0 сдач» says so above
        seal_table,
        *([views] if views is not None else []),
        verdict,
    ]
    signatures = _officials(ctx, m, ("chief_judge", "technical_judge", "secretary")) + _witnesses(ctx.witnesses, m)
    return _document("bank", ctx, m, blocks, signatures)


# -- Протокол жеребьёвки и его приложение ---------------------------------------------------------------------
def _of_label(bank: LedgerReader, kind: str, label: str) -> Entry | None:
    found = [e for e in bank.entries_of_kind(kind) if e.data.get("label") == label]
    return found[-1] if found else None


def draw_protocol(bank: LedgerReader, ctx: Context, label: str) -> Document:
    m = messages(ctx.lang)
    rec = bank.get_draw(label)
    commit = bank.entry(rec.commit_index)
    doc = commit.data["commitment"]
    spec = doc["public_value"]
    n, eligible = int(doc["n"]), int(doc["eligible"]["count"])
    seal = doc["seal"]
    session = Fields(
        m("draw.commitment"),
        (
            (m("draw.session"), label),
            (m("draw.state"), m(f"draw.state.{rec.state}")),
            (m("draw.commitment_hash"), commitment_hash(doc)),
            # the anchor officials note: the ledger as it stood once the commitment was in it (SIZE:HASH)
            (m("draw.head_after"), f"{commit.index + 1}:{entry_hash(commit.encode())}"),
            (m("draw.commitment_time"), m.when(doc.get("ts") or commit.ts)),
            (m("draw.k_hash"), str(doc["k_hash"])),
            (m("draw.seal"), m("draw.seal_value", index=seal["index"], last=seal["last_deal"], root=seal["root"])),
        ),
    )
    quota = doc.get("quota") or {}
    figure_items = [
        (m("draw.kind"), m(f"draw.kind.{doc.get('kind', 'session')}")),
        (m("draw.bank_total"), m.plural("count.deals", int(seal["last_deal"]))),
        (m("draw.drawn_before"), m.plural("count.deals", int(doc.get("drawn_before", 0)))),
        (m("draw.eligible"), m.plural("count.deals", eligible)),
        (m("draw.n"), m.plural("count.deals", n)),
        (m("draw.share_actual"), m.percent(100.0 * n / eligible, "0.00") if eligible else m("doc.dash")),
        (  # Law 6: the share of the whole bank that the draws up to this one play
            m("draw.share_whole"),
            m.percent(100.0 * (int(doc.get("drawn_before", 0)) + n) / int(seal["last_deal"]), "0.00")
            if int(seal["last_deal"])
            else m("doc.dash"),
        ),
    ]
    if "share_bp" in quota:
        figure_items.append((m("draw.share_regulation"), m.percent(int(quota["share_bp"]) / 100)))
    else:
        figure_items.append((m("draw.share_regulation"), m.percent(ctx.regulation.share_percent)))
    if "target" in quota:
        figure_items.append((m("bank.target"), m.plural("count.deals", int(quota["target"]))))
    if quota.get("override"):
        figure_items.append((m("draw.override"), str(quota["override"])))
    previous = doc.get("previous")
    figure_items.append((m("draw.previous"), str(previous) if previous else m("draw.first")))
    figures = Fields(m("draw.figures"), tuple(figure_items))
    if spec["kind"] == "dice":
        fmt = m(
            "draw.pv_dice",
            witnesses=m.plural("count.witnesses", len(spec["witnesses"])),
            rolls=m.plural("count.rolls", int(spec.get("rolls", spec.get("digits", 0)))),
            faces=int(spec.get("faces", 10)),
        )
    else:
        fmt = m(
            "draw.pv_named",
            what=str(spec["description"]),
            numbers=m.plural("count.numbers", int(spec.get("count", 0))),
            min=spec.get("min", ""),
            max=spec.get("max", ""),
        )
    pv_entry = _of_label(bank, EntryKind.PUBLIC_VALUE, label)
    pv_items = [(m("draw.pv_format"), fmt), (m("draw.pv_value"), rec.public_value or m("draw.pv_pending"))]
    if pv_entry is not None:
        pv_items.append((m("draw.pv_time"), m.when(pv_entry.ts)))
    if spec["kind"] == "dice":
        pv_items.append((m("draw.witnesses"), ", ".join(spec["witnesses"])))
    public = Fields(m("draw.public_value"), tuple(pv_items))
    drawn_entry = _of_label(bank, EntryKind.DRAW, label)
    reveal_entry = _of_label(bank, EntryKind.REVEAL, label)
    published = _of_label(bank, EntryKind.DRAW_PUBLISHED, label)
    voided = _of_label(bank, EntryKind.DRAW_VOID, label)
    result: list[tuple[str, str]] = [
        (m("draw.published_time"), m.when(published.ts) if published else m("draw.not_published")),
        (m("draw.drawn_time"), m.when(drawn_entry.ts) if drawn_entry else m("draw.not_run")),
    ]
    if voided is not None:
        reason = str((voided.data.get("void") or {}).get("reason", ""))
        result.append((m("draw.voided"), f"{m.when(voided.ts)} — {reason}"))
    if reveal_entry is not None:
        result += [(m("draw.revealed_time"), m.when(reveal_entry.ts)), (m("draw.secret"), rec.secret.hex())]
    blocks: list[Block] = [session, figures, public, Fields(m("draw.result"), tuple(result))]
    blocks.append(Text("", m("draw.annex_note")))
    witnesses = [*spec["witnesses"], *ctx.witnesses] if spec["kind"] == "dice" else list(ctx.witnesses)
    signatures = _officials(ctx, m, ("chief_judge", "secretary")) + _witnesses(witnesses, m)
    return _document("draw", ctx, m, blocks, signatures)


def _protocol_reference(bank: LedgerReader, label: str, m: Messages) -> str:
    """«№ 5 от 2 декабря 2026 г.»: the latest draw protocol issued for ``label``; flagged when none was issued."""
    issued = [
        e
        for e in bank.entries_of_kind(DOCUMENT_ENTRY)
        if e.data.get("doc") == "draw" and e.data.get("session") == label
    ]
    if not issued:
        return m("annex.no_protocol")
    last = issued[-1]
    return m("annex.protocol_value", n=last.data.get("number"), date=m.when(last.ts))


def draw_annex(bank: LedgerReader, ctx: Context, label: str, drawn: Sequence[StoredDeal]) -> Document:
    """The sealed annex: the drawn deals in pick order as boards 1..n (Law 2). Only after the reveal."""
    m = messages(ctx.lang)
    rec = bank.get_draw(label)
    if rec.state != "revealed":
        raise not_revealed(label, rec.state)
    seats = m.list("seat.letters")
    rows = []
    for board, stored in zip(number_deals([s.deal for s in drawn]), drawn, strict=True):
        hands = [seat_hand_line(board.deal, seat, ctx.lang) for seat in Seat]
        rows.append(
            (
                str(board.number),
                seats[int(board.dealer)],
                _vul(board.vulnerability, m),
                str(stored.deal_id),
                "\n".join(hands),
            )
        )
    table = Table(
        m("annex.boards"),
        (m("annex.col.board"), m("annex.col.dealer"), m("annex.col.vul"), m("annex.col.deal"), m("annex.col.hands")),
        tuple(rows),
        (1.5, 1.6, 2, 1.4, 7),
    )
    head = Fields(
        m("draw.commitment"),
        (
            (m("annex.protocol"), _protocol_reference(bank, label, m)),
            (m("draw.session"), label),
            # what ties these deals to the protocol: the commitment they were drawn under and the value V drawn with
            (m("draw.commitment_hash"), commitment_hash(bank.entry(rec.commit_index).data["commitment"])),
            (m("audience.value"), rec.public_value or m("draw.pv_pending")),  # «Публичное значение V», not «Значение»
            (m("draw.n"), m.plural("count.deals", len(rows))),
        ),
    )
    signatures = _officials(ctx, m, ("chief_judge", "secretary")) + _witnesses(ctx.witnesses, m)
    return _document("draw-annex", ctx, m, [head, table], signatures)


# -- Акт изготовления комплектов ---------------------------------------------------------------------------------
def boards_act(
    bank: LedgerReader,
    ctx: Context,
    label: str,
    journal: JsonObject | None,
    journal_files: dict[str, str] | None = None,
    shown: str | None = None,
) -> Document:
    """``journal``: the board-making journal (done copies, foul copies) of the session, when it is at hand;
    ``journal_files``: its file name and SHA-256 when the run is not in the ledger (``dealer export boards``);
    ``shown``: the session's name on the act when its label is an internal one (variant 1's boards)."""
    m = messages(ctx.lang)
    runs = [
        e
        for e in bank.entries_of_kind(EntryKind.EXPORT)
        if e.data.get("what") == "boards" and e.data.get("label") == label
    ]
    if not runs and journal is None:
        raise DocumentError("No board making for session '{label}' is recorded in the bank's ledger", label=label)
    last = runs[-1] if runs else None
    done = [tuple(x) for x in (journal or {}).get("done", [])]
    fouls = list((journal or {}).get("fouls", []))
    boards = len({b for b, _ in done})
    sets = len({c for _, c in done})
    machine = last.data.get("machine") if last is not None else (journal or {}).get("machine")
    machine_text = m("boards.machine_unknown")
    if isinstance(machine, dict):
        machine_text = " · ".join(
            str(machine[k]) for k in ("model", "serial", "firmware") if machine.get(k) not in (None, "")
        )
    files = last.data.get("files", {}) if last is not None else (journal_files or {})
    journal_sha = ", ".join(f"{name}: {digest}" for name, digest in sorted(files.items()))
    made = Fields(
        m("boards.made"),
        (
            (m("draw.session"), shown or label),
            (m("boards.boards"), m.plural("count.boards", boards)),
            (m("boards.sets"), m.plural("count.sets", sets)),
            (m("boards.copies_made"), m.plural("count.copies", len(done))),
            (m("boards.machine"), machine_text),
            (m("boards.finished"), m.when(last.ts) if last is not None else m("doc.dash")),
            (m("boards.journal"), journal_sha or m("doc.dash")),
            *_against_regulation(ctx.regulation, sets, m),
        ),
    )
    done_set = set(done)
    blocks: list[Block] = [made]
    if _revealed(bank, label):
        rows = tuple(
            (
                str(f.get("board")),
                str(f.get("copy")),
                str(f.get("attempt")),
                _reason(str(f.get("reason")), m),
                _card_text(f.get("card"), m),
                f"{_pocket(f.get('pocket'), m)} / {_pocket(f.get('expected'), m)}",
                m("doc.yes") if (f.get("board"), f.get("copy")) in done_set else m("doc.no"),
            )
            for f in fouls
        )
        columns = ("boards.col.board", "boards.col.copy", "boards.col.attempt", "boards.col.reason",
                   "boards.col.card", "boards.col.pocket", "boards.col.remade")  # fmt: skip
    else:  # before the reveal: where it went wrong, never the card, the pocket it belongs in, or a reason naming it
        rows = tuple(
            (
                str(f.get("board")),
                str(f.get("copy")),
                str(f.get("attempt")),
                _kind(f.get("kind"), m),
                str(f.get("position") or m("doc.dash")),
                _pocket(f.get("pocket"), m),
                m("doc.yes") if (f.get("board"), f.get("copy")) in done_set else m("doc.no"),
            )
            for f in fouls
        )
        columns = ("boards.col.board", "boards.col.copy", "boards.col.attempt", "boards.col.reason",
                   "boards.col.position", "boards.col.pocket_used", "boards.col.remade")  # fmt: skip
        if fouls:
            blocks.append(Text("", m("boards.blind_note")))
    blocks.insert(
        1,
        Table(
            m("boards.fouls"),
            tuple(m(c) for c in columns),
            rows,
            (1.3, 1.4, 1.2, 3, 1, 1.8, 1.4),
            m("boards.no_fouls"),
        ),
    )
    views = card_views(bank, m, board_making=True)
    made = Fields(made.heading, (*made.items, (m("views.title"), m("views.none_short")))) if views is None else made
    blocks = [made, *blocks[1:], *([views] if views is not None else [])]
    signatures = _officials(ctx, m, ("technical_judge", "chief_judge")) + _witnesses(ctx.witnesses, m)
    return _document("boards", ctx, m, blocks, signatures)


def _against_regulation(reg: Regulation, sets: int, m: Messages) -> list[tuple[str, str]]:
    """The flagged line when the sets made differ from the regulation's copies of each board (never silent)."""
    if sets == reg.copies or sets == 0:
        return []
    return [(m("boards.mismatch"), m("boards.sets_mismatch", made=m.plural("count.sets", sets), copies=reg.copies))]


# -- Акт закрытой сдачи (вариант 1) -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ClosedRecord:
    """One board dealt closed as the service's boards file keeps it (its deal stays there, behind the director's
    secret); ``deal_sha256`` is SHA-256(salt ‖ the deal's canonical 13 bytes), what the ledger recorded."""

    board: int
    copies: int
    station: str
    time: str  # ISO 8601
    deal_sha256: str


def closed_board_payload(record: ClosedRecord, cards_checked: int = 52) -> JsonObject:
    """The ledger payload of one closed board: number, copies, station and the deal's salted hash (never the
    deal: the ledger is shown to anyone who checks it, the boards are played later)."""
    return {
        "board": record.board,
        "copies": record.copies,
        "station": record.station,
        "time": record.time,
        "deal_sha256": record.deal_sha256,
        "cards_checked": cards_checked,
    }


def closed_act(
    bank: LedgerReader, ctx: Context, session: str, boards: Sequence[ClosedRecord], audit: AuditVerdict | None
) -> Document:
    """Акт закрытой сдачи: the boards of a variant 1 session, each checked against its ledger entry, the
    machines that dealt them and the randomness audit of the closed deals."""
    m = messages(ctx.lang)
    reg = ctx.regulation
    entries = {int(e.data.get("board", 0)): e for e in bank.entries_of_kind(CLOSED_BOARD_ENTRY)}
    if not boards and not entries:
        raise DocumentError("No board dealt closed is recorded for session '{label}'", label=session)
    devices = devices_by_station(bank)
    rows = []
    mismatches = 0
    for b in boards:
        entry = entries.get(b.board)
        ok = entry is not None and entry.data.get("deal_sha256") == b.deal_sha256
        mismatches += not ok
        rows.append(
            (
                str(b.board),
                m.list("seat.letters")[int(board_dealer(b.board))],
                _vul(board_vulnerability(b.board), m),
                str(b.copies),
                b.station,
                m.when(b.time),
                b.deal_sha256[:16],
                m("closed.in_ledger", index=entry.index) if ok and entry is not None else m("closed.not_in_ledger"),
            )
        )
    in_file = {b.board for b in boards}
    orphans = sorted(n for n in entries if n not in in_file)
    mismatches += len(orphans)
    stations = sorted({b.station for b in boards})
    machines = []
    for station in stations:
        dev = devices.get(station)
        text = " · ".join(str(dev[k]) for k in ("model", "serial", "firmware") if dev.get(k)) if dev else ""
        machines.append(f"{station}: {text or m('bank.no_device')}")
    made = Fields(
        m("closed.made"),
        (
            (m("draw.session"), session),
            (m("bank.variant"), m(f"variant.{int(reg.variant)}")),
            (
                m("boards.boards"),
                m("closed.of", made=m.plural("count.boards", len(boards)), total=reg.boards_per_session),
            ),
            (m("boards.sets"), m.plural("count.sets", reg.copies)),
            (m("boards.machine"), "\n".join(machines) or m("doc.dash")),
            (m("bank.ledger_head"), f"{bank.ledger_size()}:{bank.ledger_head()}"),
            (
                m("closed.check"),
                m("closed.check_ok") if not mismatches else m.plural("closed.check_failed", mismatches),
            ),
        ),
    )
    table = Table(
        m("closed.boards"),
        tuple(m(f"closed.col.{c}") for c in ("board", "dealer", "vul", "copies", "station", "time", "sha", "ledger")),
        tuple(rows),
        (1.2, 1.3, 1.7, 1.2, 1, 2.2, 2.4, 2.2),
        m("doc.none"),
    )
    blocks: list[Block] = [made, table]
    if orphans:
        blocks.append(Text(m("closed.orphans"), ", ".join(str(n) for n in orphans)))
    if audit is None:
        blocks.append(Text(m("bank.audit"), m("bank.audit_skipped")))
    else:
        head = m("bank.audit_passed") if audit.passed else m("bank.audit_failed")
        blocks.append(Text(m("bank.audit"), f"{head} ({m.plural('count.deals', audit.deals)}). {audit.text}"))
    signatures = _officials(ctx, m, ("technical_judge", "chief_judge", "secretary")) + _witnesses(ctx.witnesses, m)
    return _document("closed", ctx, m, blocks, signatures)


# -- Акт проверки оборудования -----------------------------------------------------------------------------------
def check_entries(bank: LedgerReader, session: str) -> list[Entry]:
    return [e for e in bank.entries_of_kind(CHECK_ENTRY) if e.data.get("session") == session]


def equipment_act(bank: LedgerReader, ctx: Context, session: str) -> Document:
    m = messages(ctx.lang)
    checks = check_entries(bank, session)
    if not checks:
        raise no_checks(session)
    norm = 1.0
    rows = []
    for e in checks:
        d = e.data
        norm = float(d.get("norm", norm))
        dev = d.get("device")
        device = m("equipment.no_device")
        if isinstance(dev, dict):
            device = "\n".join(str(dev[k]) for k in ("model", "serial", "firmware") if dev.get(k) not in (None, ""))
        cal = d.get("calibration")
        calibration = m("equipment.no_calibration")
        if isinstance(cal, dict):
            calibration = f"{cal.get('file', '')}\n{m.when(str(cal['created'])) if cal.get('created') else ''}".strip()
            predicted = cal.get("predicted_error_rate")
            if isinstance(predicted, int | float):
                rate_pct = m.number(100 * float(predicted), "#,##0.###")
                calibration += "\n" + m("equipment.predicted_rate", rate=rate_pct)
        rate = float(d.get("error_rate", 0.0))
        rate_text = m.number(rate) + (f" ({m('equipment.over_norm')})" if rate > float(d.get("norm", norm)) else "")
        rows.append(
            (
                m(f"equipment.phase.{d.get('phase')}"),
                m.when(e.ts),
                str(d.get("station")),
                device,
                f"{d.get('cards_read', 0)} / {d.get('deals', 0)} / {d.get('errors', 0)}",
                rate_text,
                calibration,
                m(f"equipment.outcome.{d.get('outcome')}"),
                str(d.get("note", "")),
            )
        )
    head_items = [
        (m("draw.session"), session),
        (m("equipment.checks"), m.plural("count.checks", len(checks))),
        (m("equipment.norm"), m("equipment.norm_value", norm=m.number(norm))),
    ]
    missing = _missing_stages(checks, m)
    if missing:
        head_items.append((m("equipment.missing"), missing))
    head = Fields(m("equipment.summary"), tuple(head_items))  # the table below is «Проверки»: not twice
    table = Table(
        m("equipment.checks"),
        tuple(
            m(f"equipment.col.{c}")
            for c in ("phase", "time", "station", "device", "figures", "rate", "calibration", "outcome", "note")
        ),
        tuple(rows),
        (1.3, 1.7, 0.9, 2.2, 1.5, 1.4, 1.8, 1.6, 1.6),
    )
    signatures = _officials(ctx, m, ("technical_judge",)) + _witnesses(ctx.witnesses, m)
    return _document("equipment", ctx, m, [head, table], signatures)


def _missing_stages(checks: Sequence[Entry], m: Messages) -> str:
    """«A: в ходе, после; B: после» — the stages (before, during, after play) not recorded for a station."""
    done: dict[str, set[str]] = {}
    for e in checks:
        done.setdefault(str(e.data.get("station")), set()).add(str(e.data.get("phase")))
    parts = []
    for station, phases in sorted(done.items()):
        lacking = [m(f"equipment.phase.{p}") for p in PHASES if p not in phases]
        if lacking:
            parts.append(f"{station}: {', '.join(lacking)}")
    return "; ".join(parts)


# -- the gate before «Старт» ---------------------------------------------------------------------------------------
def _local_day(ts: str) -> date | None:
    try:
        return datetime.fromisoformat(ts).astimezone().date()
    except ValueError:
        return None


def may_start(bank: LedgerReader, station: str, day: date) -> bool:
    """Whether ``station`` may start dealing on ``day`` (local): its "before" check is recorded that day with the
    outcome "in order", or the chief judge recorded an override for it that day."""
    for e in bank.entries_of_kind(CHECK_ENTRY):
        d = e.data
        if (d.get("station"), d.get("phase"), d.get("outcome")) == (station, "before", "ok") and _local_day(
            e.ts
        ) == day:
            return True
    return any(
        e.data.get("station") == station and _local_day(e.ts) == day for e in bank.entries_of_kind(OVERRIDE_ENTRY)
    )


def no_check_before(station: str) -> DocumentError:
    return DocumentError(
        "station {station}: no 'before' equipment check in order is recorded today; the technical judge records it "
        "(the console's section 'Equipment check', stage 'before'), or the chief judge records an override with a "
        "reason",
        station=station,
    )


def equipment_override(station: str, reason: str) -> JsonObject:
    """The ledger payload of the chief judge's override: the station may start without its "before" check."""
    if not reason.strip() or len(reason) > 500:
        raise DocumentError("an override needs a reason (1 to 500 characters)")
    return {"station": station, "reason": reason.strip(), "by": "chief_judge"}


# -- one equipment check (what the judge's console records) ---------------------------------------------------
def equipment_check(
    session: str,
    phase: str,
    station: str,
    outcome: str,
    device: JsonObject | None,
    health: JsonObject,
    calibration: JsonObject | None = None,
    note: str = "",
) -> JsonObject:
    """The ledger payload of one check: the judge gives phase, outcome and a note; the figures are the device's."""
    if not session.strip() or not session.isprintable():
        raise DocumentError("an equipment check needs a session label (printable text)")
    if phase not in PHASES:
        raise DocumentError("phase = {phase!r}: allowed {PHASES}", phase=phase, PHASES=", ".join(PHASES))
    if outcome not in OUTCOMES:
        raise DocumentError("outcome = {outcome!r}: allowed {OUTCOMES}", outcome=outcome, OUTCOMES=", ".join(OUTCOMES))
    if len(note) > 500:
        raise DocumentError("note is {n_note} characters long: at most 500", n_note=len(note))
    rate, norm = float(health.get("error_rate", 0.0)), float(health.get("norm", 1.0))
    if outcome == "ok" and rate > norm:
        raise DocumentError(
            "outcome 'ok' refused: {rate} errors per 100 deals is above the norm of {norm}; record 'faulty' "
            "(and service the machine) or check again",
            rate=round(rate, 2),
            norm=norm,
        )
    return {
        "session": session.strip(),
        "phase": phase,
        "station": station,
        "outcome": outcome,
        "note": note,
        "device": device,
        "cards_read": int(health.get("cards_read", 0)),
        "deals": int(health.get("deals", 0)),
        "errors": int(health.get("errors", 0)),
        "error_rate": float(health.get("error_rate", 0.0)),
        "norm": float(health.get("norm", 1.0)),
        "calibration": calibration,
    }
