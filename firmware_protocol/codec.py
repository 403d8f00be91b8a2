"""Sans-I/O frame codec: typed messages to bytes, bytes to typed events. No sockets, serial or clock here.

Frame on the wire: ``COBS(header ‖ payload ‖ CRC) ‖ 0x00``.
Header: version u8, type u8, seq u8, payload length u8. CRC-32/ISO-HDLC (zlib's crc32) over header and
payload, 4 bytes little-endian. :class:`Decoder` never raises: every bad frame becomes a :class:`FrameError`
with a reason, is counted, and decoding resumes after the next 0x00.
"""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from cobs import cobs

from .messages import MESSAGE_CLASSES, Message, MsgType
from .table import MessageSpec, load_table

_TABLE = load_table()
HEADER = struct.Struct("<BBBB")
CRC = struct.Struct("<I")
HEADER_SIZE = _TABLE.header_size
CRC_SIZE = _TABLE.crc_size
MAX_PAYLOAD = _TABLE.max_payload
MAX_FRAME = _TABLE.max_frame
MAX_ENCODED = _TABLE.max_encoded
PROTOCOL_VERSION = _TABLE.version
MAX_TEXT = _TABLE.max_text
# Message types 0x00..0x9F are reliable (answered with ACK/NAK), 0xA0..0xFF never answered (PROTOCOL.md §5).
FIRST_UNANSWERED_TYPE = 0xA0
# Layouts frozen for all versions: always sent with header version 1 (PROTOCOL.md §6.3).
FROZEN_TYPES = frozenset({0x01, 0x81, 0xA0, 0xF0, 0xF1})
DELIMITER = b"\x00"
NONE_U8 = 0xFF
NONE_U32 = 0xFFFFFFFF

_SPECS: dict[int, MessageSpec] = _TABLE.by_type


class ErrorReason(Enum):
    """Why a frame was skipped."""

    OVERSIZE = "oversize"  # more than MAX_ENCODED bytes before a delimiter
    COBS = "cobs"  # not valid COBS
    TOO_SHORT = "too_short"  # shorter than header + CRC
    BAD_CRC = "bad_crc"
    BAD_LENGTH = "bad_length"  # header length disagrees with the payload
    UNSUPPORTED_VERSION = "unsupported_version"
    UNKNOWN_TYPE = "unknown_type"
    BAD_PAYLOAD = "bad_payload"  # payload size does not fit the message's layout
    BAD_FIELD = "bad_field"  # a field value out of its range

    __hash__ = object.__hash__  # members are singletons; identity hashing keeps error counting cheap


# Errors after which the header can be trusted (the CRC matched): the receiver NAKs these when the type is in
# the reliable range (PROTOCOL.md §5.1 steps 5d-5h).
TRUSTED_HEADER = frozenset(
    {
        ErrorReason.BAD_LENGTH,
        ErrorReason.UNSUPPORTED_VERSION,
        ErrorReason.UNKNOWN_TYPE,
        ErrorReason.BAD_PAYLOAD,
        ErrorReason.BAD_FIELD,
    }
)


def truncate_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut at a code point boundary to at most ``limit`` UTF-8 bytes."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", errors="ignore")


@dataclass(frozen=True, slots=True)
class Received:
    """A good frame."""

    version: int
    seq: int
    message: Message


@dataclass(frozen=True, slots=True)
class FrameError:
    """A skipped frame. ``msg_type``/``seq``/``version`` are set when the CRC matched (header trustworthy)."""

    reason: ErrorReason
    detail: str
    frame: bytes
    msg_type: int | None = None
    seq: int | None = None
    version: int | None = None


DecodeEvent = Received | FrameError


class EncodeError(ValueError):
    """A message cannot be encoded (a field out of range): a bug in the caller, never caused by the wire."""


@dataclass(slots=True)
class DecoderStats:
    frames: int = 0
    bytes: int = 0
    errors: Counter[ErrorReason] = field(default_factory=Counter)

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())


# -- field conversion ------------------------------------------------------------------------------------


def _to_wire(kind: str, name: str, value: Any) -> Any:
    if kind in ("u8", "u16", "u32"):
        limit = {"u8": 0xFF, "u16": 0xFFFF, "u32": 0xFFFFFFFF}[kind]
        if not isinstance(value, int) or not 0 <= value <= limit:
            raise EncodeError(f"field {name}: {value!r} is not in 0..{limit}")
        return value
    if kind == "deal_id":
        if value is None:
            return NONE_U32
        if not isinstance(value, int) or not 0 <= value < NONE_U32:
            raise EncodeError(f"field {name}: deal id {value!r} is not in 0..{NONE_U32 - 1}")
        return value
    if kind in ("card", "pocket", "position"):
        top = {"card": 51, "pocket": 3, "position": 51}[kind]
        if value is None:
            return NONE_U8
        if not isinstance(value, int) or not 0 <= value <= top:
            raise EncodeError(f"field {name}: {value!r} is not in 0..{top} or None")
        return int(value)
    if kind == "deal":
        if not isinstance(value, bytes | bytearray) or len(value) != 13:
            raise EncodeError(f"field {name}: a canonical deal is 13 bytes, got {value!r}")
        return bytes(value)
    if kind == "str16":
        try:
            raw = str(value).encode("ascii")
        except UnicodeEncodeError as exc:
            raise EncodeError(f"field {name}: {value!r} is not ASCII") from exc
        if len(raw) > 16 or b"\x00" in raw:
            raise EncodeError(f"field {name}: {value!r} is longer than 16 bytes or holds NUL")
        return raw
    raise EncodeError(f"field {name}: unknown type {kind}")


