"""The chief judge's custody of the bank's secrets (``docs/custody.md``).

One secret, the bank's Ed25519 signing key, is kept wrapped under a key derived from the chief judge's
passphrase (scrypt, AES-256-GCM). Unlocked, it is a :class:`Keyring`: it signs seals, commitments and voids, and
wraps what must stay unread before play (each draw's K and result, board files) under a key derived from it.
Nothing here does I/O: ``dealer.custody.files`` reads and writes the custody record.
"""

from .keyring import (
    CustodyError,
    CustodyLockedError,
    CustodyRecord,
    KdfParams,
    Keyring,
    check_passphrase,
    create_record,
    generate_passphrase,
    rewrap_record,
    unlock_record,
)

__all__ = [
    "CustodyError",
    "CustodyLockedError",
    "CustodyRecord",
    "KdfParams",
    "Keyring",
    "check_passphrase",
    "create_record",
    "generate_passphrase",
    "rewrap_record",
    "unlock_record",
]
