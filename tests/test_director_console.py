"""The consoles' steps without HTTP, as the routes call them in dealer.app: the director's (director_console: the
drawn deals as Law 2 boards, the commitment digest, the chief judge's custody, the altered public value), the
export's (exports: session boards, board cards shown), the judge's (checks, judge_console)."""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest
from _web_server import regulation as web_regulation
from _web_server import service_config
from bank_support import random_deal, station_source
from custody_support import TEST_KEYRING, TEST_PASSPHRASE, unlocked, write_custody
from draw_support import DICE, full_draw, make_bank, regulation

from dealer.app.checks import equipment_check_payload, equipment_override_payload, station_calibration
from dealer.app.closed import CLOSED_LABEL
from dealer.app.custody import CustodyState
from dealer.app.director_console import (
    altered_value,
    commitment_digest,
    custody_status,
    drawn_view,
    set_up_custody,
    unlock_custody,
)
from dealer.app.exports import interrupted_progress, session_boards, show_board_cards
from dealer.app.judge_console import answer_command
from dealer.app.operator_messages import CommandOk, Devices, JudgeAction, JudgeState, OperatorMessage
from dealer.app.service import Service
from dealer.bank.composed import Bank
from dealer.bank.store import ImportItem
from dealer.core.cards import Seat
from dealer.core.errors import DealerError
from dealer.custody import CustodyError, CustodyLockedError
from dealer.draw.director import Director
from dealer.export.at_rest import AtRest

REG = regulation(boards=17, share=10)  # 17 deals at 10 % -> a 170-deal bank

# Law 2 (the Laws of Duplicate Bridge 2017, the table of boards 1-16; board 17 starts it again): dealer, vulnerable
LAW2 = [
    ("N", "None"), ("E", "NS"), ("S", "EW"), ("W", "All"),
    ("N", "NS"), ("E", "EW"), ("S", "All"), ("W", "None"),
    ("N", "EW"), ("E", "All"), ("S", "None"), ("W", "NS"),
    ("N", "All"), ("E", "None"), ("S", "NS"), ("W", "EW"),
    ("N", "None"),
]  # fmt: skip


@pytest.fixture
def bank(tmp_path: Path) -> Iterator[Bank]:
    b = make_bank(tmp_path / "bank.sqlite", REG.bank_target, key_dir=tmp_path / "keys")
    yield b
    b.close()


def test_drawn_deals_are_boards_1_to_17_with_law_2_dealer_and_vulnerability(bank: Bank) -> None:
    director = Director(bank)
    director.seal()
    full_draw(director, "S1", REG, reveal=False)
    view = drawn_view(director, "S1")
    drawn = director.drawn_deals("S1")
    assert [b.board for b in view] == list(range(1, 18))
    assert [(b.dealer, b.vulnerability) for b in view] == LAW2
    assert [b.deal_id for b in view] == [d.deal.deal_id for d in drawn]  # in draw order
    assert [b.position for b in view] == [d.position for d in drawn]
    for b, d in zip(view, drawn, strict=True):
        assert sorted(c for hand in b.hands.values() for c in hand) == list(range(52))
        assert b.hands["N"] == [int(c) for c in d.deal.deal.hand(Seat.N).cards]
        assert b.pbn == d.deal.deal.to_pbn()


def test_commitment_digest_is_the_sha256_of_the_commitments_sorted_compact_json(bank: Bank) -> None:
    director = Director(bank)
    director.seal()
    full_draw(director, "S1", REG, reveal=False)
    doc = director.commitment("S1")["commitment"]
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)  # docs/bundle.md's form
    assert commitment_digest(director, "S1") == sha256(text.encode()).hexdigest()


def test_custody_state_none_locked_unlocked_elsewhere(bank: Bank) -> None:
    assert custody_status(bank, holds=True).state is CustodyState.NONE  # no record yet
    write_custody(bank.key_dir)
    assert custody_status(bank, holds=True).state is CustodyState.UNLOCKED
    assert custody_status(bank, holds=False).state is CustodyState.ELSEWHERE
    assert custody_status(bank, holds=False).public_key == TEST_KEYRING.public_key
    bank.lock()
    locked = custody_status(bank, holds=True)
    assert locked.state is CustodyState.LOCKED and locked.public_key == TEST_KEYRING.public_key


def test_unlock_takes_the_right_passphrase_only(bank: Bank) -> None:
    with pytest.raises(CustodyLockedError):  # no record to open
        unlock_custody(bank, TEST_PASSPHRASE)
    write_custody(bank.key_dir)
    bank.lock()
    with pytest.raises(CustodyError):
        unlock_custody(bank, "not the passphrase at all")
    assert not bank.key_loaded
    unlock_custody(bank, TEST_PASSPHRASE)
    assert bank.key_loaded and bank.keyring.public_key == TEST_KEYRING.public_key


