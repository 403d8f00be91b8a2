"""Domain core: PBN parse/format, canonical bytes, Big Deal numbering."""

from __future__ import annotations

import secrets
import time
from typing import Any

from dealer.core import Deal


def _random_deal() -> Deal:
    order = list(range(52))
    for i in range(51, 0, -1):
        j = secrets.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    seats = bytearray(52)
    for position, card in enumerate(order):
        seats[card] = position // 13
    return Deal(bytes(seats))


def _rate(n: int, fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def run(quick: bool = False) -> list[dict[str, Any]]:
    n = 2_000 if quick else 20_000
    deals = [_random_deal() for _ in range(n)]
    texts = [d.to_pbn() for d in deals]
    blobs = [d.to_bytes() for d in deals]
    numbers = [d.rank() for d in deals[: n // 4]]
    return [
        {"name": "PBN deal parse", "value": _rate(n, lambda: [Deal.from_pbn(t) for t in texts]), "unit": "deals/s"},
        {"name": "PBN deal format", "value": _rate(n, lambda: [d.to_pbn() for d in deals]), "unit": "deals/s"},
        {"name": "13-byte encode", "value": _rate(n, lambda: [d.to_bytes() for d in deals]), "unit": "deals/s"},
        {"name": "13-byte decode", "value": _rate(n, lambda: [Deal.from_bytes(b) for b in blobs]), "unit": "deals/s"},
        {
            "name": "deal -> number",
            "value": _rate(n // 4, lambda: [d.rank() for d in deals[: n // 4]]),
            "unit": "deals/s",
        },
        {
            "name": "number -> deal",
            "value": _rate(n // 4, lambda: [Deal.from_rank(x) for x in numbers]),
            "unit": "deals/s",
        },
    ]
