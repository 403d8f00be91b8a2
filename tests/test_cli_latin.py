"""A day's command line in Russian holds no Latin word (#28): bank status and seal, the draw's prepare, publish,
public value, run, reveal, bundle and verify, bank verify, the documents and the export of files, run as a chief
judge runs them in an event folder with the default language (Russian) and read back whole (stdout and stderr).
Machine output (JSON, a hash, a public value) is read for its text only: its members' names and codes are data.
What may stay Latin is listed, each with its reason (as in test_documents_latin)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

from custody_support import cli_env
from draw_support import make_bank, pbn_as_shown, shown_deals
from test_documents_latin import ALLOWED as DOCUMENT_WORDS

from dealer.formats.pbn import PBN

ROOT = Path(__file__).resolve().parents[1]
REG = (
    'title = "Чемпионат"\nvenue = "Москва"\nstarts = 2020-01-10\nends = 2020-01-12\n'
    "[dealing]\nvariant = 3\n[draw]\nshare_percent = 10\n[session]\nboards = 2\n[schedule]\nsessions = 2\n"
)

# Latin the Russian command line may print, and why: the documents' own (SHA, PDF, K, V, d6, dealer docs verify);
# the commands, options and files the messages tell the judge to type or open (they are typed as they are);
# the formats' and standards' names (PBN, JSON, HTML, UTF, Ed25519, Merkle's root as «Меркла» is Russian);
# the machine's ids and the bundle's format names are data.
ALLOWED = DOCUMENT_WORDS | {
    "bank", "draw", "seal", "status", "prepare", "publish", "public", "value", "run", "reveal", "bundle", "export",
    "files", "handrecords", "boards", "show", "equipment", "annex", "day", "custody", "init", "register", "regulation",
    "check", "serve", "lang", "json", "out", "witness", "rolls", "dice", "head", "since", "chain", "keys",
    "PBN", "JSON", "HTML", "UTF", "Ed25519", "SIZE", "HASH",
}  # fmt: skip


def latin_words(text: str) -> list[str]:
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", " ", text)  # a bank id
    text = re.sub(r"\b[0-9a-f]{8,}\b", " ", text)  # hashes, keys, signatures
    text = re.sub(r"bridge-dealer[a-z/.-]*\d", " ", text)  # a format's id (docs/bundle.md), quoted as data
    text = re.sub(r"--[a-z][a-z-]*", " ", text)  # options the messages tell the judge to give
    text = re.sub(r"\S+\.(pdf|json|sqlite|pbn|html|toml|pem|secret|dlm|dup)\b", " ", text)  # files cited
    text = re.sub(r"(?:[A-Za-z]:)?(?:/[^\s/]+)+/?", " ", text)  # paths cited
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+", " ", text)  # ISO times in records
    text = re.sub(r"(?<=[\d♠♥♦♣TК])xx?\b", " ", text)  # a doubled par contract (4♠x, 3БКx): bridge's notation
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", text)
    return [w for w in words if w not in ALLOWED and not re.fullmatch(r"d\d+|S\d+|T\d+", w)]


def _strings(doc: object) -> list[str]:
    """The text of a JSON document's string values (its members' names are the format's, not prose)."""
    if isinstance(doc, str):  # a code of the format (kind, state, format id, rule) is data, not prose
        return [] if re.fullmatch(r"[a-z0-9][a-z0-9_/.:-]*", doc) else [doc]
    if isinstance(doc, dict):
        return [s for v in doc.values() for s in _strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return []


def dealer(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **cli_env(cwd, cwd / "var")}
    env.pop("LANG", None)
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)  # the default language: Russian
    r = subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    try:
        out = "\n".join(_strings(json.loads(r.stdout)))
    except ValueError:  # not JSON: the whole text is prose
        out = r.stdout
    return out + "\n" + r.stderr


