"""The SQLite bank: commits, duplicates, ledger chain, seals, keys, and tamper detection by ``verify_bank``."""

from __future__ import annotations

import dataclasses
import json
import random
import sqlite3
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest
from bank_engines import bank_at, engine, engine_of, open_test_bank  # noqa: F401 (fixtures)
from bank_support import fill, random_deal, station_source
from custody_support import unlocked
from draw_support import regulation

from dealer.bank.api import BankApi, DealSource
from dealer.bank.composed import Bank
from dealer.bank.store import BankError, BankUnavailableError, DuplicateDealError, ImportItem, SqliteBank
from dealer.core.errors import DealerError
from dealer.draw.director import Director
from dealer.draw.protocol import dice_spec
from dealer.draw.verify import verify_bank
from dealer.integrity.keys import verify_signature
from dealer.integrity.ledger import Entry, EntryKind, canonical_json, commitment


@pytest.fixture
def bank(bank_at: str, tmp_path: Path) -> Iterator[Bank]:  # noqa: F811 (on SQLite and on PostgreSQL)
    b = open_test_bank(bank_at, tmp_path)
    yield b
    b.close()


def test_implements_bank_api(bank: Bank) -> None:
    api: BankApi = bank
    assert api.deal_count() == 0
    assert len(api.ledger_head()) == 64


def test_commit_stores_salted_commitment_and_ledger_entry(bank: Bank) -> None:
    deal = random_deal(random.Random(5))
    c = bank.commit_deal(deal, station_source(shown=28))
    stored = bank.get_deal(c.deal_id)
    assert stored.deal == deal
    assert len(stored.salt) == 16
    assert c.commitment == sha256(stored.salt + deal.to_bytes()).hexdigest()
    entry = bank.entry(c.ledger_index)
    assert entry.kind == EntryKind.DEAL
    assert entry.data["c"] == c.commitment
    assert entry.data["src"] == {"kind": "station", "shown": 28, "station": "T1", "variant": 2}
    # the dealing order is secret: only its salted hash is in the ledger
    assert entry.data["order"] == sha256(stored.salt + bytes(range(52))).hexdigest()
    assert bank.ledger_head() == c.ledger_head == sha256(entry.encode()).hexdigest()
    assert stored.state == "bank" and stored.session is None


def test_deal_entries_are_typed_and_start_where_asked(bank: Bank) -> None:
    """What the web reads of the ledger's deal entries, without their JSON keys."""
    rng = random.Random(21)
    first = bank.commit_deal(random_deal(rng), station_source())
    bank.void_deal("jam", "T1")
    bank.import_deals([ImportItem(random_deal(rng), DealSource("import", file="/home/x/set.pbn", board=3))], {})
    entries = bank.deal_entries()
    assert [(e.deal_id, e.station) for e in entries] == [(1, "T1"), (2, None)]
    assert entries[0].index == first.ledger_index and entries[0].commitment == first.commitment
    assert entries[1].source == {"kind": "import", "shown": 0, "board": 3, "file": "set.pbn"}
    assert [e.deal_id for e in bank.deal_entries(first.ledger_index + 1)] == [2]
    assert bank.deal_entries(bank.ledger_size()) == []


def test_same_deal_gets_different_salts_in_two_banks(tmp_path: Path) -> None:
    deal = random_deal(random.Random(9))
    with unlocked(SqliteBank(tmp_path / "a.sqlite")) as a, unlocked(SqliteBank(tmp_path / "b.sqlite")) as b:
        assert a.commit_deal(deal, station_source()).commitment != b.commit_deal(deal, station_source()).commitment


def test_duplicate_deal_refused_naming_the_deal_it_repeats(bank: Bank) -> None:
    rng = random.Random(2)
    deals = [random_deal(rng) for _ in range(3)]
    for d in deals:
        bank.commit_deal(d, station_source())
    with pytest.raises(DuplicateDealError) as info:
        bank.commit_deal(deals[1], DealSource("import", file="x.pbn", board=4))
    assert info.value.existing_id == 2
    assert "deal 2" in str(info.value)
    assert bank.deal_count() == 3
    assert verify_bank(bank).ok


