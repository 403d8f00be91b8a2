"""The dealing session: one per station, pure (no I/O). Turns device events into deals, voids and projections."""

from .projection import (
    PublicCardHidden,
    PublicCardOpen,
    PublicDealCommitted,
    PublicDealStarted,
    PublicDealVoided,
    PublicEvent,
)
from .session import (
    CardAccepted,
    CardIgnored,
    DealComplete,
    DealingSession,
    DealVoided,
    FaultReported,
    OperatorEvent,
    Step,
    VoidReason,
)

__all__ = [
    "CardAccepted",
    "CardIgnored",
    "DealComplete",
    "DealVoided",
    "DealingSession",
    "FaultReported",
    "OperatorEvent",
    "PublicCardHidden",
    "PublicCardOpen",
    "PublicDealCommitted",
    "PublicDealStarted",
    "PublicDealVoided",
    "PublicEvent",
    "Step",
    "VoidReason",
]
