"""RFC 6962 Merkle trees over ledger entries: root, inclusion (audit) paths and their verification.

Leaf hash = SHA-256(0x00 ‖ entry bytes); node hash = SHA-256(0x01 ‖ left ‖ right). Building level by level
and promoting an unpaired last node unchanged gives exactly RFC 6962's MTH for any number of leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256

EMPTY_ROOT = sha256(b"").digest()


def leaf_hash(entry: bytes) -> bytes:
    return sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right).digest()


def _next_level(level: Sequence[bytes]) -> list[bytes]:
    nxt = [sha256(b"\x01" + level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
    if len(level) % 2:
        nxt.append(level[-1])
    return nxt


def tree_levels(leaves: Sequence[bytes]) -> list[list[bytes]]:
    """All levels of the tree, leaves first, the root level (one hash) last."""
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        levels.append(_next_level(levels[-1]))
    return levels


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    if not leaves:
        return EMPTY_ROOT
    level = list(leaves)
    while len(level) > 1:
        level = _next_level(level)
    return level[0]


def audit_path(levels: Sequence[Sequence[bytes]], index: int) -> list[bytes]:
    """The inclusion proof of leaf ``index`` (RFC 6962 PATH), from ``tree_levels``."""
    if not 0 <= index < len(levels[0]):
        raise IndexError(f"leaf {index} is outside a tree of {len(levels[0])} leaves")
    path = []
    for level in levels[:-1]:
        sibling = index ^ 1
        if sibling < len(level):
            path.append(level[sibling])
        index //= 2
    return path


def verify_inclusion(leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes) -> bool:
    """RFC 9162 §2.1.3.2: does ``path`` prove leaf number ``index`` is in the tree of ``size`` leaves with ``root``?"""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root
