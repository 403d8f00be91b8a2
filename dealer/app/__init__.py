"""The application layer: the dealing day's rules and services, framework-free (no web framework, server or CLI
library — the ``layers`` contract of ``pyproject.toml`` and ``app-is-framework-free``).

The station's state machines (``station_state``, ``ledger_writes``); the audience's messages, their hub and the
wire to the relays (``public_messages``, ``public``, ``hub``, ``streams``, ``public_wire``, ``relay_signing``,
``nats_publisher``). The web service, the CLI and the relay are adapters over it; this package imports none of them.
"""
