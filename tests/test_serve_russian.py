"""``dealer serve`` speaks Russian by default: its start-up banner, the busy-port error, and the error answers the
director's console shows (in the page's language, English on request). A real server process on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from _web_server import free_port
from test_cli_russian import english_words

ROOT = Path(__file__).resolve().parents[1]


def wait_until(predicate: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.1)


def _config(tmp_path: Path, port: int) -> None:
    var = tmp_path / "var"
    (tmp_path / "service.toml").write_text(
        f'var_dir = "{var}"\nport = {port}\n[bank]\npath = "{var / "bank.sqlite"}"\n'
        '[[stations]]\nname = "A"\nkind = "simulator"\n',
        encoding="utf-8",
    )


def _env(lang: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "LANG": lang}
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    return env


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/api/public/snapshot", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def test_banner_and_error_answers_in_russian(tmp_path: Path) -> None:
    port = free_port()
    _config(tmp_path, port)
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    cmd = [sys.executable, "-m", "dealer", "serve", "--config", "service.toml"]
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=o, stderr=e, env=_env("ru_RU.UTF-8"))
    try:
        wait_until(lambda: b"Ctrl-C" in out.read_bytes() or proc.poll() is not None)
        assert proc.poll() is None, err.read_text()
        banner = out.read_text(encoding="utf-8")
        assert "служба bridge-dealer: 1 станция, вариант 2, 32 открытые карты" in banner
        for words in ("экран в зале:", "удалённые зрители:", "технический судья:", "главный судья:",
                      "нажмёт «Старт»", "Ctrl-C — остановить."):  # fmt: skip
            assert words in banner, banner
        assert not english_words(banner.replace(str(tmp_path), "")), banner
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _up(base))
        director = (tmp_path / "var" / "director.secret").read_text().strip()
        body = {"label": "S1", "witnesses": ["Анна"], "rolls": 1}  # far too few bits: refused by the draw
        headers = {"Authorization": f"Bearer {director}"}
        ru = httpx.post(base + "/api/director/draws", json=body, headers=headers, timeout=30)
        assert ru.status_code == 400 and ru.json()["detail"].startswith("публичное значение несёт"), ru.text
        en = httpx.post(base + "/api/director/draws", json=body, headers={**headers, "X-Dealer-Lang": "en"}, timeout=30)
        assert en.status_code == 400 and en.json()["detail"].startswith("the public value carries"), en.text
        by_query = httpx.post(base + "/api/director/draws?lang=en", json=body, headers=headers, timeout=30)
        assert by_query.json()["detail"].startswith("the public value carries")
        anonymous = httpx.get(base + "/api/director/status", timeout=30)
        assert anonymous.status_code == 401
        assert anonymous.json()["detail"].startswith("для роли «главный судья» нужен её секрет"), anonymous.text
        cookie = httpx.get(base + "/api/director/status", cookies={"dealer_lang": "en"}, timeout=30)
        assert cookie.json()["detail"].startswith("the director role needs its secret")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_busy_port_is_reported_in_russian_and_in_english(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        _config(tmp_path, port)
        cmd = [sys.executable, "-m", "dealer", "serve", "--config", "service.toml"]
        ru = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=_env("ru_RU.UTF-8"), timeout=120)
        english = [sys.executable, "-m", "dealer", "--lang", "en", "serve", "--config", "service.toml"]
        en = subprocess.run(english, cwd=tmp_path, capture_output=True, text=True,
                            env=_env("ru_RU.UTF-8"), timeout=120)  # fmt: skip
    assert ru.returncode == 1 and f"не удаётся слушать 127.0.0.1:{port}: адрес уже занят" in ru.stderr, ru.stderr
    assert "Ничего не запущено и не записано." in ru.stderr
    assert en.returncode == 1 and f"cannot listen on 127.0.0.1:{port}: Address already in use" in en.stderr
    assert not (tmp_path / "var").exists()
