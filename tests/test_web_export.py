"""The director's export API over a real server: role checks, the reveal gate, safe downloads, refusals."""

from __future__ import annotations

import random
import time
from pathlib import Path

import httpx
from _web_server import regulation, running_service, service_config
from custody_support import unlocked

from dealer.bank.api import DealSource
from dealer.bank.store import SqliteBank
from dealer.core import DEAL_COUNT, Deal
from dealer.draw.director import Director
from dealer.draw.protocol import named_spec
from dealer.export.names import session_folder, session_slug
from dealer.regulation import regulation_from_dict


def _drawn_bank(path: Path, deals: int = 40) -> list[int]:
    rng = random.Random(5)
    with unlocked(SqliteBank(path)) as bank:
        for _ in range(deals):
            bank.commit_deal(Deal.from_rank(rng.randrange(DEAL_COUNT)), DealSource(kind="station", station="A"))
        d = Director(bank)
        d.seal()
        spec = named_spec("Lotto 1600, first 10 numbers as drawn", 10, 1, 90, order="as drawn")
        d.prepare("Open: 1 & 2", spec, regulation_from_dict({"dealing": {"variant": 3}, "session": {"boards": 2}}))
        d.publish("Open: 1 & 2")
        d.enter_public_value("Open: 1 & 2", named="7 90 1 33 12 45 8 61 2 19")
        return [x.deal.deal_id for x in d.run("Open: 1 & 2")]


def test_export_routes_are_director_only_gated_and_safe(tmp_path: Path) -> None:
    cfg = service_config(tmp_path)
    (tmp_path / "var").mkdir()
    drawn = _drawn_bank(cfg.bank_path)
    with running_service(cfg, regulation(2, 32, target=40), autostart=False) as server:
        base = f"{server.base}/api/director/draws/Open: 1 %26 2"
        director = {"Authorization": f"Bearer {server.director}"}
        judge = {"Authorization": f"Bearer {server.judge}"}
        for path in ("/files", "/boards", "/handrecords"):
            assert httpx.post(base + path).status_code == 401
            assert httpx.post(base + path, headers=judge).status_code == 403
            assert httpx.post(base + path, headers={"Authorization": "Bearer wrong-secret-xyz"}).status_code == 403
        assert httpx.get(base + "/boards", headers=judge).status_code == 403
        with httpx.Client(headers=director, timeout=60) as d:
            r = d.post(base + "/files", json={"formats": ["pbn", "dlm"], "sealed": True})
            assert r.status_code == 200, r.text
            assert r.json()["boards"] == len(drawn) == 2
            stem = session_slug("Open: 1 & 2")
            assert stem == "Open_1_2" and sorted(r.json()["files"]) == [f"{stem}.dlm", f"{stem}.pbn"]
            assert (cfg.var_dir / "export" / session_folder("Open: 1 & 2") / f"{stem}.pbn").is_file()
            assert d.get(base + f"/files/{stem}.pbn").content.startswith(b"%")
            for bad in ("..%2Fbank.sqlite", "..%2F..%2Fvar%2Fbank.sqlite", ".hidden", "nothing.pbn"):
                assert d.get(base + f"/files/{bad}").status_code == 404, bad
            assert httpx.get(base + f"/files/{stem}.pbn", headers=judge).status_code == 403
            nope = d.post(base + "/files", json={"formats": ["nope"]})
            assert nope.status_code == 422 and nope.json()["detail"][0]["loc"] == ["body", "formats", 0]
            zero = d.post(base + "/files", json={"copies": 0})
            assert zero.status_code == 422 and zero.json()["detail"][0]["loc"] == ["body", "copies"]
            # hand records only after the reveal
            gated = d.post(base + "/handrecords")
            assert gated.status_code == 403 and "not revealed" in gated.json()["detail"]
            assert d.post(base + "/reveal").status_code == 200
            hr = d.post(base + "/handrecords", json={"formats": ["html"], "lang": "ru"})
            assert hr.status_code == 200, hr.text
            html = d.get(base + f"/files/{stem}.handrecords.html").text
            assert "<html" in html.lower()
            # a session that was never drawn
            assert d.post(f"{server.base}/api/director/draws/none/files").status_code == 400
            # boards on a simulated machine; a second start while running is refused
            started = d.post(base + "/boards", json={"device": "simulator", "pace": 0.2, "copies": 1})
            assert started.status_code == 202 and started.json()["copies_total"] == 2
            assert d.post(base + "/boards", json={"device": "simulator"}).status_code == 409
            deadline = time.monotonic() + 60
            while (p := d.get(base + "/boards").json())["state"] == "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert p["state"] == "done" and sorted(p["made"]) == [[1, 1], [2, 1]]
        exports = SqliteBank(cfg.bank_path).entries_of_kind("export")
        assert [e.data.get("what") for e in exports] == ["files", "handrecords", "boards"]
        assert exports[-1].data["machine"]["serial"] == "SIM-BOARDS"  # DEVICE_INFO, for the board-making act


def test_labels_that_sanitise_alike_get_their_own_export_folders() -> None:
    """#19 item 9: "Round 1" and "Round_1" shared one export folder (files of one session over the other's)."""
    labels = ["Round 1", "Round_1", "Round/1", "Round 1 ", "Раунд 1", "Раунд 2", "", "x" * 3000]
    folders = [session_folder(label) for label in labels]
    assert len(set(folders)) == len(labels)
    assert session_slug("Round 1") == session_slug("Round_1") == "Round_1"  # the readable part alone would clash
    for folder in folders:
        assert "/" not in folder and not folder.startswith(".") and len(folder) <= 64 + 13
    assert session_folder("Round 1") == session_folder("Round 1")  # stable across restarts (journal resumes)


def test_a_cyrillic_session_keeps_its_letters_in_file_names() -> None:
    """«Сессия 1» gave «1.pbn»: the letters of any script stay, only separators and punctuation become "_"."""
    assert session_slug("Сессия 1") == "Сессия_1"
    assert session_slug("Тур 2: финал") == "Тур_2_финал"
    assert session_slug("../Сессия") == "Сессия"  # never a path
