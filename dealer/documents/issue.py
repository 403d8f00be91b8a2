"""Issuing documents: number, render, write (atomically) and record the file's SHA-256 in the bank's ledger.

Each issued document is two files in the documents folder, ``NNN-<kind>-<lang>.pdf`` and the same name with
``.json`` (what it says, for the day's record), and one ledger entry of kind ``document``:
``{"doc": kind, "number": n, "lang", "file", "sha256", "content_sha256", "date", "session"}``. Each type of
document has its own numbers in a bank (Протокол жеребьёвки № 1, № 2, …; Акт проверки оборудования № 1, …): the
next is one more than the highest of its type (a bank numbered before keeps its numbers, and its files, apart); the
type in the file's name keeps names unique. ``verify_file`` finds a printed copy's file hash in the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from hashlib import sha256
from pathlib import Path
from typing import Protocol

from dealer.core.json_types import JsonObject
from dealer.fsutil import write_atomic
from dealer.i18n import format_date
from dealer.integrity.ledger import Entry

from .acts import DOCUMENT_ENTRY, DocumentError, LedgerReader, messages
from .model import Document

DAY_KIND = "day"


class DocumentBank(LedgerReader, Protocol):
    def record_event(self, kind: str, payload: JsonObject) -> int: ...


@dataclass(frozen=True, slots=True)
class Issued:
    number: int
    kind: str
    path: Path
    sha256: str
    ledger_index: int
    title: str


def next_number(bank: LedgerReader, kind: str) -> int:
    """The next number of a document of this type: one more than the highest issued of it (1 for the first)."""
    numbers = [int(e.data["number"]) for e in bank.entries_of_kind(DOCUMENT_ENTRY) if e.data.get("doc") == kind]
    return max(numbers, default=0) + 1


def local_day(moment: datetime) -> date:
    return moment.astimezone().date()


def issue(
    bank: DocumentBank,
    out_dir: Path,
    kind: str,
    build: Callable[[int, datetime], Document],
    render: Callable[[Document], bytes] | None = None,
    session: str | None = None,
    now: datetime | None = None,
) -> Issued:
    """Number the document (``kind``: its type, numbered on its own), build and render it, write it and record its
    hash; returns where it went."""
    if render is None:
        from .pdf import render_document

        render = render_document
    moment = now or datetime.now(UTC)
    number = next_number(bank, kind)
    doc = build(number, moment)
    assert doc.kind == kind, (doc.kind, kind)  # the number was taken in the sequence of the type built
    pdf = render(doc)
    content = (json.dumps(doc.to_dict(), ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")
    stem = f"{number:03d}-{doc.kind}-{doc.lang}"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{stem}.pdf"
    if path.exists():
        raise DocumentError(
            "{path} exists already: documents are never overwritten (another bank's folder?)", path=path
        )
    write_atomic(out_dir / f"{stem}.json", content)
    write_atomic(path, pdf)
    digest = sha256(pdf).hexdigest()
    payload: JsonObject = {
        "doc": doc.kind,
        "number": number,
        "lang": doc.lang,
        "title": doc.title,
        "file": path.name,
        "sha256": digest,
        "content_sha256": sha256(content).hexdigest(),
        "date": local_day(moment).isoformat(),
    }
    if session is not None:
        payload["session"] = session
    index = bank.record_event(DOCUMENT_ENTRY, payload)
    return Issued(number, doc.kind, path, digest, index, doc.title)


def issued_entries(bank: LedgerReader) -> list[Entry]:
    return bank.entries_of_kind(DOCUMENT_ENTRY)


def verify_file(bank: LedgerReader, data: bytes) -> Entry | None:
    """The ledger entry that recorded this exact file, or None (a changed or unknown file)."""
    digest = sha256(data).hexdigest()
    return next((e for e in issued_entries(bank) if e.data.get("sha256") == digest), None)


def day_documents(bank: LedgerReader, out_dir: Path, day: date) -> list[tuple[Document, str]]:
    """The documents issued on ``day`` (local date), in number order, each checked against its ledger entry."""
    out: list[tuple[Document, str]] = []
    for e in issued_entries(bank):
        if e.data.get("date") != day.isoformat() or e.data.get("doc") == DAY_KIND:
            continue
        path = out_dir / Path(str(e.data["file"])).with_suffix(".json").name
        try:
            content = path.read_bytes()
        except OSError as exc:
            raise DocumentError(
                "{path}: cannot read document {data}: {exc_strerror_or_exc}",
                path=path,
                data=e.data["number"],
                exc_strerror_or_exc=exc.strerror or exc,
            ) from exc
        if sha256(content).hexdigest() != e.data.get("content_sha256"):
            raise DocumentError(
                "{path}: differs from what the ledger recorded for document {data}", path=path, data=e.data["number"]
            )
        out.append((Document.from_dict(json.loads(content)), str(e.data["sha256"])))
    return out


def issue_day(bank: DocumentBank, out_dir: Path, day: date, lang: str, now: datetime | None = None) -> Issued:
    """Every document of ``day`` in one PDF with a table of contents; recorded in the ledger like the others."""
    from .pdf import render_day

    m = messages(lang)
    docs = day_documents(bank, out_dir, day)
    day_text = format_date(day, lang)
    if not docs:
        raise DocumentError("No documents were issued on {date}", date=day.isoformat())
    title = m("day.title", date=day_text)

    def build(number: int, moment: datetime) -> Document:
        return Document(DAY_KIND, lang, title, number, m("doc.number", n=number), moment.isoformat(), "", "", (), ())

    def render(doc: Document) -> bytes:
        columns = (m("day.col.document"), m("day.col.sha"), m("doc.page"))
        return render_day(f"{title} ({doc.number_label})", m("day.contents"), columns, docs, m("doc.page"))

    return issue(bank, out_dir, DAY_KIND, build, render, now=now)