def test_a_days_command_line_in_russian_has_no_latin_word(tmp_path: Path) -> None:
    make_bank(tmp_path / "var" / "bank.sqlite", 60).close()
    (tmp_path / "reg.toml").write_text(REG)
    dice = ("--witness", "Орлов", "--witness", "Белова", "--rolls", "8")
    runs = [
        ("bank", "status"),
        ("bank", "seal"),
        ("draw", "prepare", "S1", "--regulation", "reg.toml", *dice),
        ("draw", "publish", "S1"),
        ("draw", "public-value", "S1", "--dice", "12345612", "--dice", "65432165"),
        ("draw", "run", "S1"),
        ("draw", "show", "S1", "--out", "S1.pbn"),
        ("draw", "reveal", "S1"),
        ("draw", "bundle", "S1", "--out", "b.json"),
        ("draw", "verify", "b.json"),
        ("bank", "verify"),
        ("bank", "status"),
        ("docs", "bank", "--regulation", "reg.toml"),
        ("docs", "draw", "S1", "--regulation", "reg.toml"),
        ("docs", "annex", "S1", "--regulation", "reg.toml"),
        ("docs", "day", "--date", date.today().isoformat()),
        ("docs", "verify", "var/documents/001-bank-ru.pdf"),
        ("export", "files", "S1.pbn", "--regulation", "reg.toml", "--out", "files"),
        ("export", "handrecords", "S1.pbn", "--regulation", "reg.toml", "--out", "hands", "--subtitle", "Москва"),
    ]
    found: dict[str, list[str]] = {}
    said = shown = ""
    for args in runs:
        text = dealer(tmp_path, *args)
        said += text
        if args[:2] == ("draw", "show"):
            shown = text
        words = latin_words(text)
        if words:
            found[" ".join(args[:2])] = sorted(set(words))
    assert len(re.findall("[а-яё]", said, re.I)) > 1000  # the commands spoke Russian (the default language)
    # draw show wrote the deals in Russian letters (С/В/Ю/З, Т К Д В), the same deals its --out file holds in PBN
    boards = PBN.read((tmp_path / "S1.pbn").read_bytes()).records
    assert len(boards) == 2 and shown_deals(shown) == [pbn_as_shown(b.deal.to_pbn(), "ru") for b in boards]
    # the files a Russian official reads: the hand records page (its text, as a browser shows it) and the PBN
    # files' Event and Site tags (what the judge gave: Russian stays Russian)
    # the files are named by the regulation's title, Cyrillic kept; hand records add the word «расклады»
    assert sorted(p.name for p in (tmp_path / "files").iterdir()) == ["Чемпионат.dlm", "Чемпионат.dup", "Чемпионат.pbn"]
    hands = ["Чемпионат.расклады.html", "Чемпионат.расклады.pbn", "Чемпионат.расклады.pdf"]
    assert sorted(p.name for p in (tmp_path / "hands").iterdir()) == hands
    html = (tmp_path / "hands" / "Чемпионат.расклады.html").read_text(encoding="utf-8")
    assert 'lang="ru"' in html
    shown = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    shown = re.sub(r"<[^>]+>", " ", shown)
    words = latin_words(re.sub(r"&\w+;|&#\d+;", " ", shown))
    if words:
        found["handrecords.html"] = sorted(set(words))
    # and their PBN tags are the regulation's: its title, venue and (the competition is over) its first day
    for pbn in (tmp_path / "files" / "Чемпионат.pbn", tmp_path / "hands" / "Чемпионат.расклады.pbn"):
        text = pbn.read_text(encoding="utf-8")
        for tag in ("Event", "Site", "Date"):
            assert set(re.findall(rf'^\[{tag} "([^"]*)"\]', text, flags=re.M)) == {
                {"Event": "Чемпионат", "Site": "Москва", "Date": "2020.01.10"}[tag]
            }, (pbn.name, tag)
    assert found == {}, json.dumps(found, ensure_ascii=False, indent=0)


def test_bank_verify_names_the_damage_in_russian(tmp_path: Path) -> None:
    """`dealer bank verify`'s findings come from the catalogue (#28): a changed salt, a dropped table and a file that
    is not a bank are named in Russian, with no Latin word but SHA and SQLite's own table name."""
    import sqlite3

    make_bank(tmp_path / "var" / "bank.sqlite", 30).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    for name in ("LANG", "LC_ALL", "LC_MESSAGES"):
        env.pop(name, None)

    def verify(bank: str) -> str:
        cmd = [sys.executable, "-m", "dealer", "bank", "verify", "--bank", bank]
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert r.stderr.startswith("ошибка:"), r.stderr
        return r.stderr

    db = sqlite3.connect(tmp_path / "var" / "bank.sqlite")
    db.execute("UPDATE deals SET salt = zeroblob(16) WHERE deal_id = 12")
    db.commit()
    db.close()
    said = [verify("var/bank.sqlite")]
    make_bank(tmp_path / "other" / "bank.sqlite", 5).close()
    db = sqlite3.connect(tmp_path / "other" / "bank.sqlite")
    db.execute("DROP TABLE draws")
    db.commit()
    db.close()
    said.append(verify("other/bank.sqlite"))
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 100)
    said.append(verify("junk.sqlite"))
    assert "сдача 12: SHA-256(соль ‖ сдача) не совпадает с обязательством" in said[0], said[0]
    assert "нет таблицы draws" in said[1], said[1]
    assert "не читается как банк" in said[2], said[2]
    for text in said:
        words = [w for w in latin_words(text) if w not in ("draws", "SQLite")]  # the table's name, the engine
        assert words == [], text
