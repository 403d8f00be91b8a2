"""``dealer deal …``, ``dealer board``, ``dealer regulation check``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from dealer.core import Deal, board_dealer, board_vulnerability
from dealer.core.diagram import compass_diagram
from dealer.core.numbering import deal_from_rank, format_deal_number, parse_deal_number

from .app import app

out = Console(highlight=False, markup=False)
deal_app = typer.Typer(help="Show, number and check single deals.", no_args_is_help=True)
regulation_app = typer.Typer(help="Check the competition regulation.", no_args_is_help=True)
app.add_typer(deal_app, name="deal")
app.add_typer(regulation_app, name="regulation")

LangOption = typer.Option("en", "--lang", help="Language of seats and ranks: en or ru.")


def _lang(value: str) -> str:
    if value not in ("en", "ru"):
        raise typer.BadParameter(f"{value!r}: expected en or ru", param_hint="--lang")
    return value


@deal_app.command("show")
def deal_show(
    pbn: str = typer.Argument(..., help='A PBN deal, e.g. "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 ..."'),
    lang: str = LangOption,
    ascii_suits: bool = typer.Option(False, "--ascii", help="Suits as S H D C instead of ♠ ♥ ♦ ♣."),
) -> None:
    """Print the deal as a compass diagram with the HCP of each hand."""
    deal = Deal.from_pbn(pbn)
    out.print(compass_diagram(deal, _lang(lang), "ascii" if ascii_suits else "unicode"), markup=False)
    out.print(f"\nDeal number {format_deal_number(deal.rank())}", markup=False)


@deal_app.command("rank")
def deal_rank_cmd(pbn: str = typer.Argument(..., help="A PBN deal.")) -> None:
    """Print Big Deal's deal number of a deal."""
    out.print(str(Deal.from_pbn(pbn).rank()), markup=False)


@deal_app.command("unrank")
def deal_unrank_cmd(
    number: str = typer.Argument(..., help="A deal number in 0 .. D-1 (commas allowed)."),
    first: str = typer.Option("N", "--first", help="Seat to list first in the PBN output."),
) -> None:
    """Print the PBN deal of a Big Deal deal number."""
    from dealer.core import Seat

    deal = deal_from_rank(parse_deal_number(number))
    out.print(deal.to_pbn(Seat.parse(first)), markup=False)


@app.command("board")
def board_cmd(number: int = typer.Argument(..., help="Board number, 1 or more.")) -> None:
    """Print the dealer and vulnerability of a board (Law 2)."""
    dealer = board_dealer(number)
    vul = board_vulnerability(number)
    out.print(f"Board {number}: dealer {dealer.letter}, vulnerable {vul.pbn}", markup=False)


@regulation_app.command("check")
def regulation_check(
    path: Path | None = typer.Argument(None, help="Regulation TOML file; the embedded default when omitted."),
) -> None:
    """Load a regulation file and print what it says, or the first thing wrong with it."""
    from rich.table import Table

    from dealer.regulation import load_regulation

    reg = load_regulation(path)
    table = Table(title=f"Regulation: {reg.title or (path or 'default')}", show_header=False)
    table.add_row("dealing variant", f"{int(reg.variant)} ({reg.variant.name.lower().replace('_', ' ')})")
    table.add_row("open cards per deal", str(reg.open_count()))
    table.add_row("share drawn", f"{reg.share_percent:g}% of the whole sealed bank")
    table.add_row("boards per session", str(reg.boards_per_session))
    table.add_row("deals drawn per session", str(reg.deals_per_session))
    table.add_row("sessions", str(reg.sessions))
    table.add_row("spare deals (replacement boards)", str(reg.spare_deals))
    table.add_row("copies of each board", str(reg.copies))
    table.add_row("deals the schedule draws", str(reg.total_deals))
    table.add_row("bank target", str(reg.bank_target))
    out.print(table)
    plan = Table(title="The draw plan against the bank target", show_header=True)
    for name in ("draw", "deals", "drawn in all", "share of the bank"):
        plan.add_column(name, justify="right")
    drawn = 0
    for k in range(1, reg.sessions + 1):
        drawn += reg.deals_per_session
        plan.add_row(f"session {k}", str(reg.deals_per_session), str(drawn), f"{100 * drawn / reg.bank_target:.2f}%")
    if reg.spare_deals:
        drawn += reg.spare_deals
        plan.add_row("spare", str(reg.spare_deals), str(drawn), f"{100 * drawn / reg.bank_target:.2f}%")
    out.print(plan)
