"""Layering: the import contracts of ``pyproject.toml`` ([tool.importlinter]) hold — one ``layers`` contract with
the whole order and no ignored import, and ``app-is-framework-free`` —, the layers name every package, and no
cycle runs between packages across the three roots (``dealer``, ``drivers``, ``firmware_protocol``).

The order, highest first: ``dealer.__main__``, the CLI, the relay beside the web service, the HTTP plumbing both
serve through (``dealer.serving``), the application layer (``dealer.app``), the documents, then draws, audits and
hand records, then the bank and the exports, then the pure packages (custody, formats, i18n, session, drivers), then
fsutil and the regulation, then ``dealer.core`` and ``firmware_protocol``. Packages of one layer do not import each
other.
"""

from __future__ import annotations

import graphlib
import pkgutil
import tomllib
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter.cli import lint_imports

import dealer

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ("dealer", "drivers", "firmware_protocol")


def contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def dealer_units() -> set[str]:
    """Every package and top-level module of ``dealer`` (what the contracts must list)."""
    return {f"dealer.{m.name}" for m in pkgutil.iter_modules(dealer.__path__)}


def unit(module: str) -> str:
    """The package a module belongs to for the cycle rule: ``dealer.X`` inside dealer, else its root."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "dealer" and len(parts) > 1 else parts[0]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*ROOTS, cache_dir=None)


def test_the_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "3 kept, 0 broken" in out


def layers() -> list[list[str]]:
    """The layers contract's layers, highest first, each a list of its packages (optional ones without brackets)."""
    return [[name.strip().strip("()") for name in layer.split("|")] for layer in contracts()["layers"]["layers"]]


def test_one_layers_contract_names_every_package_once_with_no_ignores() -> None:
    """A new package of dealer must be placed in the layers; nothing is let through by an ignore."""
    c = contracts()
    assert set(c) == {"layers", "app-is-framework-free", "storage-reads-no-files"}
    assert c["layers"]["type"] == "layers"
    assert all("ignore_imports" not in contract for contract in c.values())
    named = [name for layer in layers() for name in layer]
    assert len(named) == len(set(named))
    assert set(named) == dealer_units() | {"drivers", "firmware_protocol"}
    assert c["app-is-framework-free"]["source_modules"] == ["dealer.app"]
    assert {"fastapi", "starlette", "uvicorn", "typer"} <= set(c["app-is-framework-free"]["forbidden_modules"])
    assert c["storage-reads-no-files"]["source_modules"] == ["dealer.bank"]
    assert c["storage-reads-no-files"]["forbidden_modules"] == ["dealer.formats"]


def test_the_layers_state_the_issue_s_order() -> None:
    """core → protocol → drivers → bank → draw/formats/… → app → web/cli/relay (#29): each package below the next."""
    level = {name: i for i, layer in enumerate(reversed(layers())) for name in layer}
    assert level["dealer.core"] == level["firmware_protocol"] == 0
    assert level["drivers"] > level["dealer.core"]
    assert level["dealer.bank"] > level["drivers"] and level["dealer.bank"] > level["dealer.formats"]
    assert level["dealer.draw"] > level["dealer.bank"] > level["dealer.integrity"]
    assert level["dealer.bank_import"] > level["dealer.bank"]
    above_app = {"dealer.serving", "dealer.web", "dealer.cli", "dealer.relay", "dealer.__main__"}
    assert all(level[name] < level["dealer.app"] for name in set(level) - above_app - {"dealer.app"})
    assert level["dealer.app"] < level["dealer.serving"] < level["dealer.web"] == level["dealer.relay"]
    assert level["dealer.relay"] < level["dealer.cli"]


RELAY_PAGE = """
import json
import sys
from pathlib import Path
import dealer
from starlette.testclient import TestClient
from dealer.relay.app import create_relay_app

client = TestClient(create_relay_app("nats://127.0.0.1:1", "event"))  # no lifespan: the feed is not started
page, words, script = client.get("/?lang=en"), client.get("/i18n/ru.json"), client.get("/static/i18n.js")
print(page.status_code, words.status_code, script.status_code, "<title" in page.text and "Open dealing" in page.text)
print(words.json() == json.loads((Path(dealer.__file__).parent / "web" / "i18n" / "ru.json").read_bytes()))
print(sorted(name for name in sys.modules if name == "dealer.web" or name.startswith("dealer.web.")))
"""


