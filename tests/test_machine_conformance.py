"""``dealer machine conformance``: passes the simulator and the C example, fails each deliberately broken device
with a message naming its deviation."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _c_support import SANITIZE, build, example_device, sanitizers_work, write_decks
from _proto_helpers import MachineOptions

from drivers.conformance import run_conformance
from drivers.simulator import SimulatorThread, VirtualMachine, parse_faults
from drivers.transport import open_transport


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEALER_LANG": "en"}
    cmd = [sys.executable, "-m", "dealer", "machine", "conformance", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)


def test_the_simulator_conforms_and_the_report_is_written(tmp_path: Path) -> None:
    with SimulatorThread(VirtualMachine(pace=0), "pty") as sim:
        done = cli(sim.url, "--report", str(tmp_path / "report.txt"))
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "report.txt").read_text(encoding="utf-8")
    assert report == done.stdout
    assert "result: CONFORMS — 15 of 15 checks passed" in report
    assert "PASS  board" in report and "PASS  lost_host" in report
    for name in (
        "handshake",
        "versions",
        "naks",
        "duplicates",
        "retransmission",
        "noise",
        "answer_timer",
        "precedence",
        "wrap",
        "deal",
        "flow_control",
        "board",
        "lost_host",
        "resumption",
    ):
        assert f"PASS  {name}" in report


def test_the_c_example_conforms(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    out = tmp_path_factory.mktemp("odp-conf")
    flags = SANITIZE if sanitizers_work(out) else ["-O2"]  # the hostile checks also run under ASan/UBSan
    binary = build(out, "example_device", ["odp.c", "example_device.c"], flags)
    write_decks(tmp_path / "decks.txt", 5, seed=1)
    link = tmp_path / "ttyODP"
    with example_device(binary, tmp_path / "decks.txt", link):
        done = cli(str(link))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "device: odp example (serial ODP-EXAMPLE-1" in done.stdout
    assert "result: CONFORMS" in done.stdout


BROKEN = [
    ("crc_big_endian", None, "handshake", "CRC in big-endian byte order (§4: little-endian)"),
    ("no_duplicate_detection", {"handshake", "duplicates"}, "duplicates", "no duplicate detection"),
    ("no_nak", {"handshake", "naks"}, "naks", "no NAK UNKNOWN_TYPE (§5.1 step 5f)"),
    ("wrong_version", None, "handshake", "HELLO_REPLY chose version 2; the highest common version"),
]


@pytest.mark.parametrize(("quirk", "only", "failed", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_device_fails_naming_its_deviation(
    quirk: str, only: set[str] | None, failed: str, message: str
) -> None:
    machine = VirtualMachine(pace=0, faults=parse_faults(quirk))
    with SimulatorThread(machine, "pty") as sim:
        report = asyncio.run(run_conformance(open_transport(sim.url), sim.url, only))
    assert not report.ok
    bad = [r for r in report.results if not r.ok]
    assert bad[0].name == failed, report.render()
    assert message in bad[0].detail, report.render()
    assert "DOES NOT CONFORM" in report.render()


# A maker's broken devices (issue 30): each a variant of the simulated machine dealing at a realistic pace (20 ms
# a card), each caught by the check that enforces the section it breaks, with that section named.
PACE_20MS = 52 * 0.020
MAKERS: list[tuple[str, str, MachineOptions, str, str]] = [
    ("acks before the CRC check", "ack_bad_crc", {}, "noise", "must not be answered (§5.1 steps 1-5c); got ACK"),
    ("sequence stuck at 255", "seq_stuck", {}, "wrap", "reuses sequence number 255 of the message before it"),
    ("a repeated position", "repeated_position", {}, "deal", "position 9; expected deal 901 position 10 (§8)"),
    ("a 53rd card at position 52", "position_52", {}, "deal", "position 52 is not in 0..51 or 0xFF; bytes"),
    ("a card after the deal end", "card_after_end", {}, "deal", "nothing more about it may come: 52 cards a deal"),
    ("no flow control, cards lost", "drops_when_busy", {}, "flow_control", "never came (position"),
    ("ACK/NAK 400 ms late", "late_answer", {}, "answer_timer", "the answer is due within 50 ms of the frame (§5.4)"),
    ("BAD_FIELD before BAD_STATE", "bad_field_first", {}, "precedence", "§5.1: step 12 before 14 requires NAK"),
    ("never NAKs BUSY", "no_busy", {}, "flow_control", "(no room for it is NAK BUSY, §5.5) within 1 s; got nothing"),
    ("answer data before the ACK", "data_before_ack", {}, "handshake", "arrived before the ACK of HELLO (seq 0)"),
    ("resumes a cut deal", "resumes", {}, "resumption", "nothing of deal 906 may come after a new session"),
    ("retransmits after 50 ms", "", {"ack_timeout": 0.05}, "retransmission", "the retransmission timer is 200 ms"),
    ("drops the session after 3 s", "", {"session_timeout": 3.0}, "lost_host", "after 4.4 s of host silence"),
]


@pytest.mark.parametrize(("quirk", "options", "failed", "message"), [m[1:] for m in MAKERS], ids=[m[0] for m in MAKERS])
def test_a_makers_broken_device_is_caught_at_its_own_pace_naming_the_section(
    quirk: str, options: MachineOptions, failed: str, message: str
) -> None:
    at_pace = MachineOptions(pace=PACE_20MS)
    at_pace.update(options)
    machine = VirtualMachine(faults=parse_faults(quirk), **at_pace)
    with SimulatorThread(machine, "pty") as sim:
        report = asyncio.run(run_conformance(open_transport(sim.url), sim.url, {"handshake", failed}))
    bad = [r for r in report.results if not r.ok]
    assert [r.name for r in bad] == [failed], report.render()
    assert message in bad[0].detail, report.render()
    assert "§" in bad[0].detail
    assert "DOES NOT CONFORM" in report.render()


def test_cli_exits_nonzero_for_a_broken_device() -> None:
    with SimulatorThread(VirtualMachine(pace=0, faults=parse_faults("wrong_version")), "pty") as sim:
        done = cli(sim.url, "--only", "handshake")
    assert done.returncode == 1
    assert "FAIL  handshake" in done.stdout


def test_unknown_check_is_a_clear_error() -> None:
    done = cli("loop://", "--only", "handshake,telepathy")
    assert done.returncode == 2
    assert "telepathy" in done.stderr


def test_the_report_speaks_russian_with_plural_forms(tmp_path: Path) -> None:
    """``--lang ru``: the frame of the report, the titles and the verdict in Russian (forms by hand: 2 проверки,
    4 кармана); the check names and the protocol's details stay as written."""
    env = {**os.environ, "DEALER_LANG": "en"}
    with SimulatorThread(VirtualMachine(pace=0), "pty") as sim:
        cmd = [sys.executable, "-m", "dealer", "--lang", "ru", "machine", "conformance", sim.url, "--only",
               "handshake,deal"]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("Отчёт о соответствии — открытый протокол машины для раскладки сдач")
    assert "итог: СООТВЕТСТВУЕТ — пройдены 2 проверки из 2" in out
    assert "пройдена  handshake" in out and "обмен HELLO, HELLO_REPLY, GET_INFO, DEVICE_INFO (§6)" in out
    assert "4 кармана" in out and "самый медленный ответ:" in out
    assert "CONFORMS" not in out and "checks passed" not in out


