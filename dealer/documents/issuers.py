"""One function per document, shared by ``dealer docs`` and the consoles: gather what the document needs
(the drawn deals, the board-making journal, the fairness audit), build it, issue it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from hashlib import sha256
from pathlib import Path

from dealer.bank.repository import BankRepository
from dealer.core import Deal
from dealer.core.json_types import JsonObject
from dealer.export.at_rest import AtRest
from dealer.export.journal import journal_document
from dealer.regulation import Regulation

from . import acts
from .acts import AuditVerdict, Context
from .issue import Issued, issue


def audit_verdict(bank: BankRepository, lang: str) -> AuditVerdict | None:
    """The fairness audit of the whole bank (None for an empty bank)."""
    from dealer.audit import run_audit
    from dealer.audit.bank_source import records_from_stored

    records, _ = records_from_stored(bank.iter_deals())
    if not records:
        return None
    result = run_audit(records, scope={"bank": bank.bank_id})
    return AuditVerdict(result.passed, result.verdict_ru if lang == "ru" else result.verdict_en, result.deals)


def _ctx(reg: Regulation, lang: str, witnesses: Sequence[str]) -> Callable[[int, datetime], Context]:
    def make(number: int, moment: datetime) -> Context:
        return Context(lang, reg, number, moment, tuple(witnesses))

    return make


def issue_bank_act(
    bank: BankRepository, reg: Regulation, lang: str, out_dir: Path, witnesses: Sequence[str] = (), audit: bool = True
) -> Issued:
    verdict = audit_verdict(bank, lang) if audit else None
    ctx = _ctx(reg, lang, witnesses)
    return issue(bank, out_dir, "bank", lambda n, t: acts.bank_act(bank, ctx(n, t), verdict))


def issue_draw_protocol(
    bank: BankRepository, reg: Regulation, lang: str, out_dir: Path, label: str, witnesses: Sequence[str] = ()
) -> Issued:
    bank.get_draw(label)  # an unknown label is refused before a number is taken
    ctx = _ctx(reg, lang, witnesses)
    return issue(bank, out_dir, "draw", lambda n, t: acts.draw_protocol(bank, ctx(n, t), label), session=label)


def issue_draw_annex(
    bank: BankRepository, reg: Regulation, lang: str, out_dir: Path, label: str, witnesses: Sequence[str] = ()
) -> Issued:
    from dealer.draw.director import Director

    rec = bank.get_draw(label)
    if rec.state != "revealed":
        raise acts.not_revealed(label, rec.state)
    drawn = [item.deal for item in Director(bank).drawn_deals(label)]
    ctx = _ctx(reg, lang, witnesses)
    return issue(
        bank, out_dir, "draw-annex", lambda n, t: acts.draw_annex(bank, ctx(n, t), label, drawn), session=label
    )


def read_journal(path: Path | None, at_rest: AtRest | None = None) -> JsonObject | None:
    """A board-making journal, opened with the chief judge's key when the service sealed it (``at_rest``)."""
    if path is None or not path.is_file():
        return None
    return journal_document(path, at_rest)


def issue_boards_act(
    bank: BankRepository,
    reg: Regulation,
    lang: str,
    out_dir: Path,
    label: str,
    journal: Path | None,
    witnesses: Sequence[str] = (),
    shown: str | None = None,
) -> Issued:
    data = read_journal(journal, AtRest(lambda: bank.keyring, bank.bank_id, label))
    files = None
    if data is not None and journal is not None:
        files = {journal.name: sha256(journal.read_bytes()).hexdigest()}
    ctx = _ctx(reg, lang, witnesses)
    acts.boards_act(bank, ctx(0, datetime.now()), label, data, files, shown)  # refuses before a number is taken
    return issue(
        bank, out_dir, "boards", lambda n, t: acts.boards_act(bank, ctx(n, t), label, data, files, shown), session=label
    )


def issue_equipment_act(
    bank: BankRepository, reg: Regulation, lang: str, out_dir: Path, session: str, witnesses: Sequence[str] = ()
) -> Issued:
    if not acts.check_entries(bank, session):
        raise acts.no_checks(session)
    ctx = _ctx(reg, lang, witnesses)
    return issue(bank, out_dir, "equipment", lambda n, t: acts.equipment_act(bank, ctx(n, t), session), session=session)


def closed_audit(deals: Sequence[tuple[int, Deal, str]], lang: str) -> AuditVerdict | None:
    """The randomness audit of the deals dealt closed (board number, deal, station), None when there are none."""
    from dealer.audit import run_audit
    from dealer.audit.records import AuditRecord

    if not deals:
        return None
    records = [AuditRecord(deal, board, station) for board, deal, station in deals]
    result = run_audit(records, scope={"closed": len(records)})
    return AuditVerdict(result.passed, result.verdict_ru if lang == "ru" else result.verdict_en, result.deals)


def issue_closed_act(
    bank: BankRepository,
    reg: Regulation,
    lang: str,
    out_dir: Path,
    session: str,
    boards: Sequence[acts.ClosedRecord],
    deals: Sequence[tuple[int, Deal, str]],
    witnesses: Sequence[str] = (),
) -> Issued:
    """Акт закрытой сдачи (variant 1): ``boards`` as the boards file keeps them, ``deals`` for the audit."""
    ctx = _ctx(reg, lang, witnesses)
    verdict = closed_audit(deals, lang)
    acts.closed_act(bank, ctx(0, datetime.now()), session, boards, verdict)  # refuses before a number is taken
    return issue(
        bank,
        out_dir,
        "closed",
        lambda n, t: acts.closed_act(bank, ctx(n, t), session, boards, verdict),
        session=session,
    )