def _from_wire(kind: str, value: Any) -> tuple[Any, str | None]:
    """Convert a raw struct value; return (value, problem)."""
    if kind == "deal_id":
        return (None if value == NONE_U32 else value), None
    if kind in ("card", "pocket", "position"):
        if value == NONE_U8:
            return None, None
        top = {"card": 51, "pocket": 3, "position": 51}[kind]
        if value > top:
            return None, f"{kind} {value} is not in 0..{top} or 0xFF"
        return value, None
    if kind == "str16":
        raw = bytes(value).rstrip(b"\x00")
        if b"\x00" in raw or any(b > 0x7E or b < 0x20 for b in raw):
            return None, "text is not printable ASCII padded with NUL"
        return raw.decode("ascii"), None
    return value, None


# -- encoding --------------------------------------------------------------------------------------------


def _encoder(spec: MessageSpec) -> tuple[tuple[str, ...], tuple[tuple[int, str, str], ...]]:
    """Names of the fixed fields, and (index, type, name) of those needing more than a range check by struct."""
    fixed = [f for f in spec.fields if f.type != "text"]
    special = tuple((i, f.type, f.name) for i, f in enumerate(fixed) if f.type not in ("u8", "u16", "u32"))
    return tuple(f.name for f in fixed), special


_ENCODERS = {t: _encoder(spec) for t, spec in _SPECS.items()}


