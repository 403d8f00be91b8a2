"""``dealer deal …``, ``dealer board``, ``dealer regulation check``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from dealer.core import Deal, board_dealer, board_vulnerability
from dealer.core.diagram import compass_diagram
from dealer.core.numbering import deal_from_rank, format_deal_number, parse_deal_number

from .app import app
from .i18n import language, t

out = Console(highlight=False, markup=False)
deal_app = typer.Typer(help="Show, number and check single deals.", no_args_is_help=True)
regulation_app = typer.Typer(help="Check the competition regulation.", no_args_is_help=True)
app.add_typer(deal_app, name="deal")
app.add_typer(regulation_app, name="regulation")

LangOption = typer.Option(
    None, "--lang", help="Language of seats and ranks: ru or en (default: the command line's language)."
)


def _lang(value: str | None) -> str:
    if value is None:
        return language()
    if value not in ("en", "ru"):
        raise typer.BadParameter(t("{value!r}: expected ru or en", value=value), param_hint="--lang")
    return value


@deal_app.command("show")
def deal_show(
    pbn: str = typer.Argument(..., help='A PBN deal, e.g. "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 ..."'),
    lang: str | None = LangOption,
    ascii_suits: bool = typer.Option(False, "--ascii", help="Suits as S H D C instead of ♠ ♥ ♦ ♣."),
) -> None:
    """Print the deal as a compass diagram with the HCP of each hand."""
    deal = Deal.from_pbn(pbn)
    out.print(compass_diagram(deal, _lang(lang), "ascii" if ascii_suits else "unicode"), markup=False)
    out.print("\n" + t("Deal number {number}", number=format_deal_number(deal.rank())), markup=False)


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
    if language() == "en":
        out.print(f"Board {number}: dealer {dealer.letter}, vulnerable {vul.pbn}", markup=False)
        return
    from dealer.core.diagram import SEAT_NAMES

    vulnerable = {"None": t("nobody"), "NS": t("North–South"), "EW": t("East–West"), "All": t("both sides")}
    text = t(
        "Board {number}: dealer {dealer}, vulnerable {vul}",
        number=number,
        dealer=SEAT_NAMES["ru"][dealer],
        vul=vulnerable[vul.pbn],
    )
    out.print(text, markup=False)


@regulation_app.command("check")
def regulation_check(
    path: Path | None = typer.Argument(None, help="Regulation TOML file; the embedded default when omitted."),
) -> None:
    """Load a regulation file and print what it says, or the first thing wrong with it."""
    from rich.table import Table

    from dealer.regulation import load_regulation

    reg = load_regulation(path)
    lang = language()
    variants = {1: t("closed"), 2: t("partially open"), 3: t("open")}
    title = reg.title or (str(path) if path else t("default"))
    if path is None and reg.title == "Default regulation":
        title = t("Default regulation")
    table = Table(title=t("Regulation: {title}", title=title), show_header=False)
    table.add_row(t("dealing variant"), f"{int(reg.variant)} ({variants[int(reg.variant)]})")
    table.add_row(t("open cards per deal"), str(reg.open_count()))
    table.add_row(t("share drawn"), t("{percent} of the whole sealed bank", percent=_percent(reg.share_percent, lang)))
    table.add_row(t("boards per session"), str(reg.boards_per_session))
    table.add_row(t("deals drawn per session"), str(reg.deals_per_session))
    table.add_row(t("sessions"), str(reg.sessions))
    table.add_row(t("spare deals (replacement boards)"), str(reg.spare_deals))
    table.add_row(t("copies of each board"), str(reg.copies))
    table.add_row(t("deals the schedule draws"), str(reg.total_deals))
    table.add_row(t("bank target"), str(reg.bank_target))
    out.print(table)
    plan = Table(title=t("The draw plan against the bank target"), show_header=True)
    for name in (t("draw"), t("deals"), t("drawn in all"), t("share of the bank")):
        plan.add_column(name, justify="right")
    drawn = 0
    for k in range(1, reg.sessions + 1):
        drawn += reg.deals_per_session
        share = _percent(100 * drawn / reg.bank_target, lang, "0.00")
        plan.add_row(t("session {k}", k=k), str(reg.deals_per_session), str(drawn), share)
    if reg.spare_deals:
        drawn += reg.spare_deals
        share = _percent(100 * drawn / reg.bank_target, lang, "0.00")
        plan.add_row(t("spare"), str(reg.spare_deals), str(drawn), share)
    out.print(plan)


def _percent(value: float, lang: str, pattern: str = "0.##") -> str:
    from dealer.i18n import Messages

    return Messages(lang, {}).percent(value, pattern)
