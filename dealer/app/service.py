"""The running service: configuration, regulation, bank, audience hub, judge bus and stations, wired together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from dealer.app.closed import ClosedBoards
from dealer.app.config import ServiceConfig
from dealer.app.hub import PublicHub
from dealer.app.jobs import JobRunner
from dealer.app.nats_publisher import RelayPublisher
from dealer.app.operator_messages import (
    BankCopyState,
    BankFigures,
    DeviceEntry,
    Heartbeat,
    JudgeAction,
    JudgeState,
    OperatorBank,
    RelayPublisherState,
    StationAction,
    StationView,
)
from dealer.app.public import bank_message, commitment_message
from dealer.app.streams import PublicStreams
from dealer.bank.repository import BankRepository
from dealer.core.json_types import JsonObject
from dealer.regulation import DealingVariant, Regulation, load_regulation

from .bankworker import BankWorker
from .custody import CustodySession
from .devices import available_devices, open_station_device, station_on
from .operator import OperatorBus
from .secrets import RoleSecrets, load_or_create_secret
from .station import Station, StationError

if TYPE_CHECKING:
    from dealer.bank.store import Seal
    from dealer.draw.director import Director


log = logging.getLogger("dealer.service")
SHUTDOWN_FLUSH_S = 5.0  # at shutdown, ledger writes still waiting for the bank get this long
SEAL_RETRY_S = 60.0  # an automatic seal that failed (busy bank, wrong key) is tried again after this long


def default_bank_factory(
    path: Path | str, busy_timeout: float = 2.0, key_dir: Path | None = None
) -> Callable[[], BankRepository]:
    def make() -> BankRepository:
        from .banks import open_bank

        return open_bank(path, busy_timeout, key_dir)

    return make


class Service:
    def __init__(
        self,
        config: ServiceConfig,
        regulation: Regulation | None = None,
        bank_factory: Callable[[], BankRepository] | None = None,
        autostart: bool = True,
    ) -> None:
        self.config = config
        self.regulation = regulation or load_regulation(config.regulation)
        self.secrets = RoleSecrets(
            config.judge_secret or load_or_create_secret(config.var_dir, "judge"),
            config.director_secret or load_or_create_secret(config.var_dir, "director"),
            allow_plain_http=config.allow_plain_http,
        )
        target: Path | str = config.bank_url or config.bank_path
        key_dir = config.var_dir if config.bank_url else None
        self.bank = BankWorker(bank_factory or default_bank_factory(target, config.bank_busy_timeout, key_dir))
        self.hub = PublicHub()  # the hall: real time
        self.remote = PublicHub(delay=config.broadcast_delay)  # remote viewers: held back by broadcast_delay
        self.streams = PublicStreams(self.hub, self.remote)
        self.relay_publisher: RelayPublisher | None = None
        if config.relay_nats:  # the relays' viewers: the hall's stream, in real time, to NATS (relays hold it back)
            from dealer.app.relay_signing import load_or_create_key

            key = load_or_create_key(config.relay_key or config.var_dir / "relay.key")  # every message signed
            self.relay_publisher = RelayPublisher(config.relay_nats, config.relay_event, key=key)
            self.hub.sinks.append(self.relay_publisher.sink)
            self.streams.shown_listeners.append(self.relay_publisher.hall_shown)  # sent once the hall showed it
            self.hub.on_unwatched = self.relay_publisher.hall_shown  # (or at once, when no screen watches the hall)
        self.operator = OperatorBus()
        self.jobs = JobRunner()  # long jobs: board making, hand records
        self.closed: ClosedBoards | None = None
        if self.regulation.variant is DealingVariant.CLOSED:  # Law 6: variant 1 deals into boards, no bank
            self.closed = ClosedBoards(
                config.var_dir / "boards" / "closed.jsonl", self.regulation.boards_per_session, self.regulation.copies
            )
        self.board_cards_shown = False  # Show cards for board making on the judge's console (ledgered when set)
        self.stations = {
            s.name: Station(s, self.regulation, self.bank, self.streams, self.operator, self.closed)
            for s in config.stations
        }
        for station in self.stations.values():
            station.marker = config.var_dir / f"station-{station.name}.dealing"
            if config.bank_copy is not None:  # a commit is told to nobody before the second copy holds it
                station.copy_ledger = self.copy_ledger
        self.autostart = autostart
        self._ticker: asyncio.Task[None] | None = None
        self._anchor: tuple[int, str] | None = None
        self._seal_clock = time.monotonic()
        self._seal_retry = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.bank_copy: BankCopyState | None = None  # the second copy's state (None: no [bank] copy)
        self.shown_values: dict[str, str] = {}  # label -> V as the hall was shown it (memory: not in var/)
        self.custody = CustodySession()  # the chief judge's key: when it was last used (it locks when idle)

    @cached_property
    def director(self) -> Director:
        """The service's one draw director: the director's console and the export routes share it, so each seal's
        tree is read and checked once; the competition's played deals (Law 15), checked at every prepare and
        filled at every reveal, in var/played.sqlite."""
        from dealer.bank.register import PlayedRegister
        from dealer.draw.director import Director

        return Director(self.bank.bank, PlayedRegister(self.config.var_dir / "played.sqlite"))

    def begin_shutdown(self) -> None:
        """Called from a signal handler: end the audience streams so the server can stop at once."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.streams.close)

    # -- life cycle ----------------------------------------------------------------------------------------
    async def startup(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self.relay_publisher is not None:
            self.relay_publisher.start()
        self._seal_clock = time.monotonic()
        self._seal_retry = 0.0
        await self.watch_bank()
        for station in self.stations.values():
            if await station.recover() is not None:
                log.warning("station %s: the deal in progress when the service stopped is voided", station.name)
            station.announce()
        if self.autostart:  # connect only: nothing is dealt until the technical judge presses Start
            for station in self.stations.values():
                try:
                    await station.connect(open_station_device(station.config))
                except Exception as exc:  # a missing device must not stop the service: the judge reconnects
                    log.warning("station %s: %s", station.name, exc)
                    station.link_failed()
        self._ticker = asyncio.create_task(self._tick())

    async def shutdown(self) -> None:
        await self.jobs.shutdown()
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        for station in self.stations.values():
            with contextlib.suppress(Exception):
                await station.disconnect()  # the station deals no more
            await station.flush(SHUTDOWN_FLUSH_S)  # a deal waiting for the bank gets a last chance
        self.bank.close()
        if self.relay_publisher is not None:
            await self.relay_publisher.close()

    async def watch_bank(self) -> None:
        """Publish the ledger's anchor (size, head) whenever it moved — by this service or any other writer."""
        bank = self.bank.bank
        size, head = await self.bank.call(bank.anchor)
        if (size, head) == self._anchor:
            return
        self._anchor = (size, head)
        await self.copy_bank(size, head)
        msg = bank_message(await self.bank.call(bank.deal_count), self.regulation.bank_target, head, size)
        self.streams.publish(msg)
        self.operator.send(OperatorBank.model_validate(msg))

    async def copy_ledger(self, size: int) -> bool | None:
        """A station's commit, before anyone is told of it: the second copy brought to the ledger as it is now
        and checked; True when the copy holds the first ``size`` entries (the commit), False when it is behind
        (the judge sees why), None when there is no second copy."""
        bank = self.bank.bank
        if self.config.bank_copy is None or not bank.copies_to_file:
            return None
        now_size, head = await self.bank.call(bank.anchor)
        await self.copy_bank(now_size, head)
        state = self.bank_copy
        return state is not None and state.error is None and state.size >= size

    async def copy_bank(self, size: int, head: str) -> None:
        """The second copy (``[bank] copy``) brought to this anchor and checked: it must hold the same ledger."""
        target = self.config.bank_copy
        bank = self.bank.bank
        if target is None or not bank.copies_to_file:
            return
        previous = self.bank_copy
        if previous is not None and previous.error is None and previous.size >= size and previous.same:
            return  # already there (a commit's own copy, then the tick that saw the same anchor)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            copied = await self.bank.call(bank.copy_to, target)
        except Exception as exc:  # a missing stick, a full disk: the judge sees it, the hall deals on
            self.bank_copy = BankCopyState(
                path=str(target),
                size=previous.size if previous else 0,
                head=previous.head if previous else "",
                same=False,
                at=previous.at if previous else None,
                error=str(exc),
            )
            if previous is None or previous.error != str(exc):  # logged once per new trouble, not per commit
                log.error("bank copy %s failed: %s", target, exc)
            self.operator.send(self.bank_copy)
            return
        same = copied == (size, head) or copied[0] > size  # a newer commit may have come in meanwhile
        self.bank_copy = BankCopyState(path=str(target), size=copied[0], head=copied[1], same=same, at=now)
        if copied[0] < size:
            log.error("bank copy %s holds %d ledger entries, the bank %d", target, copied[0], size)
        self.operator.send(self.bank_copy)

    async def auto_seal(self) -> Seal | None:
        """Seal when ``seal_every_deals`` new deals or ``seal_every_minutes`` with new entries have passed."""
        bank = self.bank.bank
        if not bank.unlocked:  # seals are signed with the chief judge's key
            return None
        entries, deals = await self.bank.call(bank.unsealed)
        every_deals, every_min = self.config.seal_every_deals, self.config.seal_every_minutes
        due = (every_deals and deals >= every_deals) or (
            every_min and entries and time.monotonic() - self._seal_clock >= every_min * 60
        )
        if not due or time.monotonic() < self._seal_retry:
            return None
        self._seal_clock = time.monotonic()
        self._seal_retry = 0.0
        try:
            seal = await self.bank.call(bank.seal)
        except Exception as exc:
            self._seal_retry = time.monotonic() + SEAL_RETRY_S
            log.error("automatic seal failed (tried again in %g s): %s", SEAL_RETRY_S, exc)
            return None
        log.info("automatic seal: %d ledger entries, deals 1..%d", seal.size, seal.last_deal)
        return seal

    async def lock_idle_custody(self) -> None:
        """The chief judge's key leaves memory after ``idle_lock_s`` without a step that used it."""
        bank = self.bank.bank
        if bank.unlocked and self.custody.idle(time.monotonic()):
            await self.bank.call(bank.lock)
            self.custody.sign_out()
            log.info("custody: locked after %d idle minutes", self.custody.idle_lock_s // 60)

    async def _tick(self) -> None:
        """Heartbeat and device status to the judges once a second; the ledger anchor; automatic seals."""
        while True:
            await asyncio.sleep(1.0)
            try:
                await self.lock_idle_custody()
                await self.auto_seal()
                await self.watch_bank()
            except Exception as exc:  # a busy bank: the next tick tries again
                log.warning("bank watch: %s", exc)
            for station in self.stations.values():
                if station.link is not None:
                    self.operator.send(Heartbeat(station=station.name, device_status=station.link.status()))

    # -- judge ---------------------------------------------------------------------------------------------
    def station(self, name: str) -> Station:
        try:
            return self.stations[name]
        except KeyError:
            raise StationError(f"no station {name!r} (stations: {', '.join(self.stations)})") from None

    def judge_state(self) -> JudgeState:
        pub = self.relay_publisher
        return JudgeState(
            stations=[s.view() for s in self.stations.values()],
            bank=BankFigures.model_validate(self.hub.state.bank),
            bank_copy=self.bank_copy,
            relays=None
            if pub is None
            else RelayPublisherState(
                connected=pub.connected, published=pub.published, pending=pub.pending, dropped=pub.dropped
            ),
        )

    async def publish_ledger_head(self) -> None:
        """The ledger head moved without a deal (a seal, a draw, a reveal): both consoles and the audience show it."""
        await self.watch_bank()

    async def judge_command(self, name: str, action: StationAction, args: JudgeAction) -> StationView:
        station = self.station(name)
        if action in ("connect", "disconnect", "reset") and station.session.dealing and not args.confirm:
            raise StationError(
                f"station {name}: a deal is in progress; {action} voids it (reason operator): confirm to go on"
            )
        if action == "connect":
            cfg = station.config
            if args.device != "simulator" or cfg.kind != "simulator":
                cfg = station_on(cfg, args.device)
            device = open_station_device(cfg)
            try:
                await station.connect(device)
            except Exception:  # the device did not open: the station was left "connecting", every button off
                if station.status == "connecting":
                    station.link_failed()
                raise
        elif action == "disconnect":
            await station.disconnect()
        elif action == "reset":
            await station.reset()
        elif action in ("start", "resume"):
            if action == "start" and self.config.require_equipment_check:
                await self.bank.call(self._may_start, name)
            await station.start()
        elif action == "pause":
            await station.pause()
        elif action == "stop":
            await station.stop()
        elif action == "redeal":
            await station.redeal()
        elif action == "retry_bank":
            await station.retry_pending()
        elif action == "void_pending":
            await station.void_pending("judge")
        elif action == "show":
            await station.set_show_cards(True, "judge")
        elif action == "hide":
            await station.set_show_cards(False, "judge")
        elif action == "inject":
            if not await station.inject_fault(args.kind):
                raise StationError(f"station {name}: this device cannot simulate faults")
        else:
            raise StationError(f"unknown action {action!r}")
        return station.view()

    def _may_start(self, name: str) -> None:
        """On the bank's thread: refuse «Старт» without today's "before" check of the station (or an override)."""
        from datetime import date

        from dealer.documents.acts import may_start, no_check_before

        if not may_start(self.bank.bank, name, date.today()):
            raise no_check_before(name)

    def devices(self) -> list[DeviceEntry]:
        return [DeviceEntry.model_validate(d) for d in available_devices()]

    # -- director ------------------------------------------------------------------------------------------
    def publish_commitment(self, view: JsonObject) -> None:
        """Put a draw before the hall (its commitment, then V, then the reveal): see ``commitment_message``.
        The first V the hall is shown of each draw is kept in memory: the run checks the bank's V against it."""
        value = view.get("value")
        if isinstance(value, str):
            self.shown_values.setdefault(str(view["label"]), value)
        self.streams.publish(commitment_message(view))
