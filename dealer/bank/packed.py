"""The packed form of an imported batch (bank format 3): one value holding every deal of the batch. Pure, no I/O.

    varint(n) ‖ canonical deals (13 bytes ·n) ‖ salts (16 bytes ·n) ‖ sources (3 varints ·n)

A varint is unsigned LEB128 (7 bits a byte, low bits first, the high bit set on every byte but the last; no
needless trailing zero bytes). A deal's source is ``F, B, L``: its file's position in the batch's ``files``; its
board + 1 (0: unknown); its line as ``zigzag(line - previous line) + 1`` (0: unknown), the previous line being
the last known line before it in the batch (0 at the start), so the lines of a file, which climb by a few dozen
a board, take a byte or two. The deals' ledger entries are rebuilt from this (``compact.expand``), so what the
bank proves of them is what it proved of the format-2 rows: only the storage differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .errors import BankError

CARDS = 13  # bytes of a canonical deal
SALT = 16  # bytes of a deal's salt

Source = tuple[int, int | None, int | None]  # file position, board, line


class Unpacked(NamedTuple):
    cards: list[bytes]
    salts: list[bytes]
    sources: list[Source]


def _varint(value: int, out: bytearray) -> None:
    if value < 0:
        raise BankError("a packed batch holds no negative number ({value})", value=value)
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(blob: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    start = at
    while True:
        if at >= len(blob):
            raise BankError("packed batch: a number at byte {at} runs past the end", at=start)
        byte = blob[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if byte == 0 and at - start > 1:
                raise BankError("packed batch: the number at byte {at} is not in its shortest form", at=start)
            return value, at
        shift += 7


def pack(cards: Sequence[bytes], salts: Sequence[bytes], sources: Sequence[Source]) -> bytes:
    """The packed batch of these deals (each list in deal order, one item a deal)."""
    n = len(cards)
    if len(salts) != n or len(sources) != n:
        raise BankError(
            "packed batch: deals {n}, salts {salts}, sources {sources}", n=n, salts=len(salts), sources=len(sources)
        )
    if any(len(c) != CARDS for c in cards) or any(len(s) != SALT for s in salts):
        raise BankError("packed batch: a deal is not {cards} bytes or a salt not {salt}", cards=CARDS, salt=SALT)
    out = bytearray()
    _varint(n, out)
    out += b"".join(cards)
    out += b"".join(salts)
    previous = 0
    for position, board, line in sources:
        _varint(position, out)
        _varint(0 if board is None else board + 1, out)
        if line is None:
            out.append(0)
        else:
            delta = line - previous
            _varint((delta << 1 if delta >= 0 else (-delta << 1) - 1) + 1, out)
            previous = line
    return bytes(out)


def count(blob: bytes) -> int:
    """How many deals a packed batch holds (read from its head only)."""
    return _read_varint(blob, 0)[0]


def cards_of(blob: bytes) -> bytes:
    """The batch's canonical deals, 13 bytes each, as one run (for finding a deal without decoding the rest)."""
    n, at = _read_varint(blob, 0)
    return blob[at : at + CARDS * n]


def unpack(blob: bytes) -> Unpacked:
    """The deals, salts and sources of a packed batch; ``BankError`` unless ``blob`` is exactly one."""
    blob = bytes(blob)
    n, at = _read_varint(blob, 0)
    end_salts = at + (CARDS + SALT) * n
    if len(blob) < end_salts + 3 * n:
        raise BankError("packed batch: too short for its deals ({n}): bytes {size}", n=n, size=len(blob))
    cards = [blob[k : k + CARDS] for k in range(at, at + CARDS * n, CARDS)]
    salts = [blob[k : k + SALT] for k in range(at + CARDS * n, end_salts, SALT)]
    sources: list[Source] = []
    at = end_salts
    previous = 0
    for _ in range(n):
        position, at = _read_varint(blob, at)
        board, at = _read_varint(blob, at)
        code, at = _read_varint(blob, at)
        line: int | None = None
        if code:
            zig = code - 1
            line = previous + (zig >> 1 if not zig & 1 else -((zig + 1) >> 1))
            if line < 0:
                raise BankError("packed batch: a deal's line is negative ({line})", line=line)
            previous = line
        sources.append((position, None if board == 0 else board - 1, line))
    if at != len(blob):
        raise BankError("packed batch: bytes after its last deal: {extra}", extra=len(blob) - at)
    return Unpacked(cards, salts, sources)
