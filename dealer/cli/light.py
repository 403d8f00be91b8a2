"""What the light commands say, as text and tables, computed apart from their printing.

``dealer board``, ``dealer deal show``, ``dealer regulation check``, ``dealer bank status`` and ``dealer bank
import --json`` compute their output here (plain strings, and tables as :class:`TableSpec`, which
``dealer.cli.console`` draws without rich).
Only the standard library and the domain are imported here.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from dealer.core.json_types import JsonObject

from .i18n import language, t

if TYPE_CHECKING:
    from dealer.bank_import.file_reading import FileReport, SkippedFile
    from dealer.formats.pbn_scan import ScannedDeals

    Parsed = list[tuple[FileReport, ScannedDeals]]  # what ``read_files`` gives

# ``dealer.bank.store.DEFAULT_BANK_PATH`` (a test checks they agree): help and light commands need the path,
# not the bank's SQLite, signing and ledger code
DEFAULT_BANK_PATH = Path("var/bank.sqlite")


class TableSpec:
    """A table of text: its title, its column names (None: no header row) and its rows; columns ``right``
    justified or left (drawn in rich's default box by ``console.write_table``); ``lines`` printed after it.
    (A plain class: a dataclass costs the start of the command line a few milliseconds.)"""

    __slots__ = ("header", "lines", "right", "rows", "title")

    def __init__(
        self,
        title: str,
        rows: Sequence[tuple[str, ...]],
        header: tuple[str, ...] | None = None,
        right: bool = False,
        lines: Sequence[str] = (),
    ) -> None:
        self.title = title
        self.rows = rows
        self.header = header
        self.right = right
        self.lines = lines


def board_line(number: int) -> str:
    """Law 2's dealer and vulnerability of board ``number``, one line."""
    from dealer.core import board_dealer, board_vulnerability

    dealer = board_dealer(number)
    vul = board_vulnerability(number)
    if language() == "en":
        return f"Board {number}: dealer {dealer.letter}, vulnerable {vul.pbn}"
    from dealer.core.diagram import SEAT_NAMES

    vulnerable = {"None": t("nobody"), "NS": t("North–South"), "EW": t("East–West"), "All": t("both sides")}
    return t(
        "Board {number}: dealer {dealer}, vulnerable {vul}",
        number=number,
        dealer=SEAT_NAMES["ru"][dealer],
        vul=vulnerable[vul.pbn],
    )


def deal_show_text(pbn: str, lang: str, ascii_suits: bool) -> tuple[str, str]:
    """The compass diagram of a PBN deal and its deal-number line (printed after an empty line)."""
    from dealer.core import Deal
    from dealer.core.diagram import compass_diagram
    from dealer.core.numbering import format_deal_number

    deal = Deal.from_pbn(pbn)
    diagram = compass_diagram(deal, lang, "ascii" if ascii_suits else "unicode")
    return diagram, "\n" + t("Deal number {number}", number=format_deal_number(deal.rank(), lang))


def regulation_tables(path: Path | None) -> list[TableSpec]:
    """What a regulation file says (the embedded default when ``path`` is None), and its draw plan."""
    from dealer.regulation import load_regulation

    reg = load_regulation(path)
    lang = language()
    variants = {1: t("closed"), 2: t("partially open"), 3: t("open")}
    title = reg.title or (str(path) if path else t("default"))
    if not reg.banked:  # variant 1: boards dealt closed, no bank and no draw to speak of
        facts = [
            (t("dealing variant"), f"{int(reg.variant)} ({variants[int(reg.variant)]})"),
            (t("boards per session"), str(reg.boards_per_session)),
            (t("sessions"), str(reg.sessions)),
            (t("copies of each board"), str(reg.copies)),
        ]
        return [TableSpec(t("Regulation: {title}", title=title), facts)]
    share = t("{percent} of the whole sealed bank", percent=_percent(reg.share_percent, lang))
    facts = [
        (t("dealing variant"), f"{int(reg.variant)} ({variants[int(reg.variant)]})"),
        (t("open cards per deal"), str(reg.open_count())),
        (t("share drawn"), share),
        (t("boards per session"), str(reg.boards_per_session)),
        (t("deals drawn per session"), str(reg.deals_per_session)),
        (t("sessions"), str(reg.sessions)),
        (t("spare deals (replacement boards)"), str(reg.spare_deals)),
        (t("copies of each board"), str(reg.copies)),
        (t("deals the schedule draws"), str(reg.total_deals)),
        (t("bank target"), str(reg.bank_target)),
    ]
    plan: list[tuple[str, ...]] = []
    drawn = 0
    for k in range(1, reg.sessions + 1):
        drawn += reg.deals_per_session
        share = _percent(100 * drawn / reg.bank_target, lang, "0.00")
        plan.append((t("session {k}", k=k), str(reg.deals_per_session), str(drawn), share))
    if reg.spare_deals:
        drawn += reg.spare_deals
        share = _percent(100 * drawn / reg.bank_target, lang, "0.00")
        plan.append((t("spare"), str(reg.spare_deals), str(drawn), share))
    header = (t("draw"), t("deals"), t("drawn in all"), t("share of the bank"))
    return [
        TableSpec(t("Regulation: {title}", title=title), facts),
        TableSpec(t("The draw plan against the bank target"), plan, header=header, right=True),
    ]


def _percent(value: float, lang: str, pattern: str = "0.##") -> str:
    from dealer.i18n import Messages

    return Messages(lang, {}).percent(value, pattern)


def bank_status(bank: Path, keys: Path | None) -> JsonObject:
    """The bank's public status (``Director.status``): what ``bank status --json`` prints."""
    from dealer.bank.engines import open_bank_at
    from dealer.draw.status import public_status  # here, not at the top: ``bank import`` starts without it

    with open_bank_at(bank, keys, create=False) as b:  # as ``options.open_bank``: a missing bank is an error
        return public_status(b)


def bank_status_table(st: JsonObject) -> TableSpec:
    """The status as people read it: a table of counts, then one plain line per seal and per draw (hashes are
    never wrapped)."""
    names = {
        "deals": t("deals"),
        "in_bank": t("in bank"),
        "drawn": t("drawn"),
        "played": t("played"),
        "sealed_deals": t("sealed deals"),
        "unsealed_deals": t("unsealed deals"),
        "eligible": t("eligible"),
        "ledger_size": t("ledger size"),
    }
    rows = [(name, str(st[key])) for key, name in names.items()]
    head = str(st["ledger_head"])
    rows.append((t("anchor for the act"), f"{st['ledger_size']}:{head[:16]}"))
    lines = [t("ledger head: {head}", head=head)]  # below the table: in it, 80 columns cut the hash short
    for s in _objects(st["seals"]):
        lines.append(
            t(
                "seal at entry {index}: {size} entries, deals 1..{last}, root {root}, {ts}",
                index=s["index"],
                size=s["size"],
                last=s["last_deal"],
                root=s["root"],
                ts=s["ts"],
            )
        )
    for d in _objects(st["draws"]):
        state = {"committed": t("committed"), "public-value": t("public value entered"), "drawn": t("drawn"),
                 "revealed": t("revealed"), "void": t("void")}.get(str(d["state"]), d["state"])  # fmt: skip
        lines.append(
            t(
                "draw {label!r}: {state}, {n} of {eligible} deals, SHA-256(K) {k_hash}",
                label=d["label"],
                state=state,
                n=d["n"],
                eligible=d["eligible"],
                k_hash=d["k_hash"],
            )
        )
    return TableSpec(t("Bank {bank}", bank=st["bank"]), rows, lines=lines)


def _objects(value: object) -> list[JsonObject]:
    assert isinstance(value, list)
    return [v for v in value if isinstance(v, dict)]


class NothingToImport(Exception):
    """Every file given was left out (``--skip-bad``): nothing to import, nothing was written."""

    def __init__(self, left_out: int) -> None:
        super().__init__(left_out)
        self.left_out = left_out

    def message(self) -> str:
        return t("no file with deals to import ({n} left out); nothing was imported", n=self.left_out)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while an import runs (both its halves: the process forked to read takes
    this state too). An import makes hundreds of thousands of objects (each record's columns, rows, report
    lines) that hold no reference cycles, so every collection walks them and frees nothing: an import of 60,150
    records spent 38 ms in 117 collections. Reference counting frees them as ever. At the end they are moved
    out of the collector's sight (``gc.freeze``): otherwise the first collection after it would walk them all
    once more."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_on:
            gc.enable()


def import_read(
    files: Sequence[Path], max_mib: int, skip_bad: bool, bank: Path | None = None
) -> tuple[Parsed, list[SkippedFile]]:
    """``bank import``'s first half: every file read and parsed, nothing written (NothingToImport: no file left);
    the modules that open ``bank`` are loaded meanwhile."""
    from dealer.bank_import.file_reading import read_files  # the bank's modules: loaded meanwhile (or when writing)

    skipped: list[SkippedFile] = []
    prepare = None if bank is None else (lambda: load_writing(bank))
    parsed = read_files(files, max_bytes=max_mib * 2**20, skip_bad=skip_bad, skipped=skipped, prepare=prepare)
    if not parsed:
        raise NothingToImport(len(skipped))
    return parsed, skipped


def load_writing(bank: Path) -> None:
    """Load what ``import_write`` needs for ``bank`` (the bank's engine, the bulk import, the report)."""
    from dealer.bank.engines import load_engine

    load_engine(bank)
    from dealer.bank_import import import_json  # noqa: F401


def register_path(bank: Path, register: Path | None) -> Path:
    """The register given, else ``played.sqlite`` beside a bank file (a PostgreSQL bank: ./var/played.sqlite)."""
    if register is not None:
        return register
    return Path("var") / "played.sqlite" if str(bank).startswith("postgresql") else bank.parent / "played.sqlite"


def set_aside_played(parsed: Parsed, bank: Path, register: Path | None) -> int:
    """Deals the competition's register holds as played are left out of an import, each reported as a problem of
    its file (a bank holding one could draw nothing). No register beside the bank: nothing played yet."""
    path = register_path(bank, register)
    if not path.is_file():
        if register is not None:
            from dealer.bank.errors import BankError

            raise BankError("{path}: no register of played deals there", path=path)
        return 0
    from dealer.bank.register import PlayedRegister
    from dealer.bank_import.played import set_aside_played as leave_out_played

    with PlayedRegister(path) as played:
        return leave_out_played(parsed, played)


def import_write(
    parsed: Parsed, skipped: list[SkippedFile], bank: Path, keys: Path | None, register: Path | None = None
) -> str:
    """``bank import``'s second half: the deals committed in batches; the JSON line ``--json`` prints. It writes:
    whoever runs it must not run it again on a failure (the batches committed would be reported as duplicates)."""
    from dealer.bank.engines import open_bank_at
    from dealer.bank_import.import_json import import_with_json

    set_aside_played(parsed, bank, register)
    with open_bank_at(bank, keys, create=True) as b:  # as ``options.open_bank``: only an import creates a bank
        return import_with_json(b, parsed, skipped)


def bank_import_json(
    files: Sequence[Path], bank: Path, keys: Path | None, max_mib: int, skip_bad: bool, register: Path | None = None
) -> str:
    """What ``bank import --json`` prints (one line)."""
    with collector_paused():
        parsed, skipped = import_read(files, max_mib, skip_bad, bank)
        return import_write(parsed, skipped, bank, keys, register)
