"""``dealer devices`` (candidate serial ports and USB devices) and ``dealer machine …`` (drive a dealing machine)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import kit
from .console import Console
from .i18n import error, language, t
from .root import app

if TYPE_CHECKING:
    from drivers.machine import MachineDriver

out = Console(highlight=False, markup=False)
machine_app = kit.Group(help="Talk to a dealing machine speaking the open protocol.", no_args_is_help=True)
app.add_group(machine_app, name="machine")


@app.command("devices")
def devices() -> None:
    """List candidate serial ports and USB devices matching known profiles (config/devices/)."""
    from rich.table import Table

    from drivers.discovery import serial_rows, usb_rows

    ports = serial_rows()
    table = Table(title=t("Serial ports"))
    for col in (t("device"), "USB VID:PID", t("serial number"), t("description"), t("profile")):
        table.add_column(col)
    for r in ports:
        table.add_row(r["device"], r["usb"], r["serial"], r["description"], r["profile"])
    out.print(table if ports else t("No serial ports found."))
    usb_found, problem = usb_rows()
    if problem:
        out.print(f"USB: {problem}")  # the USB library's own words
    elif usb_found:
        utable = Table(title=t("USB devices matching a profile"))
        for col in (t("bus:address"), "VID:PID", t("serial number"), t("profile"), t("open with")):
            utable.add_column(col)
        for r in usb_found:
            utable.add_row(r["bus"], r["usb"], r["serial"], r["profile"], r["open"])
        out.print(utable)
    else:
        out.print(t("No USB device matches a profile in config/devices/."))


def _driver(target: str) -> MachineDriver:
    from drivers.machine import MachineDriver
    from drivers.transport import open_transport

    open_transport(target)  # validate the spec now, with a clear error
    return MachineDriver(lambda: open_transport(target))


@machine_app.command("info")
def machine_info(
    target: str = kit.Argument(..., help="Device path, pyserial URL, tcp://HOST:PORT or usb:VID:PID."),
) -> None:
    """Connect, negotiate the protocol version and print the device's identity."""
    import asyncio

    async def main() -> None:
        drv = _driver(target)
        info = await drv.connect()
        try:
            labels = {
                "model": t("model"),
                "serial": t("serial"),
                "firmware": t("firmware"),
                "protocol_version": t("protocol_version"),
                "pockets": t("pockets"),
                "reader": t("reader"),
                "shuffler": t("shuffler"),
                "duplicator": t("duplicator"),
                "transport": t("transport"),
            }
            for field, label in labels.items():
                kit.echo(f"{label}: {getattr(info, field)}")
        finally:
            await drv.close()

    asyncio.run(main())


@machine_app.command("deal")
def machine_deal(
    target: str = kit.Argument(..., help="Device path, pyserial URL, tcp://HOST:PORT or usb:VID:PID."),
    count: int = kit.Option(1, "--count", "-n", min=1, help="Number of random deals."),
) -> None:
    """Deal random deals on the machine and print each as PBN (faults and lost links are reported)."""
    import asyncio

    from dealer.core import Deal, Seat
    from dealer.core.diagram import seat_hand_line
    from dealer.core.errors import DealerError
    from dealer.core.events import DealEnded, DeviceFault, Disconnected

    def said(ev: DeviceFault | Disconnected) -> str:
        return f"{ev.kind.value}: {ev.detail}" if isinstance(ev, DeviceFault) else ev.reason

    async def main() -> int:
        drv = _driver(target)
        await drv.connect()
        # the driver ends every operation (a fault when the device falls silent); this is only a last guard
        patience = drv.report_timeout + drv.handshake_timeout
        failures = 0
        try:
            for _ in range(count):
                deal_id = await drv.start_deal()
                while True:
                    try:
                        ev = await drv.next_event(patience)
                    except TimeoutError:
                        failures += 1
                        kit.echo(
                            t(
                                "deal {deal_id}: void: no word from the device for {seconds} s",
                                deal_id=deal_id,
                                seconds=round(patience),
                            )
                        )
                        return failures
                    if isinstance(ev, DealEnded) and ev.deal_id == deal_id:
                        assert ev.record is not None
                        dealt = Deal.from_bytes(ev.record)  # the four hands in the command line's language
                        hands = "  |  ".join(seat_hand_line(dealt, seat, language()) for seat in Seat)
                        kit.echo(t("deal {deal_id}: {hands}", deal_id=deal_id, hands=hands))
                        break
                    if isinstance(ev, DeviceFault) and ev.deal_id is not None and ev.deal_id != deal_id:
                        failures += 1  # about a deal printed before: the device reported more after its end
                        kit.echo(t("deal {deal_id}: void: {event}", deal_id=ev.deal_id, event=said(ev)))
                        continue
                    if isinstance(ev, DeviceFault | Disconnected):
                        failures += 1
                        kit.echo(t("deal {deal_id}: void: {event}", deal_id=deal_id, event=said(ev)))
                        if isinstance(ev, DeviceFault) and await drv.wait_connected(drv.handshake_timeout):
                            await drv.reset()
                        break
        finally:
            await drv.close()
        return failures

    try:
        failures = asyncio.run(main())
    except DealerError:
        raise
    if failures:
        raise kit.Exit(1)


@machine_app.command("conformance")
def machine_conformance(
    target: str = kit.Argument(..., help="Device path, pyserial URL, tcp://HOST:PORT or usb:VID:PID."),
    only: str = kit.Option("", "--only", help="Comma-separated checks to run (default: all)."),
    report: str = kit.Option("", "--report", help="Also write the report to this file."),
) -> None:
    """Check a device against the open protocol (PROTOCOL.md 1.2); print a report; exit 1 on any deviation."""
    import asyncio

    from drivers.conformance import CHECKS, run_conformance
    from drivers.transport import open_transport

    names = {n.strip() for n in only.split(",") if n.strip()} or None
    known = {name for name, _, _ in CHECKS}
    if names is not None and names - known:
        raise kit.BadParameter(
            t("unknown check(s) {unknown}; known: {known}", unknown=sorted(names - known), known=sorted(known)),
            param_hint="--only",
        )
    transport = open_transport(target)  # a bad spec fails here with a clear error
    result = asyncio.run(run_conformance(transport, target, names, progress=lambda line: kit.echo(line, err=True)))
    text = result.render(error)
    kit.echo(text, nl=False)
    if report:
        from pathlib import Path

        from dealer.fsutil import write_atomic

        write_atomic(Path(report), text.encode("utf-8"))
    if not result.ok:
        raise kit.Exit(1)
