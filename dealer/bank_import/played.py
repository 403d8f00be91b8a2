"""Deals an import leaves out because the register of played deals holds them (Law 15)."""

from __future__ import annotations

from collections.abc import Sequence

from dealer.bank.register import PlayedRegister
from dealer.core.errors import Phrase
from dealer.formats.pbn_scan import ScannedDeals

from .file_reading import FileReport


def set_aside_played(parsed: Sequence[tuple[FileReport, ScannedDeals]], register: PlayedRegister) -> int:
    """Leave out of an import every deal the register holds as played (Law 15: never drawn again, in any bank);
    each becomes a problem of its file, naming the draw or file that played it. Returns how many were left out."""
    from dealer.formats.base import ReadProblem

    if not register.count():
        return 0
    played = register.played(d for _, deals in parsed for d in deals.deals)
    if not played:
        return 0
    left_out = 0
    for report, deals in parsed:
        keep = [k for k, d in enumerate(deals.deals) if d not in played]
        if len(keep) == len(deals.deals):
            continue
        for k, deal in enumerate(deals.deals):
            if deal in played:
                why = Phrase(
                    "already played in the competition ({source}; register {path}): a deal is never played twice "
                    "(Law 15)",
                    source=register.source_of(deal) or "",
                    path=register.path,
                )
                report.problems.append(ReadProblem(str(why), deals.boards[k], deals.lines[k], error=why))
        left_out += len(deals.deals) - len(keep)
        deals.deals[:] = [deals.deals[k] for k in keep]
        deals.lines[:] = [deals.lines[k] for k in keep]
        deals.boards[:] = [deals.boards[k] for k in keep]
        report.records = len(keep)
    return left_out
