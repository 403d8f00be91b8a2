"""The account that runs the service reads the director's link in ``var/`` while the chief judge is signed in on the
console: the link alone reaches no step that needs the key (docs/custody.md, "Sign-in on the director's console").

A real server on a loopback port. The chief judge signs in (the test fixture's sign-in, the same token the console's
cookie carries) and runs a draw; the intruder presents only ``var/director.secret``, as the service account can.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import httpx
from _web_server import Running, deal_to_target, regulation, running_service, service_config
from custody_support import TEST_PASSPHRASE

LOCKED = 423


def _bearer(credential: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}"}


def _drawn_session(server: Running) -> tuple[httpx.Client, list[dict[str, object]]]:
    """The chief judge's client, after sealing and running the draw of session s1 (not yet revealed)."""
    deal_to_target(server)
    chief = httpx.Client(base_url=server.base, headers=_bearer(server.director), timeout=30)
    chief.post("/api/director/seal").raise_for_status()
    chief.post(
        "/api/director/draws", json={"label": "s1", "witnesses": ["Ann", "Boris"], "rolls": 8}
    ).raise_for_status()
    chief.post("/api/director/draws/s1/publish").raise_for_status()
    chief.post("/api/director/draws/s1/value", json={"dice": ["12345612", "65432165"]}).raise_for_status()
    drawn = chief.post("/api/director/draws/s1/run").json()["drawn"]
    assert len(drawn) == 1
    return chief, drawn


def test_the_directors_link_from_var_reaches_no_step_that_needs_the_key(tmp_path: Path) -> None:
    with running_service(service_config(tmp_path), regulation(3, None, target=40)) as server:
        chief, drawn = _drawn_session(server)
        secret = (tmp_path / "var" / "director.secret").read_text().strip()  # what the service account can read
        assert server.custody_token and secret == server.director.split(".")[0]
        pbn = str(drawn[0]["pbn"])
        for credential in (secret, f"{secret}.{'A' * 43}", f"{secret}."):  # alone, with a guessed or empty token
            with httpx.Client(base_url=server.base, headers=_bearer(credential), timeout=30) as intruder:
                assert intruder.get("/api/director/custody").json()["state"] == "elsewhere"
                status = intruder.get("/api/director/status")
                assert status.status_code == 200 and pbn not in status.text
                assert [d.get("drawn") for d in status.json()["draws"]] == [None]
                for method, path, body in (
                    ("POST", "/api/director/draws/s1/files", {}),
                    ("POST", "/api/director/draws/s1/reveal", None),
                    ("POST", "/api/director/seal", None),
                    (
                        "POST",
                        "/api/director/draws",
                        {"label": "s2", "witnesses": ["Ann", "Boris"], "rolls": 8, "replacement": True},
                    ),
                    ("POST", "/api/director/draws/s1/boards", {}),
                ):
                    reply = intruder.request(method, path, json=body)
                    assert reply.status_code == LOCKED, (credential[-4:], path, reply.status_code, reply.text)
                    assert pbn not in reply.text and "another browser" in reply.json()["detail"]
        # the cookie route is the same: a browser with the director's cookie and a made-up custody cookie
        cookies = {"dealer_director": secret, "dealer_custody": "B" * 43}
        with httpx.Client(base_url=server.base, cookies=cookies, timeout=30) as browser:
            assert browser.post("/api/director/draws/s1/files", json={}).status_code == LOCKED
        # the technical judge's link never reaches the key either
        judge = httpx.get(f"{server.base}/api/judge/state", headers=_bearer(server.judge), timeout=30)
        assert judge.status_code == 200 and pbn not in judge.text
        # the chief judge, meanwhile, sees the drawn deals
        status = chief.get("/api/director/status").json()
        assert [d["drawn"][0]["pbn"] for d in status["draws"]] == [pbn]
        assert chief.get("/api/director/custody").json()["state"] == "unlocked"
        chief.close()


def test_a_sign_in_elsewhere_takes_the_key_over_and_a_lock_ends_it_for_everyone(tmp_path: Path) -> None:
    with running_service(service_config(tmp_path), regulation(3, None, target=40)) as server:
        chief, drawn = _drawn_session(server)
        secret = server.director.split(".")[0]
        with httpx.Client(base_url=server.base, headers=_bearer(secret), timeout=30) as other:
            wrong = other.post("/api/director/custody/unlock", json={"passphrase": TEST_PASSPHRASE + "x"})
            assert wrong.status_code == 403
            assert chief.get("/api/director/custody").json()["state"] == "unlocked"  # a wrong try changes nothing
        # the chief judge signs in on a second browser: it holds the key from now on, the first does not
        second = httpx.Client(base_url=server.base, headers=_bearer(secret), timeout=30)
        throttle = server.service.custody.throttle
        throttle.not_before = 0.0  # the wrong try above made the next one wait a second; the test does not
        signed = second.post("/api/director/custody/unlock", json={"passphrase": TEST_PASSPHRASE})
        assert signed.status_code == 200 and signed.json()["state"] == "unlocked"
        token = signed.cookies["dealer_custody"]
        cookie = signed.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        second.headers["Authorization"] = f"Bearer {secret}.{token}"
        assert chief.get("/api/director/custody").json()["state"] == "elsewhere"
        assert chief.post("/api/director/draws/s1/files", json={}).status_code == LOCKED
        status = second.get("/api/director/status").json()
        assert [d["drawn"][0]["pbn"] for d in status["draws"]] == [drawn[0]["pbn"]]
        # anyone with the director's link may lock: the key leaves memory for every browser
        assert chief.post("/api/director/custody/lock").json()["state"] == "locked"
        assert second.get("/api/director/custody").json()["state"] == "locked"
        assert second.post("/api/director/draws/s1/files", json={}).status_code == LOCKED
        bank = server.service.bank.bank
        assert not bank.key_loaded
        chief.close()
        second.close()


