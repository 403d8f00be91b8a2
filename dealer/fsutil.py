"""Writing files whole or not at all; reading input files within limits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dealer.core.errors import DealerError


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory, fsync'd, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import tempfile  # here: the command line's start goes without it

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


MIB = 1024 * 1024
MAX_INPUT_BYTES = 64 * 1024 * 1024  # deal files to import or convert; the commands' --max-size raises it


class InputFileError(DealerError, OSError):
    """A file given as input cannot be read as one: missing, not a regular file, or over the size limit."""


def read_input(path: Path, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; devices, FIFOs and directories are refused.

    Symbolic links are followed, but what they lead to must itself be a regular file (a link to /dev/zero is
    refused before a byte is read). The size is checked on the open file and again while reading.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputFileError("cannot read: {reason}", reason=exc.strerror or exc) from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputFileError("is a directory, not a regular file")
        raise InputFileError("is a device, FIFO or socket, not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > max_bytes:
            if max_bytes < MIB:
                raise InputFileError(
                    "is {size} bytes, over the limit of {limit} bytes (see --max-size)",
                    size=st.st_size,
                    limit=max_bytes,
                )
            raise InputFileError(
                "is {size:.1f} MiB, over the limit of {limit:.1f} MiB (see --max-size)",
                size=st.st_size / MIB,
                limit=max_bytes / MIB,
            )
        try:
            data = fh.read(st.st_size + 1)  # a buffer of the file's size (read(max_bytes + 1) made one of 64 MiB)
            if len(data) > st.st_size:  # it grew since: read on, to the limit
                data += fh.read(max_bytes + 1 - len(data))
        except OSError as exc:
            raise InputFileError("cannot read: {reason}", reason=exc.strerror or exc) from exc
    if len(data) > max_bytes:
        if max_bytes < MIB:
            raise InputFileError(
                "grew over the limit of {limit} bytes while being read (see --max-size)", limit=max_bytes
            )
        raise InputFileError(
            "grew over the limit of {limit:.1f} MiB while being read (see --max-size)", limit=max_bytes / MIB
        )
    return data
