"""Rivest's SHA-256 pseudo-random sampler (2011), as used in election audits.

The k-th pick (k = 1, 2, ...) is ``1 + int(SHA-256(seed + "," + str(k))) mod total``, the hash read as a
big-endian integer; ``seed`` is a text string. Without replacement, repeats are skipped and counting goes on.
Matches Rivest's reference ``sampler.py`` and the vectors of cjerdonek/rivest-sampler-tests.
"""

from __future__ import annotations

from hashlib import sha256


def pick(seed: str, k: int, total: int) -> int:
    return 1 + int.from_bytes(sha256(f"{seed},{k}".encode()).digest(), "big") % total


def sample_with_replacement(seed: str, total: int, count: int) -> list[int]:
    if total < 1:
        raise ValueError(f"cannot sample from {total} items")
    return [pick(seed, k, total) for k in range(1, count + 1)]


def sample_without_replacement(seed: str, total: int, count: int) -> list[int]:
    """``count`` distinct numbers in 1..total, in the order the sampler picks them."""
    if not 0 <= count <= total:
        raise ValueError(f"cannot pick {count} distinct items out of {total}")
    chosen: list[int] = []
    seen: set[int] = set()
    prefix = f"{seed},"
    k = 0
    while len(chosen) < count:
        k += 1
        p = 1 + int.from_bytes(sha256(f"{prefix}{k}".encode()).digest(), "big") % total
        if p not in seen:
            seen.add(p)
            chosen.append(p)
    return chosen