def test_void_and_events_are_chained(bank: Bank) -> None:
    fill(bank, 2)
    i = bank.void_deal("card misread", "T1", {"cards": 51})
    j = bank.record_event("shown", {"station": "T1", "deal": 2, "cards": 13})
    assert (i, j) == (3, 4)
    assert bank.entry(i).data == {"reason": "card misread", "station": "T1", "detail": {"cards": 51}}
    assert bank.entry(j).prev == sha256(bank.entry(i).encode()).hexdigest()
    with pytest.raises(BankError, match="reason"):
        bank.void_deal("  ", "T1")
    for kind in ("deal", "void", "seal", "draw", "reveal", "draw-commit", "genesis", "import", "draw-void",
                 "draw-published"):  # fmt: skip
        with pytest.raises(BankError, match="written by the bank"):
            bank.record_event(kind, {})
    assert verify_bank(bank).ok


def test_thousands_of_deals_verify(bank: Bank) -> None:
    rng = random.Random(11)
    items = [ImportItem(random_deal(rng), DealSource("import", file="big.pbn", board=k, line=k)) for k in range(2500)]
    bank.import_deals(items, {"files": []})
    bank.seal()
    fill(bank, 100, seed=12)
    bank.seal()
    report = verify_bank(bank)
    assert report.ok, report.problem
    assert (report.deals, report.seals, report.entries) == (2600, 2, 2604)


def test_seal_is_signed_checkpoint_and_later_deals_wait_for_a_later_seal(bank: Bank, tmp_path: Path) -> None:
    fill(bank, 30)
    seal = bank.seal()
    assert (seal.size, seal.last_deal) == (31, 30)
    cp = bank.entry(seal.ledger_index).data["checkpoint"]
    assert verify_signature(seal.public_key, seal.signature, canonical_json(cp))
    assert not verify_signature(seal.public_key, seal.signature, canonical_json({**cp, "size": 30}))
    fill(bank, 10, seed=3)
    latest = bank.latest_seal()
    assert latest is not None and bank.eligible_count(latest.last_deal) == 30
    assert bank.seal().last_deal == 40
    latest = bank.latest_seal()
    assert latest is not None and bank.eligible_count(latest.last_deal) == 40
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".pem", ".key")]  # no signing key on disk


def test_a_locked_bank_signs_nothing_and_refuses_another_key(tmp_path: Path) -> None:
    """The signing key is the chief judge's (docs/custody.md): without it unlocked nothing is sealed, and a key
    that did not sign the bank's seals is refused before it signs anything."""
    from dealer.custody import CustodyError, CustodyLockedError, Keyring

    with SqliteBank(tmp_path / "b.sqlite") as b:
        with pytest.raises(CustodyLockedError, match="chief judge's key"):
            b.seal()
        assert b.seals() == []
        unlocked(b).seal()
        b.lock()
        with pytest.raises(CustodyLockedError):
            b.seal()
        with pytest.raises(CustodyError, match="did not sign the bank's seals"):
            b.unlock(Keyring.generate())
        assert len(b.seals()) == 1


def test_entries_are_canonical_and_decode_refuses_other_forms(bank: Bank) -> None:
    fill(bank, 1)
    body = next(bank.entries(1, 2))[2]
    entry = Entry.decode(body)
    assert entry.encode() == body
    spaced = json.dumps(json.loads(body), sort_keys=True).encode()
    with pytest.raises(ValueError, match="canonical"):
        Entry.decode(spaced)


