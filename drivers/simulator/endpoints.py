"""Where the virtual machine is plugged in: a pseudo-terminal, a TCP port (the USB backend is in usb_backend).

Each endpoint attaches the machine's output to its medium and feeds what arrives to ``machine.receive``, on
the machine's asyncio loop, and implements "cable pulled" in the way that medium really fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import tempfile
from pathlib import Path

from .machine import VirtualMachine

_MAX_BACKLOG = 1 << 16  # bytes a UART buffers while nobody reads; beyond that they are lost


class PtyEndpoint:
    """The machine behind a pseudo-terminal. ``path`` is a stable symlink to the current slave device.

    Pulling the cable closes the pty (the driver's reads fail, as when a USB-serial adapter vanishes) and,
    after the outage, opens a new one and re-points the symlink (as udev does for /dev/serial/by-id).
    """

    def __init__(self, machine: VirtualMachine, link_path: Path | None = None) -> None:
        self.machine = machine
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if link_path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="dealer-sim-")
            link_path = Path(self._tmp.name) / "ttyDEALER0"
        self.path = link_path
        self.device_path = ""
        self._master = -1
        self._slave = -1
        self._backlog = bytearray()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.cable_pulls = 0

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._open()
        self.machine.unplug = self.pull_cable

    def _open(self) -> None:
        import termios  # POSIX only: a pty exists where termios does (drivers.kinds.simulator falls back to TCP)
        import tty

        assert self._loop is not None
        master, slave = os.openpty()
        tty.setraw(slave, termios.TCSANOW)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.device_path = os.ttyname(slave)
        tmp = self.path.with_name(self.path.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(self.device_path)
        tmp.replace(self.path)
        self._loop.add_reader(master, self._readable)
        self.machine.attach(self._write)

    def _close(self) -> None:
        # Remove the link first: once the pty is closed its /dev/pts number may be handed to another
        # process's terminal, and a host reopening a stale link would talk to a stranger.
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.machine.detach()
        if self._master >= 0 and self._loop is not None:
            self._loop.remove_reader(self._master)
            self._loop.remove_writer(self._master)
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1
        self._backlog.clear()

    def _readable(self) -> None:
        try:
            data = os.read(self._master, 4096)
        except BlockingIOError:
            return
        except OSError:
            return
        if data:
            self.machine.receive(data)

    def _write(self, data: bytes) -> None:
        if self._master < 0:
            return
        if self._backlog:
            if len(self._backlog) < _MAX_BACKLOG:
                self._backlog += data
            return
        try:
            n = os.write(self._master, data)
        except BlockingIOError:
            n = 0
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EBADF):
                return
            raise
        if n < len(data):
            self._backlog += data[n:]
            assert self._loop is not None
            self._loop.add_writer(self._master, self._writable)

    def _writable(self) -> None:
        try:
            n = os.write(self._master, self._backlog)
        except BlockingIOError:
            return
        except OSError:
            n = len(self._backlog)
        del self._backlog[:n]
        if not self._backlog and self._loop is not None:
            self._loop.remove_writer(self._master)

    def pull_cable(self, seconds: float) -> None:
        self.cable_pulls += 1
        self._close()
        assert self._loop is not None
        self._loop.call_later(seconds, self._open)

    @property
    def where(self) -> str:
        return f"serial pty {self.path} -> {self.device_path}"

    async def stop(self) -> None:
        self._close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        if self._tmp is not None:
            self._tmp.cleanup()


class TcpEndpoint:
    """The machine on a TCP port (one host at a time; a new connection replaces the old one)."""

    def __init__(self, machine: VirtualMachine, host: str = "127.0.0.1", port: int = 0) -> None:
        self.machine = machine
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._unplugged_until = 0.0
        self.cable_pulls = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.machine.unplug = self.pull_cable

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() < self._unplugged_until:
            writer.close()
            return
        if self._writer is not None:
            self._writer.close()
        self._writer = writer
        self.machine.attach(writer.write)
        try:
            while True:
                data = await reader.read(4096)
                if not data:
                    break
                self.machine.receive(data)
        except (ConnectionError, OSError):
            pass
        finally:
            if self._writer is writer:
                self.machine.detach()
                self._writer = None
            writer.close()

    def pull_cable(self, seconds: float) -> None:
        self.cable_pulls += 1
        self._unplugged_until = asyncio.get_running_loop().time() + seconds
        if self._writer is not None:
            self.machine.detach()
            self._writer.transport.abort()
            self._writer = None

    @property
    def where(self) -> str:
        return f"tcp {self.host}:{self.port} (pyserial URL socket://{self.host}:{self.port})"

    async def stop(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
