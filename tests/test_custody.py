"""The custody model (docs/custody.md) tried as the OS account that runs the service but is not the chief judge:
it reads and writes all of ``var/`` and runs ``dealer`` itself, but has no passphrase."""

from __future__ import annotations

import copy
import json
import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

import pytest
from bank_support import random_deal, station_source
from custody_support import TEST_KEYRING, passphrase_file, unlocked, write_custody
from draw_support import DICE, full_draw, make_bank, regulation

from dealer.bank.store import ImportItem, SqliteBank
from dealer.custody import CustodyError, Keyring, create_record, generate_passphrase, unlock_record
from dealer.draw.bundle import anchor_check, verify_bundle
from dealer.draw.director import Director
from dealer.draw.protocol import DrawError, commitment_hash
from dealer.draw.verify import verify_bank
from dealer.integrity.ledger import canonical_json

ROOT = Path(__file__).resolve().parents[1]
REG = "[dealing]\nvariant = 3\n[draw]\nshare_percent = 10\n[session]\nboards = 3\n"
DICE_ARGS = ("--witness", "Ann", "--witness", "Boris", "--rolls", "8")


def dealer(cwd: Path, *args: str, passphrase: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("DEALER_PASSPHRASE_FILE", None)
    if passphrase is not None:
        env["DEALER_PASSPHRASE_FILE"] = str(passphrase)
    command = [sys.executable, "-m", "dealer", "--lang", "en", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def everything_under(folder: Path) -> bytes:
    """What the service's account can read: every byte of every file under ``folder``."""
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.fixture
def day(tmp_path: Path) -> Path:
    """A bank of 40 deals whose chief judge has set up custody (the test key under a passphrase in a file kept
    outside var/), sealed, with a draw prepared, shown to the hall, its V entered and run."""
    make_bank(tmp_path / "var" / "bank.sqlite", 40).close()
    write_custody(tmp_path / "var")
    (tmp_path / "reg.toml").write_text(REG)
    chief = passphrase_file(tmp_path)  # outside var/: the chief judge's own file
    for step in (
        ("bank", "seal"),
        ("draw", "prepare", "S1", "--regulation", "reg.toml", *DICE_ARGS),
        ("draw", "publish", "S1"),
        ("draw", "public-value", "S1", "--dice", "12345612", "--dice", "65432165"),
        ("draw", "run", "S1"),
    ):
        r = dealer(tmp_path, *step, passphrase=chief)
        assert r.returncode == 0, (step, r.stderr)
        assert "deal " not in r.stdout  # the run says how many, never which
    return tmp_path


def test_the_service_account_reads_var_and_learns_neither_k_nor_the_drawn_deals(day: Path) -> None:
    snapshot = everything_under(day / "var")
    assert b"test custody passphrase" not in snapshot
    for secret in (b"PRIVATE KEY", TEST_KEYRING._seed(), TEST_KEYRING._seed().hex().encode()):
        assert secret not in snapshot  # no signing key in any form
    with SqliteBank(day / "var" / "bank.sqlite", read_only=True) as bank:
        rec = bank.get_draw("S1")
        assert rec.state == "drawn" and rec.drawn is None and not rec.secret_open
        assert bank.state_counts() == {"bank": 40, "drawn": 0, "played": 0}  # the deals table tells nothing
        raw = bank.raw_connection().execute("SELECT secret, drawn FROM draws").fetchone()
    # what it can run without the passphrase
    for step in (("draw", "show", "S1"), ("draw", "reveal", "S1"), ("draw", "bundle", "S1", "-o", "b.json")):
        r = dealer(day, *step)
        assert r.returncode == 1 and "Traceback" not in r.stderr, (step, r.stderr)
    wrong = day / "guess.txt"
    wrong.write_text("test custody passphrasf\n")
    r = dealer(day, "draw", "show", "S1", passphrase=wrong)
    assert r.returncode == 1 and "passphrase is wrong" in r.stderr
    # the chief judge reveals after play: K and the result were nowhere in what the account could read
    revealed = dealer(day, "draw", "reveal", "S1", passphrase=day / "passphrase.txt")
    assert revealed.returncode == 0, revealed.stderr
    data = json.loads(revealed.stdout)
    k = bytes.fromhex(data["secret"])
    assert k not in snapshot and data["secret"].encode() not in snapshot and k not in raw[0]
    assert json.dumps(data["drawn"]).encode() not in snapshot and set(json.loads(raw[1])) == {"count", "sealed"}
    with SqliteBank(day / "var" / "bank.sqlite", read_only=True) as bank:
        assert verify_bank(bank).ok
        assert bank.state_counts()["played"] == 3


def test_the_service_account_cannot_void_after_publish_nor_sign_anything(day: Path) -> None:
    r = dealer(day, "draw", "prepare", "S2", "--regulation", "reg.toml", "--replacement", *DICE_ARGS)
    assert r.returncode == 1 and "passphrase" in r.stderr  # no commitment without the key
    r = dealer(day, "bank", "seal")
    assert r.returncode == 1 and "passphrase" in r.stderr
    # its own custody record, made with its own key and passphrase, is not the bank's
    mine = day / "mine"
    write_custody(mine, Keyring.generate(), "the service account's own")
    own = passphrase_file(mine, "the service account's own")
    r = dealer(day, "bank", "seal", "--keys", str(mine), passphrase=own)
    assert r.returncode == 1 and "did not sign the bank's seals" in r.stderr
    # even the chief judge cannot void a published draw: prepare, publish, then try
    chief = day / "passphrase.txt"
    assert dealer(day, "draw", "reveal", "S1", passphrase=chief).returncode == 0
    r = dealer(day, "draw", "prepare", "S2", "--regulation", "reg.toml", "--replacement", *DICE_ARGS, passphrase=chief)
    assert r.returncode == 0, r.stderr
    assert dealer(day, "draw", "publish", "S2").returncode == 0
    r = dealer(day, "draw", "void", "S2", "--reason", "witness absent", passphrase=chief)
    assert r.returncode == 1 and "before the hall" in r.stderr
    # a void written into the database directly, past the program, is found by bank verify
    db = sqlite3.connect(day / "var" / "bank.sqlite")
    db.execute("UPDATE draws SET state='void' WHERE label='S2'")
    db.commit()
    db.close()
    with SqliteBank(day / "var" / "bank.sqlite", read_only=True) as bank:
        report = verify_bank(bank)
    assert not report.ok and "S2" in str(report.problem)


def test_a_seal_signed_with_another_key_is_refused_by_bank_verify(tmp_path: Path) -> None:
    """The account writes a seal of its own (its own key, a correct checkpoint) into the ledger: the bank's seals
    are all the chief judge's key's, so the verifier names it."""
    bank = make_bank(tmp_path / "bank.sqlite", 30)
    bank.seal()
    bank.lock()
    bank._keyring = Keyring.generate()  # what an account with write access and its own key can do
    bank.seal()
    bank.close()
    with SqliteBank(tmp_path / "bank.sqlite", read_only=True) as b:
        report = verify_bank(b)
    assert not report.ok and "earlier seals by" in str(report.problem)


def test_a_resigned_seal_claiming_more_deals_than_the_bank_holds_is_refused(tmp_path: Path) -> None:
    """#27 item 3 with the key in hand (the chief judge's, or a stolen one): a seal re-signed with a larger
    ``last_deal`` makes the quota look larger; the bundle shows it impossible."""
    director = Director(make_bank(tmp_path / "bank.sqlite", 30))
    director.seal()
    bundle = full_draw(director, "S1", regulation(boards=3))
    forged = copy.deepcopy(bundle)
    cp = forged["seal"]["checkpoint"]
    cp["last_deal"] = cp["size"] + 250  # 10.56 % of the claimed bank would be allowed
    forged["seal"]["signature"] = TEST_KEYRING.sign(canonical_json(cp))
    forged["commitment"]["seal"]["last_deal"] = cp["last_deal"]
    forged["commitment"]["eligible"]["count"] = cp["last_deal"]
    forged["commitment_signature"] = TEST_KEYRING.sign(canonical_json(forged["commitment"]))
    checks = verify_bundle(forged)
    assert checks[-1].name == "seal is possible" and not checks[-1].ok
    assert all(c.ok for c in verify_bundle(bundle))


def test_the_commitment_noted_in_the_hall_pins_the_bundle(tmp_path: Path) -> None:
    """A draw erased and prepared again verifies on its own; the commitment noted when it was shown does not
    match it (and the command line says so)."""
    director = Director(make_bank(tmp_path / "bank.sqlite", 30))
    director.seal()
    shown = commitment_hash(director.prepare("S1", DICE, regulation(boards=3))["commitment"])
    director.void("S1", "prepared twice by mistake")
    again = full_draw(director, "S2", regulation(boards=3))
    assert anchor_check(again, shown[:16]).ok is False
    assert anchor_check(again, commitment_hash(again["commitment"])[:16]).ok
    assert not anchor_check(again, "not a hash").ok
    (tmp_path / "S2.json").write_text(json.dumps(again))
    (tmp_path / "chain").mkdir()
    (tmp_path / "chain" / "S1.json").write_text(json.dumps(director.bundle("S1")))
    r = dealer(tmp_path, "draw", "verify", "S2.json", "--chain", "chain", "--commitment", shown[:16])
    assert r.returncode == 1 and "not the draw that was shown" in r.stderr
    noted = commitment_hash(again["commitment"])
    r = dealer(tmp_path, "draw", "verify", "S2.json", "--chain", "chain", "--commitment", noted)
    assert r.returncode == 0 and "all 16 checks passed" in r.stdout, r.stdout + r.stderr


def test_law_6_lower_bound_of_the_whole_bank(tmp_path: Path) -> None:
    """#27 item 5: 8 boards over a 3,000-deal bank are 0.27 %: refused unless the director records why."""
    bank = unlocked(SqliteBank(tmp_path / "bank.sqlite"))
    rng = random.Random(5)
    bank.import_deals([ImportItem(random_deal(rng), station_source()) for _ in range(3000)], {"files": []})
    director = Director(bank)
    director.seal()
    reg = regulation(boards=8, share=1)
    assert 8 / 3000 < 0.01  # hand derivation: the schedule's share of the whole bank
    with pytest.raises(DrawError, match=r"Law 6 asks for at least 1%"):
        director.prepare("S1", DICE, reg)
    doc = director.prepare("S1", DICE, reg, override="the federation's own 3,000-deal stage bank")["commitment"]
    assert doc["quota"]["override"] == "the federation's own 3,000-deal stage bank" and doc["n"] == 8
    bank.commit_deal(random_deal(rng), station_source())
    bank.close()


def test_the_custody_record_holds_no_secret_and_opens_only_with_its_passphrase() -> None:
    keyring = Keyring.generate()
    words = generate_passphrase()
    assert len(words.replace("-", "")) == 16  # 16 characters of 32: 80 bits
    record = create_record(keyring, words, n_log2=10)
    text = record.to_json()
    assert keyring._seed() not in text and keyring._seed().hex().encode() not in text and words.encode() not in text
    assert unlock_record(record, words).public_key == keyring.public_key
    with pytest.raises(CustodyError, match="passphrase is wrong"):
        unlock_record(record, words[:-1] + ("a" if words[-1] != "a" else "b"))
    with pytest.raises(CustodyError, match="at least 12"):
        create_record(keyring, "short", n_log2=10)
    sealed = keyring.seal(b"K" * 32, b"draw-secret\x00bank\x00S1")
    assert keyring.open(sealed, b"draw-secret\x00bank\x00S1") == b"K" * 32
    with pytest.raises(CustodyError):  # moved to another draw's row, it does not open
        keyring.open(sealed, b"draw-secret\x00bank\x00S2")
    with pytest.raises(CustodyError):
        Keyring.generate().open(sealed, b"draw-secret\x00bank\x00S1")
    assert sha256(sealed).digest() != sha256(b"K" * 32).digest()


def test_a_deal_played_from_bank_a_is_never_drawn_from_bank_b(tmp_path: Path) -> None:
    """#27 item 6 (Law 15): the register of played deals links banks. A's revealed draw registers its deals; B,
    which holds them too, draws nothing until they are gone; `draw verify --register` refuses a bundle with a deal
    played before it; hand records of earlier events are added from their files."""
    from dealer.bank.register import PlayedRegister
    from dealer.formats import BoardRecord, load_all
    from dealer.formats.pbn import PBN

    register = PlayedRegister(tmp_path / "played.sqlite")
    bank_a = make_bank(tmp_path / "a.sqlite", 30, seed=7)
    director_a = Director(bank_a, register)
    director_a.seal()
    bundle_a = full_draw(director_a, "A1", regulation(boards=3))
    played = {bytes.fromhex(d["deal"]) for d in bundle_a["drawn"]}
    assert register.played(played) == played and register.count() == 3
    bank_b = make_bank(tmp_path / "b.sqlite", 30, seed=7)  # the same 30 deals, imported into another bank
    director_b = Director(bank_b, register)
    director_b.seal()
    with pytest.raises(DrawError, match="already played in the competition"):
        director_b.prepare("B1", DICE, regulation(boards=3))
    # drawn anyway (no register given): the bundle verifies alone, and is refused with the register
    bundle_b = full_draw(Director(bank_b), "B1", regulation(boards=3))
    (tmp_path / "b1.json").write_text(json.dumps(bundle_b))
    (tmp_path / "a1.json").write_text(json.dumps(bundle_a))
    load_all()
    records = [BoardRecord(d.deal, k) for k, d in enumerate(bank_b.iter_deals(), start=1)]
    (tmp_path / "earlier-event.pbn").write_bytes(PBN.write(records))
    register.close()
    r = dealer(tmp_path, "register", "add", "a1.json", "earlier-event.pbn", "--register", "other.sqlite")
    assert r.returncode == 0 and "holds 30 played deals" in r.stdout, r.stdout + r.stderr
    r = dealer(tmp_path, "draw", "verify", "b1.json", "--register", "other.sqlite")
    assert r.returncode == 1 and "were played before this draw" in r.stderr, r.stdout + r.stderr
    r = dealer(tmp_path, "draw", "verify", "a1.json", "--register", "played.sqlite")
    assert r.returncode == 0 and "none of its deals was played before" in r.stdout, r.stdout + r.stderr
    bank_a.close()
    bank_b.close()


def test_bank_import_leaves_out_the_deals_the_register_holds_as_played(tmp_path: Path) -> None:
    """#27 (Law 15): the register is checked at import too. A file of 12 deals, 3 of them drawn and played by an
    earlier draw: the import commits 9 and names the 3 (file, board, the draw that played them); both front doors
    (the people's summary and `--json`) do the same; a --register that is not there is refused, nothing written."""
    from dealer.bank.register import PlayedRegister
    from dealer.formats import BoardRecord, load_all
    from dealer.formats.pbn import PBN

    load_all()
    rng = random.Random(12)
    deals = [random_deal(rng) for _ in range(12)]
    (tmp_path / "event.pbn").write_bytes(PBN.write([BoardRecord(d, k) for k, d in enumerate(deals, start=1)]))
    played_boards = (2, 7, 11)
    with PlayedRegister(tmp_path / "var" / "played.sqlite") as register:  # beside the bank: the default register
        register.add((deals[b - 1].to_bytes() for b in played_boards), "bank X, draw 'Round 1'", "2026-11-30T10:00Z")
    r = dealer(tmp_path, "bank", "import", "event.pbn", "--bank", "var/bank.sqlite", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["imported"] == 9 and report["duplicates"] == 0, report
    assert len(report["problems"]) == 3, report
    assert all("already played in the competition (bank X, draw 'Round 1'" in json.dumps(p) for p in report["problems"])
    with SqliteBank(tmp_path / "var" / "bank.sqlite", read_only=True) as bank:
        held = {row.canonical for row in bank.deal_rows()}
    assert held == {d.to_bytes() for k, d in enumerate(deals, start=1) if k not in played_boards}
    # the people's summary, into another bank: the same three named, by board
    r = dealer(tmp_path, "bank", "import", "event.pbn", "--bank", "var/other.sqlite")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("already played in the competition") == 3, r.stdout
    assert all(f"board {b}" in r.stdout for b in played_boards), r.stdout
    # an explicit register that is not there: refused before anything is written
    r = dealer(tmp_path, "bank", "import", "event.pbn", "--bank", "var/third.sqlite", "--register", "nowhere.sqlite")
    assert r.returncode == 1 and "no register of played deals there" in r.stderr, r.stdout + r.stderr
    assert not (tmp_path / "var" / "third.sqlite").exists()


@pytest.mark.parametrize("when", ["before the run", "after the run"])
def test_a_deal_swapped_in_the_database_never_reaches_a_board(tmp_path: Path, when: str) -> None:
    """#27 attack run, finding 1: the service account rebuilt `deals` without its UNIQUE constraint and gave every
    deal the cards of deal 1, so the run, the board files and the reveal would have put its chosen deal on the
    boards (and put the real bytes back before `bank verify`). Every step that shows or writes the drawn deals
    checks them against their sealed ledger entries and the signed root: nothing is shown, written or revealed."""
    bank = make_bank(tmp_path / "bank.sqlite", 40)
    director = Director(bank)
    director.seal()
    director.prepare("S1", DICE, regulation(boards=2))
    director.publish("S1")
    director.enter_public_value("S1", dice=["12345612/65432165"])
    genuine = [item.deal.deal for item in director.run("S1")] if when == "after the run" else []
    with sqlite3.connect(tmp_path / "bank.sqlite") as db:  # as the service account: the file is its own
        db.executescript("CREATE TABLE x AS SELECT * FROM deals; DROP TABLE deals; ALTER TABLE x RENAME TO deals;")
        db.execute("UPDATE deals SET canonical = (SELECT canonical FROM deals WHERE deal_id = 1)")
    steps: list[Callable[[], object]]
    if when == "before the run":  # refused before anything is recorded: the draw waits to be run on a sound bank
        steps = [lambda: director.run("S1")]
    else:
        steps = [lambda: director.drawn_deals("S1"), lambda: director.reveal("S1")]
    for step in steps:
        with pytest.raises(DrawError, match="is not the deal its sealed ledger entry committed"):
            step()
    assert bank.get_draw("S1").state != "revealed"
    fresh = Director(bank)  # a restarted service: the tree is rebuilt from the altered rows, and its root is wrong
    with pytest.raises(DrawError, match="altered"):
        if when == "after the run":
            fresh.drawn_deals("S1")
        else:
            fresh.run("S1")
    assert len(genuine) == (2 if when == "after the run" else 0)
    bank.close()


def test_draw_verify_compares_v_with_the_one_the_hall_showed(tmp_path: Path) -> None:
    """#27 attack run, finding 2: a V rewritten in the bank with its ledger entry still verifies by itself; the V
    noted in the hall (typed as people type it) pins it: `draw verify --value` accepts the shown V, refuses another."""
    example = ROOT / "docs" / "examples" / "draw-1.json"
    value = json.loads(example.read_text(encoding="utf-8"))["public_value"]
    typed = " ".join(value.replace("/", " / "))  # spaces between every digit, as the hall's board may be copied
    ok = dealer(tmp_path, "draw", "verify", str(example), "--value", typed)
    assert ok.returncode == 0 and f"V {value} is the one noted in the hall" in ok.stdout, ok.stdout + ok.stderr
    other = value[:-1] + ("1" if value[-1] != "1" else "2")
    bad = dealer(tmp_path, "draw", "verify", str(example), "--value", other)
    assert bad.returncode == 1 and f"not the {other} noted in the hall" in bad.stdout + bad.stderr, bad.stdout


@pytest.mark.parametrize("forgery", ["edited", "signed by another key"])
def test_a_commitment_rewritten_in_the_ledger_is_refused_before_any_deal_is_shown(tmp_path: Path, forgery: str) -> None:
    """The service account rewrites the draw's signed commitment in the ledger (an entry after the seal, so the
    sealed root still holds): either the document edited under its old signature, or re-signed with a key of its
    own. The drawn deals' check verifies the commitment against the chief judge's key first: nothing is shown or
    revealed."""
    bank = make_bank(tmp_path / "bank.sqlite", 40)
    director = Director(bank)
    director.seal()
    director.prepare("S1", DICE, regulation(boards=2))
    director.publish("S1")
    director.enter_public_value("S1", dice=["12345612/65432165"])
    assert len(director.run("S1")) == 2
    index = bank.get_draw("S1").commit_index
    with sqlite3.connect(tmp_path / "bank.sqlite") as db:  # as the service account: the file is its own
        body = json.loads(db.execute("SELECT body FROM ledger WHERE idx = ?", (index,)).fetchone()[0])
        doc = body["d"]["commitment"]
        spec = doc["public_value"]
        spec["witnesses"] = [*spec["witnesses"], "Mallory"]  # a witness the hall never saw
        if forgery == "signed by another key":
            body["d"]["signature"] = Keyring.generate().sign(canonical_json(doc))
        db.execute("UPDATE ledger SET body = ? WHERE idx = ?", (canonical_json(body), index))
    for step in (lambda: director.drawn_deals("S1"), lambda: director.reveal("S1")):
        with pytest.raises(DrawError, match="not the one the chief judge's key signed"):
            step()
    assert bank.get_draw("S1").state == "drawn"
    bank.close()
