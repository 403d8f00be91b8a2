"""The bank on PostgreSQL: several writers keep one chain, a killed connection is survived, banks move engines.

Writers are separate processes committing at full speed on one database; the database (not Python) serialises
the appends. ``pg_terminate_backend`` is aimed at a writer's connection while it is inside a transaction; SIGKILL
of a writer mid-commit is in ``test_bank_crash`` (parametrised over both engines). The server is never restarted
here: it is shared by everyone on this machine.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from bank_engines import open_test_bank, pg_database
from bank_support import random_deal, station_source
from custody_support import unlocked
from draw_support import DICE, full_draw, regulation

from dealer.bank.composed import Bank
from dealer.bank.migrate import migrate_bank
from dealer.bank.store import BankError, DuplicateDealError, SqliteBank
from dealer.core import Deal
from dealer.draw.director import Director
from dealer.draw.verify import verify_bank

ROOT = Path(__file__).resolve().parents[1]
REG = regulation(boards=18, sessions=2, spare=4, share=10)

WRITER = textwrap.dedent(
    """
    import random, sys
    sys.path.insert(0, {tests!r})
    from bank_support import random_deal, station_source
    from dealer.bank.engines import open_bank_at

    bank = open_bank_at(sys.argv[1], sys.argv[2])
    rng = random.Random(int(sys.argv[3]))
    for _ in range(int(sys.argv[4])):
        deal = random_deal(rng)
        c = bank.commit_deal(deal, station_source())
        sys.stdout.write(f"{{c.deal_id}} {{deal.to_bytes().hex()}} {{c.commitment}} {{c.ledger_index}}\\n")
        sys.stdout.flush()
    print("done", bank.raw_connection().reconnects, flush=True)
    """
)


def _writer(tmp_path: Path, url: str, seed: int, count: int) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    if not script.exists():
        script.write_text(WRITER.format(tests=str(ROOT / "tests")))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, str(script), url, str(tmp_path / "keys"), str(seed), str(count)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def _acks(lines: list[str]) -> list[tuple[int, str, str, int]]:
    out = []
    for line in lines:
        if line.endswith("\n") and not line.startswith("done"):
            deal_id, canonical, com, index = line.split()
            out.append((int(deal_id), canonical, com, int(index)))
    return out


def _check_all_present(bank: Bank, acked: list[tuple[int, str, str, int]]) -> None:
    report = verify_bank(bank)
    assert report.ok, report.problem
    for deal_id, canonical, com, index in acked:
        stored = bank.get_deal(deal_id)
        assert stored.deal == Deal.from_bytes(bytes.fromhex(canonical))
        assert stored.commitment.hex() == com and stored.ledger_index == index


def test_three_writers_at_once_keep_one_chain_and_take_no_deal_twice(tmp_path: Path) -> None:
    with pg_database() as url:
        open_test_bank(url, tmp_path).close()  # create the bank once, then three processes write at once
        writers = [_writer(tmp_path, url, seed, 120) for seed in (1, 2, 3)]
        # a fourth writer repeats writer 1's deals: each of them must end in the bank once
        writers.append(_writer(tmp_path, url, 1, 120))
        outputs = []
        for w in writers:
            out, err = w.communicate(timeout=240)
            outputs.append(out.splitlines(keepends=True))
            assert w.returncode in (0, 1), err
        acked = [a for out in outputs for a in _acks(out)]
        with open_test_bank(url, tmp_path) as bank:
            _check_all_present(bank, acked)
            # three writers' deals plus the repeated ones committed once: ids 1..360 with no gap, one chain
            assert bank.deal_count() == 360
            assert sorted(a[0] for a in acked) == list(range(1, 361))
            assert len({a[1] for a in acked}) == 360
            assert bank.ledger_size() == 361  # genesis + one entry per deal: no entry lost or forked
        # writers 1 and 4 race on the same deals: one of them is refused a deal the other took (DuplicateDealError)
        loser = [w for w in writers if w.returncode != 0]
        assert len(loser) == 1


def test_terminating_a_writers_connection_mid_transaction_loses_nothing(tmp_path: Path) -> None:
    import psycopg

    with pg_database() as url:
        open_test_bank(url, tmp_path).close()
        writer = _writer(tmp_path, url, 7, 400)
        kills = 0
        mid_tx = 0
        deadline = time.monotonic() + 180
        with psycopg.connect(url, autocommit=True) as admin:
            while writer.poll() is None and kills < 8 and time.monotonic() < deadline:
                row = admin.execute(
                    "SELECT pid, state FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND backend_type = 'client backend'"
                ).fetchone()
                if row is None:
                    continue
                done = admin.execute("SELECT pg_terminate_backend(%s)", (row[0],)).fetchone()
                if done is not None and done[0]:
                    kills += 1
                    mid_tx += row[1] in ("active", "idle in transaction")
                    time.sleep(0.05 * kills)  # let it reconnect and commit a few between kills
        out, err = writer.communicate(timeout=240)
        lines = out.splitlines(keepends=True)
        assert writer.returncode == 0, err[-2000:]
        assert lines[-1].startswith("done")
        reconnects = int(lines[-1].split()[1])
        assert kills >= 3 and mid_tx >= 1 and reconnects >= 1, (kills, mid_tx, reconnects)
        acked = _acks(lines)
        assert len(acked) == 400  # every deal acknowledged once: no commit lost, none doubled by a retry
        with open_test_bank(url, tmp_path) as bank:
            _check_all_present(bank, acked)
            assert bank.deal_count() == 400


def test_sigkill_of_one_of_two_writers_mid_commit(tmp_path: Path) -> None:
    with pg_database() as url:
        open_test_bank(url, tmp_path).close()
        steady = _writer(tmp_path, url, 11, 300)
        victim = _writer(tmp_path, url, 12, 100_000)
        assert victim.stdout is not None
        lines = [victim.stdout.readline() for _ in range(100)]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        lines += victim.stdout.readlines()
        out, err = steady.communicate(timeout=240)
        assert steady.returncode == 0, err
        acked = _acks(lines) + _acks(out.splitlines(keepends=True))
        with open_test_bank(url, tmp_path) as bank:
            _check_all_present(bank, acked)
            assert bank.deal_count() >= len(acked)


def _bank_with_a_draw(bank: Bank) -> str:
    rng = random.Random(5)
    for _ in range(400):
        bank.commit_deal(random_deal(rng), station_source())
    bank.void_deal("jam", "A")
    director = Director(bank)
    director.seal()
    bundle = full_draw(director, "S1", REG)
    director.prepare("S2", DICE, REG)  # a draw still open moves too
    director.publish("S2")
    return json.dumps(bundle, sort_keys=True)


def test_migrate_sqlite_to_postgresql_and_back_keeps_every_byte(tmp_path: Path) -> None:
    src = tmp_path / "a" / "bank.sqlite"
    with unlocked(SqliteBank(src)) as a:
        bundle = _bank_with_a_draw(a)
        rows = {t: a.raw_connection().execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("ledger", "deals")}
    with pg_database() as url:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [sys.executable, "-m", "dealer", "bank", "migrate", str(src), url],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert "verified on both" in run.stdout and "postgres@" in run.stdout
        assert "custody record" in run.stdout  # a file, not a row: the migrate command says where it goes
        from dealer.bank.engines import open_bank_at

        with unlocked(open_bank_at(url, src.parent)) as pg:  # the chief judge's key opens the migrated draws
            assert verify_bank(pg).ok
            assert json.dumps(Director(pg).bundle("S1"), sort_keys=True) == bundle
            for table, want in rows.items():
                with pg.engine.read() as db:
                    got = db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                assert [tuple(r) for r in got] == [tuple(r) for r in want]
            # the migrated bank goes on: the open draw runs, new deals chain on
            director = Director(pg)
            director.enter_public_value("S2", dice=["12345612/65432165"])
            director.run("S2")
            pg.commit_deal(random_deal(random.Random(99)), station_source())
            assert verify_bank(pg).ok
            back = tmp_path / "b" / "bank.sqlite"
            migrate_bank(pg, back)
            with pytest.raises(BankError, match="holds a bank already"):
                migrate_bank(pg, url)
        with unlocked(SqliteBank(back)) as b:
            assert verify_bank(b).ok
            assert json.dumps(Director(b).bundle("S1"), sort_keys=True) == bundle
            assert b.get_draw("S2").state == "drawn"
    with pytest.raises(BankError, match="exists already"), SqliteBank(src) as a:
        migrate_bank(a, back)


def test_schema_is_versioned_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    from dealer.bank.pg_schema import LATEST
    from dealer.bank.pg_store import PostgresBank

    with pg_database() as url:
        with open_test_bank(url, tmp_path) as bank:
            assert isinstance(bank, PostgresBank) and bank.schema_version() == LATEST
            bank.raw_connection().execute("INSERT INTO schema_version VALUES (?, now())", (LATEST + 1,))
        with pytest.raises(BankError, match=f"version {LATEST + 1}, newer than this program"):
            open_test_bank(url, tmp_path)


def test_duplicate_across_engines_is_refused_the_same_way(tmp_path: Path) -> None:
    deal = random_deal(random.Random(3))
    with pg_database() as url, open_test_bank(url, tmp_path) as bank:
        first = bank.commit_deal(deal, station_source())
        with pytest.raises(DuplicateDealError) as exc:
            bank.commit_deal(deal, station_source())
        assert exc.value.existing_id == first.deal_id


PG_BIN = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture
def private_pg() -> Any:
    """A PostgreSQL server of this test's own (initdb in a temporary directory), so it can be restarted."""
    import pwd
    import tempfile

    from _web_server import free_port

    if not (PG_BIN / "initdb").exists() or shutil.which("runuser") is None:
        pytest.skip(f"no PostgreSQL 15 binaries in {PG_BIN} (or no runuser) to start a private server")
    if os.geteuid() != 0:
        pytest.skip("starting a private PostgreSQL server as the postgres user needs root")
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres user to run a private server")
    base = Path(tempfile.mkdtemp(prefix="dealer-pg-", dir="/tmp"))
    os.chown(base, pw.pw_uid, pw.pw_gid)
    port = free_port()
    data = base / "data"

    def as_pg(*args: str) -> None:
        # from the server's own folder: initdb refuses to start in a working directory postgres cannot read
        # (and in the C locale: initdb refuses a LANG the machine has no locale for)
        env = {**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *args], check=True, capture_output=True, timeout=120, cwd=base, env=env
        )

    as_pg(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1"
    ctl = [str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "-t", "60"]
    as_pg(*ctl, "start")

    def restart(mode: str) -> None:
        as_pg(*ctl, "-m", mode, "restart")

    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres", restart
    finally:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            cwd=base,
            timeout=60,
        )
        shutil.rmtree(base, ignore_errors=True)


