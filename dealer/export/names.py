"""What a session's files are called and what they say about the competition, for the consoles and the command
line alike (one rule, docs/formats.md «File names and the competition's tags»).

- A file's stem is the session's (or the event's) name as the user wrote it: letters of any script (Cyrillic
  stays Cyrillic), digits, ``_``, ``.`` and ``-`` kept, every other run of characters one ``_``, at most 64
  characters, never a path; an empty name gives the caller's word for it (in the user's language).
- PBN's Site is the regulation's venue; its Date is the day of play: today when the regulation gives no dates or
  today is one of them, else the competition's first day (hand records printed after the event keep its date).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from datetime import date
from pathlib import Path

from dealer.formats.base import ExportMeta
from dealer.regulation import Regulation

_SAFE = re.compile(r"[^\w.-]+")  # letters of any script (Cyrillic names stay), digits, "_", ".", "-"


def session_slug(label: str, fallback: str = "session") -> str:
    """A file-name stem for a session label ("Round 1" -> "Round_1", «Тур 2: финал» -> «Тур_2_финал»); never a
    path; ``fallback`` when nothing of the label is left. Not unique: see session_folder."""
    slug = _SAFE.sub("_", label.strip()).strip("._")
    return slug[:64] or fallback


def session_folder(label: str) -> str:
    """The export folder of a session: keyed by an id of the exact label (SHA-256, 12 hex digits), the readable
    slug first — "Round 1" and "Round_1" get two folders (#19 item 9)."""
    return f"{session_slug(label)}-{hashlib.sha256(label.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def board_journal(var_dir: Path, label: str) -> Path:
    """Where the consoles keep a session's board-making journal (and where ``dealer docs boards`` looks for it):
    ``VAR/export/<session>-<id>/<session>.journal.json``."""
    return var_dir / "export" / session_folder(label) / f"{session_slug(label)}.journal.json"


def play_date(reg: Regulation, today: date) -> str:
    """PBN's Date (YYYY.MM.DD) of what is exported ``today`` under ``reg`` (see the module's text)."""
    day = today
    if reg.starts is not None and not reg.starts <= today <= (reg.ends or reg.starts):
        day = reg.starts
    return day.strftime("%Y.%m.%d")


def competition_meta(reg: Regulation, meta: ExportMeta, today: date | None = None) -> ExportMeta:
    """``meta`` with the regulation's venue as its Site and the day of play as its Date where it gives none, the
    day counted from ``today`` (default: the local date): the consoles' exports and the command line's."""
    return replace(meta, site=meta.site or reg.venue, date=meta.date or play_date(reg, today or date.today()))
