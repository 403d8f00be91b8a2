"""Run a virtual machine with one endpoint: in a background thread (tests, benchmarks) or in the foreground."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from .endpoints import PtyEndpoint, TcpEndpoint
from .machine import VirtualMachine
from .usb_backend import SimulatorUsbBackend

Kind = Literal["pty", "tcp", "usb"]
T = TypeVar("T")

# The simulator presents itself with the open profile's USB ids (config/devices/open-dealer.toml).
SIM_VENDOR_ID = 0x1209
SIM_PRODUCT_ID = 0x0001


class SimulatorThread:
    """A machine and its endpoint on their own event loop in a daemon thread.

    ``url`` is what the driver opens: the pty symlink path, or ``socket://host:port`` for TCP; for USB use
    ``backend`` with ``usb.core.find``.
    """

    def __init__(
        self,
        machine: VirtualMachine,
        kind: Kind = "pty",
        *,
        port: int = 0,
        link_path: Path | None = None,
    ) -> None:
        self.machine = machine
        self.kind = kind
        self._port = port
        self._link_path = link_path
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=f"sim-{kind}", daemon=True)
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.pty: PtyEndpoint | None = None
        self.tcp: TcpEndpoint | None = None
        self.backend: SimulatorUsbBackend | None = None

    def __enter__(self) -> SimulatorThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"simulator failed to start: {self._error}") from self._error

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
        finally:
            self.loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        if self.kind == "pty":
            self.pty = PtyEndpoint(self.machine, self._link_path)
            await self.pty.start()
        elif self.kind == "tcp":
            self.tcp = TcpEndpoint(self.machine, port=self._port)
            await self.tcp.start()
        else:
            self.backend = SimulatorUsbBackend(
                self.machine, asyncio.get_running_loop(), vendor_id=SIM_VENDOR_ID, product_id=SIM_PRODUCT_ID
            )
        runner = asyncio.get_running_loop().create_task(self.machine.run())
        self._ready.set()
        await self._stop.wait()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        if self.pty is not None:
            await self.pty.stop()
        if self.tcp is not None:
            await self.tcp.stop()

    @property
    def url(self) -> str:
        if self.pty is not None:
            return str(self.pty.path)
        if self.tcp is not None:
            return f"socket://127.0.0.1:{self.tcp.port}"
        raise ValueError("a USB simulator has no URL: pass .backend to the USB transport")

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the simulator's loop and return its result."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:
                future.set_exception(exc)

        self.loop.call_soon_threadsafe(run)
        return future.result(10)

    def stop(self) -> None:
        if self._stop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
