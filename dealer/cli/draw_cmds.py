"""``dealer draw prepare|public-value|run|show|reveal|bundle|verify``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from dealer.draw.bundle import load_bundle, verify_bundle
from dealer.draw.director import Director, DrawnDeal
from dealer.draw.protocol import DrawError, dice_spec, named_spec

from .app import app, fail
from .options import BankOption, KeysOption, open_bank

out = Console(highlight=False, markup=False)
draw_app = typer.Typer(help="The verifiable draw: commit, public value, run, reveal, bundle, verify.")
app.add_typer(draw_app, name="draw", no_args_is_help=True)


def _print_drawn(drawn: list[DrawnDeal]) -> None:
    for item in drawn:
        d = item.deal
        out.print(f"deal {d.deal_id:>7} (pick {item.position:>7})  {d.deal.to_pbn()}", markup=False)


@draw_app.command("prepare")
def prepare_cmd(
    label: str = typer.Argument(..., help="Session label, e.g. 'Open pairs, session 1'."),
    share: float | None = typer.Option(None, "--share", help="Percent of the eligible deals, 1..10."),
    count: int | None = typer.Option(None, "--count", help="Number of deals (1%..10% of the eligible)."),
    witness: list[str] = typer.Option([], "--witness", help="A witness who will roll dice (repeat, in order)."),
    digits: int = typer.Option(10, "--digits", help="Dice digits each witness gives."),
    named: str | None = typer.Option(None, "--named", help="Describe a named future public number instead of dice."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Commit to a draw and print the commitment to publish."""
    if bool(witness) == (named is not None):
        raise fail("give the dice witnesses (--witness, repeated) or --named, one of the two")
    spec = named_spec(named) if named is not None else dice_spec(witness, digits)
    with open_bank(bank, keys) as b:
        published = Director(b).prepare(label, spec, share, count)
    out.print(json.dumps(published, indent=2, sort_keys=True), markup=False)


@draw_app.command("public-value")
def public_value_cmd(
    label: str = typer.Argument(...),
    dice: list[str] = typer.Option([], "--dice", help="One witness's digits (repeat in the committed order)."),
    named: str | None = typer.Option(None, "--named", help="The named public number."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Enter the public value V after the commitment is published."""
    with open_bank(bank, keys) as b:
        value = Director(b).enter_public_value(label, dice or None, named)
    out.print(f"public value of {label!r}: {value}", markup=False)


@draw_app.command("run")
def run_cmd(label: str = typer.Argument(...), bank: Path = BankOption, keys: Path | None = KeysOption) -> None:
    """Run the draw (director only: prints the drawn deals; keep them secret until play)."""
    with open_bank(bank, keys) as b:
        drawn = Director(b).run(label)
    _print_drawn(drawn)
    out.print(f"{len(drawn)} deals drawn for {label!r}", markup=False)


@draw_app.command("show")
def show_cmd(
    label: str = typer.Argument(...),
    output: Path | None = typer.Option(
        None, "--out", "-o", help="Also write the drawn deals as boards 1..n to this deal file (format by extension)."
    ),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Show the drawn deals of a draw (director only); --out writes them for `dealer export`."""
    with open_bank(bank, keys) as b:
        drawn = Director(b).drawn_deals(label)
    _print_drawn(drawn)
    if output is not None:
        _write_drawn(drawn, output, label)


def _write_drawn(drawn: list[DrawnDeal], output: Path, label: str) -> None:
    """The drawn deals in pick order as boards 1..n (Law 2), in a file only its owner can read (it is secret)."""
    import os

    from dealer.core import board_dealer, board_vulnerability
    from dealer.formats import by_path, load_all
    from dealer.formats.base import BoardRecord, ExportMeta

    load_all()
    fmt = by_path(str(output))
    boards = [
        BoardRecord(item.deal.deal, board=n, dealer=board_dealer(n), vulnerability=board_vulnerability(n))
        for n, item in enumerate(drawn, start=1)
    ]
    data = fmt.write(boards, ExportMeta(event=label))
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(output, 0o600)
    out.print(f"{len(boards)} boards written to {output} (owner-only: keep it secret until play)", markup=False)


@draw_app.command("reveal")
def reveal_cmd(label: str = typer.Argument(...), bank: Path = BankOption, keys: Path | None = KeysOption) -> None:
    """After play: publish K and the drawn deal ids."""
    with open_bank(bank, keys) as b:
        data = Director(b).reveal(label)
    out.print(json.dumps(data, indent=2), markup=False)


@draw_app.command("bundle")
def bundle_cmd(
    label: str = typer.Argument(...),
    output: Path = typer.Option(..., "--out", "-o", help="Where to write the bundle (JSON)."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Write the verification bundle of a revealed draw (docs/bundle.md)."""
    with open_bank(bank, keys) as b:
        bundle = Director(b).bundle(label)
    output.write_text(json.dumps(bundle, indent=1, sort_keys=True) + "\n")
    out.print(f"wrote {output}: {len(bundle['drawn'])} drawn deals with openings and proofs", markup=False)


@draw_app.command("verify")
def verify_cmd(bundle_path: Path = typer.Argument(..., metavar="BUNDLE", help="A bundle JSON file.")) -> None:
    """Check a published bundle without any database; print each check, stop at the first failure."""
    try:
        bundle = load_bundle(bundle_path.read_bytes())
    except OSError as exc:
        raise fail(f"{bundle_path}: cannot read: {exc.strerror or exc}") from exc
    except DrawError as exc:
        raise fail(f"{bundle_path}: {exc}") from exc
    checks = verify_bundle(bundle)
    for check in checks:
        mark = Text("passed", style="green") if check.ok else Text("FAILED", style="bold red")
        out.print(mark, f"{check.name}:", end=" ")
        out.print(check.detail, markup=False)
    if not checks or not checks[-1].ok:
        raise fail(f"{bundle_path}: verification failed at '{checks[-1].name}'")
    out.print(f"{bundle_path}: all {len(checks)} checks passed", markup=False)
