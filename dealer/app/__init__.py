"""The application layer: the dealing day's rules and services, framework-free (no web framework, server or CLI
library — the ``layers`` contract of ``pyproject.toml`` puts it under the web, the CLI and the relay, and
``app-is-framework-free`` keeps its own imports clean).

The station's state machines and decisions (``station_state``, ``ledger_writes``, ``station_steps``); the
audience's messages, their hub and the wire to the relays (``public_messages``, ``public``, ``hub``, ``streams``,
``public_wire``, ``relay_signing``, ``nats_publisher``); long jobs (``jobs``); variant 1's boards (``closed``); the
director's steps (``exports``, ``board_views``, ``documents_desk``, ``draws``). The web service, the CLI and the
relay are adapters over it; this package imports none of them.
"""
