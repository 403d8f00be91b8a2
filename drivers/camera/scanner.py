"""The camera scanner: a frame source, a calibration and the tracker, yielding ``CardSeen`` events."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from dealer.core.events import CardSeen, DeviceFault

from .calibration import Calibration
from .recognise import Recogniser
from .sources import FrameSource
from .tracker import CardTracker, TrackerSettings


@dataclass(slots=True)
class ScanStats:
    frames: int = 0
    cards: int = 0
    unreadable: int = 0
    seconds: float = 0.0  # time spent recognising (wall clock)
    cpu_seconds: float = 0.0  # the same, this thread's CPU time (not inflated by waiting for a busy core)
    faults: int = 0  # backs (or foreign cards face down) where a face was expected
    last_seen: dict[str, int] = field(default_factory=dict)

    @property
    def ms_per_frame(self) -> float:
        return 1000.0 * self.seconds / self.frames if self.frames else 0.0


class CameraScanner:
    """Reads cards from ``source``; manual dealing: no pocket, positions count the cards in dealing order."""

    def __init__(
        self,
        source: FrameSource,
        calibration: Calibration,
        *,
        deal_id: int = 0,
        settings: TrackerSettings | None = None,
    ) -> None:
        self.source = source
        self.recogniser = Recogniser(calibration)
        default = TrackerSettings.for_stills() if source.still else TrackerSettings()
        self.tracker = CardTracker(deal_id, settings or default, self.recogniser.decide)
        self.stats = ScanStats()

    def events(self) -> Iterator[CardSeen | DeviceFault]:
        """Card events in dealing order, and a fault for a back (or a foreign card face down) lying in view."""
        for frame in self.source.frames():
            start, cpu = time.perf_counter(), time.thread_time()
            reading = self.recogniser.read(frame.image)
            self.stats.seconds += time.perf_counter() - start
            self.stats.cpu_seconds += time.thread_time() - cpu
            self.stats.frames += 1
            self.stats.last_seen[reading.seen.value] = frame.number
            yield from self._count(self.tracker.feed(reading, frame.timestamp, frame.number))
        yield from self._count(self.tracker.finish())

    def _count(self, events: list[CardSeen | DeviceFault]) -> Iterator[CardSeen | DeviceFault]:
        for event in events:
            if isinstance(event, DeviceFault):
                self.stats.faults += 1
            elif event.card is None:
                self.stats.unreadable += 1
            else:
                self.stats.cards += 1
            yield event
