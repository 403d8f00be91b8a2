"""The duplicate check of a bank of format 3 (#33): the batches' deals have no unique index in the database, so an
open bank keeps an index of them in memory (``deal_index``), brought up to date inside the write transaction that
holds the bank's lock. A deal is never committed twice, by one writer or by several at once (real processes, on
SQLite and on PostgreSQL).
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from bank_engines import bank_target, open_test_bank
from bank_support import random_deal, station_source
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer.bank import bulk
from dealer.bank.deal_index import DealIndex
from dealer.bank.store import DuplicateDealError, SqliteBank
from dealer.core import Deal
from dealer.draw.verify import verify_bank

ROOT = Path(__file__).resolve().parents[1]
FILES = {"files": [{"file": "dedup.pbn"}]}

deal_bytes = st.binary(min_size=13, max_size=13)


@settings(max_examples=60, deadline=None)
@given(
    held=st.lists(deal_bytes, unique=True, max_size=200),  # a bank holds a deal once
    cuts=st.lists(st.integers(0, 200), max_size=12),
    probes=st.lists(deal_bytes, max_size=20),
    tail=st.binary(min_size=5, max_size=5),
)
def test_the_index_finds_what_a_dict_of_the_runs_finds(
    held: list[bytes], cuts: list[int], probes: list[bytes], tail: bytes
) -> None:
    index = DealIndex()
    bounds = [0, *sorted(c for c in cuts if c < len(held)), len(held)]
    for low, high in itertools.pairwise(bounds):  # runs of consecutive ids, added one after another
        index.add([(b"".join(held[low:high]), low + 1)])
    expected = {deal: k + 1 for k, deal in enumerate(held)}
    # probes: held deals, strangers, and strangers sharing a held deal's first 8 bytes (a prefix hit to refuse)
    asked = list(dict.fromkeys(held[:10] + probes + [d[:8] + tail for d in held[:10]]))
    assert index.find(asked) == {d: expected[d] for d in asked if d in expected}
    assert index.size == len(held)


def test_a_deal_sharing_a_held_deal_s_first_8_bytes_is_not_a_duplicate() -> None:
    held = bytes(range(13))
    index = DealIndex()
    index.add([(held + bytes(13), 5)])  # ids 5 and 6
    twin = held[:8] + b"\xff" * 5
    assert index.find([twin, held, bytes(13)]) == {held: 5, bytes(13): 6}


def _deals(seed: int, n: int) -> list[bytes]:
    rng = random.Random(seed)
    return list(dict.fromkeys(random_deal(rng).to_bytes() for _ in range(n)))


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_bank_object_sees_the_batches_another_one_wrote(engine: str, tmp_path: Path) -> None:
    theirs = _deals(1, 30)
    with bank_target(engine, tmp_path) as target:
        ours, other = open_test_bank(target, tmp_path), open_test_bank(target, tmp_path)
        try:
            first = _deals(2, 10)
            ours.import_canonical(first, [bulk.source_text(0, 1, 1)] * len(first), FILES)
            assert ours.find_deal(Deal.from_bytes(first[3])) == 4  # our index is loaded (ids 1..10)
            outcome = other.import_canonical(theirs, [bulk.source_text(0, 1, 1)] * len(theirs), FILES)
            assert [i for _, i in outcome.imported] == list(range(11, 41))
            with pytest.raises(DuplicateDealError) as err:
                ours.commit_deal(Deal.from_bytes(theirs[7]), station_source())
            assert err.value.existing_id == 18
            again = ours.import_canonical(theirs[::-1], [bulk.source_text(0, 1, 1)] * len(theirs), FILES)
            assert again.imported == [] and sorted(i for _, i in again.duplicates) == list(range(11, 41))
            assert ours.deal_count() == 40 and verify_bank(ours).ok
        finally:
            ours.close()
            other.close()


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_batch_rolled_back_leaves_its_deals_free_to_import(engine: str, tmp_path: Path) -> None:
    deals = _deals(3, 25)
    sources = [bulk.source_text(0, 1, 1)] * len(deals)
    with bank_target(engine, tmp_path) as target, open_test_bank(target, tmp_path) as bank:
        bank.import_canonical(deals[:5], sources[:5], FILES)

        def fail() -> None:  # called inside the transaction, after the batch's row is written
            raise RuntimeError("the import stops")

        with pytest.raises(RuntimeError):
            bank.import_canonical(deals[5:], sources[5:], FILES, while_deals=fail)
        assert bank.find_deal(Deal.from_bytes(deals[10])) is None
        outcome = bank.import_canonical(deals[5:], sources[5:], FILES)
        assert len(outcome.imported) == 20 and outcome.duplicates == []
        assert bank.deal_count() == 25 and verify_bank(bank).ok


def test_the_index_is_built_again_when_its_last_batch_is_not_the_one_it_read(tmp_path: Path) -> None:
    """A database changed under an open bank (here by hand: the last batch replaced by another of the same ids and
    ledger index) is not answered from the index of what it held."""
    path = tmp_path / "bank.sqlite"
    gone, kept, new = _deals(4, 10), _deals(5, 10), _deals(6, 10)
    with open_test_bank(str(path), tmp_path) as bank, open_test_bank(str(path), tmp_path) as other:
        bank.import_canonical(kept, [bulk.source_text(0, 1, 1)] * 10, FILES)
        bank.import_canonical(gone, [bulk.source_text(0, 1, 1)] * 10, FILES)
        assert bank.find_deal(Deal.from_bytes(gone[0])) == 11
        assert isinstance(other, SqliteBank)
        db = other.raw_connection()
        last = int(db.execute("SELECT MAX(idx) FROM batches").fetchone()[0])
        db.execute("DELETE FROM batches WHERE idx = ?", (last,))
        db.execute("DELETE FROM ledger WHERE idx >= ?", (last - 10,))
        other.import_canonical(new, [bulk.source_text(0, 1, 1)] * 10, FILES)  # the same ids and indices
        assert bank.find_deal(Deal.from_bytes(gone[0])) is None
        assert bank.find_deal(Deal.from_bytes(new[0])) == 11
        assert bank.find_deal(Deal.from_bytes(kept[9])) == 10


# A writer racing the others on the same deals: ``import`` commits them in batches of a few (format 3, no unique
# index), ``commit`` one by one as a dealing station does (its own row), each in the order ``order`` gives.
RACER = textwrap.dedent(
    """
    import random, sys
    sys.path.insert(0, {tests!r})
    from bank_support import random_deal, station_source
    from dealer.bank import bulk
    from dealer.bank.engines import open_bank_at
    from dealer.bank.store import DuplicateDealError
    from dealer.core import Deal

    target, keys, mode, seed, count, order = sys.argv[1:7]
    rng = random.Random(int(seed))
    deals = list(dict.fromkeys(random_deal(rng).to_bytes() for _ in range(int(count))))
    if order == "reversed":
        deals.reverse()
    bank = open_bank_at(target, keys)
    bank.find_deal(Deal.from_bytes(deals[0]))  # the index is loaded before the race
    print("ready", flush=True)
    sys.stdin.readline()
    if mode == "import":
        for k in range(0, len(deals), 7):
            part = deals[k : k + 7]
            sources = [bulk.source_text(0, 1, 1)] * len(part)
            out = bank.import_canonical(part, sources, {{"files": [{{"file": "r.pbn"}}]}})
            for position, deal_id in out.imported:
                print("+", deal_id, part[position].hex(), flush=True)
    else:
        for deal in deals:
            try:
                print("+", bank.commit_deal(Deal.from_bytes(deal), station_source()).deal_id, deal.hex(), flush=True)
            except DuplicateDealError:
                pass
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql", "postgresql-repeatable-read"])
def test_writers_racing_on_the_same_deals_commit_each_once(engine: str, tmp_path: Path) -> None:
    """``postgresql-repeatable-read``: a server (here the database) whose default isolation is REPEATABLE READ,
    where a transaction's snapshot would be taken by its first statement (before the write lock is granted): the
    bank's transactions say READ COMMITTED themselves, so each statement after the lock sees every earlier write."""
    count = 150
    script = tmp_path / "racer.py"
    script.write_text(RACER.format(tests=str(ROOT / "tests")))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with bank_target(engine.removesuffix("-repeatable-read"), tmp_path) as target:
        if engine.endswith("-repeatable-read"):
            import psycopg

            with psycopg.connect(target, autocommit=True) as c:
                name = c.execute("SELECT current_database()").fetchone()
                assert name is not None
                c.execute(f"ALTER DATABASE \"{name[0]}\" SET default_transaction_isolation = 'repeatable read'")
        with open_test_bank(target, tmp_path) as bank:  # the bank made, and one batch in it: format 3 from the start
            bank.import_canonical(_deals(9, 5), [bulk.source_text(0, 1, 1)] * 5, FILES)
        plans = [("import", "forward"), ("import", "reversed"), ("commit", "forward"), ("commit", "reversed")]
        racers = [
            subprocess.Popen(
                [sys.executable, str(script), target, str(tmp_path / "var"), mode, "11", str(count), order],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                text=True,
            )
            for mode, order in plans
        ]
        try:
            for racer in racers:  # every racer has its index loaded: then all start at once
                assert racer.stdout is not None and racer.stdout.readline() == "ready\n", racer.stderr
            for racer in racers:
                assert racer.stdin is not None
                racer.stdin.write("go\n")
                racer.stdin.flush()
            outputs = [racer.communicate(timeout=300) for racer in racers]
        finally:
            for racer in racers:
                if racer.poll() is None:
                    racer.kill()
                    racer.wait()
        for racer, (out, err) in zip(racers, outputs, strict=True):
            assert racer.returncode == 0 and out.endswith("done\n"), err
        committed = [line.split() for out, _ in outputs for line in out.splitlines() if line.startswith("+")]
        wanted = _deals(11, count)
        # each deal committed by exactly one writer, under ids 6, 7, … without a gap
        assert sorted(bytes.fromhex(c) for _, _, c in committed) == sorted(wanted)
        assert sorted(int(i) for _, i, _ in committed) == list(range(6, 6 + len(wanted)))
        with open_test_bank(target, tmp_path) as bank:
            held = [row.canonical for row in bank.deal_rows()]
            assert len(held) == len(set(held)) == 5 + len(wanted)
            assert verify_bank(bank).ok