def _every_byte_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_board_files_and_the_journal_tell_var_nothing_before_play(tmp_path: Path) -> None:
    """#27: the chief judge writes the session's deal files and makes its boards (a simulated machine with foul
    copies) before play; everything under ``var/`` then holds neither the drawn deal in any spelling, nor the
    SHA-256 of a file of it, nor the journal's digest of the boards (each would let the service account find it
    among the bank's deals). The chief judge downloads the files opened; the service account gets 423."""
    from dealer.core import Deal
    from dealer.export.boards import number_deals
    from dealer.export.journal import boards_digest
    from dealer.formats import by_name, load_all

    with running_service(service_config(tmp_path), regulation(3, None, target=40)) as server:
        chief, drawn = _drawn_session(server)
        written = chief.post("/api/director/draws/s1/files", json={"formats": ["pbn", "dup", "lin"]})
        assert written.status_code == 200, written.text
        names = written.json()["files"]
        body = {
            "device": "simulator",
            "pace": 0.05,
            "copies": 2,
            "max_attempts": 20,
            "faults": "wrong_pocket~0.5",
            "seed": 7,
        }
        assert chief.post("/api/director/draws/s1/boards", json=body).status_code == 202
        deadline = time.monotonic() + 120
        while (progress := chief.get("/api/director/draws/s1/boards").json())["state"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert progress["state"] == "done", progress
        pbn = str(drawn[0]["pbn"])
        deal = Deal.from_pbn(pbn)
        opened = {name: chief.get(f"/api/director/draws/s1/files/{name}") for name in names}
        assert all(r.status_code == 200 for r in opened.values())
        assert pbn.split(":", 1)[1] in opened["s1.pbn"].text  # the chief judge's download is the real file
        load_all()
        board = number_deals([deal], first=1, copies=2)
        assert by_name("pbn").read(opened["s1.pbn"].content).records[0].deal == deal
        secret = server.director.split(".")[0]
        with httpx.Client(base_url=server.base, headers=_bearer(secret), timeout=30) as intruder:
            assert intruder.get("/api/director/draws/s1/files/s1.pbn").status_code == LOCKED
            # the attack run's finding 3: the boards' progress named each foul copy's card and pockets to anyone
            # with the director's link; now only the signed-in chief judge sees them
            theirs = intruder.get("/api/director/draws/s1/boards").json()["fouls"]
            assert theirs and all(f.get("card") is None and f.get("expected") is None for f in theirs), theirs
            ours = progress["fouls"]
            assert len(ours) == len(theirs) and all(f.get("card") for f in ours), ours
        var = _every_byte_under(tmp_path / "var")
        hands = pbn.split(":", 1)[1].split(" ")
        # (the bank itself holds every deal's 13 bytes: what must not be there is what tells which one was drawn)
        spellings = [h.encode() for h in hands]
        digests = [hashlib.sha256(r.content).hexdigest().encode() for r in opened.values()]
        digests.append(boards_digest(board).encode())
        found = [x for x in spellings + digests if x in var]
        assert found == [], found
        chief.close()


def test_a_public_value_edited_in_the_database_is_not_drawn_from(tmp_path: Path) -> None:
    """#27 attack run, finding 2: after the witnesses' V was entered and shown, the service account rewrote it in
    `draws` (and the last ledger entry), and the run drew from its V. The service keeps the V the hall was shown in
    memory; the run refuses a bank whose V differs, and nothing is drawn."""
    import sqlite3

    with running_service(service_config(tmp_path), regulation(3, None, target=40)) as server:
        deal_to_target(server)
        with httpx.Client(base_url=server.base, headers=_bearer(server.director), timeout=30) as chief:
            chief.post("/api/director/seal").raise_for_status()
            body = {"label": "s1", "witnesses": ["Ann", "Boris"], "rolls": 8}
            chief.post("/api/director/draws", json=body).raise_for_status()
            chief.post("/api/director/draws/s1/publish").raise_for_status()
            chief.post("/api/director/draws/s1/value", json={"dice": ["12345612", "65432165"]}).raise_for_status()
            with sqlite3.connect(tmp_path / "var" / "bank.sqlite") as db:  # the service account's edit
                db.execute("UPDATE draws SET public_value='66666666/11111111' WHERE label='s1'")
            refused = chief.post("/api/director/draws/s1/run")
            assert refused.status_code == 409, refused.text
            assert "is not the one the hall was shown (12345612/65432165)" in refused.json()["detail"]
            status = chief.get("/api/director/status").json()
            assert [d["state"] for d in status["draws"]] == ["public-value"]  # nothing drawn
