"""The service configuration (TOML): stations, bank, language, role secrets, broadcast delay.

Unknown keys and bad values are refused with the file, the key, the value and what is allowed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from dealer.core.cards import Seat
from dealer.core.errors import DealerError
from drivers.registry import device_kinds

LANGUAGES = ("en", "ru")
DEFAULT_PATH = Path("config/service.toml")


class ConfigError(DealerError, ValueError):
    PREFIX = "{source}: "  # put before every template (the catalogue's keys include it)

    def __init__(self, template: str, source: str, /, **params: object) -> None:
        super().__init__(self.PREFIX + template, source=source, **params)


@dataclass(frozen=True, slots=True)
class StationConfig:
    name: str
    kind: str = "simulator"
    url: str | None = None
    cards_per_second: float = 8.7
    fault_rate: float = 0.0
    auto_redeal: bool = False
    first_seat: Seat = Seat.N
    seed: int | None = None
    calibration: Path | None = None  # kind = "camera": the calibration file (optional for a virtual: source)


@dataclass(frozen=True, slots=True)
class Limits:
    """What a client may send and how many may watch (docs/service.md, "Limits"); checked in ``limits.py``."""

    max_body_bytes: int = 65536
    max_json_depth: int = 32
    max_ws_message_bytes: int = 65536
    max_public_connections: int = 1000
    max_connections: int = 4000  # all connections but the consoles' reserve (kept below the file limit)
    max_connections_per_address: int = 32
    console_reserve: int = 64  # connections kept for the addresses the consoles signed in from
    request_timeout_s: int = 10  # a request's headers and body must arrive whole within this


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    language: str = "ru"
    host: str = "127.0.0.1"
    port: int = 8000
    var_dir: Path = Path("var")
    broadcast_delay: float = 0.0
    regulation: Path | None = None
    bank_path: Path = Path("var/bank.sqlite")
    bank_busy_timeout: float = 2.0  # seconds a station's write waits for another writer before it is retried
    seal_every_deals: int = 50  # automatic seal after this many new deals (0: off)
    seal_every_minutes: float = 10.0  # automatic seal of new entries after this many minutes (0: off)
    judge_secret: str | None = None
    director_secret: str | None = None
    stations: tuple[StationConfig, ...] = field(default_factory=lambda: (StationConfig("A"),))
    limits: Limits = field(default_factory=Limits)
    source: str = "defaults"
    bank_url: str | None = None  # [bank] url = "postgresql://…": the bank on PostgreSQL instead of bank_path
    bank_copy: Path | None = None  # [bank] copy: a second copy of the SQLite bank, kept and verified (another disk)
    relay_nats: str | None = None  # [relay] nats: publish the public stream to NATS JetStream for the relays
    relay_event: str = "event"  # [relay] event: the event's name (one stream per event)
    relay_key: Path | None = None  # [relay] key: the hall's key signing for the relays (default VAR/relay.key)
    require_equipment_check: bool = True  # «Старт» needs the station's "before" check today (or an override)
    tls_cert: Path | None = None  # [tls] cert: HTTPS with this certificate (PEM; `dealer tls init` makes one)
    tls_key: Path | None = None  # [tls] key: its private key (PEM, no passphrase)
    allow_plain_http: bool = False  # [secrets] allow_plain_http: role secrets taken in clear from the network
    rehearsal: bool = False  # `dealer serve --rehearsal` (not a file key): every page says «РЕПЕТИЦИЯ»


_TOP = {
    "language", "host", "port", "var_dir", "broadcast_delay", "regulation", "bank", "secrets", "stations", "limits",
    "relay", "require_equipment_check", "tls",
}  # fmt: skip
# [limits]: key -> (lowest, highest) allowed
_LIMITS = {
    "max_body_bytes": (1024, 16 * 1024 * 1024),
    "max_json_depth": (4, 256),
    "max_ws_message_bytes": (1024, 16 * 1024 * 1024),
    "max_public_connections": (1, 100_000),
    "max_connections": (16, 1_000_000),
    "max_connections_per_address": (1, 100_000),
    "console_reserve": (1, 10_000),
    "request_timeout_s": (1, 600),
}
_STATION = {
    "name", "kind", "url", "cards_per_second", "fault_rate", "auto_redeal", "first_seat", "seed", "calibration"
}  # fmt: skip


def _unknown(table: Mapping[str, object], allowed: set[str], where: str, source: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ConfigError(
            "unknown key {where}{extra!r} (allowed: {allowed})",
            source,
            where=where,
            extra=extra[0],
            allowed=", ".join(sorted(allowed)),
        )


def _table(value: object, name: str, allowed: set[str], source: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ConfigError("[{name}] must be a table", source, name=name)
    _unknown(value, allowed, f"{name}.", source)
    return value


def _secret(secrets: Mapping[str, object], role: str, source: str) -> str | None:
    value = secrets.get(role)
    if role in secrets and (not isinstance(value, str) or len(value) < 16):
        raise ConfigError("secrets.{role} must be a string of at least 16 characters", source, role=role)
    return value if isinstance(value, str) else None


def _num(value: object, key: str, lo: float, hi: float, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        raise ConfigError(
            "{key} = {value!r} must be a number in {lo:g}..{hi:g}", source, key=key, value=value, lo=lo, hi=hi
        )
    return float(value)


def _str(value: object, key: str, source: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError("{key} = {value!r} must be a non-empty string", source, key=key, value=value)
    return value


def _station(data: object, i: int, source: str) -> StationConfig:
    where = f"stations[{i}]"
    if not isinstance(data, dict):
        raise ConfigError("{where} must be a table", source, where=where)
    _unknown(data, _STATION, f"{where}.", source)
    name = _str(data.get("name", chr(ord("A") + i)), f"{where}.name", source)
    kind = data.get("kind", "simulator")
    kinds = device_kinds()  # the kinds registered with drivers (entry points of the group dealer.devices)
    if kind not in kinds:
        raise ConfigError(
            "{where}.kind = {kind!r}: allowed {STATION_KINDS}",
            source,
            where=where,
            kind=kind,
            STATION_KINDS=", ".join(kinds),
        )
    url = data.get("url")
    if url is not None:
        url = _str(url, f"{where}.url", source)
    elif kind != "simulator":
        raise ConfigError("{where}.url is required for kind = {kind!r}", source, where=where, kind=kind)
    if kind == "simulator" and url not in (None, "pty", "tcp", "usb"):
        raise ConfigError(
            "{where}.url = {url!r}: a simulator sits on 'pty' (default), 'tcp' (loopback) or 'usb' (pyusb backend)",
            source,
            where=where,
            url=url,
        )
    auto = data.get("auto_redeal", False)
    if not isinstance(auto, bool):
        raise ConfigError("{where}.auto_redeal = {auto!r} must be true or false", source, where=where, auto=auto)
    first = data.get("first_seat", "N")
    if first not in ("N", "E", "S", "W"):
        raise ConfigError("{where}.first_seat = {first!r}: allowed N, E, S, W", source, where=where, first=first)
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError("{where}.seed = {seed!r} must be a whole number", source, where=where, seed=seed)
    calibration = data.get("calibration")
    if calibration is not None:
        calibration = _str(calibration, f"{where}.calibration", source)
        if kind != "camera":
            raise ConfigError(
                "{where}.calibration = {calibration!r}: only a kind = 'camera' station has one",
                source,
                where=where,
                calibration=calibration,
            )
    elif kind == "camera" and not str(url).startswith("virtual:"):
        raise ConfigError(
            "{where}.calibration is required for a camera on {url!r} (only a virtual: source calibrates itself)",
            source,
            where=where,
            url=url,
        )
    return StationConfig(
        name=name,
        kind=kind,
        url=url,
        cards_per_second=_num(data.get("cards_per_second", 8.7), f"{where}.cards_per_second", 0.01, 1e6, source),
        fault_rate=_num(data.get("fault_rate", 0.0), f"{where}.fault_rate", 0.0, 1.0, source),
        auto_redeal=auto,
        first_seat=Seat.parse(first),
        seed=seed,
        calibration=Path(calibration) if calibration is not None else None,
    )


def config_from_dict(data: Mapping[str, object], source: str = "config") -> ServiceConfig:
    _unknown(data, _TOP, "", source)
    language = data.get("language")
    if language is None:  # not in the file: LANG when it names ru or en, else Russian
        from dealer.i18n import DEFAULT_LANGUAGE, language_from_env

        language = language_from_env() or DEFAULT_LANGUAGE
    if not isinstance(language, str) or language not in LANGUAGES:
        raise ConfigError(
            "language = {language!r}: allowed {LANGUAGES}", source, language=language, LANGUAGES=", ".join(LANGUAGES)
        )
    port = data.get("port", 8000)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError("port = {port!r} must be a whole number in 0..65535", source, port=port)
    bank_keys = {"path", "url", "busy_timeout", "seal_every_deals", "seal_every_minutes", "copy"}
    bank = _table(data.get("bank", {}), "bank", bank_keys, source)
    secrets = _table(data.get("secrets", {}), "secrets", {"judge", "director", "allow_plain_http"}, source)
    allow_plain_http = secrets.get("allow_plain_http", False)
    if not isinstance(allow_plain_http, bool):
        raise ConfigError("secrets.allow_plain_http = {value!r} must be true or false", source, value=allow_plain_http)
    tls_cert, tls_key = _tls(data.get("tls", {}), source)
    judge_secret, director_secret = (_secret(secrets, role, source) for role in ("judge", "director"))
    if judge_secret is not None and judge_secret == director_secret:
        raise ConfigError("secrets.judge and secrets.director must differ (separate roles)", source)
    stations_raw = data.get("stations", [{"name": "A"}])
    if not isinstance(stations_raw, list) or not stations_raw:
        raise ConfigError("stations must be a non-empty array of tables ([[stations]])", source)
    stations = tuple(_station(s, i, source) for i, s in enumerate(stations_raw))
    names = [s.name for s in stations]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ConfigError("station name {dup!r} is used twice", source, dup=dup)
    regulation = data.get("regulation")
    relay_nats, relay_event, relay_key = _relay(data.get("relay", {}), source)
    bank_url = bank.get("url")
    if bank_url is not None:
        bank_url = _str(bank_url, "bank.url", source)
        if not bank_url.startswith(("postgresql://", "postgres://")):
            raise ConfigError(
                "bank.url = {bank_url!r} must be a postgresql:// URL (or use bank.path)", source, bank_url=bank_url
            )
        if "path" in bank:
            raise ConfigError("[bank] has both path and url: give one (path: SQLite file, url: PostgreSQL)", source)
        if "copy" in bank:  # the server's own replication keeps a PostgreSQL bank's second copy, not a file
            raise ConfigError(
                "bank.copy is for a SQLite bank; a PostgreSQL bank's second copy is a synchronous standby "
                "(streaming replication, docs/scale.md)",
                source,
            )
    seal_deals = bank.get("seal_every_deals", 50)
    if isinstance(seal_deals, bool) or not isinstance(seal_deals, int) or not 0 <= seal_deals <= 1_000_000:
        raise ConfigError(
            "bank.seal_every_deals = {seal_deals!r} must be a whole number in 0..1000000", source, seal_deals=seal_deals
        )
    limits_table = data.get("limits", {})
    if not isinstance(limits_table, dict):
        raise ConfigError("[limits] must be a table", source)
    _unknown(limits_table, set(_LIMITS), "limits.", source)
    limits: dict[str, int] = {}
    for key, (lo, hi) in _LIMITS.items():
        value = limits_table.get(key, getattr(Limits(), key))
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ConfigError(
                "limits.{key} = {value!r} must be a whole number in {lo}..{hi}",
                source,
                key=key,
                value=value,
                lo=lo,
                hi=hi,
            )
        if key in limits_table:
            limits[key] = value
    require_check = data.get("require_equipment_check", True)
    if not isinstance(require_check, bool):
        raise ConfigError("require_equipment_check = {value!r} must be true or false", source, value=require_check)
    return ServiceConfig(
        require_equipment_check=require_check,
        language=language,
        host=_str(data.get("host", "127.0.0.1"), "host", source),
        port=port,
        var_dir=Path(_str(data.get("var_dir", "var"), "var_dir", source)),
        broadcast_delay=_num(data.get("broadcast_delay", 0.0), "broadcast_delay", 0.0, 600.0, source),
        regulation=Path(_str(regulation, "regulation", source)) if regulation is not None else None,
        bank_path=Path(_str(bank.get("path", "var/bank.sqlite"), "bank.path", source)),
        bank_copy=Path(_str(bank["copy"], "bank.copy", source)) if "copy" in bank else None,
        bank_busy_timeout=_num(bank.get("busy_timeout", 2.0), "bank.busy_timeout", 0.0, 600.0, source),
        seal_every_deals=seal_deals,
        seal_every_minutes=_num(bank.get("seal_every_minutes", 10.0), "bank.seal_every_minutes", 0.0, 1440.0, source),
        judge_secret=judge_secret,
        director_secret=director_secret,
        stations=stations,
        limits=Limits(**limits),
        source=source,
        relay_nats=relay_nats,
        relay_event=relay_event,
        relay_key=relay_key,
        bank_url=bank_url,
        tls_cert=tls_cert,
        tls_key=tls_key,
        allow_plain_http=allow_plain_http,
    )


def _tls(table: object, source: str) -> tuple[Path | None, Path | None]:
    """``[tls] cert`` and ``key``: both or neither (the files themselves are checked by ``dealer.app.tls``)."""
    tls = _table(table, "tls", {"cert", "key"}, source)
    if not tls:
        return None, None
    if "cert" not in tls or "key" not in tls:
        raise ConfigError(
            "[tls] needs both cert and key (the files dealer tls init makes); tls.{missing} is missing",
            source,
            missing="key" if "cert" in tls else "cert",
        )
    return Path(_str(tls["cert"], "tls.cert", source)), Path(_str(tls["key"], "tls.key", source))


def _relay(table: object, source: str) -> tuple[str | None, str, Path | None]:
    if not isinstance(table, dict):
        raise ConfigError("[relay] must be a table", source)
    _unknown(table, {"nats", "event", "key"}, "relay.", source)
    key = table.get("key")
    key_path = Path(_str(key, "relay.key", source)) if key is not None else None
    url = table.get("nats")
    if url is not None:
        url = _str(url, "relay.nats", source)
        if not url.startswith(("nats://", "tls://")):
            raise ConfigError("relay.nats = {url!r} must be a nats:// or tls:// URL", source, url=url)
    event = _str(table.get("event", "event"), "relay.event", source)
    from dealer.app.public_wire import WireError, check_event

    try:
        check_event(event)
    except WireError as exc:
        raise ConfigError("relay.event: {exc}", source, exc=exc) from exc
    return url, event, key_path


def parse_config(text: str, source: str) -> ServiceConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("not valid TOML: {exc}", source, exc=exc) from exc
    return config_from_dict(data, source)


def load_config_embedded() -> ServiceConfig:
    text = resources.files("dealer").joinpath("config/service.toml").read_text(encoding="utf-8")
    return parse_config(text, "embedded config/service.toml")


def load_config(path: str | Path | None = None) -> ServiceConfig:
    """Load ``path``; without one, ``config/service.toml`` when present, else the embedded default."""
    if path is None:
        if DEFAULT_PATH.is_file():
            path = DEFAULT_PATH
        else:
            return load_config_embedded()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("cannot read: {strerror}", str(p), strerror=exc.strerror) from exc
    return parse_config(text, str(p))
