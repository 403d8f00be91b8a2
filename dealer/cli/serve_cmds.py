"""``dealer serve``: the dealing service (hall and remote audience displays, judge's and director's consoles)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from . import kit
from .event import EventOption
from .i18n import os_reason, t
from .root import app

if TYPE_CHECKING:  # the socket and logging load when the service starts, not with the command line
    import socket
    from types import FrameType

    from dealer.app.config import ServiceConfig
    from dealer.app.tls import Identity


def _rehearsal_help() -> str:
    from dealer.regulation import REHEARSAL_TARGET  # the regulation's module loads only when the help is shown

    return f"Rehearsal: a separate bank in VAR/rehearsal, a target of {REHEARSAL_TARGET}, fast simulators."


REHEARSAL_PACE = 60.0  # simulator cards per second in a rehearsal: a deal in about a second


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything else is touched (a busy port changes nothing on disk)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    from dealer.serving.accept import paced

    return paced(sock)  # a crowd of viewers connecting is taken a few per loop turn: the consoles keep answering


@app.command("serve")
def serve(
    config: Path | None = kit.Option(
        None, "--config", "-c", help="Service config TOML (default: config/service.toml)."
    ),
    host: str | None = kit.Option(None, "--host", help="Address to listen on (default from the config: 127.0.0.1)."),
    port: int | None = kit.Option(None, "--port", help="Port to listen on (default from the config: 8000)."),
    regulation: Path | None = kit.Option(
        None, "--regulation", help="Regulation TOML (default: the config's, then the event's config/regulation.toml)."
    ),
    event: Path | None = EventOption,
    variant: int | None = kit.Option(
        None, "--variant", min=1, max=3, help="Dealing variant for this run (1 closed, 2 partially open, 3 open)."
    ),
    rehearsal: bool = kit.Option(
        False,
        "--rehearsal",
        help=_rehearsal_help,
    ),
) -> None:
    """Run the dealing service and print the links to open (hall, remote viewers, technical judge, director).

    The stations connect at start but deal nothing until the technical judge presses Start.
    """
    import dataclasses

    from dealer.regulation import DealingVariant, rehearsal_regulation

    from .event import find_event

    ev = find_event(event, regulation, config)  # the same lookup as every other command (dealer/cli/event.py)
    cfg = dataclasses.replace(ev.config, var_dir=ev.var_dir, bank_path=ev.bank_path, regulation=ev.regulation_file)
    identity = None
    if cfg.tls_cert is not None and cfg.tls_key is not None:  # HTTPS: the files checked before anything starts
        from dealer.app.tls import load_identity

        cert, key = ev.path(cfg.tls_cert), ev.path(cfg.tls_key)
        identity = load_identity(cert, key, cfg.source)
        cfg = dataclasses.replace(cfg, tls_cert=cert, tls_key=key)
    reg = ev.regulation
    if host is not None:
        cfg = dataclasses.replace(cfg, host=host)
    if port is not None:
        cfg = dataclasses.replace(cfg, port=port)
    if variant is not None:
        v = DealingVariant(variant)
        open_cards = (reg.open_cards or 32) if v is DealingVariant.PARTIALLY_OPEN else reg.open_cards
        reg = dataclasses.replace(reg, variant=v, open_cards=open_cards)
    if rehearsal:
        var_dir = cfg.var_dir / "rehearsal"
        stations = tuple(
            dataclasses.replace(s, cards_per_second=max(s.cards_per_second, REHEARSAL_PACE)) if s.kind == "simulator"
            else s
            for s in cfg.stations
        )  # fmt: skip
        cfg = dataclasses.replace(
            cfg, var_dir=var_dir, bank_path=var_dir / "bank.sqlite", stations=stations, rehearsal=True
        )
        reg = rehearsal_regulation(reg)
    try:
        sock = bind(cfg.host, cfg.port)
    except OSError as exc:
        kit.echo(
            t(
                "dealer serve: cannot listen on {host}:{port}: {reason} (another program, or another `dealer serve`, "
                "uses this port: stop it or pass --port N). Nothing was started or written.",
                host=cfg.host,
                port=cfg.port,
                reason=os_reason(exc),
            ),
            err=True,
        )
        raise kit.Exit(1) from None
    with sock:
        _run(cfg, reg, sock, rehearsal, identity)


def _on_terminal() -> bool:
    """Standard output is a terminal (people read it there), not a file or a pipe (a log someone keeps)."""
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _run(cfg: object, reg: object, sock: socket.socket, rehearsal: bool, identity: Identity | None = None) -> None:
    import uvicorn

    from dealer.app.config import ServiceConfig
    from dealer.app.service import Service
    from dealer.regulation import DealingVariant, Regulation
    from dealer.web.app import create_app

    assert isinstance(cfg, ServiceConfig) and isinstance(reg, Regulation)
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from dealer.app.custody import keep_memory_private

    keep_memory_private()  # the chief judge's key, once unlocked, is not readable by the account's other processes
    service = Service(cfg, reg)
    web = create_app(service)
    from dealer.bank.pg_store import redact

    bank_shown = redact(cfg.bank_url) if cfg.bank_url else str(cfg.bank_path)
    shown_host = "127.0.0.1" if cfg.host in ("0.0.0.0", "::", "") else cfg.host
    bound_port = sock.getsockname()[1]
    if ":" in shown_host:
        shown_host = f"[{shown_host}]"
    base = f"{'https' if identity else 'http'}://{shown_host}:{bound_port}"
    if reg.variant is DealingVariant.CLOSED:
        making = t(
            "{boards} boards ({copies} copies each), closed dealing: no bank",
            boards=reg.boards_per_session,
            copies=reg.copies,
        )
    else:
        making = t(
            "{n} open cards, bank target {target}, bank {bank}",
            n=reg.open_count(),
            target=reg.bank_target,
            bank=bank_shown,
        )
    secrets = cfg.var_dir / "*.secret"
    delay = t("{delay:g} s behind the hall", delay=cfg.broadcast_delay)
    stations = t("{n} stations", n=len(cfg.stations))
    head = t("bridge-dealer service: {stations}, variant {variant}, {making}", stations=stations,
             variant=int(reg.variant), making=making)  # fmt: skip
    role = {
        "hall": t("hall display:"),
        "remote": t("remote viewers:"),
        "judge": t("technical judge:"),
        "director": t("director:"),
    }
    width = max(len(v) for v in role.values()) + 2
    shown = _on_terminal()

    def token(name: str) -> str:
        """The role's secret on a terminal; in a file or a pipe (a log) only where to find it."""
        if shown:
            return service.secrets.secret(name)
        return "…   " + t(
            "(the secret is in {file}; links are shown on a terminal only)", file=cfg.var_dir / f"{name}.secret"
        )

    kit.echo(
        "\n".join(
            [
                (t("REHEARSAL — ") if rehearsal else "") + head,
                t("regulation: {file}", file=cfg.regulation)
                if cfg.regulation is not None
                else t("regulation: the embedded default (give --event or --regulation)"),
                t(
                    "Open these links (the secrets are in {secrets}; keep the judge's and the director's private):",
                    secrets=secrets,
                ),
                f"    {role['hall']:<{width}} {base}/   " + t("(real time, for the monitor in the playing hall)"),
                f"    {role['remote']:<{width}} {base}/remote   ({delay})",
                f"    {role['judge']:<{width}} {base}/judge?token={token('judge')}",
                f"    {role['director']:<{width}} {base}/director?token={token('director')}",
                *(_tls_lines(identity) if identity else _plain_lines(cfg)),
                t("The stations connect now; nothing is dealt until the technical judge presses Start."),
                t("Press Ctrl-C to stop."),
            ]
        ),
        err=False,
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            service.begin_shutdown()
            super().handle_exit(sig, frame)

    from dealer.serving.accept import PacedSocket
    from dealer.serving.guard import server_options

    if isinstance(sock, PacedSocket):  # caps per address and in all, a reserve for the consoles (guard.py)
        sock.guard = web.state.guard
    options = server_options(cfg.limits)
    if identity is not None:
        options.update(ssl_certfile=str(cfg.tls_cert), ssl_keyfile=str(cfg.tls_key))
    server = Server(uvicorn.Config(web, log_level="warning", timeout_graceful_shutdown=3, **options))
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled, after shutdown
        server.run(sockets=[sock])
    web.state.guard.report()  # the refusals not yet reported
    kit.echo(t("stopped"))


def _tls_lines(identity: Identity) -> list[str]:
    """What a judge compares with the browser's certificate page before trusting it (docs/judge.md)."""
    return [
        t("HTTPS: certificate SHA-256 {fingerprint}", fingerprint=identity.fingerprint),
        t(
            "    valid for {names} until {date}; a browser asks once to trust it: compare the fingerprint first",
            names=", ".join(identity.names),
            date=identity.not_after.date().isoformat(),
        ),
    ]


def _plain_lines(cfg: ServiceConfig) -> list[str]:
    """Plain HTTP on the hall's network: say what that means for the officials' links."""
    if cfg.host in ("127.0.0.1", "::1", "localhost"):
        return []
    if cfg.allow_plain_http:
        return [t("Plain HTTP, and [secrets] allow_plain_http = true: the officials' secrets cross the network in "
                  "clear (unsafe on an open Wi-Fi; dealer tls init sets up HTTPS)")]  # fmt: skip
    return [t("Plain HTTP: the officials' links work on this computer only; from other devices they are refused "
              "until HTTPS is set up (dealer tls init)")]  # fmt: skip
