"""Device kind ``camera``: a camera card scanner; the operator deals by hand, the camera reads each card.

The device's ``url`` is a frame source spec of ``drivers.camera.open_source`` (camera index, video file,
stream URL, image directory or glob, ``virtual:…``); the option ``calibration`` is the calibration file made by
``dealer scanner calibrate``. A ``virtual:`` source without a calibration file is calibrated once at open on
the virtual deck's sorted pass, and renders a freshly shuffled deal (OS randomness) for every deal requested,
so a demo needs nothing else.

``request_deal`` arms the reader for a new deal (a new deal id): ``DealStarted``, then one ``CardSeen`` per card
(no pocket: seats follow the dealing order), then ``DealEnded`` after the 52nd card. The scanner is a blocking
iterator, so it runs in a thread and hands its events to the event loop through a queue.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

from dealer.core.cards import ALL_CARDS
from dealer.core.errors import DealerError
from dealer.core.events import DealEnded, DealStarted, DeviceEvent, DeviceFault, Disconnected, FaultKind

from ..camera import Calibration, CameraScanner, Frame, FrameSource, ScanStats, calibrate, open_source
from ..camera.virtual import LEVELS, VirtualCamera, virtual_source
from ..device import BoardMachine, DeviceError
from ..registry import DeviceOptions

CARDS = 52
VIRTUAL = "virtual:"


class CameraDeviceError(DeviceError):
    """The camera cannot be opened (source, calibration)."""


class _Stoppable:
    """A frame source that ends as soon as ``stop`` is set, and notes when it last delivered a frame."""

    def __init__(self, source: FrameSource, stop: threading.Event, seen: list[float]) -> None:
        self.source, self.stop, self.seen = source, stop, seen
        self.name, self.still = source.name, source.still

    def frames(self) -> Iterator[Frame]:
        for frame in self.source.frames():
            if self.stop.is_set():
                return
            self.seen[0] = time.time()
            yield frame

    def close(self) -> None:
        pass  # the link owns the source


def virtual_template(spec: str) -> VirtualCamera:
    """The virtual camera of a ``virtual:`` spec, for deals: its ``order`` is ignored (every deal is shuffled)."""
    options = [part for part in spec[len(VIRTUAL) :].split(",") if part and not part.strip().startswith("order=")]
    return virtual_source(",".join([*options, "order=shuffled"]))


def calibrate_virtual(template: VirtualCamera, spec: str) -> Calibration:
    """Calibrate on the virtual deck's sorted pass, as the judge would with a real deck."""
    sorted_pass = VirtualCamera(template.deck, list(ALL_CARDS), LEVELS["calibration"], seed=1, hold=4, slide=2, gap=1)
    return calibrate(sorted_pass.frames(), deck=template.deck.name, source=spec)


def shuffled_deal(template: VirtualCamera) -> VirtualCamera:
    """A fresh deal in front of the virtual camera: order and rendering drawn from the OS's randomness."""
    order = list(ALL_CARDS)
    secrets.SystemRandom().shuffle(order)
    return VirtualCamera(
        template.deck,
        order,
        template.p,
        seed=secrets.randbits(63),
        size=(template.width, template.height),
        fps=template.fps,
        hold=template.hold,
        slide=template.slide,
        gap=template.gap,
    )


def _confidence_facts(cal: Calibration | None) -> dict[str, str]:
    """What the calibration's held-out readings predict (#31), for the judge's console: the share of cards read
    wrong, as an upper bound, and the least confidence a card is read with (below it: unreadable)."""
    if cal is None or cal.confidence is None:
        return {}
    c = cal.confidence
    return {
        "predicted_error_rate": f"≤ {100 * c.predicted_error_rate:.3f} % ({c.accepted}/{c.held_out})",
        "unreadable_below": f"{c.threshold:.2f}",
    }


