"""The type of a JSON document's object as ``json.loads`` returns it.

A bundle, a ledger entry's data or a status view is a JSON object whose members are of different JSON types.
Readers check each member they use (``isinstance``, a pydantic model, the bundle's ``check_shape``) before
relying on its type; writers build it from typed values and only serialise it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from typing import Any

# Any: json.loads (and json.dumps on the way out) types a JSON object's members as Any; one named alias
# instead of a bare dict[str, Any] in every signature, so a reader sees that the members are still unchecked.
JsonObject = dict[str, Any]

_NOT_ASCII = re.compile("[^\x00-\x7e]")
# what stays escaped in JSON written as UTF-8: controls (DEL and C1: a terminal obeys CSI, U+009B), invisible format
# characters (bidirectional overrides, zero widths, the BOM), line and paragraph separators, lone surrogates (not
# UTF-8 at all), private and unassigned code points; JSON itself escapes U+0000–U+001F
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


@cache
def _shown(char: str) -> str:
    return json.dumps(char)[1:-1] if unicodedata.category(char) in _HIDDEN_CATEGORIES else char


def json_text(value: object, sort_keys: bool = True) -> str:
    """JSON for people and for publishing: indented, Cyrillic (every printable character) as itself, never
    ``\\u0422…``; only what would be invisible or obeyed by a terminal stays a ``\\uXXXX`` escape. Not for hashing
    (``canonical_json`` is)."""
    text = json.dumps(value, indent=2, sort_keys=sort_keys, ensure_ascii=False)
    return _NOT_ASCII.sub(lambda m: _shown(m.group()), text)


__all__ = ["JsonObject", "json_text"]
