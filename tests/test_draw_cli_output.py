"""Machine output is plain whatever the terminal: every command that prints JSON or a hash prints it unwrapped
and uncoloured, on a 40-column pty (a real terminal: rich would wrap and colour there) and through a pipe."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from custody_support import cli_env
from draw_support import make_bank

ROOT = Path(__file__).resolve().parents[1]
REG = "[dealing]\nvariant = 3\n[draw]\nshare_percent = 10\n[session]\nboards = 2\n[schedule]\nsessions = 2\n"
ESC = re.compile(rb"\x1b\[")


def on_pty(cwd: Path, *args: str) -> tuple[int, bytes]:
    """Run ``dealer ARGS`` with stdout and stderr on a fresh 40-column pseudo-terminal; all it wrote."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "40", "LINES": "20", "TERM": "xterm-256color"}
    env.update(cli_env(cwd, cwd / "var"))  # the chief judge's passphrase, from a file
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "dealer", *args], cwd=cwd, env=env, stdout=follower,
                            stderr=follower, stdin=subprocess.DEVNULL)  # fmt: skip
    os.close(follower)
    out = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    return proc.wait(), bytes(out).replace(b"\r\n", b"\n")


def piped(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "40", **cli_env(cwd, cwd / "var"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "dealer", *args], cwd=cwd, env=full, capture_output=True)


def test_json_and_hashes_are_plain_on_a_40_column_terminal(tmp_path: Path) -> None:
    make_bank(tmp_path / "var" / "bank.sqlite", 40).close()
    (tmp_path / "reg.toml").write_text(REG)
    code, seal = on_pty(tmp_path, "bank", "seal")
    assert code == 0, seal
    assert not ESC.search(seal)
    lines = dict(line.split(maxsplit=1) for line in seal.decode().splitlines()[1:] if line.split())
    assert re.fullmatch(r"[0-9a-f]{64}", lines["root"]) and re.fullmatch(r"[0-9a-f]{128}", lines["signature"])

    dice = ("--witness", "Ann", "--witness", "Boris", "--rolls", "8")
    code, out = on_pty(tmp_path, "draw", "prepare", "S1", "--regulation", "reg.toml", *dice)
    assert code == 0, out
    assert not ESC.search(out)
    published = json.loads(out)  # the whole output is the JSON document, unwrapped
    assert re.fullmatch(r"[0-9a-f]{128}", published["signature"]) and published["commitment"]["n"] == 2

    code, out = on_pty(tmp_path, "draw", "publish", "S1")
    assert code == 0 and json.loads(out)["label"] == "S1"
    value = piped(tmp_path, "draw", "public-value", "S1", "--dice", "12345612", "--dice", "65432165")
    assert value.returncode == 0 and value.stdout == b"12345612/65432165\n"
    assert on_pty(tmp_path, "draw", "run", "S1")[0] == 0
    code, out = on_pty(tmp_path, "draw", "reveal", "S1")
    assert code == 0 and not ESC.search(out)
    assert len(json.loads(out)["secret"]) == 64
    code, out = on_pty(tmp_path, "bank", "status", "--json")
    assert code == 0 and json.loads(out)["draws"][0]["state"] == "revealed"

    assert piped(tmp_path, "draw", "bundle", "S1", "--out", "b.json").returncode == 0
    code, out = on_pty(tmp_path, "draw", "verify", "b.json")
    assert code == 0 and not ESC.search(out)
    seed = re.search(rb"passed draw: seed ([0-9a-f]+);", out)
    assert seed is not None and len(seed.group(1)) == 64  # the hash on one line, whole
    piped_json = piped(tmp_path, "draw", "prepare", "S2", "--regulation", "reg.toml", *dice)
    assert piped_json.returncode == 0 and json.loads(piped_json.stdout)["commitment"]["previous"]


