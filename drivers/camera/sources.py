"""Frame sources behind one interface: an OpenCV capture (camera index, video file, stream URL), a directory or
glob of still images, or the virtual camera (``virtual:`` specs, see :mod:`drivers.camera.virtual`).

Every frame carries its number in the stream and a timestamp in seconds: the capture's own position for a video
file, the wall clock at grab time for a live camera or stream, ``number / fps`` for still images.
"""

from __future__ import annotations

import glob
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from dealer.core.errors import DealerError

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm"})


class SourceError(DealerError):
    """A frame source cannot be opened or read."""


@dataclass(frozen=True, slots=True)
class Frame:
    image: npt.NDArray[np.uint8]  # BGR, height x width x 3
    timestamp: float
    number: int


class FrameSource(Protocol):
    """An iterable of frames. ``still`` is True when frames are independent photographs (one view each)."""

    name: str
    still: bool

    def frames(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...


class _Closing:
    def __enter__(self) -> _Closing:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        pass


class CaptureSource(_Closing):
    """An OpenCV ``VideoCapture``: a camera index, a video file or a stream URL."""

    still = False

    def __init__(self, target: int | str, live: bool | None = None) -> None:
        self.name = str(target)
        self._cap = cv2.VideoCapture(target)
        if not self._cap.isOpened():
            raise SourceError("source {name!r}: OpenCV cannot open it (no such camera, file or stream)", name=self.name)
        self._live = isinstance(target, int) or "://" in str(target) if live is None else live
        self._start = time.time()

    def frames(self) -> Iterator[Frame]:
        number = 0
        while True:
            ok, image = self._cap.read()
            if not ok or image is None:
                return
            stamp = time.time() if self._live else float(self._cap.get(cv2.CAP_PROP_POS_MSEC)) / 1000.0
            if image.ndim == 2:
                image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
            yield Frame(np.asarray(image, np.uint8), stamp, number)
            number += 1

    def close(self) -> None:
        self._cap.release()


def _natural_key(path: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path)]


class ImageSource(_Closing):
    """Still images, in natural name order (``img2`` before ``img10``)."""

    still = True

    def __init__(self, paths: list[Path], name: str, fps: float = 30.0) -> None:
        if not paths:
            raise SourceError("source {name!r}: no image files found", name=name)
        self.name = name
        self.paths = paths
        self.fps = fps

    def frames(self) -> Iterator[Frame]:
        for number, path in enumerate(self.paths):
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is None:
                raise SourceError("source {name!r}: {path} is not a readable image", name=self.name, path=path)
            yield Frame(np.asarray(image, np.uint8), number / self.fps, number)


def open_source(spec: str) -> FrameSource:
    """Open a source from its text form.

    ``0``, ``1`` … a camera index; ``virtual:…`` the virtual camera; ``rtsp://…``/``http://…`` a stream; a
    directory (its images); a pattern with ``*``, ``?`` or ``[`` (the matching images); an image file (one
    frame); any other existing file is opened as a video.
    """
    text = spec.strip()
    if not text:
        raise SourceError("source is empty: give a camera index, a video file, a URL, a directory or a glob")
    if text.isdigit():
        return CaptureSource(int(text))
    if text.startswith("virtual:"):
        from .virtual import virtual_source

        return virtual_source(text[len("virtual:") :])
    if "://" in text:
        return CaptureSource(text)
    path = Path(text)
    if path.is_dir():
        files = [p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
        return ImageSource(sorted(files, key=lambda p: _natural_key(p.name)), text)
    if any(ch in text for ch in "*?["):
        matches = [Path(p) for p in glob.glob(text) if Path(p).suffix.lower() in IMAGE_SUFFIXES]
        return ImageSource(sorted(matches, key=lambda p: _natural_key(str(p))), text)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            return ImageSource([path], text)
        return CaptureSource(text, live=False)
    raise SourceError("source {text!r}: not a camera index, an existing file or directory, a glob or a URL", text=text)
