"""The CLI: `dealer simulate machine` as a real process, driven by `dealer machine`; `dealer devices`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from drivers.simulator import SIM_PRODUCT_ID, SIM_VENDOR_ID, FaultPlan, SimulatorThread, VirtualMachine, parse_faults
from drivers.simulator.faults import FaultSpecError, SimFault

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _dealer(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dealer", *args], capture_output=True, text=True, env=ENV, timeout=timeout, cwd=ROOT
    )


@pytest.mark.parametrize("medium", ["--pty", "--tcp"])
def test_simulate_machine_process_is_driven_over_its_medium(medium: str, tmp_path: Path) -> None:
    args = [sys.executable, "-m", "dealer", "simulate", "machine", "--pace", "0", "--seed", "1"]
    args += ["--pty", "--link", str(tmp_path / "ttySIM")] if medium == "--pty" else ["--tcp", "0"]
    sim = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    try:
        assert sim.stdout is not None
        listening = sim.stdout.readline()
        target = sim.stdout.readline().strip().removeprefix("open with: ")
        assert listening.startswith("listening: ")
        if medium == "--pty":
            assert target == str(tmp_path / "ttySIM") and os.path.realpath(target).startswith("/dev/pts/")
        else:
            assert re.fullmatch(r"tcp://127\.0\.0\.1:\d+", target), target
        if medium == "--pty":
            info = _dealer("machine", "info", target)
            assert info.returncode == 0, info.stderr
            assert "serial: SIM-000001" in info.stdout and "protocol_version: 1" in info.stdout
        dealt = _dealer("machine", "deal", target, "-n", "3")
        assert dealt.returncode == 0, dealt.stderr
        deals = re.findall(r"^deal \d+: (N: .*)$", dealt.stdout, re.M)  # the four hands: «N: ♠ A K 5 …  |  E: …»
        assert len(deals) == 3, dealt.stdout
        for hands in deals:
            seats = [part.split(": ", 1) for part in hands.split("  |  ")]
            assert [seat for seat, _ in seats] == ["N", "E", "S", "W"]
            cards = [c for _, hand in seats for c in hand.split() if c not in "♠♥♦♣—"]
            assert len(cards) == 52, hands
    finally:
        sim.send_signal(signal.SIGINT)
        rest, err = sim.communicate(timeout=20)
    assert sim.returncode == 0, err
    assert f"stopped after {3} operations (3 completed)" in rest


def test_simulate_machine_rejects_bad_faults() -> None:
    result = _dealer("simulate", "machine", "--faults", "jam@x")
    assert result.returncode == 1
    assert "--faults item 1 'jam@x'" in result.stderr and "not a number" in result.stderr
    with pytest.raises(FaultSpecError, match="unknown fault 'gremlins'"):
        parse_faults("gremlins")


def test_parse_faults() -> None:
    plan = parse_faults("jam@2:17, wrong-pocket~0.25, noise~0.01, garbage~3, duplicate~0.1, cover_open", seed=4)
    assert plan.scripted[0].kind is SimFault.JAM and (plan.scripted[0].operation, plan.scripted[0].position) == (2, 17)
    assert plan.scripted[1].kind is SimFault.COVER_OPEN and plan.scripted[1].operation is None
    assert plan.rates == {SimFault.WRONG_POCKET: 0.25}
    assert (plan.noise.corrupt_rate, plan.noise.garbage_per_frame, plan.noise.duplicate_rate) == (0.01, 3, 0.1)
    first = plan.draw(1)  # the unscheduled fault comes first; the jam waits for operation 2
    assert first is not None and first[0] is SimFault.COVER_OPEN and 0 <= first[1] <= 51
    assert plan.draw(2) == (SimFault.JAM, 17)
    assert plan.scripted == []
    for bad, words in [
        ("jam@0", "must be ≥ 1"),
        ("jam@1:52", "not in 0..51"),
        ("noise~2", "not in 0..1"),
        ("noise", "needs a rate"),
    ]:
        with pytest.raises(FaultSpecError, match=words):
            parse_faults(bad)


def test_devices_lists_serial_ports_and_usb_profiles() -> None:
    result = _dealer("devices")
    assert result.returncode == 0, result.stderr
    assert "Serial ports" in result.stdout or "No serial ports found." in result.stdout


def test_devices_usb_listing_through_the_simulated_device() -> None:
    from drivers.discovery import usb_rows

    with SimulatorThread(VirtualMachine(pace=0, serial="SIM-LIST-7", faults=FaultPlan()), "usb") as sim:
        rows, problem = usb_rows(sim.backend)
    assert problem is None
    assert rows == [
        {
            "bus": "1:7",
            "usb": f"{SIM_VENDOR_ID:04x}:{SIM_PRODUCT_ID:04x}",
            "serial": "SIM-LIST-7",
            "profile": "open-dealer",
            "open": "usb:1209:0001:SIM-LIST-7",
        }
    ]