def test_the_relay_serves_the_audience_page_without_loading_the_web_service() -> None:
    """The relay and the web are siblings (#29): the contract forbids imports between them, and this checks what
    it cannot see — the relay reads the pages' files (template, scripts, catalogues) as package data of ``dealer``,
    so serving them loads no module of ``dealer.web`` (``resources.files("dealer.web")`` would import it)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", RELAY_PAGE], capture_output=True, text=True, check=True, cwd=ROOT)
    statuses, same_catalogue, loaded = out.stdout.splitlines()
    assert statuses == "200 200 200 True"  # the page in English, its Russian catalogue, a script
    assert same_catalogue == "True"
    assert loaded == "[]"


def test_no_cycle_between_packages_across_roots(graph: grimp.ImportGraph) -> None:
    """The layers imply it; this folds ``dealer.X``, ``drivers`` and ``firmware_protocol`` into one graph of peers
    and sorts it, so a cycle is named even where the layers would only say which import breaks them."""
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = unit(module), unit(imported)
            if a != b:
                edges.setdefault(a, set()).add(b)
    order = list(graphlib.TopologicalSorter(edges).static_order())  # CycleError names the cycle
    assert order.index("dealer.core") < order.index("drivers") < order.index("dealer.web")
    assert order.index("firmware_protocol") < order.index("drivers")


def test_the_rules_catch_what_they_forbid(graph: grimp.ImportGraph) -> None:
    """The contracts are not vacuous: the graph does see the imports they allow, so a forbidden one would show."""
    assert graph.direct_import_exists(importer="drivers.transport", imported="dealer.core.errors")
    assert graph.find_shortest_chain(importer="dealer.cli.serve_cmds", imported="dealer.web.app") is not None
    assert graph.find_shortest_chain(importer="dealer.app.devices", imported="drivers.discovery") is not None
    assert graph.find_shortest_chain(importer="dealer.web", imported="dealer.cli", as_packages=True) is None
    assert graph.find_shortest_chain(importer="dealer.web.app", imported="dealer.app.station_state") is not None
    assert graph.direct_import_exists(importer="dealer.relay.feed", imported="dealer.app.hub")
    assert graph.direct_import_exists(importer="dealer.relay.app", imported="dealer.serving.public_stream")
    assert graph.find_shortest_chain(importer="dealer.relay", imported="dealer.web", as_packages=True) is None
    assert graph.direct_import_exists(importer="dealer.app.closed", imported="dealer.documents.acts")
    assert graph.direct_import_exists(importer="dealer.session.session", imported="dealer.regulation")


def test_the_bank_does_not_read_the_draw(graph: grimp.ImportGraph) -> None:
    """The draw's documents are read by ``dealer.draw`` (#15): no module of the bank imports the draw package."""
    assert graph.find_shortest_chain(importer="dealer.bank", imported="dealer.draw", as_packages=True) is None
    assert graph.find_shortest_chain(importer="dealer.draw", imported="dealer.bank", as_packages=True) is not None


def test_bank_and_draw_take_their_proofs_from_integrity_and_the_importer_sits_above_the_bank(
    graph: grimp.ImportGraph,
) -> None:
    """Integrity is its own package under both the bank and the draw (#29); the importer of files is above the
    bank, beside the formats, and the bank reaches neither."""
    for user in ("dealer.bank", "dealer.draw"):
        assert graph.find_shortest_chain(importer=user, imported="dealer.integrity", as_packages=True) is not None
    assert graph.find_shortest_chain(importer="dealer.integrity", imported="dealer.bank", as_packages=True) is None
    assert graph.find_shortest_chain(importer="dealer.bank_import", imported="dealer.bank", as_packages=True)
    assert graph.find_shortest_chain(importer="dealer.bank_import", imported="dealer.formats", as_packages=True)
    assert graph.find_shortest_chain(importer="dealer.bank", imported="dealer.bank_import", as_packages=True) is None


def test_the_draw_packages_lazy_names_are_its_named_modules_objects() -> None:
    """``dealer.draw`` loads its names on first use: each name of ``__all__`` resolves, to the object of the module
    it is typed from (a name added to one list and not to the other fails here, not at a user's first import)."""
    import importlib

    import dealer.draw as draw

    for name in draw.__all__:
        home = importlib.import_module(f"dealer.draw.{draw._HOME[name]}")
        assert getattr(draw, name) is getattr(home, name), name
    assert set(draw._HOME) == set(draw.__all__)
    with pytest.raises(AttributeError):
        draw.NoSuchName  # noqa: B018