@pytest.mark.parametrize(
    ("passed", "total", "ru", "en"),
    [
        (1, 1, "итог: СООТВЕТСТВУЕТ — пройдена 1 проверка из 1", "result: CONFORMS — 1 of 1 checks passed"),
        (5, 5, "итог: СООТВЕТСТВУЕТ — пройдено 5 проверок из 5", "result: CONFORMS — 5 of 5 checks passed"),
        (3, 4, "итог: НЕ СООТВЕТСТВУЕТ — пройдены 3 проверки из 4", "result: DOES NOT CONFORM — 3 of 4 checks"),
    ],
)
def test_the_verdict_line_agrees_with_the_count(passed: int, total: int, ru: str, en: str) -> None:
    from dealer.core.errors import Phrase
    from dealer.i18n import error_text
    from drivers.conformance import CheckResult, Report

    report = Report("pty")
    report.results = [
        CheckResult(f"c{i}", Phrase("a full random deal (§8)"), i < passed, "", 0.1) for i in range(total)
    ]
    assert ru in report.render(lambda p: error_text(p, "ru"))
    assert en in report.render()


def test_a_reader_only_scanner_with_no_pockets_conforms_to_its_profile() -> None:
    """§8.1: a card scanner (READER only, 0 pockets) passes; START_DEAL and MAKE_BOARD get NOT_CAPABLE."""
    from firmware_protocol.messages import Capability

    machine = VirtualMachine(pace=0, capabilities=Capability.READER, pockets=0)
    with SimulatorThread(machine, "pty") as sim:
        report = asyncio.run(
            run_conformance(open_transport(sim.url), sim.url, {"handshake", "deal", "board", "flow_control"})
        )
    assert report.ok, report.render()
    assert "NOT_CAPABLE" in report.render()
