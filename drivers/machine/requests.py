"""Requests in flight: the acknowledgement each sent message waits for, the replies awaited by type, and the
session being opened; failed all at once when the link goes."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from firmware_protocol.connection import SessionOpened
from firmware_protocol.messages import Message

from ..device import DeviceError

M = TypeVar("M", bound=Message)


class Pending:
    def __init__(self) -> None:
        self._acks: dict[int, asyncio.Future[None]] = {}  # seq of our message -> its answer
        self._session: asyncio.Future[SessionOpened] | None = None
        # Any: each future holds a message of the type it is paired with (expect keeps the pairs consistent;
        # Message is a union, whose members a type variable cannot name)
        self._waiters: list[tuple[type[Any], asyncio.Future[Any]]] = []

    def ack(self, seq: int) -> asyncio.Future[None]:
        """The future of the answer (ACK or NAK) to our message ``seq``."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._acks[seq] = fut
        return fut

    def expect(self, kind: type[M]) -> asyncio.Future[M]:
        """The future of the next message of type ``kind`` from the device."""
        fut: asyncio.Future[M] = asyncio.get_running_loop().create_future()
        self._waiters.append((kind, fut))
        return fut

    def session(self) -> asyncio.Future[SessionOpened]:
        fut: asyncio.Future[SessionOpened] = asyncio.get_running_loop().create_future()
        self._session = fut
        return fut

    def answered(self, seq: int) -> None:
        fut = self._acks.pop(seq, None)
        if fut is not None and not fut.done():
            fut.set_result(None)

    def refused(self, seq: int, exc: DeviceError) -> None:
        fut = self._acks.pop(seq, None)
        if fut is not None and not fut.done():
            fut.set_exception(exc)
            fut.exception()  # mark retrieved

    def session_done(self, opened: SessionOpened | None, exc: DeviceError | None = None) -> None:
        session, self._session = self._session, None
        if session is None or session.done():
            return
        if opened is not None:
            session.set_result(opened)
        else:
            session.set_exception(exc or DeviceError("session refused"))
            session.exception()

    def deliver(self, msg: Message) -> bool:
        """Hand ``msg`` to the first request waiting for its type; False if none was."""
        for i, (kind, fut) in enumerate(self._waiters):
            if isinstance(msg, kind) and not fut.done():
                del self._waiters[i]
                fut.set_result(msg)
                return True
        return False

    def malformed(self, msg_type: int, exc: DeviceError) -> bool:
        """The device's answer of type ``msg_type`` came malformed (and was NAKed): the first request waiting
        for that type fails with ``exc``; False if none was."""
        for i, (kind, fut) in enumerate(self._waiters):
            if int(kind.TYPE) == msg_type and not fut.done():
                del self._waiters[i]
                fut.set_exception(exc)
                fut.exception()
                return True
        return False

    def fail(self, exc: DeviceError) -> None:
        """Every request in flight fails with ``exc`` (the link went, a new session began)."""
        for fut in self._acks.values():
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()
        self._acks.clear()
        self.session_done(None, exc)
        for _, fut in self._waiters:
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()
        self._waiters.clear()
