"""The OpenCV camera scanner: frame sources, calibration on the deck in use, recognition, card events, and a
virtual camera that renders synthetic or image decks for the simulator and the tests."""

from .calibration import Calibration, CalibrationError, Thresholds, calibrate
from .recognise import Reading, Recogniser, Seen
from .scanner import CameraScanner, ScanStats
from .sources import CaptureSource, Frame, FrameSource, ImageSource, SourceError, open_source
from .tracker import CardTracker, TrackerSettings

__all__ = [
    "Calibration",
    "CalibrationError",
    "CameraScanner",
    "CaptureSource",
    "CardTracker",
    "Frame",
    "FrameSource",
    "ImageSource",
    "Reading",
    "Recogniser",
    "ScanStats",
    "Seen",
    "SourceError",
    "Thresholds",
    "TrackerSettings",
    "calibrate",
    "open_source",
]
