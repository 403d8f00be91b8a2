"""RFC 6962 Merkle trees: the level-wise root equals the recursive MTH; every audit path verifies."""

from __future__ import annotations

from hashlib import sha256

from hypothesis import given, settings
from hypothesis import strategies as st

from dealer.integrity.merkle import (
    EMPTY_ROOT,
    audit_path,
    leaf_hash,
    merkle_root,
    node_hash,
    tree_levels,
    verify_inclusion,
)


def mth(entries: list[bytes]) -> bytes:
    """RFC 6962 §2.1, written recursively as the RFC states it."""
    n = len(entries)
    if n == 0:
        return sha256(b"").digest()
    if n == 1:
        return sha256(b"\x00" + entries[0]).digest()
    k = 1
    while k * 2 < n:
        k *= 2
    return sha256(b"\x01" + mth(entries[:k]) + mth(entries[k:])).digest()


def test_known_small_trees() -> None:
    a, b, c = b"a", b"b", b"c"
    assert merkle_root([]) == EMPTY_ROOT
    assert merkle_root([leaf_hash(a)]) == sha256(b"\x00a").digest()
    ab = node_hash(leaf_hash(a), leaf_hash(b))
    assert merkle_root([leaf_hash(x) for x in (a, b, c)]) == node_hash(ab, leaf_hash(c))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=8), min_size=1, max_size=70, unique=True))
def test_root_matches_rfc_and_every_path_verifies(entries: list[bytes]) -> None:
    leaves = [leaf_hash(e) for e in entries]
    root = merkle_root(leaves)
    assert root == mth(entries)
    levels = tree_levels(leaves)
    for i, leaf in enumerate(leaves):
        path = audit_path(levels, i)
        assert verify_inclusion(leaf, i, len(leaves), path, root)
        assert not verify_inclusion(sha256(leaf).digest(), i, len(leaves), path, root)
        if len(leaves) > 1:
            assert not verify_inclusion(leaf, (i + 1) % len(leaves), len(leaves), path, root)
