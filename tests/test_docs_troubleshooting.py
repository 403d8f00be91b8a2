"""docs/troubleshooting.md lists every fault the system can report: device fault kinds, void reasons, protocol
NAK reasons, and every draw refusal's wording. A new one in the code fails this test until it is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dealer.core.events import FaultKind
from dealer.session.session import VoidReason
from firmware_protocol.messages import NakReason

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", [k.value for k in FaultKind])
def test_every_fault_kind_is_documented(code: str) -> None:
    assert f"| `{code}` |" in DOC


@pytest.mark.parametrize("code", [r.value for r in VoidReason])
def test_every_void_reason_is_documented(code: str) -> None:
    assert f"| `{code}` |" in DOC


@pytest.mark.parametrize("name", [r.name for r in NakReason])
def test_every_nak_reason_is_documented(name: str) -> None:
    assert f"| `{name}` |" in DOC


def _refusals(folder: str, error: str) -> list[str]:
    """The fixed opening words of every message raised as ``error`` in ``dealer/<folder>``."""
    out = []
    for path in sorted((ROOT / "dealer" / folder).glob("*.py")):
        for m in re.finditer(error + r'\(\s*f?"([^"{]{12,})', path.read_text(encoding="utf-8")):
            out.append(m.group(1).strip())
    return out


DRAW_REFUSALS = _refusals("draw", "DrawError")


def test_draw_refusals_were_found() -> None:
    assert len(DRAW_REFUSALS) >= 10


@pytest.mark.parametrize("opening", DRAW_REFUSALS)
def test_every_draw_refusal_is_documented(opening: str) -> None:
    words = opening.rstrip(" :,.(")
    assert words.split(":")[0].strip() in DOC, f"docs/troubleshooting.md does not explain {opening!r}"


def test_links_in_the_guides_point_to_files_that_exist() -> None:
    for doc in ("judge", "director", "audience", "troubleshooting", "architecture"):
        text = (ROOT / "docs" / f"{doc}.md").read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+)\)", text):
            if not target.startswith("http"):
                assert (ROOT / "docs" / target).resolve().exists(), f"docs/{doc}.md links to missing {target}"


# The Russian guide is keyed by the Russian messages, as the catalogue words them (#28): every draw refusal's
# Russian text is found there (its longest fixed part, the placeholders left out), so a changed translation or a
# new refusal fails here until docs/ru/troubleshooting.md follows.
RU_DOC = (ROOT / "docs" / "ru" / "troubleshooting.md").read_text(encoding="utf-8")
CORE_RU = json.loads((ROOT / "dealer" / "core" / "i18n" / "ru.json").read_text(encoding="utf-8"))


def _templates(folder: str, error: str) -> list[str]:
    """Every whole template raised as ``error`` in ``dealer/<folder>`` (adjacent literals joined)."""
    out = []
    for path in sorted((ROOT / "dealer" / folder).glob("*.py")):
        for m in re.finditer(error + r'\(\s*((?:f?"[^"]*"\s*)+)', path.read_text(encoding="utf-8")):
            out.append("".join(re.findall(r'"([^"]*)"', m.group(1))))
    return out


def _fixed_part(russian: object) -> str:
    text = russian if isinstance(russian, str) else str(dict(russian).get("many") or dict(russian).get("other"))  # type: ignore[call-overload]
    parts = [p.strip(" :;,.()«»'\"—") for p in re.split(r"\{[^{}]*\}", text)]
    return max(parts, key=len)


@pytest.mark.parametrize("template", _templates("draw", "DrawError"))
def test_every_draw_refusal_is_in_the_russian_guide_in_russian(template: str) -> None:
    assert template in CORE_RU, f"no Russian entry for {template!r}"
    fixed = _fixed_part(CORE_RU[template])
    assert fixed in RU_DOC, f"docs/ru/troubleshooting.md does not show {fixed!r} (for {template!r})"


# Every message the Russian guide quotes (each `…` key in the first column of its message tables) is a Russian
# catalogue entry's wording (#28): the core errors', the command line's and the pages'. A key is read as a pattern,
# «…» standing for what the message names (and the catalogue's {fields} shown as «…» too), so a renamed or retranslated
# message fails here until the guide follows. Keys that are not messages are listed with their reason.
CLI_RU = json.loads((ROOT / "dealer" / "cli" / "i18n" / "ru.json").read_text(encoding="utf-8"))
WEB_RU = json.loads((ROOT / "dealer" / "web" / "i18n" / "ru.json").read_text(encoding="utf-8"))
NOT_MESSAGES = {
    "json_invalid": "pydantic's error type in a 422 answer's detail (for scripts), a code like the others",
    "regulation.toml: …": "the file's name before any regulation error (the row's example is a catalogue message)",
    "bank_waiting": "the station's status code, as the judge's state carries it",
    "detail": "the member of the 422 answer that holds pydantic's errors",
}
# Messages whose catalogue entry is the same in both languages on purpose (test_error_catalogue's SAME_ALLOWED):
# a PBN tag's name, a JSON field's path.
SAME_IN_BOTH = {"Deal …: …", "boards[…].…"}


def _russian_texts() -> list[str]:
    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            out.append(re.sub(r"\{[^{}]*\}", "…", node))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    for catalogue in (CORE_RU, CLI_RU, WEB_RU):
        walk(catalogue)
    return out


RU_TEXTS = "\n".join(_russian_texts())


def _guide_keys() -> list[str]:
    keys: list[str] = []
    in_messages = False
    for line in RU_DOC.splitlines():
        if line.startswith("| сообщение"):
            in_messages = True
        elif not line.startswith("|"):
            in_messages = False
        elif in_messages and not line.startswith("|---"):
            first = line.split(" | ")[0]
            keys += [k for k in re.findall(r"`([^`]+)`", first) if not k.startswith(("dealer ", "--"))]
    return keys


GUIDE_KEYS = _guide_keys()


def test_the_russian_guides_message_keys_were_found() -> None:
    assert len(GUIDE_KEYS) >= 140


@pytest.mark.parametrize("key", GUIDE_KEYS)
def test_every_message_the_russian_guide_quotes_is_the_catalogues_russian(key: str) -> None:
    if key in NOT_MESSAGES:
        return
    if key not in SAME_IN_BOTH:
        assert re.search("[а-яё]", key, re.IGNORECASE), f"docs/ru/troubleshooting.md quotes {key!r}, not Russian"
    pattern = ".*?".join(re.escape(part) for part in re.split(r"…+", key))
    assert re.search(pattern, RU_TEXTS), f"no Russian catalogue message reads {key!r}"
