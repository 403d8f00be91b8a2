"""The custody record (the signing key wrapped under the passphrase) and the unlocked :class:`Keyring`.

Wrapping: scrypt(passphrase, salt) gives the key-encryption key; AES-256-GCM seals the 32-byte Ed25519 seed with
associated data naming what it is (so a blob cannot be moved to another purpose or bank). Draw secrets and
results are sealed the same way under a key derived from the seed by HKDF-SHA256, each with its own context
(bank, draw label, purpose), so only the holder of the passphrase can read them before they are revealed.
"""

from __future__ import annotations

import json
import secrets
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dealer.core.errors import DealerError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

RECORD_FORMAT = "bridge-dealer-custody/1"
BLOB_VERSION = 1
NONCE_SIZE = 12
TAG_SIZE = 16
SEED_SIZE = 32
MIN_PASSPHRASE = 12
GENERATED_LENGTH = 16
# 32 lower-case letters and digits without the look-alikes (0/o, 1/l): 5 bits a character, 80 bits in 16
PASSPHRASE_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
DEFAULT_N_LOG2 = 17  # scrypt N = 2^17, r = 8: 128 MiB and about half a second on a laptop
MIN_N_LOG2 = 10  # what a record may say at least (tests use it; a real record is made with the default)
MAX_N_LOG2 = 22
SIGNING_CONTEXT = b"signing-key"


class CustodyError(DealerError):
    """A custody record, passphrase or sealed blob that cannot be used (wrong passphrase, damaged, mismatched)."""


class CustodyLockedError(CustodyError):
    """A step that needs the chief judge's key, asked for while it is locked."""


def check_passphrase(passphrase: str) -> str:
    """The passphrase as keyed (NFC); refuses one shorter than 12 characters."""
    text = unicodedata.normalize("NFC", passphrase)
    if len(text) < MIN_PASSPHRASE:
        raise CustodyError(
            "the passphrase has {count} characters: at least {least} are needed", count=len(text), least=MIN_PASSPHRASE
        )
    return text


def generate_passphrase() -> str:
    """16 characters of a 32-letter alphabet without look-alikes: 80 random bits, in groups of four."""
    chars = "".join(secrets.choice(PASSPHRASE_ALPHABET) for _ in range(GENERATED_LENGTH))
    return "-".join(chars[i : i + 4] for i in range(0, GENERATED_LENGTH, 4))


@dataclass(frozen=True, slots=True)
class KdfParams:
    salt: bytes
    n_log2: int = DEFAULT_N_LOG2
    r: int = 8
    p: int = 1

    def derive(self, passphrase: str) -> bytes:
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

        kdf = Scrypt(salt=self.salt, length=32, n=2**self.n_log2, r=self.r, p=self.p)
        return kdf.derive(check_passphrase(passphrase).encode("utf-8"))

    def to_dict(self) -> dict[str, object]:
        return {"name": "scrypt", "n_log2": self.n_log2, "p": self.p, "r": self.r, "salt": self.salt.hex()}


