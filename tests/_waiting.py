"""Waiting on progress, not on wall time: a wait fails only when nothing has moved for a while.

On a loaded machine (another job keeping both cores busy) the work a test waits for takes several times
longer, but it keeps moving. ``progress`` returns anything comparable (a count, a tuple of states); while it
changes the wait goes on, and it fails only after ``stall`` seconds without any change — a stuck job, not a
slow one. The stall allowance itself scales with ``DEALER_TEST_STALL_FACTOR`` (default 1).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
STALL_FACTOR = float(os.environ.get("DEALER_TEST_STALL_FACTOR", "1"))


class Stalled(AssertionError):
    pass


def wait_progress(
    done: Callable[[], T], progress: Callable[[], object], what: str, stall: float = 60.0, interval: float = 0.05
) -> T:
    """Poll ``done()`` until it is truthy; fail if ``progress()`` stays the same for ``stall`` seconds."""
    limit = stall * STALL_FACTOR
    mark, since = progress(), time.monotonic()
    while True:
        value = done()
        if value:
            return value
        now_mark = progress()
        if now_mark != mark:
            mark, since = now_mark, time.monotonic()
        elif time.monotonic() - since > limit:
            raise Stalled(f"no progress for {limit:.0f} s waiting for {what} (last progress: {mark!r})")
        time.sleep(interval)


async def wait_progress_async(
    done: Callable[[], Awaitable[T]],
    progress: Callable[[], Awaitable[object]],
    what: str,
    stall: float = 60.0,
    interval: float = 0.1,
) -> T:
    """``wait_progress`` for coroutines: ``done`` and ``progress`` are awaited on each poll."""
    limit = stall * STALL_FACTOR
    mark, since = await progress(), time.monotonic()
    while True:
        value = await done()
        if value:
            return value
        now_mark = await progress()
        if now_mark != mark:
            mark, since = now_mark, time.monotonic()
        elif time.monotonic() - since > limit:
            raise Stalled(f"no progress for {limit:.0f} s waiting for {what} (last progress: {mark!r})")
        await asyncio.sleep(interval)
