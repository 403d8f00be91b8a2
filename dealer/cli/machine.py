"""Machine output: JSON and hashes as plain bytes on stdout, whatever the terminal.

rich wraps long lines at the terminal's width and colours what it takes for numbers; a commitment, a
signature or a hash printed through it could not be copied or parsed. Everything a machine (or a person
copying a hash) reads goes through here instead.
"""

from __future__ import annotations

import sys

from dealer.core.json_types import json_text


def print_json(value: object, sort_keys: bool = True) -> None:
    """JSON (``json_text``), UTF-8, one trailing newline; never wrapped, never coloured."""
    print_line(json_text(value, sort_keys))


def print_line(text: str) -> None:
    """One line as UTF-8 bytes, whatever the console's or the locale's encoding (a Windows code page cannot hold
    every name; machine output is UTF-8 everywhere)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a stream of text only (a test's capture)
        sys.stdout.write(text + "\n")
    else:
        buffer.write((text + "\n").encode("utf-8", "backslashreplace"))
        buffer.flush()
