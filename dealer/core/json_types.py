"""The type of a JSON document's object as ``json.loads`` returns it.

A bundle, a ledger entry's data or a status view is a JSON object whose members are of different JSON types.
Readers check each member they use (``isinstance``, a pydantic model, the bundle's ``check_shape``) before
relying on its type; writers build it from typed values and only serialise it.
"""

from __future__ import annotations

from typing import Any

# Any: json.loads (and json.dumps on the way out) types a JSON object's members as Any; one named alias
# instead of a bare dict[str, Any] in every signature, so a reader sees that the members are still unchecked.
JsonObject = dict[str, Any]

__all__ = ["JsonObject"]
