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
from typing import Any

import cv2

from drivers.camera.blas import single_thread_blas
from drivers.camera.streamscore import SCENES, STYLES, score_style, style_calibration


def run(quick: bool = False, decks: int | None = None) -> list[dict[str, Any]]:
    cv2.setNumThreads(1)
    single_thread_blas()
    n = decks or (1 if quick else 20)
    rows: list[dict[str, Any]] = []
    for style in STYLES:
        cal = style_calibration(style)
        for scene in SCENES:
            start = time.perf_counter()
            s = score_style(style, scene, n, cal)
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
                    f"{time.perf_counter() - start:.0f} s; {cal.corners} index corners learnt",
                },
            ]
            print(
                f"{label}: {len(s.misread)} misread, {s.unreadable} unreadable, {len(s.missed)} no event of {s.cards}",
                file=sys.stderr,
                flush=True,
            )
    return rows


if __name__ == "__main__":
    count = int(sys.argv[sys.argv.index("--decks") + 1]) if "--decks" in sys.argv else 3
    for row in run(decks=count):
        print(f"{row['name']:50} {row['value']!s:>7} {row['unit']:9} {row.get('note', '')}", flush=True)