def test_server_restarts_under_load_lose_no_acknowledged_deal(private_pg: Any, tmp_path: Path) -> None:
    url, restart = private_pg
    open_test_bank(url, tmp_path).close()
    writer = _writer(tmp_path, url, 21, 300)
    assert writer.stdout is not None
    lines: list[str] = []
    for mode in ("immediate", "fast"):  # a crash of the server (WAL recovery), then a clean restart
        lines += [writer.stdout.readline() for _ in range(60)]
        restart(mode)
    out, err = writer.communicate(timeout=240)
    lines += out.splitlines(keepends=True)
    assert writer.returncode == 0, err[-2000:]
    assert lines[-1].startswith("done") and int(lines[-1].split()[1]) >= 2  # it reconnected after each restart
    acked = _acks(lines)
    assert len(acked) == 300
    with open_test_bank(url, tmp_path) as bank:
        _check_all_present(bank, acked)
        assert bank.deal_count() == 300


def test_opening_without_create_leaves_a_database_without_a_bank_untouched(tmp_path: Path) -> None:
    import psycopg

    from dealer.bank.engines import open_bank_at

    with pg_database() as url:
        with pytest.raises(BankError, match="no bank in that database yet"):
            open_bank_at(url, tmp_path / "keys", create=False)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [sys.executable, "-m", "dealer", "bank", "status", "--bank", url], capture_output=True, text=True, env=env
        )
        assert run.returncode == 1 and "no bank in that database yet" in run.stderr
        with psycopg.connect(url) as c:
            tables = c.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
        assert tables == []
