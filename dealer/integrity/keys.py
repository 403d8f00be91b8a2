"""Checking the bank's Ed25519 signatures. The signing key itself is under the chief judge's custody
(``dealer.custody``): the bank holds it only while unlocked, never as a plain file.

cryptography loads when a signature is first checked: opening a bank to read its status goes without it.
"""

from __future__ import annotations


def verify_signature(public_key_hex: str, signature_hex: str, message: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        pub.verify(bytes.fromhex(signature_hex), message)
    except (ValueError, InvalidSignature):
        return False
    return True
