"""``dealer register add|status``: the register of played deals of the competition (Law 15), across banks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from . import kit
from .console import Console
from .i18n import t
from .options import BankOption, RegisterOption, register_path
from .root import app, fail

out = Console(highlight=False, markup=False)
register_app = kit.Group(help="The register of played deals: a deal once played is never drawn again.")
app.add_group(register_app, name="register", no_args_is_help=True)


def _deals_of(path: Path) -> list[bytes]:
    """The canonical deals of a draw bundle (its drawn deals) or of a deal file of any readable format."""
    import json

    from dealer.formats import by_path, load_all
    from dealer.fsutil import read_input

    data = read_input(path)
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("drawn"), list) and "commitment" in doc:
            try:
                return [bytes.fromhex(str(d["deal"])) for d in doc["drawn"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise fail(t("{path}: a bundle whose drawn deals cannot be read ({exc})", path=path, exc=exc)) from None
    load_all()
    result = by_path(str(path)).read(data, str(path))  # an unknown extension or a bad file: a DealerError
    return [r.deal.to_bytes() for r in result.records]


@register_app.command("add")
def add_cmd(
    files: list[Path] = kit.Argument(..., help="Bundles of earlier draws or hand-record files of earlier events."),
    bank: Path = BankOption,
    register: Path | None = RegisterOption,
) -> None:
    """Add the deals of earlier draws (bundles) or published hand records (deal files) to the register."""
    from dealer.bank.register import PlayedRegister

    now = datetime.now(UTC).isoformat(timespec="microseconds")
    with PlayedRegister(register_path(bank, register)) as played:
        for path in files:
            deals = _deals_of(path)
            if not deals:
                raise fail(t("{path}: no deal in it; nothing was added", path=path))
            new = played.add(deals, f"file {path.name}", now)
            out.print(t("{path}: {n} deals, {new} new in the register", path=path, n=len(deals), new=new))
        out.print(t("the register {path} holds {n} played deals", path=played.path, n=played.count()))


@register_app.command("status")
def status_cmd(bank: Path = BankOption, register: Path | None = RegisterOption) -> None:
    """How many played deals the register holds."""
    from dealer.bank.register import PlayedRegister

    with PlayedRegister(register_path(bank, register)) as played:
        out.print(t("the register {path} holds {n} played deals", path=played.path, n=played.count()))
