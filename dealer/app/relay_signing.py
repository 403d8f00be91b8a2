"""The hall signs every message it sends the relays; a relay serves only what the hall signed (Ed25519).

Anyone who can publish on the broker (a laptop on the event network when NATS is open, or a leaked relay
credential) could otherwise put a "bank formed at 999" or a false commitment before every remote viewer. The hall
keeps a key of its own for the relays (``[relay] key``, default ``VAR/relay.key``, owner-only; its public half
beside it in ``relay.key.pub``), not the bank's key. Each message travels with two NATS headers: ``Nats-Msg-Id``
(``RUN-SEQ``: the hall's run and the message's number in it) and ``Dealer-Signature``, the signature of
``dealer-relay-v1 \\n event \\n Nats-Msg-Id \\n payload``, so a signature holds for one event, one place in one
run, and these bytes only. A relay started with ``--hall-key`` (the public key, or the ``.pub`` file) drops and
counts a message with no signature, a wrong one, or a number of a run it has already passed (a replay).

A third header, ``Dealer-Shown``, is when the hall showed the message on its own screen (seconds since the epoch,
the hall's clock), signed with it (``dealer-relay-v2 \n event \n Nats-Msg-Id \n shown \n payload``): a relay's
broadcast delay counts from it (``dealer.relay.feed``).
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dealer.core.errors import DealerError

SIGNATURE_HEADER = "Dealer-Signature"
ID_HEADER = "Nats-Msg-Id"
SHOWN_HEADER = "Dealer-Shown"
DOMAIN = b"dealer-relay-v2"
_SHOWN = re.compile(r"^[0-9]{1,12}\.[0-9]{6}$")
_HEX_KEY = re.compile(r"^[0-9a-fA-F]{64}$")
_MSG_ID = re.compile(r"^([0-9a-f]{1,32})-([0-9]{1,18})$")


class RelayKeyError(DealerError, ValueError):
    """The hall's relay key cannot be read or is not an Ed25519 key."""


def load_or_create_key(path: Path) -> Ed25519PrivateKey:
    """The hall's relay signing key from ``path`` (64 hex digits); made (owner-only) with its ``.pub`` if absent."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = path.read_text(encoding="ascii", errors="replace").strip()
        if not _HEX_KEY.match(text):
            raise RelayKeyError("{path}: not a relay signing key (64 hexadecimal digits)", path=path) from None
        key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(text))
    else:
        key = Ed25519PrivateKey.generate()
        raw = key.private_bytes_raw()
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(raw.hex() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    public = public_hex(key.public_key())
    pub = Path(f"{path}.pub")
    if not pub.is_file() or pub.read_text(encoding="ascii", errors="replace").strip() != public:
        pub.write_text(public + "\n", encoding="ascii")
    return key


def public_hex(key: Ed25519PublicKey) -> str:
    return key.public_bytes_raw().hex()


def load_public_key(spec: str) -> Ed25519PublicKey:
    """A relay's ``--hall-key``: the public key as 64 hex digits, or a file holding them (the hall's ``.pub``)."""
    text = spec.strip()
    if not _HEX_KEY.match(text):
        try:
            text = Path(spec).read_text(encoding="ascii", errors="replace").strip()
        except OSError as exc:
            raise RelayKeyError(
                "{spec}: neither a public key (64 hexadecimal digits) nor a readable file: {reason}",
                spec=spec,
                reason=exc.strerror or exc,
            ) from None
        if not _HEX_KEY.match(text):
            raise RelayKeyError("{spec}: holds no public key (64 hexadecimal digits)", spec=spec)
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(text))


def _signed(event: str, msg_id: str, payload: bytes, shown: str) -> bytes:
    return b"\n".join((DOMAIN, event.encode(), msg_id.encode(), shown.encode(), payload))


def sign(key: Ed25519PrivateKey, event: str, msg_id: str, payload: bytes, shown: str) -> str:
    return base64.b64encode(key.sign(_signed(event, msg_id, payload, shown))).decode("ascii")


class Verifier:
    """A relay's check of each message: signed by the hall for this event, and not a number already passed."""

    def __init__(self, key: Ed25519PublicKey, event: str) -> None:
        self.key = key
        self.event = event
        self.highest: dict[str, int] = {}  # the hall's run -> the highest message number served

    def check(self, headers: dict[str, str] | None, payload: bytes) -> str | None:
        """None when the message may be served; else why not (for the count and the log)."""
        headers = headers or {}
        msg_id, signature = headers.get(ID_HEADER, ""), headers.get(SIGNATURE_HEADER, "")
        shown = headers.get(SHOWN_HEADER, "")
        if not signature:
            return "unsigned"
        found = _MSG_ID.match(msg_id)
        if found is None:
            return "no message id of the hall"
        if not _SHOWN.match(shown):
            return "no time the hall showed it"
        try:
            self.key.verify(base64.b64decode(signature, validate=True), _signed(self.event, msg_id, payload, shown))
        except (InvalidSignature, ValueError):
            return "wrong signature"
        run, seq = found.group(1), int(found.group(2))
        if seq <= self.highest.get(run, 0):
            return "a replay of an earlier message"
        self.highest[run] = seq
        return None


def shown_at(headers: dict[str, str] | None) -> float | None:
    """When the hall showed a message (its signed ``Dealer-Shown``; check the signature first), or None."""
    shown = (headers or {}).get(SHOWN_HEADER, "")
    return float(shown) if _SHOWN.match(shown) else None
