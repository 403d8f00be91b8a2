"""The two public streams: the hall's (real time, for the monitor in the playing hall) and the remote viewers'
(held back by ``broadcast_delay``). Every public message goes to both, once, through ``PublicStreams.publish``;
the hall never waits for the remote delay and the remote stream never gets a message early.
"""

from __future__ import annotations

from collections.abc import Callable

from .hub import PublicHub
from .public import Message, PublicState


class PublicStreams:
    def __init__(self, hall: PublicHub, remote: PublicHub) -> None:
        self.hall = hall
        self.remote = remote
        # the remote delay (and the relays', through their publisher) counts from when the hall showed a message
        self.shown_listeners: list[Callable[[int, float], None]] = [remote.hall_shown]
        hall.on_shown = self._shown

    def _shown(self, up_to: int, at: float) -> None:
        for listener in self.shown_listeners:
            listener(up_to, at)

    @property
    def state(self) -> PublicState:
        """What the hall shows now (the remote viewers see the same, ``remote.delay`` seconds later)."""
        return self.hall.state

    def publish(self, msg: Message) -> None:
        self.hall.publish(msg)
        self.remote.publish(msg)

    def close(self) -> None:
        self.hall.close()
        self.remote.close()
