"""Shufflers that produce deals with their dealing order: a fair CSPRNG shuffle and weak riffle shuffles.

A shuffler yields one deal at a time; the deck it shuffled is dealt one card at a time clockwise from North
(card t of the deck goes to seat t mod 4), so the dealing order is the shuffled deck.

``GsrShuffler`` models a person or a machine that collects the previous deal's four hands hand by hand (North's
pocket, then East's, South's, West's; each pocket in the order its cards were dealt into it) and gives the pack
k Gilbert–Shannon–Reeds riffles: cut at Binomial(52, 1/2), then drop cards from either packet with probability
proportional to its size (equivalently: every one of the C(52, c) interleavings equally likely).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from dealer.core import Deal
from dealer.core.errors import DealerError

DECK = 52
_KEY_BYTES = 8 * DECK


class ShufflerSpecError(DealerError, ValueError):
    pass


class Shuffler(Protocol):
    name: str

    def next_order(self) -> NDArray[np.int64]:
        """The next shuffled deck: 52 card indices in the order they will be dealt."""
        ...


def deal_from_order(order: NDArray[np.int64] | list[int] | tuple[int, ...]) -> Deal:
    """Deal the deck one card at a time clockwise from North."""
    seats = bytearray(DECK)
    for t, card in enumerate(order):
        seats[int(card)] = t % 4
    return Deal(bytes(seats))


def seats_from_orders(orders: NDArray[np.int64]) -> NDArray[np.int64]:
    """(n, 52) seat of each card for decks dealt clockwise from North."""
    seats = np.empty_like(orders)
    np.put_along_axis(seats, orders, np.broadcast_to(np.arange(DECK) % 4, orders.shape), axis=1)
    return seats


class FairShuffler:
    """A uniform shuffle from a cryptographic generator.

    Each deck sorts 52 random 64-bit keys; the keys come from ``os.urandom`` or, when a seed is given (tests,
    reproducible demonstrations), from SHAKE-256(seed ‖ counter), an extendable-output hash used as a DRBG.
    A tie between two keys has probability below 2⁻⁵³ and is broken by card index.
    """

    def __init__(self, seed: bytes | None = None) -> None:
        self.name = "fair"
        self._seed = seed
        self._counter = 0

    def _keys(self, count: int) -> NDArray[np.uint64]:
        if self._seed is None:
            raw = os.urandom(_KEY_BYTES * count)
        else:
            xof = hashlib.shake_256(self._seed + b"|" + self._counter.to_bytes(8, "big"))
            raw = xof.digest(_KEY_BYTES * count)
        self._counter += 1
        return np.frombuffer(raw, dtype=">u8").astype(np.uint64).reshape(count, DECK)

    def orders(self, count: int) -> NDArray[np.int64]:
        """``count`` independent shuffled decks at once, (count, 52)."""
        decks: NDArray[np.int64] = np.argsort(self._keys(count), axis=1, kind="stable").astype(np.int64)
        return decks

    def next_order(self) -> NDArray[np.int64]:
        deck: NDArray[np.int64] = self.orders(1)[0]
        return deck


def gsr_riffle(deck: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.int64]:
    """One Gilbert–Shannon–Reeds riffle of ``deck``."""
    from_right = rng.integers(0, 2, size=deck.size).astype(bool)
    cut = deck.size - int(from_right.sum())
    out = np.empty_like(deck)
    out[~from_right] = deck[:cut]
    out[from_right] = deck[cut:]
    return out


def collect_hands(order: NDArray[np.int64]) -> NDArray[np.int64]:
    """The pack after the pockets of a clockwise deal are picked up hand by hand: N's cards, then E, S, W."""
    return np.concatenate([order[s::4] for s in range(4)])


class GsrShuffler:
    """k riffles of the previous deal's collected hands (a weak shuffle), starting from a new pack (♠A … ♣2)."""

    def __init__(self, riffles: int, seed: int | None = None) -> None:
        if riffles < 0:
            raise ShufflerSpecError("number of riffles must be 0 or more, got {riffles}", riffles=riffles)
        self.riffles = riffles
        self.name = f"gsr:{riffles}"
        self._rng = np.random.default_rng(seed)
        self._last: NDArray[np.int64] | None = None

    def next_order(self) -> NDArray[np.int64]:
        deck = np.arange(DECK, dtype=np.int64) if self._last is None else collect_hands(self._last)
        for _ in range(self.riffles):
            deck = gsr_riffle(deck, self._rng)
        self._last = deck
        return deck

    def orders(self, count: int) -> NDArray[np.int64]:
        return np.stack([self.next_order() for _ in range(count)]) if count else np.zeros((0, DECK), np.int64)


_SPEC = re.compile(r"^(?:(fair)(?::([0-9a-fA-F]+))?|gsr:(\d+)(?::(\d+))?)$")


def parse_shuffler(spec: str) -> FairShuffler | GsrShuffler:
    """``fair``, ``fair:<hex seed>``, ``gsr:K`` or ``gsr:K:<seed>`` (K riffles of the collected hands)."""
    match = _SPEC.match(spec.strip())
    if not match:
        raise ShufflerSpecError(
            "unknown shuffler {spec!r}: expected fair, fair:<hex seed>, gsr:K or gsr:K:<seed>", spec=spec
        )
    if match.group(1):
        seed = bytes.fromhex(match.group(2)) if match.group(2) and len(match.group(2)) % 2 == 0 else None
        if match.group(2) and seed is None:
            raise ShufflerSpecError("shuffler {spec!r}: the seed must be an even number of hex digits", spec=spec)
        return FairShuffler(seed)
    riffles = int(match.group(3))
    if riffles > 64:
        raise ShufflerSpecError("shuffler {spec!r}: at most 64 riffles (7 already mix a pack well)", spec=spec)
    return GsrShuffler(riffles, int(match.group(4)) if match.group(4) else None)


def simulator_shuffler(spec: str) -> Callable[[Sequence[int]], list[int]]:
    """A shuffler for the virtual dealing machine (``drivers.simulator``: cards in, feed order out).

    ``fair`` or ``gsr:K``: with ``gsr:K`` each call riffles the pack of the previous call, collected hand by hand
    as the machine dealt it (card i of the feed into pocket i mod 4), so a judge can watch the audit catch it.
    """
    shuffler = parse_shuffler(spec)

    def shuffle(cards: Sequence[int]) -> list[int]:
        pack = list(cards)
        if len(pack) != DECK:
            raise ShufflerSpecError(
                "a shuffler deals a full pack of {DECK} cards, got {n_pack}", DECK=DECK, n_pack=len(pack)
            )
        return [pack[int(i)] for i in shuffler.next_order()]

    return shuffle
