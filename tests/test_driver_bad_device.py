"""The host never trusts the device: a broken device's deal is void with the reason, never accepted, never a
traceback or a long hang (issue 30). Each broken variant is the simulator with one deviation, over a real pty."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _proto_helpers import driver, run, run_deal, simulator

from dealer.core.events import CardSeen, DealEnded, DeviceFault, FaultKind
from drivers.simulator import FaultPlan, ProtocolQuirk, SimulatorThread, VirtualMachine, parse_faults


def broken(quirk: ProtocolQuirk) -> FaultPlan:
    plan = FaultPlan(seed=5)
    plan.quirks.add(quirk)
    return plan


def test_a_sequence_number_stuck_at_255_voids_that_deal_and_a_new_session_deals_again() -> None:
    async def main() -> None:
        with simulator("pty", broken(ProtocolQuirk.SEQ_STUCK)) as sim:
            async with driver(sim) as drv:
                # HELLO_REPLY 0, DEVICE_INFO 1, then 54 messages a deal: the 5th deal meets 255 at its 38th
                for _ in range(4):
                    good = await run_deal(drv)
                    assert isinstance(good.end, DealEnded), good.events
                bad = await run_deal(drv)
                assert isinstance(bad.end, DeviceFault), bad.events
                assert bad.end.kind is FaultKind.PROTOCOL and bad.end.deal_id == bad.deal_id
                assert "reused sequence number 255 for a new CARD_READ" in bad.end.detail
                assert "§5.2" in bad.end.detail
                assert len(bad.cards) == 37  # DEAL_START was seq 218, CARD_READ 36 seq 255
                assert await drv.wait_connected(5.0)
                again = await run_deal(drv)  # HELLO restarted the device's numbering
                assert isinstance(again.end, DealEnded), again.events
                assert len({c.card for c in again.cards}) == 52

    run(main(), timeout=60)


@pytest.mark.parametrize(
    ("quirk", "kind", "words", "cards"),
    [
        (ProtocolQuirk.REPEATED_POSITION, FaultKind.PROTOCOL, "position 9 reported again (the next was 10)", 10),
        (ProtocolQuirk.POSITION_52, FaultKind.PROTOCOL, "malformed CARD_READ", 52),
        (ProtocolQuirk.WRONG_DEAL_ID, FaultKind.PROTOCOL, "CARD_READ names deal 2, which the host never started", 5),
        (ProtocolQuirk.STALLS, FaultKind.PROTOCOL, "no report of deal 1 for 0.5 s after CARD_READ 19", 20),
    ],
    ids=lambda v: v.value if isinstance(v, ProtocolQuirk) else None,
)
def test_a_report_no_deal_can_hold_voids_the_deal_with_the_reason(
    quirk: ProtocolQuirk, kind: FaultKind, words: str, cards: int
) -> None:
    async def main() -> None:
        with simulator("pty", broken(quirk)) as sim:
            async with driver(sim, report_timeout=0.5) as drv:
                bad = await run_deal(drv)
                assert isinstance(bad.end, DeviceFault), bad.events
                assert (bad.end.kind, bad.end.deal_id) == (kind, bad.deal_id)
                assert words in bad.end.detail, bad.end.detail
                assert len(bad.cards) == cards
                assert not any(isinstance(e, DealEnded) for e in bad.events)
                # the driver stopped the machine: the next deal starts (and meets the same bug)
                assert await drv.wait_connected(5.0)
                second = await run_deal(drv)
                assert isinstance(second.end, DeviceFault), second.events

    run(main(), timeout=60)


def test_a_position_out_of_range_is_named_with_its_field() -> None:
    async def main() -> None:
        with simulator("pty", broken(ProtocolQuirk.POSITION_52)) as sim:
            async with driver(sim) as drv:
                bad = await run_deal(drv)
                assert isinstance(bad.end, DeviceFault)
                assert "bad_field" in bad.end.detail and "position" in bad.end.detail, bad.end.detail

    run(main(), timeout=60)


def test_a_card_after_the_deal_end_is_a_fault_naming_that_deal() -> None:
    async def main() -> None:
        with simulator("pty", broken(ProtocolQuirk.CARD_AFTER_END)) as sim:
            async with driver(sim) as drv:
                deal = await run_deal(drv)
                assert isinstance(deal.end, DealEnded)
                late = await drv.next_event(5.0)
                assert isinstance(late, DeviceFault), late
                assert late.kind is FaultKind.EXTRA_CARD and late.deal_id == deal.deal_id
                assert f"CARD_READ position 51 after the end of deal {deal.deal_id}" in late.detail
                assert not isinstance(late, CardSeen)

    run(main(), timeout=60)


def test_machine_deal_reports_a_stuck_sequence_number_as_a_void_deal_without_a_traceback() -> None:
    """The issue's run: ``dealer machine deal -n 6`` on the seq-stuck device stalled after 4 deals and died after
    120 s with a TimeoutError traceback. Now: 5 deals, one void naming the sequence number, exit 1."""
    with SimulatorThread(VirtualMachine(pace=0, faults=parse_faults("seq_stuck")), "pty") as sim:
        env = {**os.environ, "DEALER_LANG": "en"}
        cmd = [sys.executable, "-m", "dealer", "machine", "deal", sim.url, "-n", "6"]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 6, done.stdout
    assert sum(line.startswith("deal ") and ": N:" in line for line in lines) == 5, done.stdout
    void = [line for line in lines if ": void: " in line]
    assert len(void) == 1 and "protocol: the device reused sequence number 255" in void[0], done.stdout


def test_data_never_sent_after_its_ack_is_a_clear_error_once_the_device_falls_silent() -> None:
    """GET_STATUS during a deal, on a device that ACKs it and loses the STATUS (no BUSY): the reply timer runs
    while the device is silent only (§5.7), so the deal's cards keep it alive, and the error comes after."""
    import time

    from drivers.device import DeviceError

    async def main() -> None:
        with simulator("pty", broken(ProtocolQuirk.NO_BUSY), pace=52 * 0.02) as sim:
            async with driver(sim, reply_timeout=0.2, retry_limit=2) as drv:  # 0.2 s + 2 retransmissions of 0.05 s
                deal_id = await drv.start_deal()
                asked = time.monotonic()
                with pytest.raises(DeviceError) as caught:
                    await drv.status()
                failed = time.monotonic()
                said = "the device ACKed GET_STATUS but sent no STATUS within 0.3 s (PROTOCOL.md §5.7)"
                assert said in str(caught.value)
                events = [await drv.next_event(1.0) for _ in range(54)]  # DealStarted, 52 cards, DealEnded
                assert isinstance(events[-1], DealEnded) and events[-1].deal_id == deal_id  # the deal is fine
                assert failed - asked >= 0.9  # 52 cards at 20 ms kept the timer from running out

    run(main(), timeout=60)


def test_a_malformed_answer_fails_its_request_naming_the_field_not_a_timeout() -> None:
    """DEVICE_INFO with a bad str16 serial: the host NAKs it (BAD_FIELD) and the connection fails with the
    reason, at once, instead of waiting out the reply timer."""
    import time

    from drivers.device import DeviceError

    async def main() -> None:
        with simulator("pty", broken(ProtocolQuirk.BAD_SERIAL)) as sim:
            t0 = time.monotonic()
            with pytest.raises(DeviceError) as caught:
                async with driver(sim, reply_timeout=5.0):
                    pass
            assert time.monotonic() - t0 < 4.0
            text = str(caught.value)
            assert "the device sent a malformed DEVICE_INFO (bad_field:" in text, text
            assert "serial" in text and "§5.1" in text, text

    run(main(), timeout=60)
