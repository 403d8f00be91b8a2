"""The scanner on decks of other index layouts (#31), and on cards lying against a frame edge beside a glare.

Deck styles: the three the scanner was developed and measured on (rank above suit) and the decks of
:mod:`drivers.camera.layoutdeck`: the rank beside the suit in four colours (indices in four corners), a jumbo
index (two colours, four corners), and a low-contrast print (grey-ish ink on grey stock). Each is calibrated on
one pass of its own sorted deck, then shuffled decks are shown by the virtual camera at two levels: ``hard``
(the #17 level: scale 0.6-1.3, glare beside the index, cards back to back) and ``edge`` (every card lying 0-6
pixels from a frame edge, a glare spot between it and the edge or beside its index). Counted per style and
level: misreads, unreadable events, cards with no event, extra events. Target: 0 misreads, unreadable + no event
<= 0.5% in every style.

``python -m bench.bench_layouts [--decks N]`` prints the table; ``make bench`` runs it with 20 decks.
"""

from __future__ import annotations

import sys
import time
import zlib
from typing import Any

import cv2
import numpy as np

from dealer.core.cards import ALL_CARDS
from drivers.camera import calibrate
from drivers.camera.blas import single_thread_blas
from drivers.camera.streamscore import StreamScore, score_stream
from drivers.camera.virtual import LEVELS, VirtualCamera, named_deck

STYLES = (
    "synthetic-4c-en",
    "print-4c-en",
    "print-2c-fr",
    "layout-beside-4c",
    "layout-jumbo-2c",
    "layout-above-4c-low",
)
SCENES = ("hard", "edge")


def run_style(style: str, scene: str, decks: int, seed0: int = 0) -> StreamScore:
    deck = named_deck(style)
    cal_cam = VirtualCamera(deck, list(ALL_CARDS), LEVELS["calibration"], seed=1, hold=4, slide=2, gap=1)
    cal = calibrate(cal_cam.frames(), deck=deck.name)
    score = StreamScore()
    for k in range(decks):
        seed = zlib.crc32(f"{deck.name}/{scene}/{seed0 + k}".encode()) % 100_000
        order = [ALL_CARDS[i] for i in np.random.default_rng(seed).permutation(52)]
        cam = VirtualCamera(deck, order, LEVELS[scene], seed=seed, hold=(3, 8), slide=3, gap=2)
        score_stream(cal, cam, score)
    return score


def run(quick: bool = False, decks: int | None = None) -> list[dict[str, Any]]:
    cv2.setNumThreads(1)
    single_thread_blas()
    n = decks or (1 if quick else 20)
    rows: list[dict[str, Any]] = []
    for style in STYLES:
        for scene in SCENES:
            start = time.perf_counter()
            s = run_style(style, scene, n)
            label = f"layouts {style}, {scene}"
            rows += [
                {
                    "name": f"{label}: misread",
                    "value": len(s.misread),
                    "unit": f"of {s.cards}",
                    "target": "<= 0",
                    "note": "; ".join(s.misread[:4]),
                },
                {"name": f"{label}: unreadable", "value": s.unreadable, "unit": f"of {s.cards}"},
                {
                    "name": f"{label}: no event",
                    "value": len(s.missed),
                    "unit": f"of {s.cards}",
                    "note": "; ".join(s.missed[:3]),
                },
                {
                    "name": f"{label}: unreadable + no event",
                    "value": round(100 * (s.unreadable + len(s.missed)) / max(1, s.cards), 3),
                    "unit": "%",
                    "target": "<= 0.5",
                },
                {
                    "name": f"{label}: extra events",
                    "value": s.extra,
                    "unit": "events",
                    "note": f"{n} decks, {s.frames} frames, {1000 * s.cpu / max(1, s.frames):.2f} ms CPU/frame, "
                    f"{time.perf_counter() - start:.0f} s",
                },
            ]
    return rows


if __name__ == "__main__":
    count = int(sys.argv[sys.argv.index("--decks") + 1]) if "--decks" in sys.argv else 3
    for row in run(decks=count):
        print(f"{row['name']:50} {row['value']!s:>7} {row['unit']:9} {row.get('note', '')}", flush=True)