def seal_blob(key: bytes, plaintext: bytes, context: bytes) -> bytes:
    """``01 ‖ nonce ‖ AES-256-GCM(plaintext)`` with ``context`` as associated data."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(NONCE_SIZE)
    return bytes([BLOB_VERSION]) + nonce + AESGCM(key).encrypt(nonce, plaintext, _aad(context))


def open_blob(key: bytes, blob: bytes, context: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if len(blob) < 1 + NONCE_SIZE + TAG_SIZE or blob[0] != BLOB_VERSION:
        raise CustodyError("a sealed value is damaged ({size} bytes)", size=len(blob))
    try:
        return AESGCM(key).decrypt(blob[1 : 1 + NONCE_SIZE], blob[1 + NONCE_SIZE :], _aad(context))
    except InvalidTag as exc:
        raise CustodyError(
            "a sealed value does not open with this key: it was sealed by another key or altered"
        ) from exc


def is_sealed(blob: bytes, plain_size: int) -> bool:
    """Whether ``blob`` is a sealed value of a ``plain_size``-byte plaintext (not the plaintext itself)."""
    return len(blob) == 1 + NONCE_SIZE + plain_size + TAG_SIZE and blob[0] == BLOB_VERSION


def _aad(context: bytes) -> bytes:
    return b"bridge-dealer custody/1\x00" + context


@dataclass(frozen=True, slots=True)
class CustodyRecord:
    """What is stored: the KDF's parameters, the public key and the sealed signing seed. Holds no secret."""

    kdf: KdfParams
    public_key: str
    sealed_seed: bytes

    def to_json(self) -> bytes:
        doc = {
            "format": RECORD_FORMAT,
            "kdf": self.kdf.to_dict(),
            "public_key": self.public_key,
            "sealed_seed": self.sealed_seed.hex(),
        }
        return (json.dumps(doc, sort_keys=True, indent=1) + "\n").encode()

    @classmethod
    def from_json(cls, raw: bytes, where: str) -> CustodyRecord:
        try:
            doc = json.loads(raw)
            if doc["format"] != RECORD_FORMAT:
                raise ValueError(doc["format"])
            kdf = doc["kdf"]
            if kdf["name"] != "scrypt" or not MIN_N_LOG2 <= int(kdf["n_log2"]) <= MAX_N_LOG2:
                raise ValueError(kdf)
            params = KdfParams(bytes.fromhex(kdf["salt"]), int(kdf["n_log2"]), int(kdf["r"]), int(kdf["p"]))
            if len(params.salt) < 16 or not 1 <= params.r <= 32 or not 1 <= params.p <= 16:
                raise ValueError(kdf)
            public_key = str(doc["public_key"])
            if len(bytes.fromhex(public_key)) != 32:
                raise ValueError(public_key)
            sealed = bytes.fromhex(doc["sealed_seed"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CustodyError(
                "{where}: not a custody record of this program ({reason})", where=where, reason=exc
            ) from exc
        if not is_sealed(sealed, SEED_SIZE):
            raise CustodyError("{where}: the sealed signing key is damaged", where=where)
        return cls(params, public_key, sealed)


class Keyring:
    """The unlocked custody: the bank's signing key and the key that seals draw secrets, in memory only."""

    __slots__ = ("_key", "_wrap", "public_key")

    def __init__(self, seed: bytes) -> None:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        if len(seed) != SEED_SIZE:
            raise CustodyError("a signing seed has 32 bytes, not {size}", size=len(seed))
        self._key: Ed25519PrivateKey = Ed25519PrivateKey.from_private_bytes(seed)
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"bridge-dealer custody/1 draw-secrets")
        self._wrap = hkdf.derive(seed)
        raw = self._key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public_key: str = raw.hex()

    @classmethod
    def generate(cls) -> Keyring:
        return cls(secrets.token_bytes(SEED_SIZE))

    @classmethod
    def of_private_key(cls, key: Ed25519PrivateKey) -> Keyring:
        from cryptography.hazmat.primitives import serialization

        raw = key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        return cls(raw)

    def sign(self, message: bytes) -> str:
        """The Ed25519 signature of ``message``, hex."""
        return self._key.sign(message).hex()

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        return seal_blob(self._wrap, plaintext, context)

    def open(self, blob: bytes, context: bytes) -> bytes:
        return open_blob(self._wrap, blob, context)

    def _seed(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self._key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )

    def __repr__(self) -> str:
        return f"Keyring(public_key={self.public_key[:16]}…)"


def create_record(keyring: Keyring, passphrase: str, n_log2: int = DEFAULT_N_LOG2) -> CustodyRecord:
    """Seal ``keyring``'s signing seed under ``passphrase`` (a fresh salt)."""
    params = KdfParams(secrets.token_bytes(16), n_log2)
    kek = params.derive(passphrase)
    sealed = seal_blob(kek, keyring._seed(), SIGNING_CONTEXT + b"\x00" + keyring.public_key.encode())
    return CustodyRecord(params, keyring.public_key, sealed)


def unlock_record(record: CustodyRecord, passphrase: str) -> Keyring:
    """The keyring of ``record``; a wrong passphrase is a :class:`CustodyError` naming no detail of the key."""
    kek = record.kdf.derive(passphrase)
    try:
        seed = open_blob(kek, record.sealed_seed, SIGNING_CONTEXT + b"\x00" + record.public_key.encode())
    except CustodyError as exc:
        raise CustodyError("the passphrase is wrong (or the custody record was altered)") from exc
    keyring = Keyring(seed)
    if keyring.public_key != record.public_key:
        raise CustodyError("the custody record's public key is not its signing key's: the record was altered")
    return keyring


def rewrap_record(record: CustodyRecord, old: str, new: str) -> CustodyRecord:
    """The same signing key under a new passphrase (and a new salt)."""
    return create_record(unlock_record(record, old), new, record.kdf.n_log2)
