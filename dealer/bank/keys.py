"""The bank's Ed25519 signing key: created on first use in a private directory (0700, key file 0600)."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dealer.core.errors import DealerError

KEY_FILE = "bank-ed25519.pem"


class SigningKeyError(DealerError):
    pass


def load(key_dir: Path) -> Ed25519PrivateKey:
    """Load ``key_dir/bank-ed25519.pem`` (which must exist and be private)."""
    path = key_dir / KEY_FILE
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise SigningKeyError(f"{path}: signing key is readable by others (mode {mode:o}); chmod 600 it")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except ValueError as exc:
        raise SigningKeyError(f"{path}: not a PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path}: not an Ed25519 private key")
    return key


def load_or_create(key_dir: Path) -> Ed25519PrivateKey:
    """Load ``key_dir/bank-ed25519.pem`` or create it (owner-only permissions) when absent."""
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = key_dir / KEY_FILE
    if path.exists():
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise SigningKeyError(f"{path}: signing key is readable by others (mode {mode:o}); chmod 600 it")
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError(f"{path}: not an Ed25519 private key")
        return key
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return key


def public_hex(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def public_pem(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def verify_signature(public_key_hex: str, signature_hex: str, message: bytes) -> bool:
    try:
        pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        pub.verify(bytes.fromhex(signature_hex), message)
    except (ValueError, InvalidSignature):
        return False
    return True
