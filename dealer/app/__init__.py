"""The application layer: the dealing day's state machines, framework-free (no web framework, no I/O).

The web service, the CLI and the relay are adapters over it; this package imports none of them.
"""
