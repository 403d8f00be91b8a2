"""The reference C library (firmware_protocol/c) against the vectors, under sanitizers, fuzzed, and as a device.

Two implementations must agree: the C library encodes every frame of vectors.json from its header and the
Python codec's payload and must produce the same bytes, decodes every stream one byte at a time into the same
events, and its CRC and COBS reproduce the published / hand-derived values. The Python driver then deals
100 deals with the C example device over a pty, checked against the deck orders in the file it deals from.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _c_support import C_DIR, SANITIZE, build, compiler, example_device, sanitizers_work, write_decks
from _proto_helpers import run

from dealer.core import Deal
from dealer.core.events import DealEnded
from drivers.machine import MachineDriver
from drivers.transport import open_transport
from firmware_protocol.cards import pack_seats
from firmware_protocol.codec import encode_payload
from firmware_protocol.messages import MsgType
from firmware_protocol.table import load_table
from firmware_protocol.vectors import VECTORS_PATH, message_from_json

VECTORS: dict[str, Any] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler()
    return tmp_path_factory.mktemp("odp-c")


@pytest.fixture(scope="module")
def sanitize(out_dir: Path) -> list[str]:
    if not sanitizers_work(out_dir):
        pytest.skip("the C compiler has no working -fsanitize=address,undefined")
    return SANITIZE


@pytest.fixture(scope="module")
def harness(out_dir: Path, sanitize: list[str]) -> Path:
    return build(out_dir, "odp_vectors", ["odp.c", "odp_vectors.c"], sanitize)


def ask(harness: Path, lines: list[str]) -> list[str]:
    done = subprocess.run(
        [str(harness)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_library_is_c99_without_malloc_or_libc(out_dir: Path) -> None:
    build(out_dir, "example_strict", ["odp.c", "example_device.c"], ["-O2"])
    for name in ("odp.c", "odp.h"):
        text = (C_DIR / name).read_text(encoding="utf-8")
        includes = set(re.findall(r"#include\s+[<\"]([^>\"]+)[>\"]", text))
        assert includes <= {"stdint.h", "stddef.h", "string.h", "odp.h"}, (name, includes)
        assert not re.search(r"\b(malloc|calloc|realloc|free|printf)\s*\(", text), name


def test_crc_and_cobs_match_the_published_and_hand_derived_values(harness: Path) -> None:
    crc_lines = [
        f"crc {(v['ascii'].encode() if 'ascii' in v else bytes.fromhex(v['hex'])).hex()}" for v in VECTORS["crc32"]
    ]
    assert ask(harness, crc_lines) == [v["crc"] for v in VECTORS["crc32"]]
    cobs = VECTORS["cobs"]
    assert ask(harness, [f"cobs {v['decoded']}" for v in cobs]) == [v["encoded"] for v in cobs]
    assert ask(harness, [f"uncobs {v['encoded']}" for v in cobs]) == [v["decoded"] for v in cobs]


def test_c_encodes_every_frame_as_the_python_codec(harness: Path) -> None:
    lines = []
    for v in VECTORS["frames"]:
        msg = message_from_json(v)
        lines.append(f"frame {v['version']} {int(msg.TYPE)} {v['seq']} {encode_payload(msg).hex()}")
    assert ask(harness, lines) == [v["frame"] for v in VECTORS["frames"]]


def _expected(event: dict[str, Any]) -> str:
    if "error" in event:
        return f"error {event['error']}"
    msg = message_from_json(event["message"])
    return f"ok {event['version']} {int(msg.TYPE)} {event['seq']} {encode_payload(msg).hex()}"


def test_c_decodes_every_stream_byte_by_byte_as_the_vectors_say(harness: Path) -> None:
    streams = VECTORS["streams"] + [
        {"stream": v["frame"], "events": [{"seq": v["seq"], "version": v["version"], "message": v}]}
        for v in VECTORS["frames"]
    ]
    got = ask(harness, [f"stream {s['stream']}" for s in streams])
    want = [";".join(_expected(e) for e in s["events"]) for s in streams]
    assert got == want


def test_c_message_table_matches_messages_json(harness: Path) -> None:
    (line,) = ask(harness, ["table"])
    got = {tuple(map(int, item.split())) for item in line.split(";") if item}
    want = {(m.type, m.fixed_size, int(m.has_text)) for m in load_table().messages}
    assert got == want
    assert {t for t, _, _ in got} == {int(t) for t in MsgType}


def test_a_wrong_c_answer_would_be_caught(harness: Path) -> None:
    # the comparison above is not vacuous: a flipped CRC bit changes what C prints
    (good,) = ask(harness, ["frame 1 1 0 0101"])
    assert good == "030101080201010f8e662a00"
    (bad,) = ask(harness, ["stream 030101080201010f8e662b00"])
    assert bad == "error bad_crc"


def test_bounded_random_fuzz_run_finds_no_crash(out_dir: Path, sanitize: list[str]) -> None:
    fuzz = build(out_dir, "odp_fuzz", ["odp.c", "odp_fuzz.c"], [*sanitize, "-DODP_FUZZ_MAIN"])
    done = subprocess.run([str(fuzz), "20000", "20261130"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "no crash" in done.stdout


def test_libfuzzer_harness_builds_and_runs(out_dir: Path) -> None:
    clang = shutil.which("clang")
    if clang is None:
        pytest.skip("clang is not installed: the libFuzzer build of odp_fuzz.c is skipped (the bounded run covers it)")
    target = out_dir / "odp_libfuzzer"
    cmd = [
        clang,
        "-std=c99",
        "-g",
        "-fsanitize=fuzzer,address,undefined",
        str(C_DIR / "odp.c"),
        str(C_DIR / "odp_fuzz.c"),
    ]
    done = subprocess.run([*cmd, "-o", str(target)], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.skip(f"clang cannot build libFuzzer targets here: {done.stderr[-300:]}")
    run_ = subprocess.run(
        [str(target), "-runs=20000", "-seed=1"], capture_output=True, text=True, timeout=600, check=False
    )
    assert run_.returncode == 0, run_.stderr[-3000:]


def test_fits_a_cortex_m0(out_dir: Path) -> None:
    gcc = shutil.which("arm-none-eabi-gcc")
    size = shutil.which("arm-none-eabi-size")
    if gcc is None or size is None:
        pytest.skip("arm-none-eabi-gcc is not installed (Debian: gcc-arm-none-eabi; .ci/run installs it)")
    obj = out_dir / "odp_m0.o"
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-Wconversion", "-mcpu=cortex-m0", "-mthumb", "-Os"]
    subprocess.run([gcc, *flags, "-c", str(C_DIR / "odp.c"), "-o", str(obj)], check=True, timeout=300)
    ram_c = out_dir / "ram.c"
    ram_c.write_text('#include "odp.h"\nodp_dev_t dev;\n', encoding="utf-8")
    ram_o = out_dir / "ram.o"
    subprocess.run([gcc, *flags, "-fno-common", f"-I{C_DIR}", "-c", str(ram_c), "-o", str(ram_o)], check=True)
    text, data, _ = map(int, subprocess.check_output([size, str(obj)], text=True).splitlines()[1].split()[:3])
    bss = int(subprocess.check_output([size, str(ram_o)], text=True).splitlines()[1].split()[2])
    # README.md states these figures; a small MCU (16 KiB flash, 4 KiB RAM) must keep room for the firmware
    assert text + data <= 4096, (text, data)
    assert bss <= 1536, bss


def test_python_driver_deals_100_deals_with_the_c_example(out_dir: Path, tmp_path: Path, sanitize: list[str]) -> None:
    binary = build(out_dir, "example_device_asan", ["odp.c", "example_device.c"], sanitize)
    decks = write_decks(tmp_path / "decks.txt", 100, seed=16)
    link = tmp_path / "ttyODP"

    async def deal_all() -> list[bytes]:
        drv = MachineDriver(lambda: open_transport(str(link)), heartbeat=0.3, reconnect_delay=0.05)
        info = await drv.connect()
        assert (info.model, info.protocol_version) == ("odp example", 1)
        records = []
        try:
            for _ in range(100):
                deal_id = await drv.start_deal()
                outcome = await drv.wait_deal(deal_id)
                assert isinstance(outcome, DealEnded), outcome
                assert outcome.record is not None
                records.append(outcome.record)
            board = Deal.from_rank(123456789)
            result = await drv.make_board(7, board, 1)
            assert result.ok and result.record == board.to_bytes()
        finally:
            await drv.close()
        return records

    with example_device(binary, tmp_path / "decks.txt", link):
        records = run(deal_all(), timeout=300)
    # independent truth: the file's deck orders dealt round-robin N, E, S, W
    want = []
    for deck in decks:
        seats = [0] * 52
        for position, card in enumerate(deck):
            seats[card] = position % 4
        want.append(pack_seats(seats))
    assert records == want


def _python_events(stream: bytes) -> str:
    from firmware_protocol.codec import Decoder, FrameError

    out = []
    for ev in Decoder().feed(stream):
        if isinstance(ev, FrameError):
            out.append(f"error {ev.reason.value}")
        else:
            payload = encode_payload(ev.message)
            out.append(f"ok {ev.version} {int(ev.message.TYPE)} {ev.seq} {payload.hex()}")
    return ";".join(out)


def test_c_and_python_decoders_agree_on_damaged_random_streams(harness: Path) -> None:
    """Differential test: 400 seeded streams of good, damaged, cut and junk frames decode alike in both."""
    import random

    from firmware_protocol.codec import encode_raw

    rng = random.Random(1611)
    payloads = {t: spec.fixed_size for t, spec in load_table().by_type.items()}
    streams = []
    for _ in range(400):
        stream = bytearray()
        for _ in range(rng.randint(1, 6)):
            t = rng.choice([*payloads, 0x55, 0xA7])
            size = payloads.get(t, 0) + (rng.randint(0, 10) if rng.random() < 0.3 else 0)
            body = bytes(rng.choice([0, 1, 3, 51, 52, 60, 0xFF, rng.randrange(256)]) for _ in range(size))
            frame = bytearray(encode_raw(rng.choice([1, 1, 1, 2]), t, rng.randrange(256), body))
            r = rng.random()
            if r < 0.2:
                frame[rng.randrange(len(frame) - 1)] ^= 1 << rng.randrange(8)
            elif r < 0.3:
                frame = frame[: rng.randrange(1, len(frame))]
            elif r < 0.35:
                frame = bytearray(rng.randbytes(rng.randint(1, 300))) + b"\x00"
            stream += frame
        streams.append(bytes(stream))
    want = [_python_events(s) for s in streams]
    kinds = {e.split()[0] if e.startswith("ok") else e for line in want for e in line.split(";") if e}
    assert {"ok", "error bad_crc", "error bad_field", "error bad_payload", "error unsupported_version"} <= kinds
    assert ask(harness, [f"stream {s.hex()}" for s in streams]) == want


def test_c_sends_a_fault_with_the_120_bytes_of_text_the_text_allows(harness: Path) -> None:
    """PROTOCOL.md §1: FAULT text up to 120 bytes. The C library keeps the part beyond a queue slot in one shared
    tail: a second long message waits (-1) until the first is answered; 121 bytes is refused (-3). The frame is
    the Python codec's (a second implementation)."""
    from firmware_protocol.codec import encode
    from firmware_protocol.messages import Fault

    fault = Fault(1, 1, 20, None, None, "é" * 60)  # 120 bytes of UTF-8
    payload = encode_payload(fault).hex()
    (line,) = ask(harness, [f"send {0x94} {payload}"])
    assert line == f"0 -1 {encode(fault, 1).hex()} 0"
    (over,) = ask(harness, [f"send {0x94} {payload}61"])
    assert over == "-3 -3  -3"


def test_a_cpp_caller_links_against_the_c_library(out_dir: Path) -> None:
    """odp.h has extern "C" guards: Arduino and ESP-IDF firmware is C++."""
    cxx = shutil.which("g++") or shutil.which("clang++")
    cc = shutil.which("gcc") or shutil.which("cc")
    if cxx is None or cc is None:
        pytest.skip("no C++ compiler")
    obj = out_dir / "odp_for_cpp.o"
    subprocess.run([cc, "-std=c99", "-c", str(C_DIR / "odp.c"), "-o", str(obj)], check=True, timeout=300)
    main = out_dir / "main.cpp"
    main.write_text(
        '#include "odp.h"\n'
        'int main() { const uint8_t s[] = "123456789"; return odp_crc32(s, 9) == 0xCBF43926u ? 0 : 1; }\n',
        encoding="utf-8",
    )
    binary = out_dir / "cpp_caller"
    subprocess.run([cxx, f"-I{C_DIR}", str(main), str(obj), "-o", str(binary)], check=True, timeout=300)
    assert subprocess.run([str(binary)], check=False, timeout=60).returncode == 0
