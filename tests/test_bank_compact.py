"""The compact form of imported deals (bank format 2, ``dealer.bank.compact``): a deal costs at most 200 bytes all in,
``verify_bank`` and the draw's bundle prove what they proved of the full form, and the banks of the first format
(the old code's fixture, the full form written beside compact deals) open and verify as they did.

Expected values come from outside the code under test: hashlib over the stored salt and cards, the canonical JSON
written out by hand, docs/bundle.md's checks through ``draw_support``'s independent derivation, the file sizes the
engines report.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import sqlite3
from hashlib import sha256
from pathlib import Path

import pytest
from bank_engines import bank_target, engine  # noqa: F401 (fixtures)
from bank_support import random_deal, station_source
from custody_support import unlocked
from draw_support import derive, full_draw, regulation
from test_bank_format import ANCHOR, FIXTURE
from test_bank_store import _tamper_values

from dealer.bank.api import DealSource
from dealer.bank.engines import open_bank_at
from dealer.bank.store import ImportItem, SqliteBank
from dealer.bank_import.importer import import_files, import_parsed, read_files
from dealer.core import Deal
from dealer.custody.files import plain_key
from dealer.draw.bundle import load_bundle, verify_bundle
from dealer.draw.director import Director
from dealer.draw.verify import verify_bank
from dealer.formats.base import BoardRecord
from dealer.formats.pbn import PBN

FIXTURE_V2 = Path(__file__).parent / "data" / "bank_v2"
ANCHOR_V2 = (81, "c98205159c4687f42700ad2b56f989402eb72df055b1494070d8190a3f379663")  # noted when it was made
SAMPLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pbn"
LOG2_DEALS = math.log2(math.factorial(52) // math.factorial(13) ** 4)  # 95.4 bits: what a deal is worth


def _files(folder: Path, deals: list[Deal], per_file: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for start in range(0, len(deals), per_file):
        path = folder / f"f{start // per_file:04d}.pbn"
        path.write_bytes(PBN.write([BoardRecord(d, k + 1) for k, d in enumerate(deals[start : start + per_file])]))
        out.append(path)
    return out


def _deals(n: int, seed: int) -> list[Deal]:
    rng = random.Random(seed)
    return [random_deal(rng) for _ in range(n)]


def _mixed_bank(path: Path) -> SqliteBank:
    """Deals of both forms: the full form (a station's commits, ``import_deals``) around two compact imports of
    several batches each, sealed, with a draw over all of them revealed and a second drawn."""
    bank = unlocked(SqliteBank(path))
    deals = _deals(60, 5)
    for d in deals[:4]:
        bank.commit_deal(d, station_source())
    bank.import_deals([ImportItem(d, DealSource("import", file="old.pbn", board=k)) for k, d in enumerate(deals[4:10])],
                      {"files": []})  # fmt: skip
    import_parsed(bank, read_files(_files(path.parent / "a", deals[10:30], 6)), batch_size=7)
    bank.void_deal("misdeal", "T2")
    bank.commit_deal(deals[30], station_source())
    import_parsed(bank, read_files(_files(path.parent / "b", deals[31:60], 8)), batch_size=11)
    director = Director(bank)
    director.seal()
    reg = regulation(boards=3, sessions=1, spare=3, share=10)
    full_draw(director, "one", reg)
    full_draw(director, "two", reg, replacement=True, reveal=False)
    return bank


def _sqlite_bytes_per_deal(path: Path, files: list[Path]) -> tuple[float, int]:
    with unlocked(SqliteBank(path)) as bank:
        report = import_files(bank, files)
        bank.seal()
        assert verify_bank(bank).ok
        bank.raw_connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size / report.imported, report.imported


def test_an_imported_deal_costs_at_most_200_bytes_all_in_on_sqlite(tmp_path: Path) -> None:
    per_deal, n = _sqlite_bytes_per_deal(tmp_path / "bank.sqlite", _files(tmp_path / "in", _deals(3000, 1), 32))
    assert n == 3000 and LOG2_DEALS / 8 < per_deal <= 200  # the whole file: tables, indexes, seal, free pages


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is absent")
def test_the_shared_sample_costs_at_most_200_bytes_a_deal_on_sqlite(tmp_path: Path) -> None:
    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn")
    per_deal, n = _sqlite_bytes_per_deal(tmp_path / "bank.sqlite", files)
    assert n > 500 and per_deal <= 200  # the full form: 805 bytes a deal (issue 33)


def _pg_bytes_per_deal(tmp_path: Path, files: list[Path]) -> tuple[float, int]:
    """All in: every table's heap, TOAST, indexes and maps, as the server counts them."""
    with bank_target("postgresql", tmp_path) as url:
        bank = unlocked(open_bank_at(url, tmp_path / "keys"))
        try:
            report = import_files(bank, files)
            bank.seal()
            with bank.engine.read() as db:
                (size,) = db.execute(
                    "SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                    "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
                ).fetchone()
            assert verify_bank(bank).ok
        finally:
            bank.close()
    return int(size) / report.imported, report.imported


def test_an_imported_deal_costs_at_most_200_bytes_all_in_on_postgresql(tmp_path: Path) -> None:
    """A bank of 10,000 deals: about 34 bytes of packed value a deal (13 + 16 + its source), TOAST pages and the
    ledger's few entries; the empty bank's 19 pages (155,648 bytes) weigh 16 a deal."""
    per_deal, n = _pg_bytes_per_deal(tmp_path, _files(tmp_path / "in", _deals(10000, 2), 32))
    assert n == 10000 and LOG2_DEALS / 8 < per_deal <= 200


@pytest.mark.skipif(not SAMPLE.is_dir(), reason="../shared/data/pbn is absent")
def test_the_shared_sample_costs_at_most_200_bytes_a_deal_on_postgresql(tmp_path: Path) -> None:
    """1,420 deals: the empty bank's 19 pages weigh 110 bytes a deal here (334.6 bytes a deal before format 3)."""
    files = sorted(p for p in SAMPLE.rglob("*") if p.suffix.lower() == ".pbn")
    per_deal, n = _pg_bytes_per_deal(tmp_path, files)
    assert n > 500 and per_deal <= 200


def test_compact_deals_rebuild_the_entries_the_ledger_chains_and_seals(engine: str, tmp_path: Path) -> None:  # noqa: F811
    """Each compact deal's entry is the canonical JSON of its commitment (hashlib over the stored salt and cards),
    id and a source naming its batch's import entry and the file's place in it; entry i+1's prev is entry i's
    SHA-256; the import entry closes the run, counting it."""
    deals = _deals(25, 3)
    with bank_target(engine, tmp_path) as target:
        bank = unlocked(open_bank_at(target, tmp_path / "keys"))
        try:
            bank.commit_deal(deals[0], station_source())
            report = import_parsed(bank, read_files(_files(tmp_path / "in", deals[1:], 5)), batch_size=10)
            rows = list(bank.entries())
            with bank.engine.read() as db:
                stored = {int(r[0]) for r in db.execute("SELECT idx FROM ledger").fetchall()}
                assert db.execute("SELECT COUNT(*) FROM deals").fetchone()[0] == 1  # the station's; the rest packed
            cards = {r.deal_id: (r.canonical, r.salt, r.source) for r in bank.deal_rows()}
            assert [r.idx for r in rows] == list(range(len(rows))) and len(rows) == 2 + 24 + 3
            assert stored == {0, 1, *report.batch_indices}  # genesis, the station's deal, the three imports
            prev = "0" * 64
            batch_files = {i: bank.entry(i).data["files"] for i in report.batch_indices}
            for row in rows:
                assert row.hash == sha256(row.body).digest()
                entry = json.loads(row.body)
                assert entry["prev"] == prev and entry["i"] == row.idx
                prev = row.hash.hex()
                if row.idx in stored:
                    continue
                deal_id = entry["d"]["id"]
                canonical, salt, source = cards[deal_id]
                batch = min(i for i in report.batch_indices if i > row.idx)
                position, board, line = (int(x) for x in source.split(","))
                assert batch_files[batch][position]["file"] == f"f{(deal_id - 2) // 5:04d}.pbn"
                want = (
                    f'{{"d":{{"c":"{sha256(salt + canonical).hexdigest()}","id":{deal_id},"src":{{"batch":{batch},'
                    f'"board":{board},"file_index":{position},"kind":"import","line":{line},"shown":0}}}},'
                    f'"i":{row.idx},"k":"deal","prev":"{entry["prev"]}","ts":"{bank.entry(batch).ts}"}}'
                )
                assert row.body == want.encode()
            assert [e.deal_id for e in bank.deal_entries()] == list(range(1, 26))
            assert bank.get_deal(7).commitment == sha256(cards[7][1] + cards[7][0]).digest()
            assert bank.get_deal(7).created == bank.entry(report.batch_indices[0]).ts
            seal = bank.seal()
            assert verify_bank(bank).ok and seal.size == len(rows)
        finally:
            bank.close()


def test_a_draw_of_compact_deals_gives_a_bundle_anyone_can_check(tmp_path: Path) -> None:
    with unlocked(SqliteBank(tmp_path / "bank.sqlite")) as bank:
        import_parsed(bank, read_files(_files(tmp_path / "in", _deals(60, 6), 8)), batch_size=13)
        assert bank.meta()["schema"] == "3"
        director = Director(bank)
        director.seal()
        bundle = full_draw(director, "one", regulation(boards=6, sessions=1, share=10))
        assert verify_bank(bank).ok
    checks = verify_bundle(load_bundle(json.dumps(bundle).encode()))
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    assert [(o["position"], o["deal_id"]) for o in bundle["drawn"]] == derive(bundle, set())  # docs/bundle.md
    for opening in bundle["drawn"]:  # each opening checked with hashlib, as docs/bundle.md §3 says
        entry = json.loads(opening["entry"])
        assert entry["d"]["c"] == sha256(bytes.fromhex(opening["salt"]) + bytes.fromhex(opening["deal"])).hexdigest()
        assert entry["k"] == "deal" and "batch" in entry["d"]["src"]  # a compact deal's entry, rebuilt
    assert len(bundle["drawn"]) == 6


def _v2_bank(path: Path) -> None:
    """The format-2 fixture (``_mixed_bank`` as the code before format 3 made it) as a file at ``path``."""
    db = sqlite3.connect(path)
    db.executescript((FIXTURE_V2 / "bank.sql").read_text(encoding="utf-8"))
    db.close()


def test_a_format_2_bank_opens_and_verifies_with_the_head_it_had(tmp_path: Path) -> None:
    path = tmp_path / "bank.sqlite"
    _v2_bank(path)
    with SqliteBank(path, read_only=True) as bank:
        report = verify_bank(bank)
        assert report.ok and (report.entries, report.deals, report.draws) == (81, 60, 2), report.problem
        assert bank.anchor() == ANCHOR_V2 and bank.meta()["schema"] == "2"
        # the fixture's own rows: draw "one" revealed (3 played), draw "two"'s result sealed (its deals unmarked)
        assert bank.state_counts() == {"bank": 57, "drawn": 0, "played": 3}


def test_every_changed_byte_of_a_batch_row_is_found(tmp_path: Path) -> None:
    """Format 3: the batches' rows (every column; bytes of the packed value in the count, cards, salts and sources)
    and the rows a drawn deal of a batch gets in ``deals``."""
    path = tmp_path / "bank.sqlite"
    _mixed_bank(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")
    assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == "3"
    batches = db.execute("SELECT idx, first_deal, deals, packed FROM batches ORDER BY idx").fetchall()
    assert len(batches) == 6 and sum(b[2] for b in batches) == 49
    tried = 0

    def found(sql: str, params: tuple[object, ...], undo: tuple[object, ...]) -> None:
        nonlocal tried
        db.execute(sql, params)
        db.commit()
        with SqliteBank(path, read_only=True) as b:
            report = verify_bank(b)
        db.execute(sql, undo)
        db.commit()
        assert not report.ok, f"{sql} {params}: not found"
        tried += 1

    for idx, first_deal, deals, blob in (batches[0], batches[3], batches[-1]):
        n = deals  # the layout by hand (docs in dealer.bank.packed): a byte of count, cards, salts, sources
        for at in (0, 1, 1 + 13 * n - 1, 1 + 13 * n, 1 + 29 * n - 1, 1 + 29 * n, 1 + 29 * n + 1, len(blob) - 1):
            flipped = bytearray(blob)
            flipped[at] ^= 0x01
            found("UPDATE batches SET packed=? WHERE idx=?", (bytes(flipped), idx), (blob, idx))
        found("UPDATE batches SET packed=? WHERE idx=?", (blob + b"\x00", idx), (blob, idx))
        for column, value in (("first_deal", first_deal), ("deals", deals)):
            found(f"UPDATE batches SET {column}=? WHERE idx=?", (value + 1, idx), (value, idx))
        found("UPDATE batches SET idx=? WHERE idx=?", (idx + 1, idx), (idx, idx + 1))
    moved = db.execute("SELECT deal_id, canonical, salt, source FROM deals WHERE source NOT LIKE '{%'").fetchall()
    assert moved  # the revealed draw's deals of a batch: a row each, played
    for deal_id, canonical, salt, source in moved[:2]:
        other = bytes(canonical[:-1]) + bytes([canonical[-1] ^ 1])
        for column, value, changed in (
            ("salt", salt, bytes(16)),
            ("source", source, "0,1,"),
            ("canonical", canonical, other),
        ):
            found(f"UPDATE deals SET {column}=? WHERE deal_id=?", (changed, deal_id), (value, deal_id))
    assert tried == 3 * 12 + 3 * len(moved[:2])  # the draw may take one deal or more from a batch (random)
    with SqliteBank(path, read_only=True) as b:
        assert verify_bank(b).ok


def test_every_changed_byte_of_a_bank_with_compact_deals_is_found(tmp_path: Path) -> None:
    path = tmp_path / "bank.sqlite"
    _v2_bank(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA synchronous=OFF")  # the tampering itself need not be durable
    compact_ids = [r[0] for r in db.execute("SELECT deal_id FROM deals WHERE source NOT LIKE '{%' ORDER BY deal_id")]
    assert len(compact_ids) == 49
    tried = 0
    for table, key in (("deals", "deal_id"), ("ledger", "idx"), ("meta", "key")):
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        if table == "deals":  # compact rows: the first and last of a batch, one inside, the first and last of all
            keys: list[object] = [compact_ids[0], 15, 16, 17, 32, compact_ids[-1]]
        elif table == "ledger":  # the rows around a compact run: the one before it and its import entry
            keys = [r[0] for r in db.execute("SELECT idx FROM ledger WHERE kind IN ('import', 'void') ORDER BY idx")]
        else:
            keys = ["schema"]
        for k in keys:
            values = db.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {key}=?", (k,)).fetchone()
            for column, value in zip(columns, values, strict=True):
                for changed in _tamper_values(value):
                    try:
                        db.execute(f"UPDATE {table} SET {column}=? WHERE {key}=?", (changed, k))
                    except sqlite3.IntegrityError:
                        continue
                    db.commit()
                    with SqliteBank(path, read_only=True) as b:
                        report = verify_bank(b)
                    back = changed if column == key else k
                    db.execute(f"UPDATE {table} SET {column}=? WHERE {key}=?", (value, back))
                    db.commit()
                    assert not report.ok, f"{table}.{column} of {k} changed to {changed!r}: not found"
                    tried += 1
    assert tried > 150
    with SqliteBank(path, read_only=True) as b:
        assert verify_bank(b).ok


@pytest.mark.parametrize(
    ("change", "found"),
    [
        ("DELETE FROM deals WHERE deal_id = 20", "missing"),
        ("DELETE FROM ledger WHERE idx = (SELECT MIN(idx) FROM ledger WHERE kind = 'import' AND idx > 20)", "missing"),
        ("INSERT INTO ledger SELECT idx + 1, kind, body, hash FROM ledger WHERE idx = 11", "missing"),
        ("UPDATE meta SET value = '1' WHERE key = 'schema'", "format 1"),
        ("UPDATE deals SET source = '0,1,2' WHERE deal_id = 5", "deal 5"),  # a full-form row made compact
        ("UPDATE deals SET source = '9,1,2' WHERE deal_id = 20", "chain broken"),
    ],
)
def test_a_removed_moved_or_relabelled_compact_deal_is_found(tmp_path: Path, change: str, found: str) -> None:
    path = tmp_path / "bank.sqlite"
    _v2_bank(path)
    db = sqlite3.connect(path)
    db.execute(change)
    db.commit()
    db.close()
    with SqliteBank(path, read_only=True) as b:
        report = verify_bank(b)
    assert not report.ok and found in (report.problem or ""), report.problem


def test_the_old_codes_bank_takes_compact_deals_and_keeps_what_it_proved(tmp_path: Path) -> None:
    """The fixture made by the code of 2026-11-30 (full form, format 1) reads as it did, takes an import in the
    compact form (and becomes format 2), and its first 79 entries keep their bytes: its noted head still holds."""
    shutil.copy(FIXTURE / "bank-ed25519.pem", tmp_path / "bank-ed25519.pem")
    (tmp_path / "bank-ed25519.pem").chmod(0o600)
    path = tmp_path / "bank.sqlite"
    db = sqlite3.connect(path)
    db.executescript((FIXTURE / "bank.sql").read_text(encoding="utf-8"))
    db.close()
    with SqliteBank(path, read_only=True) as bank:
        before = [tuple(r) for r in bank.entries()]
        old_head = bank.ledger_head()
        old_deal = bank.get_deal(61)
    keyring = plain_key(tmp_path)  # the old bank's plain key file, as `dealer custody init` adopts it
    assert keyring is not None
    with unlocked(SqliteBank(path, key_dir=tmp_path), keyring) as bank:
        report = import_files(bank, _files(tmp_path / "in", _deals(30, 9), 10))
        assert report.imported == 30 and bank.meta()["schema"] == "3"
        assert [tuple(r) for r in bank.entries(0, 79)] == before and bank.get_deal(61) == old_deal
        bank.seal()
        result = verify_bank(bank)
        assert result.ok and (result.entries, result.deals) == (79 + 30 + 1 + 1, 91), result.problem
        assert bank.anchor()[0] == 111 and old_head == ANCHOR[1] and len(before) == ANCHOR[0]


def test_a_compact_bank_migrates_between_engines_byte_for_byte(tmp_path: Path) -> None:
    from bank_engines import pg_database

    from dealer.bank.migrate import migrate_bank

    bank = _mixed_bank(tmp_path / "a" / "bank.sqlite")
    try:
        with pg_database() as url:
            migrate_bank(bank, url)
            pg = open_bank_at(url, tmp_path / "a", create=False)
            try:
                assert verify_bank(pg).ok
                assert list(pg.entries()) == list(bank.entries())
                migrate_bank(pg, tmp_path / "back.sqlite")
            finally:
                pg.close()
        with SqliteBank(tmp_path / "back.sqlite", key_dir=tmp_path / "a") as back:
            assert verify_bank(back).ok and back.anchor() == bank.anchor()
    finally:
        bank.close()


def test_a_batchs_deals_are_found_by_their_cards(engine: str, tmp_path: Path) -> None:  # noqa: F811
    """Format 3: a deal in a batch of 5 or of 130 (its count two bytes long) is found by its cards, one at a time
    and as the duplicates of a later import; a deal drawn out of its batch too."""
    from dealer.bank import bulk

    deals = _deals(140, 11)
    small, large, fresh = deals[:5], deals[5:135], deals[135:]
    with bank_target(engine, tmp_path) as target:
        bank = unlocked(open_bank_at(target, tmp_path / "keys"))
        try:
            for part in (small, large):
                srcs = [bulk.source_text(0, k + 1, 3 * k) for k in range(len(part))]
                bank.import_canonical([d.to_bytes() for d in part], srcs, {"files": []})
            assert bank.meta()["schema"] == "3" and bank.deal_count() == 135
            assert [bank.find_deal(d) for d in (small[0], small[4], large[0], large[77], large[129])] == [
                1,
                5,
                6,
                83,
                135,
            ]
            assert bank.find_deal(fresh[0]) is None
            again = [large[3], fresh[0], small[2], fresh[1], large[128], small[0]]
            srcs = [bulk.source_text(0, None, None)] * len(again)
            outcome = bank.import_canonical([d.to_bytes() for d in again], srcs, {"files": []})
            assert outcome.duplicates == [(0, 9), (2, 3), (4, 134), (5, 1)]
            assert outcome.imported == [(1, 136), (3, 137)] and bank.deal_count() == 137
            assert bank.state_counts() == {"bank": 137, "drawn": 0, "played": 0}
            assert [d.deal for d in bank.get_deals([136, 9, 1, 134])] == [fresh[0], large[3], small[0], large[128]]
            assert verify_bank(bank).ok
        finally:
            bank.close()


def test_a_format_2_bank_on_a_postgresql_schema_2_migrates_and_verifies_as_it_did(tmp_path: Path) -> None:
    """A PostgreSQL database laid by the code before format 3 (its schema_version, migrations 1 and 2) holding the
    format-2 fixture's rows: today's code migrates it to schema 3, and it verifies with the head it had; it then
    takes a format-3 import, keeping its first entries' bytes."""
    import psycopg
    from bank_engines import pg_database

    from dealer.bank.pg_schema import LATEST, MIGRATIONS

    _v2_bank(tmp_path / "v2.sqlite")
    old = sqlite3.connect(tmp_path / "v2.sqlite")
    with pg_database() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied TEXT)")
            for version, sql in MIGRATIONS[:2]:
                conn.execute(sql)
                conn.execute("INSERT INTO schema_version VALUES (%s, 'then')", (version,))
            for table in ("meta", "ledger", "deals", "draws"):
                rows = old.execute(f"SELECT * FROM {table}").fetchall()
                marks = ", ".join(["%s"] * len(rows[0]))
                conn.cursor().executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        bank = unlocked(open_bank_at(url, tmp_path / "keys", create=False))
        try:
            assert bank.schema_version() == LATEST == 3 and bank.meta()["schema"] == "2"  # type: ignore[attr-defined]
            report = verify_bank(bank)
            assert report.ok and (report.entries, report.deals) == (81, 60) and bank.anchor() == ANCHOR_V2
            before = list(bank.entries())
            imported = import_files(bank, _files(tmp_path / "in", _deals(20, 12), 10))
            assert imported.imported == 20 and bank.meta()["schema"] == "3"
            assert list(bank.entries(0, 81)) == before
            report = verify_bank(bank)
            assert report.ok and (report.entries, report.deals) == (81 + 20 + 1, 80), report.problem
        finally:
            bank.close()
    old.close()
