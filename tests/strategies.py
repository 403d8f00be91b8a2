"""Hypothesis strategies shared by the test suite."""

from __future__ import annotations

from hypothesis import strategies as st

from dealer.core import Deal, Seat


@st.composite
def deals(draw: st.DrawFn) -> Deal:
    order = draw(st.permutations(list(range(52))))
    seats = bytearray(52)
    for position, card in enumerate(order):
        seats[card] = position // 13
    return Deal(bytes(seats))


seats = st.sampled_from(list(Seat))
