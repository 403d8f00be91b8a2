"""Scoring the scanner on a virtual camera's stream against what the camera really showed.

Every event is put down to the shown item in view at its first frame. Per card shown: right, misread (the
first event names another card), unreadable (the first event is unreadable), missed (no event at all); events
beyond the first for one card are extra. Used by the scanner bench and the tests of misses.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dealer.core.cards import Card
from dealer.core.events import DeviceFault

from .calibration import Calibration
from .scanner import CameraScanner
from .sources import Frame
from .virtual import VirtualCamera


@dataclass(slots=True)
class StreamScore:
    cards: int = 0
    right: int = 0
    misread: list[str] = field(default_factory=list)
    unreadable: int = 0
    missed: list[str] = field(default_factory=list)
    extra: int = 0
    faults: int = 0  # back-where-a-face-was-expected faults (counted with the item in view)
    frames: int = 0
    seconds: float = 0.0  # recognition, wall clock
    cpu: float = 0.0  # recognition, this thread's CPU time

    def add(self, other: StreamScore) -> None:
        self.cards += other.cards
        self.right += other.right
        self.misread += other.misread
        self.unreadable += other.unreadable
        self.missed += other.missed
        self.extra += other.extra
        self.faults += other.faults
        self.frames += other.frames
        self.seconds += other.seconds
        self.cpu += other.cpu


class _Tagged:
    """A frame source that remembers which shown item each frame belongs to."""

    still = False

    def __init__(self, cam: VirtualCamera) -> None:
        self.cam = cam
        self.name = cam.name
        self.item_of: dict[int, int] = {}

    def frames(self) -> Iterator[Frame]:
        for frame in self.cam.frames():
            self.item_of[frame.number] = len(self.cam.shown) - 1
            yield frame

    def close(self) -> None:
        pass


def score_stream(calibration: Calibration, cam: VirtualCamera, score: StreamScore) -> None:
    """Scan ``cam``'s whole stream and add what happened to each shown card to ``score``."""
    source = _Tagged(cam)
    scanner = CameraScanner(source, calibration)
    events: dict[int, list[Card | None]] = {}
    for event in scanner.events():
        if isinstance(event, DeviceFault):  # a back where a face was expected: for a face, as good as unreadable
            frame = round(event.timestamp * cam.fps)  # the virtual camera's clock: frame number / fps
            events.setdefault(source.item_of.get(frame, -1), []).append(None)
            score.faults += 1
            continue
        frame = event.frame if event.frame is not None else -1
        events.setdefault(source.item_of.get(frame, -1), []).append(event.card)
    score.frames += scanner.stats.frames
    score.seconds += scanner.stats.seconds
    score.cpu += scanner.stats.cpu_seconds
    for index, item in enumerate(cam.shown):
        if not isinstance(item, Card):
            continue
        score.cards += 1
        got = events.get(index, [])
        score.extra += max(0, len(got) - 1)
        if not got:
            how = ", back to back" if cam.laid_on[index] else ""
            score.missed.append(f"{item.code} (rest {cam.rests[index]} frames{how})")
        elif got[0] is None:
            score.unreadable += 1
        elif got[0] == item:
            score.right += 1
        else:
            score.misread.append(f"{item.code} read as {got[0].code}")
