"""The verifiable draw (DESIGN.md §5): commit, public value, Rivest's sampler, reveal, bundle, verify.

The director's API is ``Director`` (over a ``dealer.bank.repository.BankRepository``, any engine); public values
are described with ``dice_spec`` or ``named_spec``; ``verify_bundle`` checks a published bundle without any database.
The names are loaded on first use, so that a module of the package (``dealer.draw.status`` for ``dealer bank
status``) can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealer.core.lazy import lazy_names

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
__getattr__ = lazy_names(__name__, _HOME)
