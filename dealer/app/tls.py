"""HTTPS for the service: a self-signed certificate for the hall's laptop (``dealer tls init``) and the check of the
configured ``[tls]`` files before ``dealer serve`` listens (docs/service.md, "HTTPS").

On the hall's open Wi-Fi a plain-HTTP page gives the technical judge's and the director's secrets to anyone who
listens. With ``[tls] cert`` and ``key`` the service speaks HTTPS only; the certificate is self-signed (no
authority vouches for a laptop in a hall), so each browser is told once to trust it, after comparing its SHA-256
fingerprint with the one the service prints at start.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from dealer.fsutil import write_atomic

from .config import ConfigError

# below the 398 days browsers accept for a server certificate's lifetime (CA/Browser Forum; Safari refuses more)
VALIDITY_DAYS = 397
CERT_NAME = "tls.crt"
KEY_NAME = "tls.key"


@dataclass(frozen=True, slots=True)
class Identity:
    """What the start-up message says about the service's certificate."""

    fingerprint: str  # SHA-256 of the certificate's DER bytes, "AB:CD:…" as browsers show it
    names: tuple[str, ...]  # the host names and addresses it is valid for (subjectAltName)
    not_after: dt.datetime


_SERVER_KEY_USAGE = x509.KeyUsage(
    digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
    key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False, decipher_only=False,
)  # fmt: skip  # ECDSA signs the handshake; nothing else


def fingerprint(cert: x509.Certificate) -> str:
    return cert.fingerprint(hashes.SHA256()).hex(":").upper()


def valid_name(name: str) -> bool:
    """``name`` can stand in a certificate: an IP address, or a host name of letters, digits and hyphens."""
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    labels = name.rstrip(".").split(".")
    return all(label and len(label) <= 63 and label.isascii() and label.replace("-", "").isalnum() for label in labels)


def default_names(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """localhost, 127.0.0.1, ::1, this computer's name (and NAME.local, as phones find it on the local network)
    and ``extra`` (names or addresses), each once; a computer's name no certificate can hold is left out."""
    names = ["localhost", "127.0.0.1", "::1"]
    host = socket.gethostname().strip().rstrip(".")
    own = [host, f"{host}.local"] if host and "." not in host else [host]
    for name in (*own, *extra):
        name = name.strip()
        if name and valid_name(name) and name.lower() not in (n.lower() for n in names):
            names.append(name)
    return tuple(names)


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        pass
    if not valid_name(name):
        raise ValueError(f"not an IP address or a host name: {name!r}")
    return x509.DNSName(name.rstrip(".").lower())


def make_certificate(
    names: tuple[str, ...], now: dt.datetime | None = None, days: int = VALIDITY_DAYS
) -> tuple[bytes, bytes]:
    """A self-signed server certificate for ``names`` and its key (EC P-256), both PEM: (certificate, key)."""
    alt = [_general_name(n) for n in names]
    key = ec.generate_private_key(ec.SECP256R1())
    start = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(hours=1)  # a phone whose clock is a little behind
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"bridge-dealer {socket.gethostname()}"[:64])])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_SERVER_KEY_USAGE, critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


class TlsFilesExist(Exception):
    """``dealer tls init`` without ``--force`` found a file it would replace."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


def write_certificate(cert_path: Path, key_path: Path, cert_pem: bytes, key_pem: bytes, force: bool) -> None:
    """Write both files whole (the key owner-only, 0600, as the role secrets); an existing one is replaced only
    with ``force``."""
    if not force:
        for path in (cert_path, key_path):
            if path.exists():
                raise TlsFilesExist(path)
    write_atomic(key_path, key_pem)  # made by mkstemp: owner-only from its first byte
    os.chmod(key_path, 0o600)
    write_atomic(cert_path, cert_pem)
    os.chmod(cert_path, 0o644)  # public: browsers are shown it


def _names_of(cert: x509.Certificate) -> tuple[str, ...]:
    try:
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return ()
    return tuple(str(n.value) for n in alt if isinstance(n, x509.DNSName | x509.IPAddress))


def load_identity(cert_path: Path, key_path: Path, source: str, now: dt.datetime | None = None) -> Identity:
    """Check the ``[tls]`` files as the server will load them; ``ConfigError`` naming ``tls.cert`` or ``tls.key``."""
    try:
        cert_data = cert_path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            "tls.cert = {path!r}: cannot read: {reason}", source, path=str(cert_path), reason=exc.strerror or exc
        ) from None
    try:
        cert = x509.load_pem_x509_certificate(cert_data)
    except ValueError:
        raise ConfigError(
            "tls.cert = {path!r}: not a PEM certificate (dealer tls init makes one)", source, path=str(cert_path)
        ) from None
    try:
        key_data = key_path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            "tls.key = {path!r}: cannot read: {reason}", source, path=str(key_path), reason=exc.strerror or exc
        ) from None
    try:
        key = serialization.load_pem_private_key(key_data, password=None)
    except (ValueError, TypeError):  # TypeError: a key under a passphrase (the service has nobody to type it)
        raise ConfigError(
            "tls.key = {path!r}: not a PEM private key without a passphrase", source, path=str(key_path)
        ) from None
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    der = serialization.Encoding.DER
    if key.public_key().public_bytes(der, public) != cert.public_key().public_bytes(der, public):
        raise ConfigError(
            "tls.key = {path!r} is not the key of tls.cert = {cert!r}",
            source,
            path=str(key_path),
            cert=str(cert_path),
        )
    moment = now or dt.datetime.now(dt.UTC)
    if cert.not_valid_after_utc < moment:
        raise ConfigError(
            "tls.cert = {path!r} expired on {date} (dealer tls init --force makes a new one)",
            source,
            path=str(cert_path),
            date=cert.not_valid_after_utc.date().isoformat(),
        )
    return Identity(fingerprint(cert), _names_of(cert), cert.not_valid_after_utc)
