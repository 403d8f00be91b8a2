"""HTTPS on the hall's network (docs/service.md, "HTTPS"): ``dealer tls init`` makes a certificate, ``dealer serve``
speaks HTTPS with it and prints its fingerprint; the configuration's errors name the field; and over plain HTTP a
role's secret from another computer is refused while the public pages stay open. Real processes and servers."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from _web_server import regulation, service_config, startup_message

from dealer.app.config import ConfigError, ServiceConfig, config_from_dict
from dealer.app.service import Service
from dealer.app.tls import load_identity
from dealer.web.app import create_app

ROOT = Path(__file__).resolve().parents[1]
REFUSED = "secret is not taken in clear over the network"


def lan_address() -> str | None:
    """This machine's own address on its network (not loopback), as the routing table picks it; None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 9))  # UDP: nothing is sent, the kernel only chooses the source
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


LAN = lan_address()
needs_lan = pytest.mark.skipif(LAN is None, reason="this machine has no non-loopback address")


def dealer(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dealer", "--lang", "en", *args], cwd=cwd, capture_output=True, text=True,
        env=env, timeout=120,
    )  # fmt: skip


def sha256_of_pem(path: Path) -> str:
    """The certificate's SHA-256 as a browser shows it, computed with the standard library only."""
    der = ssl.PEM_cert_to_DER_cert(path.read_text(encoding="ascii"))
    return hashlib.sha256(der).hexdigest().upper()


def colons(hexdigest: str) -> str:
    return ":".join(hexdigest[i : i + 2] for i in range(0, len(hexdigest), 2))


