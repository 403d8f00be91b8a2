"""``dealer draw prepare|publish|public-value|void|run|show|reveal|bundle|verify``.

Machine output (the commitment, the reveal, JSON) is written to stdout as plain bytes, never through rich:
it is what gets published, and it must parse whatever the terminal's width.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from . import kit
from .console import Console
from .i18n import error, os_reason, t
from .machine import print_json, print_line
from .options import (
    BankOption,
    KeysOption,
    PassphraseOption,
    RegisterOption,
    open_bank,
    open_unlocked,
    register_path,
)
from .root import app, fail

if TYPE_CHECKING:  # the draw's code loads inside the commands (help and the other commands need none of it)
    from dealer.core.json_types import JsonObject
    from dealer.draw.bundle import Check
    from dealer.draw.director import DrawnDeal

out = Console(highlight=False, markup=False)
note = Console(highlight=False, markup=False, stderr=True)
LabelArgument = kit.Argument(..., help="Session label, e.g. 'Open pairs, session 1'.")
draw_app = kit.Group(help="The verifiable draw: commit, publish, public value, run, reveal, bundle, verify.")
app.add_group(draw_app, name="draw", no_args_is_help=True)

RegulationOption = kit.Option(
    None, "--regulation", help="Regulation TOML (share, schedule, bank target); the embedded default when omitted."
)


def _print_drawn(drawn: list[DrawnDeal]) -> None:
    """Each drawn deal's id and pick, then its four hands in the command line's language (seats, ranks and suits
    as the draw annex and the hand records write them: «С: ♠ Т К 5  ♥ …»)."""
    from dealer.core import Seat
    from dealer.core.diagram import seat_hand_line

    from .i18n import language

    lang = language()
    for item in drawn:
        d = item.deal
        print_line(t("deal {deal_id:>7} (pick {position:>7})", deal_id=d.deal_id, position=item.position))
        for seat in Seat:
            print_line("  " + seat_hand_line(d.deal, seat, lang))


@draw_app.command("prepare")
def prepare_cmd(
    label: str = LabelArgument,
    replacement: bool = kit.Option(False, "--replacement", help="Draw one deal for a replacement board."),
    override: str | None = kit.Option(
        None, "--override", help="Director's reason to draw from a bank below the regulation's target (ledgered)."
    ),
    witness: list[str] = kit.Option([], "--witness", help="A witness who will roll (repeat, in order)."),
    rolls: int = kit.Option(8, "--rolls", help="Rolls each witness makes."),
    faces: int = kit.Option(6, "--faces", help="Faces of the die: 6 (1-6) or 10 (0-9)."),
    named: str | None = kit.Option(None, "--named", help="Describe a named future public number instead of dice."),
    numbers: int = kit.Option(0, "--numbers", help="Named: how many numbers V holds."),
    minimum: int = kit.Option(1, "--min", help="Named: smallest possible number."),
    maximum: int = kit.Option(0, "--max", help="Named: largest possible number."),
    width: int | None = kit.Option(None, "--width", help="Named: digits per number (default: those of --max)."),
    as_drawn: bool = kit.Option(False, "--as-drawn", help="Named: numbers in the order drawn, not ascending."),
    repeats: bool = kit.Option(False, "--repeats", help="Named: numbers may repeat."),
    separator: str = kit.Option("-", "--separator", help="Named: the character between numbers (- / , . :)."),
    regulation: Path | None = RegulationOption,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
    register: Path | None = RegisterOption,
) -> None:
    """Commit to a draw (n from the regulation's schedule) and print the commitment to publish (JSON)."""
    from dealer.app.draws import Asked, value_spec
    from dealer.draw.director import Director
    from dealer.regulation import load_regulation

    from .i18n import language

    if bool(witness) == (named is not None):
        raise fail(t("give the dice witnesses (--witness, repeated) or --named, one of the two"))
    asked = Asked(
        witness, rolls=rolls, faces=faces, named=named, numbers=numbers, min=minimum, max=maximum, width=width,
        as_drawn=as_drawn, repeats=repeats, separator=separator,
    )  # fmt: skip
    spec = value_spec(asked, language())
    reg = load_regulation(regulation)
    from dealer.bank.register import PlayedRegister

    with open_unlocked(bank, keys, passphrase) as b, PlayedRegister(register_path(bank, register)) as played:
        published = Director(b, played).prepare(label, spec, reg, replacement=replacement, override=override)
    print_json(published)


@draw_app.command("publish")
def publish_cmd(label: str = LabelArgument, bank: Path = BankOption, keys: Path | None = KeysOption) -> None:
    """Record that the commitment was shown to the hall (needed before the public value); print what it shows."""
    from dealer.draw.director import Director
    from dealer.draw.protocol import PublicValueSpec

    with open_bank(bank, keys) as b:
        view = Director(b).publish(label)
        spec = PublicValueSpec.from_dict(Director(b).commitment(label)["commitment"]["public_value"])
    view["format"] = error(spec.format_phrase())  # the signed description stays as committed
    print_json(view)


@draw_app.command("public-value")
def public_value_cmd(
    label: str = LabelArgument,
    dice: list[str] = kit.Option([], "--dice", help="One witness's digits (repeat in the committed order)."),
    named: str | None = kit.Option(None, "--named", help="The named public number, as announced."),
    dry_run: bool = kit.Option(False, "--dry-run", help="Only show the canonical form; store nothing."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Enter the public value V after the commitment is published; prints the canonical V it stored."""
    from dealer.draw.director import Director

    with open_bank(bank, keys) as b:
        d = Director(b)
        value = d.normalise(label, dice or None, named) if dry_run else d.enter_public_value(label, dice or None, named)
    if dry_run:
        note.print(t("canonical public value of {label!r} (not stored):", label=label), markup=False)
    else:
        note.print(t("canonical public value of {label!r}, stored:", label=label), markup=False)
    print_line(value)


@draw_app.command("void")
def void_cmd(
    label: str = LabelArgument,
    reason: str = kit.Option(..., "--reason", help="Why the prepared draw is abandoned (public, in the ledger)."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
) -> None:
    """Void a prepared draw that has not run: a public ledger entry with the reason and its K."""
    from dealer.draw.director import Director

    with open_unlocked(bank, keys, passphrase) as b:
        data = Director(b).void(label, reason)
    print_json(data)


@draw_app.command("run")
def run_cmd(
    label: str = LabelArgument,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
) -> None:
    """Run the draw before the hall: prints how many deals were drawn, never which (they stay sealed under the
    chief judge's key; `draw show` opens them)."""
    from dealer.draw.director import Director

    with open_unlocked(bank, keys, passphrase) as b:
        drawn = Director(b).run(label)
    out.print(
        t("{n} deals drawn for {label!r}: sealed until the reveal (dealer draw show opens them)", n=len(drawn),
          label=label),
        markup=False,
    )  # fmt: skip


@draw_app.command("show")
def show_cmd(
    label: str = LabelArgument,
    output: Path | None = kit.Option(
        None, "--out", "-o", help="Also write the drawn deals as boards 1..n to this deal file (format by extension)."
    ),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
) -> None:
    """Show the drawn deals of a draw (the chief judge's passphrase opens them); --out writes them for `dealer
    export`."""
    from dealer.draw.director import Director

    with open_unlocked(bank, keys, passphrase) as b:
        drawn = Director(b).drawn_deals(label)
    _print_drawn(drawn)
    if output is not None:
        _write_drawn(drawn, output, label)


def _write_drawn(drawn: list[DrawnDeal], output: Path, label: str) -> None:
    """The drawn deals in pick order as boards 1..n (Law 2), in a file only its owner can read (it is secret)."""
    import os

    from dealer.app.draws import drawn_boards
    from dealer.export.boards import records_of
    from dealer.formats import by_path, load_all
    from dealer.formats.base import ExportMeta

    load_all()
    fmt = by_path(str(output))
    boards = records_of(drawn_boards(drawn))
    data = fmt.write(boards, ExportMeta(event=label))
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(output, 0o600)
    out.print(
        t("{n} boards written to {output} (owner-only: keep it secret until play)", n=len(boards), output=output),
        markup=False,
    )


@draw_app.command("reveal")
def reveal_cmd(
    label: str = LabelArgument,
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
    passphrase: Path | None = PassphraseOption,
    register: Path | None = RegisterOption,
) -> None:
    """After play: publish K and the drawn deal ids; the deals go into the register of played deals."""
    from dealer.bank.register import PlayedRegister
    from dealer.draw.director import Director

    with open_unlocked(bank, keys, passphrase) as b, PlayedRegister(register_path(bank, register)) as played:
        data = Director(b, played).reveal(label)
    print_json(data)


@draw_app.command("bundle")
def bundle_cmd(
    label: str = LabelArgument,
    output: Path = kit.Option(..., "--out", "-o", help="Where to write the bundle (JSON)."),
    bank: Path = BankOption,
    keys: Path | None = KeysOption,
) -> None:
    """Write the verification bundle of a revealed draw (docs/bundle.md)."""
    from dealer.draw.director import Director

    with open_bank(bank, keys) as b:
        bundle = Director(b).bundle(label)
    from dealer.core.json_types import json_text

    output.write_text(json_text(bundle) + "\n", encoding="utf-8")
    out.print(
        t("wrote {output}: {n} drawn deals with openings and proofs", output=output, n=len(bundle["drawn"])),
        markup=False,
    )


@draw_app.command("verify")
def verify_cmd(
    bundle_path: Path = kit.Argument(..., metavar="BUNDLE", help="The bundle JSON file to check."),
    earlier: list[Path] = kit.Argument(None, metavar="[EARLIER]...", help="Bundles of the earlier draws."),
    chain: Path | None = kit.Option(None, "--chain", help="A folder of bundles of the bank's earlier draws."),
    commitment: str | None = kit.Option(
        None,
        "--commitment",
        help="The commitment's SHA-256 as the hall showed it and the draw protocol printed it (16 to 64 hex digits).",
    ),
    head: str | None = kit.Option(
        None,
        "--head",
        help="The ledger head SIZE:HASH noted after the seal (dealer bank seal) or printed in the draw protocol: it "
        "must be the one right after this bundle's seal or commitment.",
    ),
    value: str | None = kit.Option(
        None, "--value", help="V as the hall showed it (the witnesses' digits or the named numbers, as noted)."
    ),
    register: Path | None = kit.Option(
        None, "--register", help="A register of played deals: no drawn deal may have been played before this draw."
    ),
) -> None:
    """Check a published bundle without any database; print each check, stop at the first failure."""
    from dealer.draw.bundle import anchor_check, bank_of, head_check, other_banks, value_check, verify_bundle
    from dealer.integrity.anchors import AnchorError, Head

    try:
        noted_head = Head.parse(head) if head is not None else None
    except AnchorError as exc:
        raise fail(error(exc)) from None
    bundle = _read_bundle(bundle_path)
    given = [_read_bundle(p) for p in earlier or []]
    in_folder: list[Path] = []
    if chain is not None:  # every *.json there must be a bundle; other files are not read
        if not chain.is_dir():
            raise fail(t("{chain}: not a folder of bundles", chain=chain))
        in_folder = sorted(p for p in chain.glob("*.json") if p.resolve() != bundle_path.resolve())
    folder = [_read_bundle(p) for p in in_folder]
    for k in other_banks(bundle, folder):  # a folder may hold several banks' bundles: listed, never used
        print_line(t("ignored {path}: a bundle of another bank ({bank})", path=in_folder[k], bank=bank_of(folder[k])))
    checks = verify_bundle(bundle, given, folder)
    if commitment is not None and checks and checks[-1].ok:
        checks.append(anchor_check(bundle, commitment))
    if noted_head is not None and checks and checks[-1].ok:
        checks.append(head_check(bundle, noted_head))
    if value is not None and checks and checks[-1].ok:
        checks.append(value_check(bundle, value))
    if register is not None and checks and checks[-1].ok:
        checks.append(_register_check(bundle, register))
    for check in checks:  # details hold hashes: plain lines, never wrapped or coloured
        name, text = _check_name(check.name), error(check.text)
        print_line(
            t("passed {name}: {text}", name=name, text=text)
            if check.ok
            else t("FAILED {name}: {text}", name=name, text=text)
        )
    if not checks or not checks[-1].ok:
        raise fail(
            t(
                "{path}: verification failed at '{name}': {detail}",
                path=bundle_path,
                name=_check_name(checks[-1].name),
                detail=error(checks[-1].text),
            )
        )
    what = t("a voided draw, properly voided") if bundle["void"] is not None else t("the draw is verified")
    print_line(t("{path}: all {n} checks passed: {what}", path=bundle_path, n=len(checks), what=what))


def _register_check(bundle: JsonObject, path: Path) -> Check:
    """No drawn deal of ``bundle`` was registered as played by anything but this very draw (Law 15)."""
    from dealer.bank.register import PlayedRegister
    from dealer.core.errors import Phrase
    from dealer.draw.bundle import Check, register_source

    if not path.is_file():
        raise fail(t("{path}: no register of played deals there", path=path))
    own = register_source(bundle)
    with PlayedRegister(path) as played:
        before = [
            d["deal_id"] for d in bundle["drawn"] if played.source_of(bytes.fromhex(d["deal"])) not in (None, own)
        ]
        size = played.count()
    if before:
        return Check("register", False, Phrase("deals {ids} were played before this draw (register {path})",
                                               ids=", ".join(map(str, before)), path=path))  # fmt: skip
    return Check("register", True, Phrase("none of its deals was played before (register of {n} deals)", n=size))


def _check_name(name: str) -> str:
    """A bundle check's name in the command line's language (its details, mostly hashes, stay as written)."""
    names = {
        "well-formed": t("well-formed"),
        "format": t("format"),
        "seal signature": t("seal signature"),
        "commitment signature": t("commitment signature"),
        "commitment names the seal": t("commitment names the seal"),
        "seal is possible": t("seal is possible"),
        "commitment as printed": t("commitment as printed"),
        "head as printed": t("ledger head as printed"),
        "ledger entries": t("ledger entries"),
        "register": t("register of played deals"),
        "value as shown": t("value as shown"),
        "chain": t("chain"),
        "public value": t("public value"),
        "void": t("void draw"),
        "secret": t("secret"),
        "eligible set": t("eligible set"),
        "quota": t("quota"),
        "draw": t("draw"),
        "openings": t("openings"),
        "inclusion": t("inclusion"),
    }
    return names.get(name, name)


def _read_bundle(path: Path) -> JsonObject:
    from dealer.draw.bundle import load_bundle
    from dealer.draw.protocol import DrawError
    from dealer.fsutil import InputFileError, read_input

    try:
        return load_bundle(read_input(path))  # a regular file within the limit (a FIFO or /dev/zero is refused)
    except InputFileError as exc:
        raise fail(t("{file}: cannot read: {reason}", file=path, reason=error(exc))) from None
    except OSError as exc:
        raise fail(t("{file}: cannot read: {reason}", file=path, reason=os_reason(exc))) from exc
    except DrawError as exc:
        raise fail(t("{path}: not a well-formed bundle: {error}", path=path, error=error(exc))) from exc
    except RecursionError:  # JSON nested deeper than the interpreter's stack: no bundle is
        raise fail(t("{path}: not a well-formed bundle: JSON nested too deeply", path=path)) from None
