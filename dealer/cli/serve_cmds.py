"""``dealer serve``: the dealing service (audience display, judge's and director's consoles)."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from types import FrameType

import typer

from .app import app


@app.command("serve")
def serve(
    config: Path | None = typer.Option(
        None, "--config", "-c", help="Service config TOML (default: config/service.toml)."
    ),
    host: str | None = typer.Option(None, "--host", help="Address to listen on (default from the config: 127.0.0.1)."),
    port: int | None = typer.Option(None, "--port", help="Port to listen on (default from the config: 8000)."),
    regulation: Path | None = typer.Option(None, "--regulation", help="Regulation TOML (default: the config's)."),
) -> None:
    """Run the dealing service and print the links to open (audience, technical judge, director)."""
    import dataclasses

    import uvicorn

    from dealer.regulation import load_regulation
    from dealer.web.app import create_app
    from dealer.web.config import load_config
    from dealer.web.service import Service

    cfg = load_config(config)
    changes: dict[str, object] = {}
    if host is not None:
        changes["host"] = host
    if port is not None:
        changes["port"] = port
    if changes:
        cfg = dataclasses.replace(cfg, **changes)  # type: ignore[arg-type]
    reg = load_regulation(regulation or cfg.regulation)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    service = Service(cfg, reg)
    web = create_app(service)
    from dealer.bank.pg_store import redact

    bank_shown = redact(cfg.bank_url) if cfg.bank_url else str(cfg.bank_path)
    shown_host = "127.0.0.1" if cfg.host in ("0.0.0.0", "::", "") else cfg.host
    base = f"http://{shown_host}:{cfg.port}"
    typer.echo(
        "\n".join(
            [
                f"bridge-dealer service: {len(cfg.stations)} station(s), variant {int(reg.variant)}, "
                f"{reg.open_count()} open cards, bank target {reg.bank_target}, bank {bank_shown}",
                "Open these links (the secrets are in var/*.secret; keep the judge's and the director's private):",
                f"    audience display:  {base}/",
                f"    technical judge:   {base}/judge?token={service.secrets.secret('judge')}",
                f"    director:          {base}/director?token={service.secrets.secret('director')}",
                "Press Ctrl-C to stop.",
            ]
        ),
        err=False,
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            service.begin_shutdown()
            super().handle_exit(sig, frame)

    server = Server(
        uvicorn.Config(
            web,
            host=cfg.host,
            port=cfg.port,
            log_level="warning",
            timeout_graceful_shutdown=3,
            ws_max_size=cfg.limits.max_ws_message_bytes,  # a larger WebSocket message is refused unread
        )
    )
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled, after shutdown
        server.run()
    typer.echo("stopped")
