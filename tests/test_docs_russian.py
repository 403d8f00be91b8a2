"""The Russian guides (docs/ru/) stay in step with the English ones: the same numbered sections, the same
commands, the same code words and pictures, and links that lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
GUIDES = ("judge", "director", "audience", "troubleshooting")


def sections(text: str) -> list[str]:
    """The numbers of the ## sections ("1.", "2.", … or "" for an unnumbered one), in order."""
    return [m.group(1) for m in re.finditer(r"^##\s+(\d+\.)?", text, re.M)]


def commands(text: str) -> list[str]:
    """Every line of the sh code blocks, without its comment."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def code_words(text: str) -> set[str]:
    """Inline `code` outside the code blocks: commands, keys, files, codes and messages as the program prints them."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return {" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)}


def pictures(text: str) -> list[str]:
    return [Path(p).name for p in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)]


@pytest.mark.parametrize("name", GUIDES)
def test_russian_guide_matches_the_english_one(name: str) -> None:
    en = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    ru = (DOCS / "ru" / f"{name}.md").read_text(encoding="utf-8")
    assert sections(ru) == sections(en)
    assert commands(ru) == commands(en)
    en_code, ru_code = code_words(en), code_words(ru)
    if name == "troubleshooting":  # the Russian guide shows the messages in Russian (their parity with the
        # catalogue: tests/test_docs_troubleshooting.py); codes, keys, options and commands are the same
        en_code, ru_code = (
            {w for w in c if (" " not in w and not re.search("[а-яё]", w, re.I)) or w.startswith("dealer ")}
            for c in (en_code, ru_code)
        )
    assert ru_code == en_code, (en_code - ru_code, ru_code - en_code)
    assert pictures(ru) == pictures(en)
    assert len(re.findall(r"[а-яё]", ru, re.I)) > 0.5 * len(re.findall(r"[a-z]", ru, re.I))  # it is Russian


@pytest.mark.parametrize("name", GUIDES)
def test_links_in_the_russian_guides_lead_somewhere(name: str) -> None:
    text = (DOCS / "ru" / f"{name}.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (DOCS / "ru" / target).resolve().exists(), f"docs/ru/{name}.md links to missing {target}"
