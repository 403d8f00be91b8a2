"""``dealer deal …``, ``dealer board``, ``dealer regulation check``."""

from __future__ import annotations

from pathlib import Path

from . import kit
from .console import Console
from .i18n import language, t
from .light import board_line, deal_show_text, regulation_tables
from .root import app

out = Console(highlight=False, markup=False)
deal_app = kit.Group(help="Show, number and check single deals.", no_args_is_help=True)
regulation_app = kit.Group(help="Check the competition regulation.", no_args_is_help=True)
app.add_group(deal_app, name="deal")
app.add_group(regulation_app, name="regulation")

LangOption = kit.Option(
    None, "--lang", help="Language of seats and ranks: ru or en (default: the command line's language)."
)


def _lang(value: str | None) -> str:
    if value is None:
        return language()
    if value not in ("en", "ru"):
        raise kit.BadParameter(t("{value!r}: expected ru or en", value=value), param_hint="--lang")
    return value


@deal_app.command("show")
def deal_show(
    pbn: str = kit.Argument(..., help='A PBN deal, e.g. "N:AJ9.K9542.Q.AK93 K.QJ76.K98763.75 ..."'),
    lang: str | None = LangOption,
    ascii_suits: bool = kit.Option(False, "--ascii", help="Suits as S H D C instead of ♠ ♥ ♦ ♣."),
) -> None:
    """Print the deal as a compass diagram with the HCP of each hand."""
    diagram, number = deal_show_text(pbn, _lang(lang), ascii_suits)
    out.print(diagram, markup=False)
    out.print(number, markup=False)


@deal_app.command("rank")
def deal_rank_cmd(pbn: str = kit.Argument(..., help="A PBN deal.")) -> None:
    """Print Big Deal's deal number of a deal."""
    from dealer.core import Deal

    out.print(str(Deal.from_pbn(pbn).rank()), markup=False)


@deal_app.command("unrank")
def deal_unrank_cmd(
    number: str = kit.Argument(..., help="A deal number in 0 .. D-1 (commas allowed)."),
    first: str = kit.Option("N", "--first", help="Seat to list first in the PBN output."),
) -> None:
    """Print the PBN deal of a Big Deal deal number."""
    from dealer.core import Seat
    from dealer.core.numbering import deal_from_rank, parse_deal_number

    deal = deal_from_rank(parse_deal_number(number))
    out.print(deal.to_pbn(Seat.parse(first)), markup=False)


@app.command("board")
def board_cmd(number: int = kit.Argument(..., help="Board number, 1 or more.")) -> None:
    """Print the dealer and vulnerability of a board (Law 2)."""
    out.print(board_line(number), markup=False)


@regulation_app.command("check")
def regulation_check(
    path: Path | None = kit.Argument(None, help="Regulation TOML file; the embedded default when omitted."),
) -> None:
    """Load a regulation file and print what it says, or the first thing wrong with it."""
    for spec in regulation_tables(path):
        out.print(spec)
