"""The verifiable draw (DESIGN.md §5): commit, public value, Rivest's sampler, reveal, bundle, verify.

The director's API is ``Director`` (over a ``dealer.bank.store.SqliteBank``); public values are described
with ``dice_spec`` or ``named_spec``; ``verify_bundle`` checks a published bundle without any database.
"""

from .bundle import Check, verify_bundle
from .director import Director, DrawnDeal
from .protocol import DrawError, PublicValueSpec, dice_spec, named_spec

__all__ = ["Check", "Director", "DrawError", "DrawnDeal", "PublicValueSpec", "dice_spec", "named_spec", "verify_bundle"]
