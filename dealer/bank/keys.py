"""The bank's Ed25519 signing key: created on first use in a private directory (0700, key file 0600).

cryptography loads when a key is first loaded, made or checked: opening a bank to read its status (``dealer bank
status``, the command line's light start) goes without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from dealer.core.errors import DealerError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

KEY_FILE = "bank-ed25519.pem"


class SigningKeyError(DealerError):
    pass


def load(key_dir: Path) -> Ed25519PrivateKey:
    """Load ``key_dir/bank-ed25519.pem`` (which must exist and be private)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = key_dir / KEY_FILE
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise SigningKeyError(
            "{path}: signing key is readable by others (mode {mode:o}); chmod 600 it", path=path, mode=mode
        )
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except ValueError as exc:
        raise SigningKeyError("{path}: not a PEM private key ({exc})", path=path, exc=exc) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError("{path}: not an Ed25519 private key", path=path)
    return key


def load_or_create(key_dir: Path) -> Ed25519PrivateKey:
    """Load ``key_dir/bank-ed25519.pem`` or create it (owner-only permissions) when absent."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = key_dir / KEY_FILE
    if path.exists():
        return load(key_dir)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    tmp = path.with_name(f"{KEY_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:  # link, not replace: of two processes making the key at once, one wins and the other loads its key
        os.link(tmp, path)
    except FileExistsError:
        return load(key_dir)
    finally:
        tmp.unlink()
    return key


def public_hex(key: Ed25519PrivateKey) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw.hex()


def public_pem(key: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def verify_signature(public_key_hex: str, signature_hex: str, message: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        pub = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        pub.verify(bytes.fromhex(signature_hex), message)
    except (ValueError, InvalidSignature):
        return False
    return True


def bank_key(key_dir: Path, bank_dir: Path, sealed_by: str | None) -> Ed25519PrivateKey:
    """The bank's own key: before the first seal, the one in ``key_dir`` (created there when absent); once a seal
    exists, only the key that signed it (public key ``sealed_by``), never a new one (#19 item 6)."""
    if sealed_by is None:
        return load_or_create(key_dir)
    path = key_dir / KEY_FILE
    key = load(key_dir) if path.exists() else None
    if key is not None and public_hex(key) == sealed_by:
        return key
    found = str(path) if key is not None else f"no {KEY_FILE} in {key_dir}"
    hint = f"give --keys with the directory holding the key of public key {sealed_by[:16]}…"
    default = bank_dir / KEY_FILE
    if default != path and default.exists():
        try:
            if public_hex(load(bank_dir)) == sealed_by:
                hint = f"the right one is {default}: give --keys {bank_dir} (or leave --keys out)"
        except (OSError, SigningKeyError):
            pass
    raise SigningKeyError(
        "{found}: not this bank's signing key: its seals are signed by public key {public}…; nothing was signed; "
        "{hint}",
        found=found,
        public=sealed_by[:16],
        hint=hint,
    )
