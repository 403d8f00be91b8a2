"""The bank on its own thread: SQLite connections stay on the thread that made them, and a commit's fsync
never blocks the event loop."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from dealer.bank.repository import BankRepository

T = TypeVar("T")
P = ParamSpec("P")


class BankWorker:
    def __init__(self, factory: Callable[[], BankRepository]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bank")
        self.bank: BankRepository = self._executor.submit(factory).result()

    async def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``fn(*args, **kwargs)`` on the bank's thread, in a copy of the caller's context (so a request's
        ``dealer.custody.withheld`` goes with it); the arguments are checked against ``fn``."""
        loop = asyncio.get_running_loop()
        step = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await loop.run_in_executor(self._executor, step)

    def call_sync(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._executor.submit(fn, *args, **kwargs).result()

    def close(self) -> None:
        self._executor.submit(self.bank.close).result()
        self._executor.shutdown(wait=True)
