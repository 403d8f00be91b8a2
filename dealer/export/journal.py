"""The board-making journal: which copies of which boards are finished, kept next to the session output.

A small JSON file rewritten atomically after every finished copy, so an interrupted session resumes without
re-making finished boards. It names the boards it belongs to by a digest of (board number, canonical deal)
and refuses to resume a different session.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dealer.core.errors import DealerError, Phrase
from dealer.core.json_types import JsonObject
from dealer.fsutil import write_atomic

from .at_rest import AtRest
from .boards import SessionBoard

VERSION = 1


class JournalError(DealerError, ValueError):
    """The journal is unreadable or belongs to another session."""


@dataclass(frozen=True, slots=True)
class FoulCopy:
    board: int
    copy: int
    attempt: int
    reason: str
    card: str | None = None  # e.g. "♠A"
    pocket: str | None = None  # the pocket the machine used, N/E/S/W
    expected: str | None = None  # the pocket the card belongs in
    kind: str = ""  # what went wrong, without naming a card: wrong_pocket, unreadable, fault:jam, …
    position: int | None = None  # 1-based place of the card in the copy's dealing order, when known
    reason_template: str = ""  # ``reason`` as an English template and its params, for the catalogues
    reason_params: dict[str, str | int | None] = field(default_factory=dict)

    def reason_phrase(self) -> Phrase:
        """The reason as a phrase the catalogues say in Russian (older journals: the English text as it is)."""
        if not self.reason_template:
            return Phrase.stored(self.reason, {})
        return Phrase.stored(self.reason_template, dict(self.reason_params))


def boards_digest(boards: Sequence[SessionBoard]) -> str:
    h = hashlib.sha256()
    for b in boards:
        h.update(b.number.to_bytes(4, "big") + b.deal.to_bytes() + b.copies.to_bytes(2, "big"))
    return h.hexdigest()


def _text(path: Path, at_rest: AtRest | None) -> str:
    raw = path.read_bytes() if at_rest is None else at_rest.read(path)
    return raw.decode("utf-8")


def journal_document(path: Path, at_rest: AtRest | None = None) -> JsonObject:
    """The journal's JSON object as stored, opened with the chief judge's key when the service sealed it
    (``at_rest``); a JournalError when the file cannot be read or is no JSON object (the key missing is the
    keyring's own error)."""
    try:
        doc = json.loads(_text(path, at_rest))
        if not isinstance(doc, dict):
            raise TypeError("not a JSON object")
    except (OSError, ValueError, TypeError) as exc:
        raise JournalError("{path}: not a readable board-making journal ({exc})", path=path, exc=exc) from exc
    return doc


def finished_copies(path: Path, at_rest: AtRest | None = None) -> list[tuple[int, int]] | None:
    """The (board, copy) pairs a journal records as finished, in order; None when there is no readable journal
    (for showing an interrupted run's progress: it does not check which boards the journal belongs to), or when it
    is sealed and the key is not here."""
    try:
        return sorted((int(b), int(c)) for b, c in journal_document(path, at_rest)["done"])
    except (ValueError, KeyError, TypeError, DealerError):
        return None


@dataclass
class Journal:
    path: Path
    digest: str
    done: set[tuple[int, int]] = field(default_factory=set)
    fouls: list[FoulCopy] = field(default_factory=list)
    at_rest: AtRest | None = None  # sealed under the chief judge's key (the service's folder, before play)

    @classmethod
    def open(cls, path: Path, boards: Sequence[SessionBoard], at_rest: AtRest | None = None) -> Journal:
        digest = boards_digest(boards)
        if not path.exists():
            return cls(path, digest, at_rest=at_rest)
        doc = journal_document(path, at_rest)
        try:
            if doc.get("version") != VERSION:
                raise JournalError(
                    "{path}: journal version {get!r}, expected {VERSION}",
                    path=path,
                    get=doc.get("version"),
                    VERSION=VERSION,
                )
            done = {(int(b), int(c)) for b, c in doc["done"]}
            fouls = [FoulCopy(**f) for f in doc.get("fouls", [])]
            their = str(doc["boards_digest"])
        except (ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, JournalError):
                raise
            raise JournalError("{path}: not a readable board-making journal ({exc})", path=path, exc=exc) from exc
        if their != digest:
            raise JournalError(
                "{path}: this journal belongs to other boards (digest {their}…, these boards {digest}…); remove it "
                "to start over",
                path=path,
                their=their[:12],
                digest=digest[:12],
            )
        return cls(path, digest, done, fouls, at_rest)

    def is_done(self, board: int, copy: int) -> bool:
        return (board, copy) in self.done

    def finish(self, board: int, copy: int) -> None:
        self.done.add((board, copy))
        self.save()

    def foul(self, foul: FoulCopy) -> None:
        self.fouls.append(foul)
        self.save()

    def save(self) -> None:
        doc = {
            "version": VERSION,
            "boards_digest": self.digest,
            "done": sorted([b, c] for b, c in self.done),
            "fouls": [asdict(f) for f in self.fouls],
        }
        data = (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
        if self.at_rest is None:
            write_atomic(self.path, data)
        else:
            self.at_rest.write(self.path, data)
