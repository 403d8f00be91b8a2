"""``dealer relay``: a stateless public relay serving the audience page and stream from NATS JetStream."""

from __future__ import annotations

import contextlib

from . import kit
from .i18n import error, t
from .root import app


@app.command("relay")
def relay(
    nats_url: str = kit.Option(..., "--nats", help="NATS server URL, e.g. nats://127.0.0.1:4222."),
    port: int = kit.Option(8080, "--port", help="Port to listen on."),
    host: str = kit.Option("127.0.0.1", "--host", help="Address to listen on."),
    event: str = kit.Option("event", "--event", help="The event's name (as in the hall's [relay] event)."),
    delay: float = kit.Option(0.0, "--delay", min=0.0, max=600.0, help="Broadcast delay for remote viewers, s."),
    language: str = kit.Option("ru", "--language", help="Default page language (ru or en)."),
    hall_key: str = kit.Option(
        ...,
        "--hall-key",
        help="The hall's public key for the relays (64 hex digits, or its relay.key.pub file): only messages the "
        "hall signed are served.",
    ),
) -> None:
    """Serve the audience page and the public stream to remote viewers (no secret; public routes only)."""
    import uvicorn

    from dealer.app.config import LANGUAGES
    from dealer.app.public_wire import check_event
    from dealer.relay.app import create_relay_app
    from dealer.serving.accept import listen

    if language not in LANGUAGES:
        raise kit.BadParameter(t("{value!r}: expected ru or en", value=language), param_hint="--language")
    if not nats_url.startswith(("nats://", "tls://")):
        raise kit.BadParameter(t("{url!r} must be a nats:// or tls:// URL", url=nats_url), param_hint="--nats")
    check_event(event)
    from dealer.app.nats_publisher import redact_url
    from dealer.app.relay_signing import RelayKeyError, Verifier, load_public_key

    try:
        verifier = Verifier(load_public_key(hall_key), event)
    except RelayKeyError as exc:
        raise kit.BadParameter(error(exc), param_hint="--hall-key") from None
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    web = create_relay_app(nats_url, event, delay, language, verifier=verifier)
    kit.echo(
        t(
            "bridge-dealer relay: event {event!r} from {nats}, delay {delay:g} s, on http://{host}:{port}/",
            event=event,
            nats=redact_url(nats_url),
            delay=delay,
            host=host,
            port=port,
        )
    )
    from dealer.app.config import Limits
    from dealer.relay.app import MAX_VIEWERS
    from dealer.serving.guard import ConnectionGuard, server_options

    # a relay often sits behind a reverse proxy (one address for all): no per-address cap, but a total below the
    # file limit and a deadline for every request (a slow client is closed, guard.py)
    limits = Limits(max_connections=MAX_VIEWERS + 1000, max_connections_per_address=MAX_VIEWERS + 1000)
    sock = listen(host, port)  # new viewers are taken a few per loop turn: a crowd cannot stall the others
    sock.guard = ConnectionGuard(limits)
    options = server_options(limits)
    server = uvicorn.Server(uvicorn.Config(web, log_level="warning", timeout_graceful_shutdown=1, **options))
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
