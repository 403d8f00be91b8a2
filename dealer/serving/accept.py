"""A listening socket that lets the event loop take only a few new connections per turn.

asyncio accepts up to the listen backlog (2,048) in one go when a crowd arrives: 5,000 audience viewers opening
their streams at once queue thousands of connection set-ups before a judge's request that came in meanwhile (the
judge's API took seconds). ``PacedSocket.accept`` hands out ``batch`` connections, then says "nothing more"
(``BlockingIOError``, as an empty queue does) until the loop's next turn: every turn runs the consoles' work beside
at most ``batch`` new connections, while the rest wait in the kernel's queue (nobody is refused: the queue stays
2,048 long). Accepted connections get ``TCP_NODELAY``.
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .guard import ConnectionGuard

ACCEPT_BATCH = 8  # new connections taken per event-loop turn (bench/bench_viewers.py measures the effect)


class PacedSocket(socket.socket):
    batch = ACCEPT_BATCH
    guard: ConnectionGuard | None = None  # caps per address and in all (guard.py); None: every connection taken

    # Any: socket.socket's own signature (family, type, proto, fileno) is passed through unchanged
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._taken = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _next_turn(self) -> None:
        self._taken = 0
        self._loop = None

    # Any: the peer address, as typeshed types socket.accept (its shape depends on the family)
    def accept(self) -> tuple[socket.socket, Any]:
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:  # not in an event loop: no pacing
                return self._nodelay(super().accept())
            self._loop.call_soon(self._next_turn)
        while True:
            if self._taken >= self.batch:
                raise BlockingIOError("paced: the next connections are taken on the loop's next turn")
            self._taken += 1
            if self.guard is None:
                return self._nodelay(super().accept())
            from .guard import guarded_accept

            taken = guarded_accept(self, self.guard)
            if taken is not None:  # a refused one was closed at once: take the next (it counts in the batch)
                return self._nodelay(taken)

    # Any: the peer address, as in accept
    def _nodelay(self, accepted: tuple[socket.socket, Any]) -> tuple[socket.socket, Any]:
        """Every message goes out at once (no Nagle wait for an ACK that the reader delays 40 ms): asyncio sets
        this only on sockets whose protocol number says TCP, and a socket made with ``socket()`` says 0."""
        if self.family in (socket.AF_INET, socket.AF_INET6):
            accepted[0].setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return accepted


def paced(sock: socket.socket, batch: int = ACCEPT_BATCH) -> PacedSocket:
    """The same listening socket (it takes over the file descriptor), accepting ``batch`` per loop turn."""
    out = PacedSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
    out.batch = batch
    return out


def listen(host: str, port: int, backlog: int = 2048, batch: int = ACCEPT_BATCH) -> PacedSocket:
    """A bound, listening, paced socket (``port`` 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return paced(sock, batch)
