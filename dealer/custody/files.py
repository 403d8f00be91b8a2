"""The custody record on disk: ``custody.json`` in the bank's key directory (it holds no secret in the clear).

An older bank's plain signing key (``bank-ed25519.pem``) is adopted by ``dealer custody init``: sealed into the
record under the chief judge's passphrase, then deleted.
"""

from __future__ import annotations

import os
from pathlib import Path

from dealer.fsutil import write_atomic

from .keyring import CustodyError, CustodyLockedError, CustodyRecord, Keyring, unlock_record

RECORD_FILE = "custody.json"
PLAIN_KEY_FILE = "bank-ed25519.pem"  # the pre-custody signing key, adopted and removed by ``custody init``


def record_path(key_dir: Path) -> Path:
    return key_dir / RECORD_FILE


def copy_record_path(copy: Path) -> Path:
    """Where a second copy of the bank (``[bank] copy``) keeps the custody record beside it (it is sealed)."""
    return copy.with_name(copy.name + ".custody.json")


def read_record(key_dir: Path) -> CustodyRecord:
    path = record_path(key_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise CustodyLockedError(
            "{path}: no custody record: the chief judge sets the custody up first", path=path
        ) from exc
    except OSError as exc:
        raise CustodyError("{path}: cannot be read ({reason})", path=path, reason=exc.strerror) from exc
    return CustodyRecord.from_json(raw[:65536], str(path))


def write_record(key_dir: Path, record: CustodyRecord) -> Path:
    key_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = record_path(key_dir)
    write_atomic(path, record.to_json())  # mkstemp: owner-only (0600)
    return path


def unlock(key_dir: Path, passphrase: str) -> Keyring:
    return unlock_record(read_record(key_dir), passphrase)


def plain_key(key_dir: Path) -> Keyring | None:
    """The pre-custody plain signing key in ``key_dir``, to adopt (None when there is none)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = key_dir / PLAIN_KEY_FILE
    if not path.exists():
        return None
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except ValueError as exc:
        raise CustodyError("{path}: not a PEM private key ({reason})", path=path, reason=exc) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise CustodyError("{path}: not an Ed25519 private key", path=path)
    return Keyring.of_private_key(key)


def remove_plain_key(key_dir: Path) -> None:
    path = key_dir / PLAIN_KEY_FILE
    size = path.stat().st_size
    with open(path, "r+b") as fh:  # overwrite before unlinking (best effort: an SSD may keep the old blocks)
        fh.write(os.urandom(size))
        fh.flush()
        os.fsync(fh.fileno())
    path.unlink()


def public_pem(public_key: str) -> bytes:
    """The raw Ed25519 public key (hex) as PEM, for verifiers."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