def test_verify_details_in_russian_keep_the_hashes(tmp_path: Path) -> None:
    """``draw verify`` in Russian: the words of each check translated (plural forms by hand: 2 сдачи → «для 2
    сдач», genitive), the hashes and numbers as in English."""
    make_bank(tmp_path / "var" / "bank.sqlite", 40).close()
    (tmp_path / "reg.toml").write_text(REG)
    dice = ("--witness", "Ann", "--witness", "Boris", "--rolls", "8")
    steps = [
        ("bank", "seal"),
        ("draw", "prepare", "S1", "--regulation", "reg.toml", *dice),
        ("draw", "publish", "S1"),
        ("draw", "public-value", "S1", "--dice", "12345612", "--dice", "65432165"),
        ("draw", "run", "S1"),
        ("draw", "reveal", "S1"),
        ("draw", "bundle", "S1", "--out", "b.json"),
    ]
    for args in steps:
        assert piped(tmp_path, "--lang", "en", *args).returncode == 0, args
    en = piped(tmp_path, "--lang", "en", "draw", "verify", "b.json").stdout.decode()
    ru = piped(tmp_path, "--lang", "ru", "draw", "verify", "b.json").stdout.decode()
    assert "SHA-256(salt ‖ deal) equals the ledger commitment for 2 deals" in en
    assert "SHA-256(соль ‖ сдача) совпадает с обязательством в журнале для 2 сдач" in ru
    seed = re.search(r"draw: seed ([0-9a-f]{64}); Rivest's sampler picks deals ([0-9, ]+)\n", en)
    assert seed is not None
    assert f"зерно {seed.group(1)}; выборка по Ривесту даёт сдачи {seed.group(2)}\n" in ru
    k_hash = re.search(r"SHA-256 of the revealed K is the committed ([0-9a-f]{64})", en)
    assert k_hash is not None and f"SHA-256 раскрытого K совпадает с заявленным в обязательстве {k_hash.group(1)}" in ru
    size = re.search(r"checkpoint of (\d+) ledger entries", en)
    assert size is not None
    assert int(size.group(1)) > 40 and f"контрольная точка из {size.group(1)} запис" in ru
    assert "первая жеребьёвка банка" in ru and "first draw of bank" in en
    assert "(10 процентов от числа запечатанных сдач 40)" in ru and "(10% of 40 sealed deals)" in en
    assert "2 свидетеля (Ann, Boris)" in ru
    assert not re.search(r"\b(deals|checkpoint|seed|ledger|draw of)\b", ru)  # no English words left


def test_published_json_keeps_cyrillic(tmp_path: Path) -> None:
    """What the chief judge publishes (the commitment, the bundle) reads as written: «Сессия 1» and the witnesses'
    names as UTF-8, never ``\\u0421…``, even where the console's code page is cp1251 (Windows); the bundle still
    verifies."""
    make_bank(tmp_path / "var" / "bank.sqlite", 40).close()
    (tmp_path / "reg.toml").write_text(REG)
    assert piped(tmp_path, "bank", "seal").returncode == 0
    dice = ("--witness", "Орлов О. О.", "--witness", "Белова Б. Б.", "--rolls", "8")
    env = {"PYTHONIOENCODING": "cp1251"}
    prepared = piped(tmp_path, "draw", "prepare", "Сессия 1", "--regulation", "reg.toml", *dice, env=env)
    assert prepared.returncode == 0, prepared.stderr.decode("cp1251", "replace")
    for out in (prepared.stdout, piped(tmp_path, "draw", "publish", "Сессия 1", env=env).stdout):
        text = out.decode("utf-8")  # UTF-8 whatever the code page
        assert "Сессия 1" in text and "Белова Б. Б." in text and "\\u04" not in text
        assert "Сессия 1" in json.dumps(json.loads(text), ensure_ascii=False)  # the same text once parsed
    value = piped(tmp_path, "draw", "public-value", "Сессия 1", "--dice", "12345612", "--dice", "65432165")
    assert value.returncode == 0
    assert piped(tmp_path, "draw", "run", "Сессия 1").returncode == 0
    assert piped(tmp_path, "draw", "reveal", "Сессия 1").returncode == 0
    assert piped(tmp_path, "draw", "bundle", "Сессия 1", "--out", "b.json").returncode == 0
    data = (tmp_path / "b.json").read_bytes().decode("utf-8")
    assert "Сессия 1" in data and "Орлов О. О." in data
    # only the ledger entries' exact bytes, which are canonical JSON (docs/bundle.md §5, §7), keep their escapes
    bundle = json.loads(data)
    entries = [bundle.pop("seal_entry"), bundle.pop("commitment_entry"), *(d.pop("entry") for d in bundle["drawn"])]
    assert "\\u04" in entries[1] and "\\u04" not in json.dumps(bundle, ensure_ascii=False)
    assert "\\u04" not in data.replace(json.dumps(entries[1])[1:-1], "")
    verified = piped(tmp_path, "draw", "verify", "b.json")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_json_text_escapes_only_what_hides_or_acts() -> None:
    """Printable text as itself; what a terminal obeys or a reader cannot see stays an escape (checked against
    unicodedata's categories, not the module's own list), and the text parses back to the same value."""
    import unicodedata

    from dealer.core.json_types import json_text

    value = {"name": "Иванов ♠ é 😀", "tricky": "".join(chr(c) for c in range(0x20, 0x3000))}
    text = json_text(value)
    assert json.loads(text) == value and "Иванов ♠ é 😀" in text
    shown = [c for c in text if ord(c) >= 0x7F]
    assert all(unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp", "Cs") for c in shown)
    escaped = {int(h, 16) for h in re.findall(r"\\u([0-9a-f]{4})", text)}
    assert {0x7F, 0x9B, 0x200E, 0x202E, 0x2028, 0x2066} <= escaped
    assert all(unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cn", "Co", "Cs") for c in escaped)
