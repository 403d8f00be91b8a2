"""The canonical 13-byte deal record on the wire (DESIGN §3): 2 bits a card, card 0 in the top bits of byte 0.

Unlike :class:`dealer.core.Deal` these helpers accept any pocket counts, because a faulty machine's record
(a card in the wrong pocket) is still a record that must be read and compared.
"""

from __future__ import annotations

from collections.abc import Sequence

RECORD_SIZE = 13


def pack_seats(seats: Sequence[int]) -> bytes:
    """52 pockets (0..3), card index order → 13 bytes."""
    if len(seats) != 52 or any(not 0 <= s <= 3 for s in seats):
        raise ValueError(f"need 52 pockets in 0..3, got {len(seats)} values")
    out = bytearray(RECORD_SIZE)
    for i, s in enumerate(seats):
        out[i >> 2] |= s << (6 - 2 * (i & 3))
    return bytes(out)


def unpack_seats(record: bytes) -> bytes:
    """13 bytes → the pocket (0..3) of each of the 52 cards."""
    if len(record) != RECORD_SIZE:
        raise ValueError(f"a deal record is {RECORD_SIZE} bytes, got {len(record)}")
    return bytes((record[i >> 2] >> (6 - 2 * (i & 3))) & 3 for i in range(52))
