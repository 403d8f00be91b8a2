"""The configuration of the scale-out parts: ``[bank] url`` and ``[relay]``, refused clearly when wrong."""

from __future__ import annotations

import pytest

from dealer.app.config import ConfigError, config_from_dict
from dealer.bank.pg_store import normalise_url, redact


def test_bank_url_and_relay_are_read() -> None:
    cfg = config_from_dict(
        {"bank": {"url": "postgresql://dealer:pw@db.example/bank"}, "relay": {"nats": "nats://n:4222", "event": "e-1"}}
    )
    assert cfg.bank_url == "postgresql://dealer:pw@db.example/bank"
    assert (cfg.relay_nats, cfg.relay_event) == ("nats://n:4222", "e-1")
    plain = config_from_dict({})
    assert plain.bank_url is None and plain.relay_nats is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"bank": {"url": "mysql://x/y"}}, "bank.url = 'mysql://x/y' must be a postgresql:// URL"),
        ({"bank": {"url": "postgresql://x/y", "path": "b.sqlite"}}, "both path and url"),
        ({"relay": {"nats": "http://x"}}, "relay.nats = 'http://x' must be a nats:// or tls:// URL"),
        ({"relay": {"nats": "nats://x", "event": "a b"}}, "relay.event: event name 'a b'"),
        ({"relay": {"nats": "nats://x", "secret": "s"}}, "unknown key relay.'secret'"),
    ],
)
def test_bad_values_are_refused_naming_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        config_from_dict(data, "service.toml")
    assert str(exc.value).startswith("service.toml: ") and message in str(exc.value)


def test_urls_survive_a_path_and_lose_their_password_in_messages() -> None:
    assert normalise_url("postgresql:/u@h/db") == "postgresql://u@h/db"  # what pathlib.Path makes of the URL
    assert normalise_url("postgresql://u@h/db") == "postgresql://u@h/db"
    shown = redact("postgresql://dealer:s3cret-pw@db.example:5433/bank")
    assert "s3cret-pw" not in shown and shown == "postgresql://dealer@db.example:5433/bank"
