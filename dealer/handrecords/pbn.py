"""Hand records in PBN 2.1: export-format games with the double-dummy results and par.

Each game has the 15 mandatory tags in order (``Deal`` listed from the dealer), then
``[DoubleDummyTricks "<20 hex digits>"]`` (Bridge Composer's tag: declarers N, S, E, W, each with strains
NT, S, H, D, C), ``[OptimumScore "NS 420"]``, ``[ParContract "NS 4S"]`` and the PBN 2.1
``OptimumResultTable`` section (declarer, denomination, tricks).
"""

from __future__ import annotations

from collections.abc import Sequence

from dealer.core import Seat
from dealer.formats import by_name, load_all
from dealer.formats.base import BoardRecord, ExportMeta

from .analysis import STRAIN_LETTERS, BoardAnalysis

DD_DECLARERS = (Seat.N, Seat.S, Seat.E, Seat.W)
DD_STRAINS = (4, 0, 1, 2, 3)


def double_dummy_tricks(a: BoardAnalysis) -> str:
    return "".join(f"{a.table.get(s, d):x}" for d in DD_DECLARERS for s in DD_STRAINS)


def par_contract_tag(a: BoardAnalysis) -> str:
    if not a.par.contracts:
        return "Pass"
    parts = []
    for c in a.par.contracts:
        result = "" if c.result == 0 else (f"+{c.result}" if c.result > 0 else str(c.result))
        parts.append(f"{c.declarers} {c.level}{STRAIN_LETTERS[c.strain]}{'X' if c.doubled else ''}{result}")
    return "; ".join(parts)


def analysis_tags(a: BoardAnalysis) -> dict[str, str]:
    """The single-line tags a hand record adds to a PBN game."""
    score = a.par.score
    return {
        "DoubleDummyTricks": double_dummy_tricks(a),
        "OptimumScore": f"NS {score}" if score >= 0 else f"EW {-score}",
        "ParContract": par_contract_tag(a),
    }


def result_table(a: BoardAnalysis) -> str:
    """The ``OptimumResultTable`` tag value: header, then one line per declarer and strain."""
    rows = [f"{d.letter} {STRAIN_LETTERS[s]} {a.table.get(s, d)}" for d in DD_DECLARERS for s in DD_STRAINS]
    return "\n".join(["Declarer;Denomination\\2R;Result\\2R", *rows])


def handrecord_record(a: BoardAnalysis) -> BoardRecord:
    tags = analysis_tags(a) | {"OptimumResultTable": result_table(a)}
    return BoardRecord(a.deal, a.board, a.dealer, a.vulnerability, tags=tags)


def handrecords_pbn(analyses: Sequence[BoardAnalysis], meta: ExportMeta = ExportMeta()) -> bytes:
    """PBN export of the hand records through the project's PBN writer (mandatory tags first)."""
    load_all()
    return by_name("pbn").write([handrecord_record(a) for a in analyses], meta)
