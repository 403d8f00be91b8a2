"""One runner for the service's long jobs (board making, hand records).

A job is started under a (kind, key) slot, runs as one asyncio task, and always ends in a final state: ``done``,
``failed`` with its reason (whatever went wrong: a bad device URL, a dead machine, a full disk, a bug), or
``stopped`` when cancelled. A slot is busy only while its job is running, so a failed job never blocks the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from dealer.core.errors import DealerError

log = logging.getLogger("dealer.jobs")

P = TypeVar("P")


class JobState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"  # made in an earlier run of the service (what its journal says is finished)


class JobBusy(DealerError):
    """A job of this kind and key is still running."""


@dataclass(eq=False)
class Job(Generic[P]):
    kind: str
    key: str
    progress: P
    state: JobState = JobState.RUNNING
    error: str | None = None
    exception: BaseException | None = None
    task: asyncio.Task[None] | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait(self) -> None:
        await self.finished.wait()


class JobRunner:
    def __init__(self) -> None:
        # Any: jobs of different progress types share one table; start() hands each caller its own Job[P]
        self._jobs: dict[tuple[str, str], Job[Any]] = {}

    def get(self, kind: str, key: str) -> Job[Any] | None:  # Any: one table for every progress type
        return self._jobs.get((kind, key))

    def running(self, kind: str, key: str) -> Job[Any] | None:  # Any: one table for every progress type
        job = self.get(kind, key)
        return job if job is not None and job.state is JobState.RUNNING else None

    def start(
        self,
        kind: str,
        key: str,
        progress: P,
        work: Callable[[Job[P]], Awaitable[None]],
        on_end: Callable[[Job[P]], None] | None = None,
    ) -> Job[P]:
        """Start ``work(job)`` in the slot (kind, key); ``JobBusy`` while a job of that slot is running.
        ``on_end(job)`` is called once the job has its final state."""
        if self.running(kind, key) is not None:
            raise JobBusy("{kind} of {key!r} is already running", kind=kind, key=key)
        job: Job[P] = Job(kind, key, progress)
        self._jobs[(kind, key)] = job
        job.task = asyncio.create_task(self._run(job, work, on_end), name=f"{kind}-{key}")
        return job

    async def _run(
        self, job: Job[P], work: Callable[[Job[P]], Awaitable[None]], on_end: Callable[[Job[P]], None] | None
    ) -> None:
        try:
            await work(job)
            job.state = JobState.DONE
        except asyncio.CancelledError:
            job.state = JobState.STOPPED
            job.error = "stopped"
        except Exception as exc:  # any reason at all: the job ends failed, with the reason, and frees its slot
            log.warning("%s of %s failed: %s", job.kind, job.key, exc, exc_info=not isinstance(exc, DealerError))
            job.state = JobState.FAILED
            job.error = str(exc) or type(exc).__name__
            job.exception = exc
        except BaseException as exc:  # the process is ending (SystemExit, KeyboardInterrupt): still not "running"
            job.state = JobState.FAILED
            job.error = type(exc).__name__
            raise
        finally:
            job.finished.set()
            if on_end is not None:
                with contextlib.suppress(Exception):
                    on_end(job)

    async def shutdown(self) -> None:
        tasks = [j.task for j in self._jobs.values() if j.task is not None and not j.task.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