class CameraDevice:
    """A camera card scanner under manual dealing (``kind = "camera"``)."""

    can_deal = False  # the operator deals; the camera only reads
    can_inject = False

    def __init__(self, kind: str, url: str, options: DeviceOptions) -> None:
        if not url:
            raise CameraDeviceError("station {name}: a camera station needs url = the frame source", name=options.name)
        self.options = options
        self.kind = kind
        self.url = url.strip()
        self.virtual = self.url.startswith(VIRTUAL)
        self.calibration: Calibration | None = None
        self._template: VirtualCamera | None = None
        self._source: FrameSource | None = None
        self._queue: asyncio.Queue[DeviceEvent | None] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._scanner: CameraScanner | None = None
        self._done = ScanStats()  # totals of the deals read before the current one
        self._seen = [time.time()]
        self._deal_id = 0
        self._state = "connecting"
        self._closed = False

    # -- life cycle ------------------------------------------------------------------------------------------
    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self._open)
        self._seen[0] = time.time()
        self._state = "idle"

    def _open(self) -> None:
        where = f"station {self.options.name}"
        try:
            if self.virtual:
                self._template = virtual_template(self.url)
            else:
                self._source = open_source(self.url)
            if self.options.calibration is not None:
                self.calibration = Calibration.load(self.options.calibration)
            elif self._template is not None:
                self.calibration = calibrate_virtual(self._template, self.url)
            else:
                raise CameraDeviceError("calibration is required for a camera on {url!r}", url=self.url)
        except DealerError as exc:
            self._close_source()
            raise CameraDeviceError("{where}: {exc}", where=where, exc=exc) from exc

    async def close(self) -> None:
        self._closed = True
        await self._stop_scan()
        self._close_source()
        self._state = "closed"
        self._queue.put_nowait(Disconnected("closed", time.time(), None))
        self._queue.put_nowait(None)

    def _close_source(self) -> None:
        if self._source is not None:
            source, self._source = self._source, None
            source.close()

    # -- the judge's view ------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        cal = self.calibration
        return {
            "kind": self.kind,
            "url": self.url,
            "model": "camera scanner (manual dealing)",
            "source": self.url,
            "calibration": str(self.options.calibration) if self.options.calibration else "virtual sorted pass",
            "deck": cal.deck if cal is not None else None,
            "capabilities": ["reader"],
            **_confidence_facts(cal),
        }

    def stats(self) -> ScanStats:
        """Frames, cards, unreadable cards and recognition time over every deal read so far."""
        total = ScanStats(self._done.frames, self._done.cards, self._done.unreadable, self._done.seconds)
        current = self._scanner
        if current is not None:
            now = current.stats
            total.frames += now.frames
            total.cards += now.cards
            total.unreadable += now.unreadable
            total.seconds += now.seconds
        return total

    def status(self) -> dict[str, Any]:
        scanning = self._thread is not None and self._thread.is_alive()
        if not scanning and not self._closed:
            self._seen[0] = time.time()  # an idle reader waiting for the operator is alive
        if self._state == "reading" and not scanning:
            self._state = "idle"
        s = self.stats()
        return {
            "state": self._state,
            "heartbeat": self._seen[0],
            "connected": not self._closed and self.calibration is not None,
            "deal": self._deal_id,
            "frames": s.frames,
            "cards": s.cards,
            "unreadable": s.unreadable,
            "ms_per_frame": round(s.ms_per_frame, 2),
        }

    # -- dealing ---------------------------------------------------------------------------------------------
    async def request_deal(self) -> None:
        if self._closed or self.calibration is None:
            raise CameraDeviceError("station {name}: the camera is not open", name=self.options.name)
        await self._stop_scan()  # a deal voided half-way: its reader stops before the next deal's starts
        self._deal_id += 1
        source = shuffled_deal(self._template) if self._template is not None else self._source
        assert source is not None
        self._stop = threading.Event()
        self._scanner = CameraScanner(
            _Stoppable(source, self._stop, self._seen), self.calibration, deal_id=self._deal_id
        )
        self._put(DealStarted(self._deal_id, time.time()))
        self._state = "reading"
        self._thread = threading.Thread(
            target=self._scan, args=(self._scanner, self._stop), name=f"camera-{self.options.name}", daemon=True
        )
        self._thread.start()

    def _put(self, event: DeviceEvent) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

    def _scan(self, scanner: CameraScanner, stop: threading.Event) -> None:
        deal_id, count = scanner.tracker.deal_id, 0
        try:
            for event in scanner.events():
                self._put(event)
                if isinstance(event, DeviceFault):
                    return  # a back where a face was expected: the session voids the deal on the fault
                count += 1
                if count == CARDS:
                    break
        except Exception as exc:  # a camera that fails mid-deal: the deal is void, the judge sees why
            self._put(DeviceFault(FaultKind.OTHER, f"camera: {exc}", time.time(), deal_id, count))
            return
        if stop.is_set():
            return  # aborted, or replaced by the next deal: the session has already closed this one
        if count == CARDS:
            self._put(DealEnded(deal_id, time.time()))
        else:
            detail = f"the source {self.url!r} ended after {count} cards"
            self._put(DeviceFault(FaultKind.MISSING_CARD, detail, time.time(), deal_id, count))

    async def _stop_scan(self) -> None:
        thread, scanner = self._thread, self._scanner
        self._stop.set()
        if thread is not None:
            await asyncio.to_thread(thread.join)
        if scanner is not None:
            s = scanner.stats
            self._done.frames += s.frames
            self._done.cards += s.cards
            self._done.unreadable += s.unreadable
            self._done.seconds += s.seconds
        self._thread, self._scanner = None, None

    async def next_event(self) -> DeviceEvent | None:
        return await self._queue.get()

    async def inject_fault(self, kind: FaultKind) -> bool:
        return False

    def board_machine(self) -> BoardMachine:
        raise CameraDeviceError("{url}: a camera scanner reads cards, it cannot make boards", url=self.url)

    async def abort(self) -> None:
        await self._stop_scan()
        if not self._closed:
            self._state = "idle"