def test_tls_init_writes_a_certificate_an_owner_only_key_and_refuses_to_overwrite(tmp_path: Path) -> None:
    made = dealer("tls", "init", "--host", "192.0.2.77", "--host", "hall.example", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    cert, key = tmp_path / "var" / "tls.crt", tmp_path / "var" / "tls.key"
    printed = re.search(r"^SHA-256 fingerprint ([0-9A-F:]{95})$", made.stdout, re.M)
    assert printed and printed.group(1) == colons(sha256_of_pem(cert)), made.stdout
    # the lines to add, as TOML that names the files written
    lines = made.stdout[made.stdout.index("[tls]") :].splitlines()
    assert lines == ["[tls]", "cert = 'var/tls.crt'", "key = 'var/tls.key'"], made.stdout
    if os.name == "posix":
        assert key.stat().st_mode & 0o777 == 0o600
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

    certificate = x509.load_pem_x509_certificate(cert.read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    shown = {str(n) for n in names.get_values_for_type(x509.DNSName)}
    addresses = {str(a) for a in names.get_values_for_type(x509.IPAddress)}
    assert {"localhost", "hall.example", socket.gethostname().lower()} <= shown
    assert {"127.0.0.1", "192.0.2.77"} <= addresses
    public = certificate.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name == "secp256r1"
    days = (certificate.not_valid_after_utc - certificate.not_valid_before_utc).days
    assert 300 < days < 398, days  # within what browsers accept of a server certificate
    before = cert.read_bytes(), key.read_bytes()
    again = dealer("tls", "init", cwd=tmp_path)
    assert again.returncode == 1 and "--force" in again.stderr, again.stderr
    assert (cert.read_bytes(), key.read_bytes()) == before
    forced = dealer("tls", "init", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert cert.read_bytes() != before[0] and key.read_bytes() != before[1]
    if os.name == "posix":
        assert key.stat().st_mode & 0o777 == 0o600
    bad = dealer("tls", "init", "--host", "not a name", cwd=tmp_path)
    assert bad.returncode == 2 and "--host" in bad.stderr, bad.stderr


def test_serve_speaks_https_with_the_certificate_and_prints_its_fingerprint(tmp_path: Path) -> None:
    made = dealer("tls", "init", *(("--host", LAN) if LAN else ()), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    tls_lines = made.stdout[made.stdout.index("[tls]") :]
    cert = tmp_path / "var" / "tls.crt"
    expected = colons(sha256_of_pem(cert))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "service.toml").write_text(
        f'language = "en"\nhost = "0.0.0.0"\nport = 0\nrequire_equipment_check = false\n{tls_lines}\n'
        '[[stations]]\nname = "A"\ncards_per_second = 5000.0\n',
        encoding="utf-8",
    )  # the lines `dealer tls init` printed, as the judge pastes them; paths taken from the event folder
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dealer", "--lang", "en", "serve"], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        text = startup_message(proc)
        judge_link = re.search(r"technical judge:\s+https://127\.0\.0\.1:(\d+)/judge\?token=", text)
        assert judge_link, text
        port = int(judge_link.group(1))
        assert re.search(rf"hall display:\s+https://127\.0\.0\.1:{port}/ ", text), text
        printed = re.search(r"certificate SHA-256 (\S+)", text)
        assert printed and printed.group(1) == expected, text
        secret = (tmp_path / "var" / "judge.secret").read_text(encoding="ascii").strip()
        trust = ssl.create_default_context(cafile=str(cert))  # the browser told to trust this certificate
        hosts = ["127.0.0.1", "localhost", *([LAN] if LAN else [])]
        for host in hosts:  # from another computer (LAN) too: over HTTPS the secret is taken
            base = f"https://{host}:{port}"
            with httpx.Client(base_url=base, verify=trust, timeout=30) as client:
                opened = client.get(f"/judge?token={secret}", follow_redirects=False)
                assert opened.status_code == 303, opened.text
                cookie = opened.headers["set-cookie"].lower()
                assert "dealer_judge=" in cookie and "; secure" in cookie and "httponly" in cookie, cookie
                page = client.get("/judge")  # the cookie the link set, sent back over HTTPS
                assert page.status_code == 200 and "<html" in page.text.lower(), page.text[:200]
                state = client.get("/api/judge/state", headers={"Authorization": f"Bearer {secret}"})
                assert state.status_code == 200 and state.json()["stations"][0]["station"] == "A"
                assert client.get("/").status_code == 200  # the hall's page, over HTTPS as well
                with client.stream("GET", "/api/public/events") as stream:  # its stream, written by the hub
                    assert stream.status_code == 200 and next(stream.iter_raw()).startswith(b"retry:")
        asyncio.run(_console_over_wss(port, secret, trust))
        with pytest.raises(httpx.HTTPError):  # an untrusted certificate is refused by a verifying client
            httpx.get(f"https://127.0.0.1:{port}/", timeout=10)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def _console_over_wss(port: int, secret: str, trust: ssl.SSLContext) -> None:
    """The judge's console as its page opens it over HTTPS: wss://, the cookie and the page's own origin."""
    import websockets

    origin = f"https://127.0.0.1:{port}"
    headers = {"Cookie": f"dealer_judge={secret}", "Origin": origin}
    async with websockets.connect(f"wss://127.0.0.1:{port}/judge/ws", ssl=trust, additional_headers=headers) as ws:
        first = json.loads(await ws.recv())
        assert first["type"] == "state" and first["stations"][0]["station"] == "A", first


def _config_errors(tmp_path: Path) -> list[tuple[dict[str, object], str]]:
    return [
        ({"tls": {"cert": "var/tls.crt"}}, "tls.key is missing"),
        ({"tls": {"key": "var/tls.key"}}, "tls.cert is missing"),
        ({"tls": {"cert": "", "key": "k"}}, "tls.cert = '' must be a non-empty string"),
        ({"tls": {"cert": "c", "key": 5}}, "tls.key = 5 must be a non-empty string"),
        ({"tls": {"cert": "c", "key": "k", "chain": "x"}}, "unknown key tls.'chain'"),
        ({"tls": "yes"}, "[tls] must be a table"),
        ({"secrets": {"allow_plain_http": "yes"}}, "secrets.allow_plain_http = 'yes' must be true or false"),
    ]


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    for data, words in _config_errors(tmp_path):
        with pytest.raises(ConfigError) as caught:
            config_from_dict(data, "svc.toml")
        assert str(caught.value).startswith("svc.toml: ") and words in str(caught.value), (data, str(caught.value))
    parsed = config_from_dict({"tls": {"cert": "a.crt", "key": "a.key"}, "secrets": {"allow_plain_http": True}})
    assert parsed.tls_cert == Path("a.crt") and parsed.tls_key == Path("a.key") and parsed.allow_plain_http


def test_the_tls_files_are_checked_before_serving_and_errors_name_them(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for folder in (first, second):
        folder.mkdir()
        assert dealer("tls", "init", cwd=folder).returncode == 0
    cert, key = first / "var" / "tls.crt", first / "var" / "tls.key"
    assert load_identity(cert, key, "svc.toml").fingerprint == colons(sha256_of_pem(cert))
    (tmp_path / "junk.pem").write_text("not a certificate\n", encoding="ascii")
    cases = [
        (tmp_path / "missing.crt", key, "tls.cert = "),
        (tmp_path / "junk.pem", key, "not a PEM certificate"),
        (cert, tmp_path / "missing.key", "tls.key = "),
        (cert, tmp_path / "junk.pem", "tls.key = "),
        (cert, second / "var" / "tls.key", "is not the key of tls.cert"),
    ]
    for cert_path, key_path, words in cases:
        with pytest.raises(ConfigError) as caught:
            load_identity(cert_path, key_path, "svc.toml")
        assert str(caught.value).startswith("svc.toml: ") and words in str(caught.value), str(caught.value)
    # dealer serve says it and stops before listening or writing anything
    (first / "config").mkdir()
    (first / "config" / "service.toml").write_text(
        "port = 0\n[tls]\ncert = 'var/tls.crt'\nkey = 'var/nothing.key'\n", encoding="utf-8"
    )
    refused = dealer("serve", cwd=first)
    assert refused.returncode == 1 and "tls.key = " in refused.stderr and "nothing.key" in refused.stderr
    assert "Traceback" not in refused.stderr and not (first / "var" / "judge.secret").exists()


@contextmanager
def serving_on_all_addresses(config: ServiceConfig) -> Iterator[int]:
    """The service on 0.0.0.0 (a free port), plain HTTP: reachable by loopback and by this machine's LAN address."""
    service = Service(config, regulation(), autostart=False)
    sock = socket.socket()
    sock.bind(("0.0.0.0", 0))
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(create_app(service), log_level="warning", timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.01)
    try:
        yield port
    finally:
        service.begin_shutdown()
        server.should_exit = True
        thread.join(30)
        sock.close()


@needs_lan
def test_over_plain_http_a_role_secret_from_another_computer_is_refused(tmp_path: Path) -> None:
    config = dataclasses.replace(service_config(tmp_path), host="0.0.0.0")
    with serving_on_all_addresses(config) as port:
        judge = (tmp_path / "var" / "judge.secret").read_text(encoding="ascii").strip()
        director = (tmp_path / "var" / "director.secret").read_text(encoding="ascii").strip()
        lan, loop = f"http://{LAN}:{port}", f"http://127.0.0.1:{port}"
        with httpx.Client(timeout=30, follow_redirects=False) as client:
            for secret, path in ((judge, "/api/judge/state"), (director, "/api/director/status")):
                bearer = {"Authorization": f"Bearer {secret}"}
                refused = client.get(lan + path, headers=bearer)
                assert refused.status_code == 403 and REFUSED in refused.json()["detail"], refused.text
                assert "dealer tls init" in refused.json()["detail"]
                assert client.get(loop + path, headers=bearer).status_code == 200  # this computer: as before
            wrong = client.get(lan + "/api/judge/state", headers={"Authorization": "Bearer " + "x" * 43})
            assert wrong.status_code == 403 and REFUSED in wrong.text  # no answer tells right from wrong in clear
            link = client.get(f"{lan}/judge?token={judge}")
            assert link.status_code == 403 and REFUSED in link.text and "set-cookie" not in link.headers
            with httpx.Client(timeout=30, cookies={"dealer_judge": judge}) as browser:  # the cookie of an old link
                cookie = browser.get(lan + "/api/judge/state")
            assert cookie.status_code == 403 and REFUSED in cookie.text
            shown = client.post(lan + "/api/judge/stations/A/show", headers={"Authorization": f"Bearer {judge}"})
            assert shown.status_code == 403  # «show cards» cannot be turned on with a sniffed secret
            assert client.get(lan + "/api/judge/state").status_code == 401  # no secret: as before
            for public in ("/", "/remote", "/api/public/snapshot", "/api/remote/snapshot"):
                assert client.get(lan + public).status_code == 200, public  # the hall's pages stay open
            with client.stream("GET", lan + "/api/public/events") as stream:
                assert stream.status_code == 200 and next(stream.iter_raw()).startswith(b"retry:")


@needs_lan
def test_allow_plain_http_lets_the_secrets_in_from_the_network(tmp_path: Path) -> None:
    config = config_from_dict({**_plain(tmp_path), "secrets": {"allow_plain_http": True}, "host": "0.0.0.0"}, "test")
    with serving_on_all_addresses(config) as port:
        judge = (tmp_path / "var" / "judge.secret").read_text(encoding="ascii").strip()
        reply = httpx.get(
            f"http://{LAN}:{port}/api/judge/state", headers={"Authorization": f"Bearer {judge}"}, timeout=30
        )
        assert reply.status_code == 200, reply.text
        passphrase = httpx.post(
            f"http://{LAN}:{port}/api/director/custody/unlock",
            headers={"Authorization": "Bearer " + (tmp_path / "var" / "director.secret").read_text().strip()},
            json={"passphrase": "x" * 20},
            timeout=30,
        )  # the chief judge's passphrase is never taken in clear, whatever the configuration allows
        assert passphrase.status_code == 403 and "HTTPS" in passphrase.text, passphrase.text


def _plain(tmp_path: Path) -> dict[str, object]:
    return {
        "language": "en",
        "var_dir": str(tmp_path / "var"),
        "bank": {"path": str(tmp_path / "var" / "bank.sqlite")},
        "stations": [{"name": "A", "cards_per_second": 5000.0}],
    }


def test_the_start_up_message_says_what_plain_http_means_on_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    from dealer.cli import i18n
    from dealer.cli.serve_cmds import _plain_lines

    monkeypatch.setitem(i18n._CHOSEN, "lang", "en")
    on_lan = config_from_dict({"host": "0.0.0.0"})
    assert _plain_lines(config_from_dict({})) == []  # this computer only: nothing to warn about
    (line,) = _plain_lines(on_lan)
    assert "work on this computer only" in line and "dealer tls init" in line
    (unsafe,) = _plain_lines(dataclasses.replace(on_lan, allow_plain_http=True))
    assert "in clear" in unsafe and "unsafe" in unsafe


@pytest.mark.parametrize(
    ("scheme", "client", "private"),
    [
        ("http", "127.0.0.1", True),
        ("http", "::1", True),
        ("http", "::ffff:127.0.0.1", True),  # a dual-stack socket's loopback
        ("http", "testclient", True),  # Starlette's in-process client (the suite's)
        ("http", "192.0.2.9", False),
        ("http", "::ffff:192.0.2.9", False),
        ("http", "hall-pc", False),  # not an address: not loopback
        ("https", "192.0.2.9", True),
        ("ws", "192.0.2.9", False),
        ("wss", "192.0.2.9", True),
    ],
)
def test_private_channel_is_https_or_loopback(scheme: str, client: str, private: bool) -> None:
    from starlette.requests import HTTPConnection

    from dealer.web.auth import private_channel

    scope = {"type": "http", "scheme": scheme, "path": "/", "headers": [], "client": (client, 50000),
             "server": ("192.0.2.2", 8000), "query_string": b""}  # fmt: skip
    assert private_channel(HTTPConnection(scope)) is private  # type: ignore[arg-type]
