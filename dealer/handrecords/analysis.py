"""Double-dummy tables and par of a session's boards, computed with endplay (DDS).

Deals go to ``endplay.dds.calc_all_tables`` in batches of at most 40; DDS spreads each batch over its own
threads, which keeps both cores busy (measured: CPU time ≈ 1.9 × wall time on this 2-core machine), so no
extra processes are needed. Par comes from ``endplay.dds.par`` on the computed table (no second solve).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from endplay import dds
from endplay.dds.ddtable import DDTable as EpTable
from endplay.types import Deal as EpDeal
from endplay.types import Penalty, Player, Vul

from dealer.core import Deal, Seat, Vulnerability
from dealer.formats._common import numbered
from dealer.formats.base import BoardRecord

BATCH = 40  # DDS's limit for one CalcAllTables call with all five strains
STRAIN_LETTERS = ("S", "H", "D", "C", "NT")  # index = strain: suits as dealer.core.Suit, 4 = notrump
STRAIN_SYMBOLS = ("♠", "♥", "♦", "♣", "NT")

_EP_VUL = {
    Vulnerability.NONE: Vul.none,
    Vulnerability.NS: Vul.ns,
    Vulnerability.EW: Vul.ew,
    Vulnerability.ALL: Vul.both,
}


@dataclass(frozen=True, slots=True)
class DDTable:
    """Tricks for every strain (♠ ♥ ♦ ♣ NT, index 0..4) and declarer (N E S W, index 0..3)."""

    tricks: tuple[tuple[int, int, int, int], ...]

    def get(self, strain: int, declarer: Seat) -> int:
        return self.tricks[strain][declarer]


@dataclass(frozen=True, slots=True)
class ParContract:
    level: int
    strain: int  # 0..3 suits, 4 NT
    side: str  # "NS" or "EW"
    declarers: str  # e.g. "NS" or "S"
    doubled: bool
    result: int  # overtricks (+) or undertricks (-), 0 = just made

    def text(self, symbols: bool = True) -> str:
        strain = (STRAIN_SYMBOLS if symbols else STRAIN_LETTERS)[self.strain]
        res = "=" if self.result == 0 else (f"+{self.result}" if self.result > 0 else f"−{-self.result}")
        if not symbols:
            res = res.replace("−", "-")
        return f"{self.level}{strain}{'x' if self.doubled else ''} {self.declarers} {res}"


@dataclass(frozen=True, slots=True)
class Par:
    score: int  # from North-South's side
    contracts: tuple[ParContract, ...]

    def score_text(self) -> str:
        if self.score == 0:
            return "0"
        return f"NS {self.score:+d}" if self.score > 0 else f"EW {-self.score:+d}"


@dataclass(frozen=True, slots=True)
class BoardAnalysis:
    board: int
    dealer: Seat
    vulnerability: Vulnerability
    deal: Deal
    table: DDTable
    par: Par

    @property
    def hcp(self) -> dict[Seat, int]:
        return self.deal.hcp()


def to_endplay(deal: Deal) -> EpDeal:
    return EpDeal(deal.to_pbn(Seat.N))


def table_of(ep_table: EpTable) -> DDTable:
    rows = ep_table.to_list()
    return DDTable(tuple((r[0], r[1], r[2], r[3]) for r in rows))


def par_of(ep_table: EpTable, vulnerability: Vulnerability, dealer: Seat) -> Par:
    parlist = dds.par(ep_table, _EP_VUL[vulnerability], Player(int(dealer)))
    grouped: dict[tuple[str, int, int, bool, int], str] = {}
    for c in parlist:
        seat = int(c.declarer)
        side = "NS" if seat in (0, 2) else "EW"
        key = (side, int(c.level), int(c.denom), c.penalty == Penalty.doubled, int(c.result))
        letter = "NESW"[seat]
        if letter not in grouped.get(key, ""):
            grouped[key] = grouped.get(key, "") + letter
    contracts = []
    for (side, level, denom, doubled, result), who in grouped.items():
        declarers = "".join(s for s in "NESW" if s in who)
        contracts.append(ParContract(level, denom, side, declarers, doubled, result))
    return Par(int(parlist.score), tuple(contracts))


ProgressCallback = Callable[[int, int], None]  # (deals done, deals in all)


def dd_tables(deals: Sequence[Deal], *, batch: int = BATCH, progress: ProgressCallback | None = None) -> list[EpTable]:
    """endplay DD tables of ``deals``, in order, ``batch`` deals per ``calc_all_tables`` call."""
    if not 1 <= batch <= BATCH:
        raise ValueError(f"batch = {batch} is out of range: allowed 1..{BATCH}")
    out: list[EpTable] = []
    for start in range(0, len(deals), batch):
        chunk = [to_endplay(d) for d in deals[start : start + batch]]
        out.extend(dds.calc_all_tables(chunk))
        if progress is not None:
            progress(len(out), len(deals))
    return out


def analyse(
    records: Sequence[BoardRecord], *, batch: int = BATCH, progress: ProgressCallback | None = None
) -> list[BoardAnalysis]:
    """DD table and par of every board (board numbers, dealer and vulnerability as in the records or Law 2)."""
    boards = numbered(records)
    tables = dd_tables([b.deal for b in boards], batch=batch, progress=progress)
    return [
        BoardAnalysis(b.board, b.dealer, b.vulnerability, b.deal, table_of(t), par_of(t, b.vulnerability, b.dealer))
        for b, t in zip(boards, tables, strict=True)
    ]


__all__ = [
    "BATCH",
    "STRAIN_LETTERS",
    "STRAIN_SYMBOLS",
    "BoardAnalysis",
    "DDTable",
    "Par",
    "ParContract",
    "analyse",
]
