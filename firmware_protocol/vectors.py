"""Build and check ``vectors.json``: frames ↔ messages for every type, and the error cases.

``python -m firmware_protocol.vectors`` rewrites vectors.json; ``--check`` verifies the file against the codec
(the test suite does the same). Messages are written as ``{"type": NAME, "fields": {...}}`` with deals as hex.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

from cobs import cobs

from .cards import pack_seats
from .codec import DELIMITER, HEADER, Decoder, FrameError, Received, encode, encode_raw
from .messages import (
    MESSAGE_CLASSES,
    Abort,
    Ack,
    BoardDone,
    Boot,
    CardRead,
    DealEnd,
    DealStart,
    DeviceInfo,
    Fault,
    GetInfo,
    GetStatus,
    Heartbeat,
    Hello,
    HelloReply,
    MakeBoard,
    Message,
    MsgType,
    Nak,
    Reset,
    StartDeal,
    Status,
)

VECTORS_PATH = Path(__file__).with_name("vectors.json")

# Deal rank 0 (N spades, E hearts, S diamonds, W clubs) and a mixed deal.
RANK0 = pack_seats([card // 13 for card in range(52)])
MIXED = bytes.fromhex("1b1b1b1b1b1b1b1b1b1b1b1b1b")


def message_to_json(msg: Message) -> dict[str, Any]:
    fields = {}
    for f in dataclasses.fields(msg):
        v = getattr(msg, f.name)
        fields[f.name] = v.hex() if isinstance(v, bytes) else v
    return {"type": msg.TYPE.name, "fields": fields}


def message_from_json(data: dict[str, Any]) -> Message:
    cls = MESSAGE_CLASSES[MsgType[data["type"]]]
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        v = data["fields"][f.name]
        values[f.name] = bytes.fromhex(v) if f.name in ("deal", "record") else v
    return cls(**values)


def _messages() -> list[tuple[str, int, Message]]:
    return [
        ("HELLO", 0, Hello(1, 1)),
        ("GET_INFO", 1, GetInfo()),
        ("HEARTBEAT", 2, Heartbeat(0x01020304)),
        ("GET_STATUS", 3, GetStatus()),
        ("START_DEAL", 4, StartDeal(1)),
        ("MAKE_BOARD rank-0 deal", 5, MakeBoard(2, 17, 3, RANK0)),
        ("ABORT", 6, Abort()),
        ("RESET", 7, Reset()),
        ("HELLO_REPLY", 0, HelloReply(1, 1, 1)),
        ("DEVICE_INFO", 1, DeviceInfo(7, 4, 1, 2, 3, "SN-0042", "OpenDealer")),
        ("STATUS dealing", 2, Status(1, 1, 17, 0)),
        ("STATUS idle, no deal", 3, Status(0, None, 0, 0)),
        ("DEAL_START random", 4, DealStart(1, 0, 0, 0)),
        ("DEAL_START board", 5, DealStart(2, 1, 17, 3)),
        ("CARD_READ ♠A to N", 6, CardRead(1, 0, 0, 0, 255)),
        ("CARD_READ ♣2 to W", 7, CardRead(1, 51, 51, 3, 200)),
        ("CARD_READ unreadable", 8, CardRead(1, 12, None, 2, 0)),
        ("DEAL_END", 9, DealEnd(1, 52, MIXED)),
        ("BOARD_DONE", 10, BoardDone(2, 17, 3, 52, RANK0)),
        ("FAULT jam", 11, Fault(1, 1, 20, None, None, "jam at the feeder")),
        ("FAULT no deal, no detail", 12, Fault(None, 11, None, None, None, "")),
        ("BOOT after power loss", 0, Boot(1, 1)),
        ("ACK", 0, Ack(5)),
        ("NAK bad state", 0, Nak(4, 0x10, 5, "START_DEAL is not accepted in state DEALING")),
    ]


def _raw(version: int, msg_type: int, seq: int, length: int, payload: bytes) -> bytes:
    body = HEADER.pack(version, msg_type, seq, length) + payload
    return bytes(cobs.encode(body + struct.pack("<I", zlib.crc32(body)))) + DELIMITER


def _error_streams() -> list[tuple[str, bytes]]:
    good = encode(CardRead(1, 3, 12, 2, 250), 9)
    body = HEADER.pack(1, 0x91, 9, 8) + bytes.fromhex("01000000030c02fa")
    bad_crc = bytes(cobs.encode(body + struct.pack("<I", zlib.crc32(body) ^ 0x00010000))) + DELIMITER
    return [
        ("garbage, a delimiter, a frame (resynchronise on the delimiter)", b"\x13\x37\xbe\xef" + DELIMITER + good),
        ("garbage glued to the front of a frame spoils that frame only", b"\x13\x37" + good + good),
        ("frame cut short, then a whole frame", good[:7] + DELIMITER + good),
        ("bad CRC (one bit of the CRC flipped)", bad_crc),
        ("not COBS (length code runs past the end)", b"\x09\x01\x02" + DELIMITER),
        ("too short for header and CRC", bytes(cobs.encode(b"\x01\x02\x03")) + DELIMITER),
        ("oversize: 300 bytes without a delimiter", b"\x55" * 300 + DELIMITER + good),
        ("header length disagrees with the payload", _raw(1, 0x91, 9, 7, bytes.fromhex("01000000030c02fa"))),
        ("unsupported version 2", encode_raw(2, 0x03, 1, b"\x00\x00\x00\x00")),
        ("unknown message type 0x55", encode_raw(1, 0x55, 1, b"")),
        ("payload too short for HELLO", encode_raw(1, 0x01, 0, b"\x01")),
        ("card index 60 out of range", encode_raw(1, 0x91, 9, bytes.fromhex("01000000") + bytes([3, 60, 2, 250]))),
        ("pocket 4 out of range", encode_raw(1, 0x91, 9, bytes.fromhex("01000000") + bytes([3, 12, 4, 250]))),
        ("empty frames (back-to-back delimiters) are idle fill", DELIMITER * 3 + good),
        # the error cases the text names (§1, §3, §5.1); expected events derived by hand in test_protocol_vectors
        ("text: invalid UTF-8 (0xC3 0x28)", _fault_text(b"\xc3\x28")),
        ("text: overlong UTF-8 (0xC0 0xAF for '/')", _fault_text(b"\xc0\xaf")),
        ("text: a UTF-16 surrogate (0xED 0xA0 0x80)", _fault_text(b"\xed\xa0\x80")),
        ("text: above U+10FFFF (0xF4 0x90 0x80 0x80)", _fault_text(b"\xf4\x90\x80\x80")),
        ("text: 121 bytes, one over max_text", _fault_text(b"a" * 121)),
        ("text: exactly 120 bytes (60 two-byte code points) is fine", _fault_text("é".encode() * 60)),
        (
            "NAK detail of 121 bytes (unanswered type, still bad_field)",
            encode_raw(1, 0xF1, 0, b"\x04\x10\x05" + b"n" * 121),
        ),
        ("str16: a 0x00 followed by a non-0x00 byte", _device_info(b"SN\x00X".ljust(16, b"\x00"))),
        ("str16: a byte outside 0x20..0x7E (0x7F)", _device_info(b"SN\x7f".ljust(16, b"\x00"))),
        ("str16: all 16 bytes printable, no padding, is fine", _device_info(b"0123456789ABCDEF")),
        ("position 52 out of range", encode_raw(1, 0x91, 9, bytes.fromhex("01000000") + bytes([52, 12, 2, 250]))),
        ("position 0xFF (none) decodes", encode_raw(1, 0x91, 9, bytes.fromhex("01000000") + bytes([0xFF, 12, 2, 250]))),
        ("FAULT shorter than its fixed fields", encode_raw(1, 0x94, 3, bytes.fromhex("01000000010203"))),
        ("maximum-length frame: 240-byte payload, 248 decoded, 249 encoded (unknown type 0x55)", _longest(240)),
        ("249/250 boundary: 241-byte payload encodes to 250 bytes: oversize, then a frame", _longest(241) + good),
    ]


def _fault_text(text: bytes) -> bytes:
    """FAULT(deal 1, JAM, position 20, no card, no pocket) with ``text`` as its detail, bytes as given."""
    return encode_raw(1, 0x94, 11, bytes.fromhex("01000000") + bytes([1, 20, 0xFF, 0xFF]) + text)


def _device_info(serial: bytes) -> bytes:
    return encode_raw(1, 0x82, 1, bytes([7, 4, 1, 2, 3]) + serial + b"OpenDealer".ljust(16, b"\x00"))


def _longest(payload: int) -> bytes:
    """A frame of type 0x55 with ``payload`` bytes 0x01..: COBS adds exactly one byte (no run of 254)."""
    body = bytes([1, 0x55, 1, payload & 0xFF]) + bytes((i % 255) + 1 for i in range(payload))
    return bytes(cobs.encode(body + struct.pack("<I", zlib.crc32(body)))) + DELIMITER


def _events_json(stream: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ev in Decoder().feed(stream):
        if isinstance(ev, Received):
            out.append({"seq": ev.seq, "version": ev.version, "message": message_to_json(ev.message)})
        else:
            out.append({"error": ev.reason.value})
    return out


def build_vectors() -> dict[str, Any]:
    frames = []
    for name, seq, msg in _messages():
        frames.append({"name": name, "seq": seq, "version": 1, "frame": encode(msg, seq).hex(), **message_to_json(msg)})
    return {
        "doc": "Test vectors of the open dealing-machine protocol, version 1 (see PROTOCOL.md). 'frame' is the "
        "complete wire frame in hex, trailing 0x00 delimiter included. Deals and records are hex.",
        # Published values (the CRC catalogue's check value and widely printed CRC-32 results), not the codec's.
        "crc32": [
            {"ascii": "123456789", "crc": "cbf43926", "source": "CRC catalogue check value of CRC-32/ISO-HDLC"},
            {"ascii": "", "crc": "00000000", "source": "init xor xorout"},
            {"ascii": "a", "crc": "e8b7be43", "source": "published CRC-32 of 'a'"},
            {
                "ascii": "The quick brown fox jumps over the lazy dog",
                "crc": "414fa339",
                "source": "published CRC-32 of the pangram",
            },
            {"hex": "0191050007", "crc": f"{zlib.crc32(bytes.fromhex('0191050007')):08x}"},
        ],
        # Derived by hand from the COBS rules (Cheshire & Baker 1999; the last two are the paper's long runs).
        "cobs": [
            {"decoded": "00", "encoded": "0101"},
            {"decoded": "0000", "encoded": "010101"},
            {"decoded": "00110000", "encoded": "0102110101"},
            {"decoded": "11220033", "encoded": "0311220233"},
            {"decoded": "11223344", "encoded": "0511223344"},
            {"decoded": "11000000", "encoded": "0211010101"},
            {"decoded": "", "encoded": "01"},
            {"decoded": bytes(range(1, 255)).hex(), "encoded": "ff" + bytes(range(1, 255)).hex()},
            {"decoded": bytes(range(1, 256)).hex(), "encoded": "ff" + bytes(range(1, 255)).hex() + "02ff"},
        ],
        "frames": frames,
        "streams": [
            {"name": name, "stream": stream.hex(), "events": _events_json(stream)} for name, stream in _error_streams()
        ],
    }


def check_vectors(data: dict[str, Any]) -> list[str]:
    """Problems found when checking ``data`` against the codec (empty when all agree)."""
    problems = []
    for v in data["crc32"]:
        raw = v["ascii"].encode() if "ascii" in v else bytes.fromhex(v["hex"])
        if f"{zlib.crc32(raw):08x}" != v["crc"]:
            problems.append(f"crc32 of {v}")
    for v in data["cobs"]:
        if bytes(cobs.encode(bytes.fromhex(v["decoded"]))).hex() != v["encoded"]:
            problems.append(f"cobs {v}")
    for v in data["frames"]:
        msg = message_from_json(v)
        if encode(msg, v["seq"], v["version"]).hex() != v["frame"]:
            problems.append(f"frame {v['name']}: encoding differs")
        events = Decoder().feed(bytes.fromhex(v["frame"]))
        if len(events) != 1 or not isinstance(events[0], Received) or events[0].message != msg:
            problems.append(f"frame {v['name']}: decodes to {events}")
        elif events[0].seq != v["seq"]:
            problems.append(f"frame {v['name']}: seq {events[0].seq}")
    for v in data["streams"]:
        got = _events_json(bytes.fromhex(v["stream"]))
        if got != v["events"]:
            problems.append(f"stream {v['name']}: {got} != {v['events']}")
    return problems


def main(argv: list[str]) -> int:
    if "--check" in argv:
        problems = check_vectors(json.loads(VECTORS_PATH.read_text(encoding="utf-8")))
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    VECTORS_PATH.write_text(json.dumps(build_vectors(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


__all__ = ["FrameError", "build_vectors", "check_vectors", "main"]

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