def test_set_up_makes_a_record_once_and_refuses_a_key_that_did_not_sign_the_seals(tmp_path: Path) -> None:
    fresh = make_bank(tmp_path / "fresh.sqlite", 4, key_dir=tmp_path / "fresh")
    try:
        keyring = set_up_custody(fresh, "a passphrase of some length")
        assert custody_status(fresh, holds=True).state is CustodyState.UNLOCKED and fresh.key_loaded
        assert custody_status(fresh, holds=True).public_key == keyring.public_key
        with pytest.raises(CustodyError, match="set up already"):
            set_up_custody(fresh, "a passphrase of some length")
    finally:
        fresh.close()
    sealed = make_bank(tmp_path / "sealed.sqlite", 4, key_dir=tmp_path / "sealed")
    try:
        sealed.seal()  # signed by the test key, whose plain file is not in the key directory
        with pytest.raises(CustodyError, match="not here"):
            set_up_custody(sealed, "a passphrase of some length")
        assert not (tmp_path / "sealed" / "custody.json").exists()  # nothing half-written
    finally:
        sealed.close()


# -- the steps that read the service (no HTTP, no server: the service is not started) -------------------------
def _service(tmp_path: Path, variant: int = 2) -> Service:
    return Service(service_config(tmp_path), web_regulation(variant=variant, target=50), autostart=False)


def test_showing_board_cards_is_ledgered_once_and_hiding_is_not(tmp_path: Path) -> None:
    service = _service(tmp_path)

    async def steps() -> list[bool]:
        shown = []
        for show in (True, True, False, True):
            await show_board_cards(service, show, now=1000.0)
            shown.append(service.board_cards_shown)
        return shown

    try:
        assert asyncio.run(steps()) == [True, True, False, True]
        entries = service.bank.bank.entries_of_kind("cards_shown")
        assert [e.data for e in entries] == [{"what": "board making", "by": "judge", "time": 1000.0}] * 2
    finally:
        asyncio.run(service.shutdown())


def test_variant_1_boards_before_any_is_dealt_are_refused(tmp_path: Path) -> None:
    service = _service(tmp_path, variant=1)
    try:
        with pytest.raises(DealerError, match="no board has been dealt yet"):
            asyncio.run(session_boards(service, CLOSED_LABEL, first=1, copies=1))
    finally:
        asyncio.run(service.shutdown())


def test_a_public_value_changed_after_the_hall_saw_it_is_refused(tmp_path: Path) -> None:
    service = _service(tmp_path)
    try:
        bank = unlocked(service.bank.bank)
        rng = random.Random(3)
        bank.import_deals([ImportItem(random_deal(rng), station_source()) for _ in range(50)], {"files": []})
        director = service.director
        director.seal()
        director.prepare("S1", DICE, service.regulation)
        director.publish("S1")
        director.enter_public_value("S1", dice=["12345612", "65432165"])
        assert altered_value(service, "S1") is None  # nothing shown in the hall yet
        stored = bank.get_draw("S1").public_value
        assert stored is not None
        service.shown_values["S1"] = stored
        assert altered_value(service, "S1") is None
        service.shown_values["S1"] = "11111111/22222222"
        refusal = altered_value(service, "S1")
        assert refusal is not None and "the bank was altered" in str(refusal) and stored in str(refusal)
    finally:
        asyncio.run(service.shutdown())


def test_an_unknown_station_is_refused_for_a_check_and_an_override_naming_the_stations(tmp_path: Path) -> None:
    service = _service(tmp_path)  # one station, «A»
    try:
        with pytest.raises(DealerError, match=r"no station 'B' \(A\)"):
            equipment_check_payload(service, "B", "S1", "before", "ok", "")
        with pytest.raises(DealerError, match=r"no station 'B' \(A\)"):
            equipment_override_payload(service, "B", "the camera was checked yesterday")
    finally:
        asyncio.run(service.shutdown())


def test_a_calibration_file_without_its_own_date_is_dated_by_the_file(tmp_path: Path) -> None:
    assert station_calibration(None) is None
    path = tmp_path / "deck.npz"
    path.write_bytes(b"not a calibration")
    os.utime(path, (86400.0, 86400.0))  # 1970-01-02T00:00:00Z
    assert station_calibration(path) == {"file": str(path), "created": "1970-01-02T00:00:00+00:00"}


def test_console_commands_devices_and_state_read_the_service_and_a_station_action_answers_ok(tmp_path: Path) -> None:
    service = _service(tmp_path)

    async def steps() -> list[OperatorMessage]:
        args = JudgeAction()
        return [
            await answer_command(service, "devices", None, 1, args),
            await answer_command(service, "state", None, 2, args),
            await answer_command(service, "connect", "A", "x", args),
        ]

    try:
        devices, state, ok = asyncio.run(steps())
        assert isinstance(devices, Devices) and isinstance(state, JudgeState)
        assert isinstance(ok, CommandOk) and (ok.cmd, ok.id) == ("connect", "x")
    finally:
        asyncio.run(service.shutdown())


def test_a_seal_below_the_bank_target_warns_and_one_at_it_does_not() -> None:
    reg = web_regulation(target=50)
    assert reg.seal_warning(50) is None and reg.seal_warning(51) is None
    warning = reg.seal_warning(49)
    assert warning is not None
    assert str(warning).startswith("sealed 49 deals, below the regulation's target of 50 (")


def test_no_board_making_journal_means_no_interrupted_run(tmp_path: Path) -> None:
    sealed = AtRest(lambda: TEST_KEYRING, "bank-id", "S1")
    assert interrupted_progress(tmp_path / "var", "S1", sealed) is None
