"""pyserial's rfc2217:// URL: the driver reaches the simulator's pty through an RFC 2217 (telnet COM port)
server built on pyserial's own PortManager, as with a serial-over-LAN adapter."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest
import serial
import serial.rfc2217
from _proto_helpers import run, run_deal, simulator

from dealer.core.events import DealEnded
from drivers.machine import MachineDriver
from drivers.transport import open_transport

pytestmark = pytest.mark.filterwarnings("ignore:setDaemon:DeprecationWarning", "ignore:setName:DeprecationWarning")


class PtySerial(serial.Serial):  # type: ignore[misc]  # pyserial has no type stubs: its Serial is Any
    """A pseudo-terminal has no modem lines: report them idle instead of failing the ioctl."""

    cts = dsr = ri = cd = property(lambda self: False)

    def _update_rts_state(self) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    def _update_break_state(self) -> None:
        pass


@contextlib.contextmanager
def rfc2217_server(device: str) -> Iterator[int]:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        conn.settimeout(0.05)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ser = PtySerial(device, timeout=0.05)

        class Conn:
            def write(self, data: bytes) -> None:
                conn.sendall(data)

        manager = serial.rfc2217.PortManager(ser, Conn())

        def device_to_net() -> None:
            while not stop.is_set():
                try:
                    data = ser.read(ser.in_waiting or 1)
                except serial.SerialException:
                    break  # the simulator closed its end
                if data:
                    conn.sendall(b"".join(manager.escape(data)))

        pump = threading.Thread(target=device_to_net, daemon=True)
        pump.start()
        while not stop.is_set():
            try:
                data = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
            if not data:
                break
            ser.write(b"".join(manager.filter(data)))
        stop.set()
        pump.join(1)
        ser.close()
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        listener.close()
        thread.join(2)


def test_rfc2217_url_reaches_the_machine() -> None:
    async def main() -> None:
        with simulator("pty") as sim, rfc2217_server(sim.url) as port:
            url = f"rfc2217://127.0.0.1:{port}"
            drv = MachineDriver(lambda: open_transport(url), ack_timeout=0.2, heartbeat=0.5)
            await drv.connect()
            try:
                assert drv.info is not None and drv.info.transport == f"serial {url}"
                for _ in range(3):
                    out = await run_deal(drv)
                    assert isinstance(out.end, DealEnded)
                    assert len({c.card for c in out.cards}) == 52
            finally:
                await drv.close()

    run(main())
