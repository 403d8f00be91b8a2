"""Machine output: JSON and hashes as plain bytes on stdout, whatever the terminal.

rich wraps long lines at the terminal's width and colours what it takes for numbers; a commitment, a
signature or a hash printed through it could not be copied or parsed. Everything a machine (or a person
copying a hash) reads goes through here instead.
"""

from __future__ import annotations

import json
import sys


def print_json(value: object, sort_keys: bool = True) -> None:
    """JSON, indented, UTF-8, one trailing newline; never wrapped, never coloured."""
    print_line(json.dumps(value, indent=2, sort_keys=sort_keys))


def print_line(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
