"""``dealer scanner calibrate`` and ``dealer scanner read``: the camera card scanner from the command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from . import kit
from .console import Console
from .i18n import t
from .root import app

if TYPE_CHECKING:  # numpy and OpenCV are imported by the commands that use them, not at start-up
    from rich.progress import Progress, TaskID

    from dealer.core.events import CardSeen, DeviceFault
    from drivers.camera.sources import Frame, FrameSource

scanner_app = kit.Group(
    help="Camera card scanner: calibrate on the deck in use, then read cards.", no_args_is_help=True
)
app.add_group(scanner_app, name="scanner")

SOURCE_HELP = (
    "Camera index (0), video file, stream URL, directory or glob of images, or "
    "virtual:deck=synthetic-4c-fr,order=sorted|shuffled,seed=N,level=clean|mild|strong|hard"
)


def _progress(console: Console) -> Progress:
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console.rich)


def _counted(frames: Iterator[Frame], progress: Progress | None, task: TaskID | None) -> Iterator[Frame]:
    for frame in frames:
        if progress is not None and task is not None:
            progress.update(task, description=t("frame {number}", number=frame.number))
        yield frame


@scanner_app.command("calibrate")
def calibrate_cmd(
    source: str = kit.Option(..., "--source", help=SOURCE_HELP),
    out: Path = kit.Option(..., "--out", help="Calibration file to write (NPZ)."),
    deck: str = kit.Option("", "--deck", help="A name for the deck, kept in the file."),
    stable_frames: int | None = kit.Option(None, "--stable-frames", min=1, help="Frames a view must stay still."),
    picture: Path | None = kit.Option(
        None, "--picture", help="Picture of the learnt index layout to write (PNG; default: the file's name, .png)."
    ),
) -> None:
    """Calibrate on one pass of the sorted deck (♠A ♠K … ♠2 ♥A … ♣2), one card at a time."""
    import cv2

    from drivers.camera import calibrate, open_source

    src: FrameSource = open_source(source)
    console = Console(highlight=False, markup=False)
    try:
        if sys.stdout.isatty():
            with _progress(console) as progress:
                task = progress.add_task(t("calibrating"), total=None)
                cal = calibrate(
                    _counted(src.frames(), progress, task),
                    still=src.still,
                    stable_frames=stable_frames,
                    deck=deck,
                    source=source,
                )
        else:
            cal = calibrate(src.frames(), still=src.still, stable_frames=stable_frames, deck=deck, source=source)
    finally:
        src.close()
    cal.save(out)
    picture = picture or out.with_suffix(".png")
    ok, png = cv2.imencode(".png", cal.picture())
    if ok:
        picture.write_bytes(png.tobytes())
    console.print(
        t("calibrated on 52 cards from {source}; written to {out}", source=source, out=out),
        markup=False,
        soft_wrap=True,
    )
    learnt = cal.describe()
    arrangement = t("the rank beside the suit") if learnt["arrangement"] == "beside" else t("the rank above the suit")
    size = t("a jumbo index") if learnt["size"] == "jumbo" else t("a standard index")
    corners = t("in all four corners") if learnt["corners"] == 4 else t("in two opposite corners")
    console.print(
        t(
            "learnt index: {arrangement}, {size}, {corners}; its picture: {picture}",
            arrangement=arrangement,
            size=size,
            corners=corners,
            picture=picture,
        ),
        markup=False,
        soft_wrap=True,
    )


@scanner_app.command("read")
def read_cmd(
    source: str = kit.Option(..., "--source", help=SOURCE_HELP),
    calibration: Path = kit.Option(..., "--calibration", help="Calibration file from `dealer scanner calibrate`."),
    deal_id: int = kit.Option(0, "--deal-id", help="Deal id carried by the events."),
) -> None:
    """Read cards: one JSON object per card event on stdout (``"card": "SA"`` or ``"unreadable"``, or ``"fault"``)."""
    from drivers.camera import Calibration, CameraScanner, open_source

    cal = Calibration.load(calibration)
    src = open_source(source)
    scanner = CameraScanner(src, cal, deal_id=deal_id)
    tty = sys.stdout.isatty()
    console = Console(highlight=False, markup=False)
    try:
        if tty:
            with _progress(console) as progress:
                task = progress.add_task(t("reading"), total=None)
                for event in scanner.events():
                    console.print(_line(event), markup=False, soft_wrap=True)
                    s = scanner.stats
                    progress.update(
                        task,
                        description=t(
                            "{frames} frames, {cards} cards, {unreadable} unreadable, {ms:.1f} ms/frame",
                            frames=s.frames,
                            cards=s.cards,
                            unreadable=s.unreadable,
                            ms=s.ms_per_frame,
                        ),
                    )
        else:
            for event in scanner.events():
                sys.stdout.write(_line(event) + "\n")
                sys.stdout.flush()
    finally:
        src.close()


def _line(event: CardSeen | DeviceFault) -> str:
    from dealer.core.events import DeviceFault

    if isinstance(event, DeviceFault):  # a back (or a foreign card face down) where a face was expected
        return json.dumps(
            {
                "fault": event.kind.value,
                "detail": event.detail,
                "position": event.position,
                "time": round(event.timestamp, 4),
            }
        )
    return json.dumps(
        {
            "card": event.card.code if event.card is not None else "unreadable",
            "position": event.position,
            "time": round(event.timestamp, 4),
            "confidence": event.confidence,
            "frame": event.frame,
        }
    )
