"""The bank's two engines for parametrised tests: SQLite (a file) and PostgreSQL (a database of its own).

PostgreSQL tests skip, saying why, where no server answers at ``DEALER_TEST_PG`` (default 127.0.0.1:5432, trust
auth). Each PostgreSQL bank gets a new uniquely named database, dropped at the end: parallel runs never collide
and the shared ``test`` database is only used to connect.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from custody_support import unlocked

from dealer.bank.composed import Bank

PG_ADMIN = os.environ.get("DEALER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
ENGINES = ("sqlite", "postgresql")


def pg_admin_or_skip() -> str:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, connect_timeout=3):
            pass
    except Exception as exc:
        pytest.skip(f"PostgreSQL is not reachable at {PG_ADMIN} ({type(exc).__name__}: {exc})")
    return PG_ADMIN


def _url_of(dbname: str) -> str:
    base, _, _ = PG_ADMIN.rpartition("/")
    return f"{base}/{dbname}"


@contextlib.contextmanager
def pg_database() -> Iterator[str]:
    """A new empty database; yields its URL and drops it (closing whatever still uses it) afterwards."""
    import psycopg

    admin = pg_admin_or_skip()
    name = f"dealer_t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _url_of(name)
    finally:
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def bank_target(engine: str, tmp_path: Path) -> Iterator[str]:
    """Where a bank of ``engine`` lives for one test: a file path or a database URL."""
    if engine == "sqlite":
        yield str(tmp_path / "var" / "bank.sqlite")
    else:
        with pg_database() as url:
            yield url


def engine_of(bank: Bank) -> str:
    from dealer.bank.pg_store import PostgresBank

    return "postgresql" if isinstance(bank, PostgresBank) else "sqlite"


def open_test_bank(target: str, tmp_path: Path) -> Bank:
    from dealer.bank.engines import open_bank_at

    return unlocked(open_bank_at(target, tmp_path / "var"))


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def bank_at(engine: str, tmp_path: Path) -> Iterator[str]:
    with bank_target(engine, tmp_path) as target:
        yield target
