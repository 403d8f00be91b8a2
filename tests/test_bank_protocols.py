"""The bank is typed by narrow protocols and built per engine by composition (#29): no module outside
``dealer.bank`` asks which engine a bank is (``isinstance``, ``getattr``/``hasattr`` probes, runtime-checkable
protocols), PostgreSQL's bank is not SQLite's, and the composed bank has every member its protocols name."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest
from bank_engines import ENGINES, bank_target

from dealer.bank import protocols
from dealer.bank.composed import Bank
from dealer.bank.engines import open_bank_at
from dealer.bank.errors import BankError
from dealer.bank.pg_store import PostgresBank
from dealer.bank.repository import BankRepository
from dealer.bank.store import SqliteBank

DEALER = Path(__file__).resolve().parents[1] / "dealer"
NARROW = (
    protocols.Ledger,
    protocols.Deals,
    protocols.Imports,
    protocols.Seals,
    protocols.Custody,
    protocols.Draws,
    protocols.Copies,
    protocols.Tables,
    protocols.Opened,
)


def _probes(tree: ast.AST) -> list[str]:
    """The engine probes of a module: ``isinstance(x, …Bank)``, ``getattr``/``hasattr`` on something named
    like a bank, and ``runtime_checkable`` (a protocol checked at run time is a probe of its own)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "runtime_checkable":
            found.append(f"{node.lineno}: runtime_checkable")
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
            continue
        text = ast.unparse(node)
        if node.func.id == "isinstance" and len(node.args) == 2 and "Bank" in ast.unparse(node.args[1]):
            found.append(f"{node.lineno}: {text}")
        if node.func.id in ("getattr", "hasattr") and "bank" in ast.unparse(node.args[0]).lower():
            found.append(f"{node.lineno}: {text}")
    return found


def test_no_module_outside_the_bank_probes_its_engine() -> None:
    offenders = {
        str(path.relative_to(DEALER.parent)): probes
        for path in sorted(DEALER.rglob("*.py"))
        if "bank" not in path.relative_to(DEALER).parts[:1]
        and (probes := _probes(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        "isinstance(bank, SqliteBank)",
        "getattr(self.bank.bank, 'ledger_size', None)",
        "hasattr(bank, 'seal')",
        "@runtime_checkable\nclass P: ...",
    ],
)
def test_the_probe_finder_sees_each_kind_of_probe(source: str) -> None:
    assert len(_probes(ast.parse(source))) == 1


def test_postgresql_is_not_sqlite_each_is_the_bank_over_its_engine() -> None:
    assert not issubclass(PostgresBank, SqliteBank) and not issubclass(SqliteBank, PostgresBank)
    assert PostgresBank.__mro__[1:] == SqliteBank.__mro__[1:] == (Bank, object)


@pytest.mark.parametrize("narrow", NARROW, ids=lambda p: p.__name__)
def test_the_composed_bank_has_every_member_of_each_narrow_protocol(narrow: type) -> None:
    members = {name for name in vars(narrow) if not name.startswith("_") or name in ("__enter__", "__exit__")}
    members |= set(typing.get_type_hints(narrow)) if narrow is protocols.Opened else set()
    assert members and all(hasattr(Bank, m) or m in ("bank_id", "key_dir") for m in members)
    assert narrow in BankRepository.__mro__


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bank_copies_itself_into_a_file_only_where_its_engine_can(engine: str, tmp_path: Path) -> None:
    """The service asks ``copies_to_file`` (not the bank's class); a PostgreSQL bank asked anyway says why not
    and writes nothing."""
    copy = tmp_path / "copy" / "bank.sqlite"
    copy.parent.mkdir()
    with bank_target(engine, tmp_path / "bank") as target, open_bank_at(target, tmp_path / "keys") as bank:
        if engine == "sqlite":
            assert bank.copies_to_file and bank.copy_to(copy) == bank.anchor()
            return
        assert not bank.copies_to_file
        with pytest.raises(BankError, match="not copied into a file; its second copy is a synchronous standby"):
            bank.copy_to(copy)
    assert not copy.exists()