def encode_payload(message: Message) -> bytes:
    spec = _SPECS[message.TYPE]
    names, special = _ENCODERS[spec.type]
    values = [getattr(message, n) for n in names]
    for i, kind, name in special:
        values[i] = _to_wire(kind, name, values[i])
    try:
        payload = spec.fixed.pack(*values)
    except struct.error:  # an integer out of its range: say which
        for f, v in zip(spec.fields, values, strict=False):
            _to_wire(f.type, f.name, v)
        raise
    if spec.has_text:
        text = str(getattr(message, spec.fields[-1].name)).encode("utf-8")
        if len(text) > MAX_TEXT:
            raise EncodeError(f"{spec.name}.{spec.fields[-1].name}: {len(text)} bytes of text, at most {MAX_TEXT}")
        payload += text
    if len(payload) > MAX_PAYLOAD:
        raise EncodeError(f"{spec.name}: payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return payload


def encode_raw(version: int, msg_type: int, seq: int, payload: bytes) -> bytes:
    """Frame arbitrary header values and payload (for tests and vectors); length is taken from the payload."""
    body = HEADER.pack(version, msg_type, seq, len(payload)) + payload
    stuffed: bytes = cobs.encode(body + CRC.pack(zlib.crc32(body)))  # the cobs package has no type hints
    return stuffed + DELIMITER


def encode(message: Message, seq: int, version: int = PROTOCOL_VERSION) -> bytes:
    """The complete frame of ``message`` (COBS-encoded, with its trailing 0x00)."""
    if not 0 <= seq <= 0xFF:
        raise EncodeError(f"sequence number {seq} is not in 0..255")
    return encode_raw(version, int(message.TYPE), seq, encode_payload(message))


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC: poly 0x04C11DB7, init 0xFFFFFFFF, refin, refout, xorout 0xFFFFFFFF."""
    return zlib.crc32(data)


# -- decoding --------------------------------------------------------------------------------------------


_TOP = {"card": 51, "pocket": 3, "position": 51}


def _plan(spec: MessageSpec) -> tuple[type[Message], tuple[tuple[int, str], ...]]:
    """The class and the (index, type) of the fixed fields that need more than struct unpacking."""
    fixed = [f for f in spec.fields if f.type != "text"]
    special = tuple(
        (i, f.type) for i, f in enumerate(fixed) if f.type in ("deal_id", "card", "pocket", "position", "str16")
    )
    return MESSAGE_CLASSES[MsgType(spec.type)], special


_PLANS = {t: _plan(spec) for t, spec in _SPECS.items()}


def decode_payload(spec: MessageSpec, payload: bytes) -> Message | str:
    """A typed message, or the reason (a string) why the payload does not fit."""
    fixed = spec.fixed.size
    if len(payload) != fixed and (not spec.has_text or len(payload) < fixed):
        want = f"at least {fixed}" if spec.has_text else str(fixed)
        return f"{spec.name} payload is {len(payload)} bytes, expected {want}"
    cls, special = _PLANS[spec.type]
    values: list[Any] = list(spec.fixed.unpack_from(payload))
    for i, kind in special:
        v = values[i]
        if kind == "deal_id":
            if v == NONE_U32:
                values[i] = None
        elif kind == "str16":
            value, problem = _from_wire(kind, v)
            if problem is not None:
                return f"{spec.name}.{spec.fields[i].name}: {problem}"
            values[i] = value
        elif v == NONE_U8:
            values[i] = None
        elif v > _TOP[kind]:
            return f"{spec.name}.{spec.fields[i].name}: {kind} {v} is not in 0..{_TOP[kind]} or 0xFF"
    if spec.has_text:
        if len(payload) - fixed > MAX_TEXT:
            return f"{spec.name}.{spec.fields[-1].name}: {len(payload) - fixed} bytes of text, at most {MAX_TEXT}"
        try:
            values.append(payload[fixed:].decode("utf-8"))
        except UnicodeDecodeError:
            return f"{spec.name}.{spec.fields[-1].name}: not UTF-8"
    return cls(*values)


def decode_frame(
    encoded: bytes, versions: frozenset[int] = frozenset({PROTOCOL_VERSION}), session_version: int = 1
) -> DecodeEvent:
    """Decode one frame without its delimiter, in the order of PROTOCOL.md §5.1 step 5. Never raises.

    ``session_version`` is the version agreed for the session (1 outside one): frames of the frozen types must
    carry version 1, every other frame this version.
    """
    if len(encoded) > MAX_ENCODED:
        return FrameError(ErrorReason.OVERSIZE, f"{len(encoded)} bytes before a delimiter", encoded)
    try:
        raw: bytes = cobs.decode(encoded)
    except cobs.DecodeError as exc:
        return FrameError(ErrorReason.COBS, str(exc), encoded)
    if len(raw) < HEADER_SIZE + CRC_SIZE:
        return FrameError(ErrorReason.TOO_SHORT, f"{len(raw)} bytes after COBS", encoded)
    body, (crc,) = raw[:-CRC_SIZE], CRC.unpack_from(raw, len(raw) - CRC_SIZE)
    computed = zlib.crc32(body)
    if computed != crc:
        return FrameError(ErrorReason.BAD_CRC, f"CRC {crc:#010x}, computed {computed:#010x}", encoded)
    version, msg_type, seq, length = HEADER.unpack_from(body)
    payload = body[HEADER_SIZE:]
    if length != len(payload):
        return FrameError(
            ErrorReason.BAD_LENGTH,
            f"header says {length} payload bytes, frame has {len(payload)}",
            encoded,
            msg_type,
            seq,
            version,
        )
    wanted = 1 if msg_type in FROZEN_TYPES else session_version
    if version not in versions or version != wanted:
        return FrameError(
            ErrorReason.UNSUPPORTED_VERSION,
            f"header version {version}, expected {wanted}",
            encoded,
            msg_type,
            seq,
            version,
        )
    spec = _SPECS.get(msg_type)
    if spec is None:
        return FrameError(ErrorReason.UNKNOWN_TYPE, f"type {msg_type:#04x}", encoded, msg_type, seq, version)
    decoded = decode_payload(spec, payload)
    if isinstance(decoded, str):
        reason = ErrorReason.BAD_PAYLOAD if "payload is" in decoded else ErrorReason.BAD_FIELD
        return FrameError(reason, decoded, encoded, msg_type, seq, version)
    return Received(version, seq, decoded)


class Decoder:
    """Feed bytes as they arrive; get decode events. Keeps at most one partial frame; never raises."""

    def __init__(self, versions: frozenset[int] = frozenset({PROTOCOL_VERSION})) -> None:
        self.versions = versions
        self.session_version = 1
        self.stats = DecoderStats()
        self._buf = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[DecodeEvent]:
        self.stats.bytes += len(data)
        out: list[DecodeEvent] = []
        parts = bytes(data).split(DELIMITER)
        last = len(parts) - 1
        for i, part in enumerate(parts):
            if i == last:
                if self._discarding:
                    break
                self._buf += part
                if len(self._buf) > MAX_ENCODED:
                    self._error(out, FrameError(ErrorReason.OVERSIZE, "no delimiter within the frame limit", b""))
                    self._buf.clear()
                    self._discarding = True
                break
            if self._discarding:
                self._discarding = False
                continue
            if self._buf:
                self._buf += part
                frame = bytes(self._buf)
                self._buf.clear()
            else:
                frame = part
            if not frame:
                continue  # back-to-back delimiters: idle fill
            event = decode_frame(frame, self.versions, self.session_version)
            if isinstance(event, FrameError):
                self._error(out, event)
            else:
                self.stats.frames += 1
                out.append(event)
        return out

    def _error(self, out: list[DecodeEvent], event: FrameError) -> None:
        self.stats.errors[event.reason] += 1
        out.append(event)
