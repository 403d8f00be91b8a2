"""Writing files whole or not at all; reading input files within limits."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory, fsync'd, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


MAX_INPUT_BYTES = 64 * 1024 * 1024  # deal files to import or convert; the commands' --max-size raises it


class InputFileError(OSError):
    """A file given as input cannot be read as one: missing, not a regular file, or over the size limit."""


def read_input(path: Path, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; devices, FIFOs and directories are refused.

    Symbolic links are followed, but what they lead to must itself be a regular file (a link to /dev/zero is
    refused before a byte is read). The size is checked on the open file and again while reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError(f"cannot read: {exc.strerror or exc}") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device, FIFO or socket"
        raise InputFileError(f"is {kind}, not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > max_bytes:
            raise InputFileError(f"is {_size(st.st_size)}, over the limit of {_size(max_bytes)} (see --max-size)")
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise InputFileError(f"cannot read: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise InputFileError(f"grew over the limit of {_size(max_bytes)} while being read (see --max-size)")
    return data


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n} bytes"