def _small_bank_with_everything(path: Path) -> Bank:
    bank = unlocked(SqliteBank(path))
    rng = random.Random(4)
    for k in range(60):
        src = station_source() if k % 2 else DealSource("import", file="f.pbn", board=k, line=k * 10)
        bank.commit_deal(random_deal(rng), src)
    bank.void_deal("misdeal", "T2")
    bank.record_event("shown", {"deal": 3})
    director = Director(bank)
    director.seal()
    reg = regulation(boards=3, sessions=1, spare=3, share=10)  # 6 deals at 10 %: a 60-deal bank
    director.prepare("one", dice_spec(["A"], 13), reg)
    director.publish("one")
    director.enter_public_value("one", dice=["1234561234561"])
    director.run("one")
    director.reveal("one")
    director.prepare("gone", dice_spec(["A"], 13), reg, replacement=True)
    director.void("gone", "prepared by mistake")
    director.prepare("two", dice_spec(["A", "B"], 7), reg, replacement=True)
    director.publish("two")
    director.enter_public_value("two", dice=["1234561", "6543216"])
    director.run("two")
    return bank


def _tamper_values(value: object) -> list[object]:
    """Changed versions of a stored value: every byte position flipped (sampled for long values)."""
    if isinstance(value, int):
        return [value + 1, value - 1]
    if value is None:
        return ["x"]
    assert isinstance(value, str | bytes), f"unexpected stored value {value!r}"
    raw = value.encode() if isinstance(value, str) else value
    if not raw:  # an empty value (a compact deal's commitment and time) becomes a byte
        return ["x" if isinstance(value, str) else b"x"]
    positions = sorted(
        {0, len(raw) - 1, len(raw) // 2, *random.Random(len(raw)).sample(range(len(raw)), min(2, len(raw)))}
    )
    out: list[object] = []
    for p in positions:
        flipped = bytearray(raw)
        flipped[p] ^= 0x01
        out.append(flipped.decode("latin-1") if isinstance(value, str) else bytes(flipped))
    return out


def test_changing_any_byte_of_any_row_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "bank.sqlite"
    _small_bank_with_everything(path).close()
    with SqliteBank(path) as b:
        assert verify_bank(b).ok
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")  # the tampering itself need not be durable
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert set(tables) == {"meta", "ledger", "deals", "draws", "batches"}
    tried = 0
    for table in tables:
        info = db.execute(f"PRAGMA table_info({table})").fetchall()
        columns = [r[1] for r in info]
        rowid_alias = next((r[1] for r in info if r[5] == 1 and r[2].upper() == "INTEGER"), None)
        rows = db.execute(f"SELECT rowid, * FROM {table}").fetchall()
        # every row of the small tables, a spread of rows of the big ones
        picked = (
            rows
            if len(rows) <= 12
            else [rows[i] for i in sorted({0, 1, 2, len(rows) // 2, len(rows) - 3, len(rows) - 2, len(rows) - 1})]
        )
        for row in picked:
            rowid, values = row[0], row[1:]
            for column, value in zip(columns, values, strict=True):
                for changed in _tamper_values(value):
                    try:
                        db.execute(f"UPDATE {table} SET {column}=? WHERE rowid=?", (changed, rowid))
                    except sqlite3.IntegrityError:
                        continue  # the schema itself refuses this change (unique key)
                    db.commit()
                    with SqliteBank(path) as b:
                        report = verify_bank(b)
                        if report.ok and table == "draws" and column in ("secret", "drawn"):
                            # sealed under the chief judge's key: its form is all a verifier without the key can
                            # check; the key's holder finds the change when opening it (AES-GCM's tag, then K's hash)
                            with pytest.raises(DealerError):
                                Director(unlocked(b)).drawn_deals(dict(zip(columns, values, strict=True))["label"])
                            report = dataclasses.replace(report, ok=False)
                    new_rowid = changed if column == rowid_alias else rowid
                    db.execute(f"UPDATE {table} SET {column}=? WHERE rowid=?", (value, new_rowid))
                    db.commit()
                    assert not report.ok, f"{table}.{column} of row {rowid} changed to {changed!r}: not detected"
                    tried += 1
    assert tried > 300
    with SqliteBank(path) as b:
        assert verify_bank(b).ok


def test_deleting_a_ledger_row_or_a_deal_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "bank.sqlite"
    _small_bank_with_everything(path).close()
    db = sqlite3.connect(path)
    # the last draw entry (and the automatic seal that follows every draw)
    db.execute("DELETE FROM ledger WHERE idx >= (SELECT MAX(idx) FROM ledger WHERE kind <> 'seal')")
    db.commit()
    with unlocked(SqliteBank(path)) as b:
        report = verify_bank(b)
    assert not report.ok and "draw 'two'" in (report.problem or "")
    db.execute("DELETE FROM deals WHERE deal_id = 7")
    db.commit()
    with unlocked(SqliteBank(path)) as b:
        assert not verify_bank(b).ok


def test_verify_names_the_first_bad_entry(bank: Bank) -> None:
    fill(bank, 20)
    with bank.engine.read() as db:  # the bank's own connection, outside its transactions: a tamperer's write
        body = bytes(db.execute("SELECT body FROM ledger WHERE idx=7").fetchone()[0])
        if engine_of(bank) == "postgresql":  # the database refuses it; a tamperer with the superuser's rights would not
            with pytest.raises(Exception, match="append-only"):
                db.execute("UPDATE ledger SET body=? WHERE idx=7", (body,))
            db.execute("ALTER TABLE ledger DISABLE TRIGGER ledger_append_only")
        db.execute("UPDATE ledger SET body=? WHERE idx=7", (body.replace(b'"shown":30', b'"shown":31'),))
    report = verify_bank(bank)
    assert not report.ok
    assert report.problem is not None and report.problem.startswith("ledger entry 7:")


def test_commitment_function_is_salt_then_deal() -> None:
    assert commitment(b"s" * 16, b"d" * 13) == sha256(b"s" * 16 + b"d" * 13).digest()


def test_ledger_holds_a_files_base_name_and_sha256_never_the_local_path(tmp_path: Path) -> None:
    from hashlib import sha256 as h

    from dealer.bank_import.importer import import_files
    from dealer.formats.base import BoardRecord
    from dealer.formats.pbn import PBN

    folder = tmp_path / "organiser's private folder"
    folder.mkdir()
    data = PBN.write([BoardRecord(random_deal(random.Random(k)), k + 1) for k in range(3)])
    (folder / "stage1.pbn").write_bytes(data)
    with unlocked(SqliteBank(tmp_path / "bank.sqlite")) as bank:
        import_files(bank, [folder / "stage1.pbn"])
        ledger = b"".join(body for _, _, body, _ in bank.entries())
        assert str(folder).encode() not in ledger and b"private folder" not in ledger
        digest = h(data).hexdigest()  # hashlib on the file's bytes, independently of the importer
        deal = bank.entry(bank.get_deal(1).ledger_index).data["src"]  # it references its batch's entry
        (batch,) = bank.entries_of_kind("import")
        assert deal["batch"] == batch.index and deal["file_index"] == 0
        assert (batch.data["files"][0]["file"], batch.data["files"][0]["sha256"]) == ("stage1.pbn", digest)
        assert verify_bank(bank).ok


def test_a_file_that_is_no_database_is_named_not_a_traceback(tmp_path: Path) -> None:
    """``--bank`` pointing at some other file, or at a folder: a bank error naming it, the file left as it was."""
    other = tmp_path / "notes.sqlite"
    content = b"minutes of the judges' meeting\n" * 200
    other.write_bytes(content)
    with pytest.raises(BankUnavailableError, match=r"notes\.sqlite: not a bank: SQLite cannot read this file") as exc:
        unlocked(SqliteBank(other))
    assert "file is not a database" in str(exc.value)
    assert other.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite"]  # no WAL or key made beside it
    folder = tmp_path / "folder.sqlite"
    folder.mkdir()
    with pytest.raises(BankUnavailableError, match=r"folder\.sqlite: the bank could not write"):
        unlocked(SqliteBank(folder))
