"""Role secrets (technical judge, director): created on first start, kept owner-only, checked in constant time."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

ROLES = ("judge", "director")


def load_or_create_secret(var_dir: Path, role: str) -> str:
    """Read ``var_dir/<role>.secret``; create it (0600, 256 random bits) when absent."""
    var_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(var_dir, 0o700)
    path = var_dir / f"{role}.secret"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        os.chmod(path, 0o600)
        value = path.read_text(encoding="ascii").strip()
        if len(value) >= 16:
            return value
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC, 0o600)
    value = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(value + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    return value


class RoleSecrets:
    """The two roles' secrets; ``allow_plain_http``: they are taken even in clear from another computer (the
    configuration's ``[secrets] allow_plain_http``, unsafe on an open Wi-Fi: docs/service.md, "HTTPS")."""

    def __init__(self, judge: str, director: str, allow_plain_http: bool = False) -> None:
        if hmac.compare_digest(judge.encode(), director.encode()):
            raise ValueError("the judge's and the director's secrets must differ")
        self._secrets = {"judge": judge.encode(), "director": director.encode()}
        self.allow_plain_http = allow_plain_http

    def secret(self, role: str) -> str:
        return self._secrets[role].decode()

    def check(self, role: str, presented: str | None) -> bool:
        if presented is None:
            return False
        return hmac.compare_digest(self._secrets[role], presented.encode("utf-8", "replace"))
