"""The director's export steps in ``dealer.app`` (#29): one board making, its per-copy watchdog included, for the
director's console and ``dealer export boards``; the draw's steps (numbering, public value kinds, the reveal gate).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grimp
import pytest

from dealer.app.draws import RevealGate, renumbered, value_spec
from dealer.app.exports import (
    CopyTimeout,
    WatchdogMaker,
    copy_deadline,
    export_payload,
    make_boards,
)
from dealer.bank.draws import DrawState
from dealer.core import Deal
from dealer.core.events import DeviceEvent
from dealer.export.boards import SessionBoard
from dealer.export.machine import CopyMaker, MakeReport
from dealer.export.run import BoardsDone
from dealer.handrecords.publish import NotRevealedError

DEAL = Deal.from_pbn("N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432")  # a suit each


class Silent:
    """A machine that never ends a copy (its link went quiet)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def make_copy(self, board_number: int, deal: Deal, copy: int) -> Iterable[DeviceEvent]:
        self.started.set()
        await asyncio.Event().wait()
        return []

    async def recover(self) -> None:
        await asyncio.Event().wait()


def test_the_watchdog_makes_a_copy_the_machine_never_ends_a_timeout() -> None:
    async def scenario() -> CopyTimeout:
        silent = Silent()
        with pytest.raises(CopyTimeout) as caught:
            await WatchdogMaker(silent, 0.01).make_copy(
                3, Deal.from_pbn("N:AKQJT98765432... .AKQJT98765432.. ..AKQJT98765432. ...AKQJT98765432"), 2
            )
        assert silent.started.is_set()
        with pytest.raises(TimeoutError):
            await WatchdogMaker(silent, 0.01).recover()
        return caught.value

    err = asyncio.run(scenario())
    assert isinstance(err, TimeoutError)
    assert str(err) == "board 3 copy 2: no end from the machine in 0.01 s"


def test_a_copy_s_deadline_is_the_given_timeout_else_four_paces_and_at_least_thirty_seconds() -> None:
    assert copy_deadline(None, 0.5) == 30.0  # 4 × 0.5 = 2 s: the floor of 30 s
    assert copy_deadline(None, 10.0) == 40.0  # 4 × 10 s
    assert copy_deadline(5.0, 10.0) == 5.0  # the director's own timeout wins


def test_the_cli_s_board_making_runs_the_director_s_code_watchdog_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``dealer export boards`` goes through ``dealer.app.exports.make_boards``: the copy maker it is given is
    wrapped in the watchdog, with the deadline the director's console would use for the same pace."""
    import dealer.export.run as run
    from dealer.cli.app import run as run_cli

    seen: dict[str, object] = {}

    async def fake_make_boards_on(device: str, boards: object, journal: Path, **kw: object) -> BoardsDone:
        wrap = kw["wrap"]
        assert callable(wrap)
        seen["device"], seen["journal"], seen["maker"] = device, journal, wrap(Silent())
        journal.write_text("{}")
        return BoardsDone(MakeReport(), None)

    monkeypatch.setattr(run, "make_boards_on", fake_make_boards_on)
    pbn = f'[Board "1"]\n[Dealer "N"]\n[Vulnerable "None"]\n[Deal "{DEAL.to_pbn()}"]\n'
    (tmp_path / "drawn.pbn").write_text(pbn, encoding="utf-8")
    out = tmp_path / "new" / "folder"
    code = run_cli(
        [
            "export",
            "boards",
            str(tmp_path / "drawn.pbn"),
            "--simulate",
            "--copies",
            "1",
            "-o",
            str(out),
            "--name",
            "Тур 1",
        ],
    )
    assert code == 0, capsys.readouterr()
    maker = seen["maker"]
    assert isinstance(maker, WatchdogMaker) and maker.seconds == 30.0  # pace 0.5 s: the 30 s floor
    assert seen["device"] == "simulator" and seen["journal"] == out / "Тур 1.journal.json"


def test_make_boards_makes_the_journal_s_folder_and_wraps_every_copy_maker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dealer.export.run as run

    wrapped: list[CopyMaker] = []

    async def fake(device: str, boards: object, journal: Path, **kw: object) -> BoardsDone:
        wrap = kw["wrap"]
        assert callable(wrap) and journal.parent.is_dir()
        wrapped.append(wrap(Silent()))
        return BoardsDone(MakeReport(), None)

    monkeypatch.setattr(run, "make_boards_on", fake)
    asyncio.run(make_boards("simulator", [], tmp_path / "a" / "b.journal.json", copy_timeout=7.0, pace=100.0))
    assert [type(m) for m in wrapped] == [WatchdogMaker]
    assert isinstance(wrapped[0], WatchdogMaker) and wrapped[0].seconds == 7.0


