"""The verifiable draw (DESIGN.md §5): commit, public value, Rivest's sampler, reveal, bundle, verify.

The director's API is ``Director`` (over a ``dealer.bank.repository.BankRepository``, any engine); public values
are described with ``dice_spec`` or ``named_spec``; ``verify_bundle`` checks a published bundle without any database.
The names are loaded on first use, so that a module of the package (``dealer.draw.status`` for ``dealer bank
status``) can be imported without the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bundle import Check, verify_bundle
    from .director import Director, DrawnDeal
    from .protocol import DrawError, PublicValueSpec, dice_spec, named_spec

__all__ = ["Check", "Director", "DrawError", "DrawnDeal", "PublicValueSpec", "dice_spec", "named_spec", "verify_bundle"]
_HOME = {
    "Check": "bundle",
    "verify_bundle": "bundle",
    "Director": "director",
    "DrawnDeal": "director",
    "DrawError": "protocol",
    "PublicValueSpec": "protocol",
    "dice_spec": "protocol",
    "named_spec": "protocol",
}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
