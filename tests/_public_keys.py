"""The keys each public message may carry: the expectation the stream and relay tests check every message against
(written from the public projection's specification, not taken from the code that builds the messages)."""

from __future__ import annotations

PUBLIC_KEYS = {
    "card": {"type", "station", "attempt", "position", "seat", "card"},
    "hidden": {"type", "station", "attempt", "position", "seat", "count"},
    "deal_started": {"type", "station", "attempt", "variant", "open_count"},
    "deal_voided": {"type", "station", "attempt", "reason"},
    "deal_committed": {"type", "station", "attempt", "bank_deal", "ledger_head", "formed"},
    "station": {"type", "station", "variant", "open_count", "status"},
    "cleared": {"type", "station"},  # the displays forget formation's deals (a station's, or all when null)
    "bank": {"type", "formed", "target", "ledger_head", "ledger_size"},
}