def test_only_the_app_layer_opens_a_device_for_board_making() -> None:
    """The web's job and the CLI's command reach ``dealer.export.run`` only through ``dealer.app.exports``."""
    graph = grimp.build_graph("dealer", "drivers", "firmware_protocol", cache_dir=None)
    importers = graph.find_modules_that_directly_import("dealer.export.run")
    assert importers == {"dealer.app.exports"}
    assert graph.direct_import_exists(importer="dealer.cli.export_cmds", imported="dealer.app.exports")
    assert graph.direct_import_exists(importer="dealer.web.routes_export", imported="dealer.app.exports")


def test_an_export_record_holds_each_file_s_sha256(tmp_path: Path) -> None:
    (tmp_path / "a.pbn").write_bytes(b"abc")
    payload = export_payload("files", "R1", [tmp_path / "a.pbn"], sealed=False)
    # SHA-256("abc"), FIPS 180-2 appendix B.1
    digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert payload == {"what": "files", "label": "R1", "files": {"a.pbn": digest}, "sealed": False}


def test_variant_1_boards_continue_the_numbering_from_first() -> None:
    deal = DEAL
    made = [SessionBoard(1, deal, 1), SessionBoard(2, deal, 1)]
    assert [(b.number, b.copies) for b in renumbered(made, first=17, copies=3)] == [(17, 3), (18, 3)]


@dataclass
class Drawn:
    state: DrawState


class Draws:
    def __init__(self, states: dict[str, DrawState]) -> None:
        self.states = states

    def get_draw(self, label: str) -> Drawn:
        return Drawn(self.states[label])


def test_hand_records_wait_for_the_reveal_except_variant_1_s_boards() -> None:
    bank = Draws({"R1": DrawState.DRAWN, "R2": DrawState.REVEALED})
    gate = RevealGate(bank, closed_label="closed")
    gate.ensure_revealed("R2")
    gate.ensure_revealed("closed")  # no draw to look up (KeyError if it were asked)
    with pytest.raises(NotRevealedError):
        gate.ensure_revealed("R1")
    with pytest.raises(KeyError):
        RevealGate(bank).ensure_revealed("closed")  # without variant 1 the label is a draw's like any other


@dataclass
class Asked:
    witnesses: Sequence[str] | None
    rolls: int = 8
    faces: int = 6
    named: str | None = "the evening lottery"
    numbers: int = 10
    min: int = 1
    max: int = 80
    width: int | None = None
    as_drawn: bool = False
    repeats: bool = False
    separator: str = "-"


def test_the_public_value_is_the_witnesses_dice_when_witnesses_are_named_else_a_named_number() -> None:
    dice = value_spec(Asked(witnesses=["Ann", "Bob"]), "en")
    named = value_spec(Asked(witnesses=None), "en")
    assert (dice.kind, dice.witnesses, dice.rolls, dice.faces) == ("dice", ("Ann", "Bob"), 8, 6)
    assert dice.description == "8 rolls of a d6 by each of Ann, Bob, in that order"
    assert (named.kind, named.description, named.count, named.minimum, named.maximum) == (
        "named", "the evening lottery", 10, 1, 80,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("order", "bits"),
    [
        ((), "24.5"),  # 5 distinct of 1..80 ascending: C(80, 5) = 24,040,016 outcomes, log2 = 24.52
        (("--as-drawn",), "31.4"),  # in the order drawn: 80·79·78·77·76 = 2,884,801,920, log2 = 31.43
    ],
)
def test_the_cli_s_draw_prepare_reads_a_named_value_as_the_director_s_console_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], order: tuple[str, ...], bits: str
) -> None:
    """``dealer draw prepare --named`` builds its public value through ``value_spec``: the options reach it (the
    order changes the count of outcomes), and a value below 32 bits is refused before the bank is opened."""
    from dealer.cli.app import run as run_cli

    argv = ["--lang", "en", "draw", "prepare", "S1", "--named", "the evening lottery", "--numbers", "5", "--max", "80"]
    code = run_cli([*argv, *order, "--bank", str(tmp_path / "none.sqlite")])
    err = capsys.readouterr().err
    assert code == 1 and f"error: the public value carries {bits} bits" in err, err
    assert not (tmp_path / "none.sqlite").exists()
