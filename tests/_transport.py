"""A stand-in for a connection's transport, for tests of the public hub's fan-out."""

from __future__ import annotations


class FakeTransport:
    """A transport that keeps what is written; ``backlog`` stands for bytes the peer has not read yet."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.backlog = 0
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def get_write_buffer_size(self) -> int:
        return self.backlog

    def is_closing(self) -> bool:
        return self.closing
