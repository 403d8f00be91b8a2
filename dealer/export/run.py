"""Making a session's boards on a device named as the judge or the CLI names it: open it through
:func:`drivers.open_device` (``simulator`` starts the virtual machine on a pty), run :class:`BoardMaker` on it,
close it. The one set-up the CLI (``dealer export boards``) and the director's console share."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from drivers import open_device, parse_device_id
from drivers.device import MachineInfo

from .at_rest import AtRest
from .boards import SessionBoard
from .driver import DriverCopyMaker
from .journal import FoulCopy
from .machine import BoardMaker, CopyMaker, MakeReport, ProgressCallback

SIMULATOR_NAME = "BOARDS"  # the simulated machine's serial number is SIM-BOARDS


@dataclass(frozen=True, slots=True)
class BoardsDone:
    report: MakeReport
    machine: MachineInfo | None  # the machine's DEVICE_INFO, for the board-making act


async def make_boards_on(
    device: str,
    boards: Sequence[SessionBoard],
    journal: Path,
    *,
    max_attempts: int = 3,
    on_progress: ProgressCallback | None = None,
    before_remake: Callable[[FoulCopy], Awaitable[None]] | None = None,
    wrap: Callable[[CopyMaker], CopyMaker] | None = None,
    pace: float = 0.5,
    faults: str = "",
    seed: int | None = None,
    at_rest: AtRest | None = None,
) -> BoardsDone:
    """Make every copy of ``boards`` on ``device`` (a device id: ``simulator``, ``serial:PATH``, a path,
    ``tcp://HOST:PORT``, ``usb:VID:PID``). ``pace``, ``faults`` and ``seed`` set up the simulator; ``wrap``
    wraps the copy maker (a watchdog). Whatever fails, the device is closed."""
    kind, url = parse_device_id(device)
    dev = open_device(kind, url, name=SIMULATOR_NAME, pace=pace, faults=faults, seed=seed)
    await dev.open()
    try:
        machine = dev.board_machine()
        maker: CopyMaker = DriverCopyMaker(machine)
        if wrap is not None:
            maker = wrap(maker)
        made = BoardMaker(
            maker,
            journal,
            max_attempts=max_attempts,
            on_progress=on_progress,
            before_remake=before_remake,
            at_rest=at_rest,
        )
        report = await made.run_async(boards)
        return BoardsDone(report, machine.info)
    finally:
        with contextlib.suppress(Exception):
            await dev.close()
