"""Helpers shared by the bank and draw tests."""

from __future__ import annotations

import random

from dealer.bank.api import DealSource
from dealer.bank.repository import BankRepository
from dealer.core import Deal


def random_deal(rng: random.Random) -> Deal:
    cards = list(range(52))
    rng.shuffle(cards)
    seats = bytearray(52)
    for position, card in enumerate(cards):
        seats[card] = position // 13
    return Deal(bytes(seats))


def station_source(shown: int = 30) -> DealSource:
    return DealSource("station", station="T1", variant=2, shown_cards=shown, dealing_order=bytes(range(52)))


def fill(bank: BankRepository, n: int, seed: int = 1) -> list[int]:
    rng = random.Random(seed)
    return [bank.commit_deal(random_deal(rng), station_source()).deal_id for _ in range(n)]
