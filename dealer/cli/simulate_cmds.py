"""``dealer simulate machine``: a virtual dealing machine on a pseudo-terminal or a TCP port."""

from __future__ import annotations

import contextlib
from pathlib import Path

from . import kit
from .i18n import t
from .root import app

simulate_app = kit.Group(help="Simulated hardware for trials and tests.", no_args_is_help=True)
app.add_group(simulate_app, name="simulate")


@simulate_app.command("machine")
def simulate_machine(
    pty: bool = kit.Option(False, "--pty", help="Listen on a pseudo-terminal (the default)."),
    tcp: int | None = kit.Option(None, "--tcp", min=0, max=65535, help="Listen on this TCP port (0: any free one)."),
    host: str = kit.Option("127.0.0.1", "--host", help="Address to bind with --tcp."),
    link: Path | None = kit.Option(None, "--link", help="Path of the pty symlink (default: a temporary one)."),
    faults: str = kit.Option("", "--faults", help="Faults to inject, e.g. 'jam@2:17,wrong_pocket~0.05,noise~0.01'."),
    seed: int | None = kit.Option(None, "--seed", help="Seed of random faults and line noise."),
    pace: float = kit.Option(6.0, "--pace", min=0.0, help="Seconds per board (0 = as fast as possible)."),
    serial: str = kit.Option("SIM-000001", "--serial", help="Serial number the machine reports."),
) -> None:
    """Run a virtual dealing machine until Ctrl-C, printing where it listens."""
    import asyncio

    from drivers.simulator import VirtualMachine, parse_faults
    from drivers.simulator.endpoints import PtyEndpoint, TcpEndpoint

    if pty and tcp is not None:
        raise kit.BadParameter(t("choose one of --pty and --tcp"), param_hint="--pty/--tcp")
    plan = parse_faults(faults, seed)
    machine = VirtualMachine(pace=pace, faults=plan, serial=serial, history_limit=64)

    async def main() -> None:
        endpoint: PtyEndpoint | TcpEndpoint
        endpoint = TcpEndpoint(machine, host, tcp) if tcp is not None else PtyEndpoint(machine, link)
        await endpoint.start()
        target = endpoint.path if isinstance(endpoint, PtyEndpoint) else f"tcp://{host}:{endpoint.port}"
        print(t("listening: {where}", where=endpoint.where), flush=True)
        print(t("open with: {target}", target=target), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        import signal

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):  # Windows' loops take no handlers: Ctrl+C stops it there
                loop.add_signal_handler(sig, stop.set)
        runner = loop.create_task(machine.run())
        await stop.wait()
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        await endpoint.stop()
        done = t(
            "stopped after {n} operations ({completed} completed)", n=machine.operations, completed=machine.completed
        )
        print(done, flush=True)

    asyncio.run(main())
