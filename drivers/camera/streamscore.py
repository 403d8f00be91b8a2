"""Scoring the scanner on a virtual camera's stream against what the camera really showed.

Every event is put down to the shown item in view at its first frame. Per card shown: right, misread (the
first event names another card), unreadable (the first event is unreadable), missed (no event at all); events
beyond the first for one card are extra. Used by the scanner bench and the tests of misses.

:func:`score_style` is the measurement of #31: one deck style calibrated once on its own sorted pass, then
shuffled decks at one scene level, as ``make bench`` (bench/bench_layouts.py) and the slow soak run it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from dealer.core.cards import ALL_CARDS, Card
from dealer.core.events import DeviceFault

from .calibration import Calibration, calibrate
from .scanner import CameraScanner
from .sources import Frame
from .virtual import LEVELS, VirtualCamera, named_deck

# The deck styles measured (#31): the three the scanner was developed on (rank above suit, two corners) and the
# decks of other layouts drawn in layoutdeck.py; the scenes: virtual camera levels
STYLES = (
    "synthetic-4c-en",
    "print-4c-en",
    "print-2c-fr",
    "layout-beside-4c",
    "layout-jumbo-2c",
    "layout-above-4c-low",
)
SCENES = ("hard", "edge")


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


def style_calibration(style: str) -> Calibration:
    """The style's calibration from one pass of its sorted deck, as the judge makes it."""
    deck = named_deck(style)
    cam = VirtualCamera(deck, list(ALL_CARDS), LEVELS["calibration"], seed=1, hold=4, slide=2, gap=1)
    return calibrate(cam.frames(), deck=deck.name)


def score_style(style: str, scene: str, decks: int, calibration: Calibration | None = None) -> StreamScore:
    """``decks`` shuffled decks of ``style`` at the virtual camera's ``scene`` level (3-8 still frames a card),
    read with the style's calibration; the same decks for the same arguments."""
    deck = named_deck(style)
    cal = calibration or style_calibration(style)
    score = StreamScore()
    for k in range(decks):
        seed = zlib.crc32(f"{deck.name}/{scene}/{k}".encode()) % 100_000
        order = [ALL_CARDS[i] for i in np.random.default_rng(seed).permutation(52)]
        cam = VirtualCamera(deck, order, LEVELS[scene], seed=seed, hold=(3, 8), slide=3, gap=2)
        score_stream(cal, cam, score)
    return score
