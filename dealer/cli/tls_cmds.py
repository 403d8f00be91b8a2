"""``dealer tls init``: a self-signed certificate for HTTPS on the hall's network (docs/service.md, "HTTPS")."""

from __future__ import annotations

from pathlib import Path

from . import kit
from .console import Console
from .event import EventOption
from .i18n import os_reason, t
from .machine import print_line
from .root import app, fail

out = Console(highlight=False, markup=False)
tls_app = kit.Group(help="HTTPS for dealer serve: the certificate the officials' browsers are shown.")
app.add_group(tls_app, name="tls", no_args_is_help=True)


def toml_string(path: Path) -> str:
    """``path`` as a TOML string: a literal one (no escapes: a Windows path's backslashes stay as they are)."""
    text = str(path) if path.is_absolute() else path.as_posix()
    if "'" in text or "\n" in text:
        import json

        return json.dumps(text, ensure_ascii=False)
    return f"'{text}'"


@tls_app.command("init")
def init_cmd(
    host: list[str] = kit.Option(
        [],
        "--host",
        help="Another name or IP address the browsers open the service by (the laptop's address on the hall's "
        "network); repeat for more. localhost, 127.0.0.1 and this computer's name are always in.",
    ),
    event: Path | None = EventOption,
    config: Path | None = kit.Option(
        None, "--config", "-c", help="Service config TOML (default: config/service.toml)."
    ),
    force: bool = kit.Option(False, "--force", help="Replace an existing certificate and key."),
) -> None:
    """Make a self-signed certificate and its key (EC P-256, 397 days) for dealer serve's HTTPS.

    They go where the configuration's [tls] names them, else into VAR as tls.crt and tls.key (the key owner-only);
    the command prints the certificate's SHA-256 fingerprint and the [tls] lines to add."""
    from dealer.app.tls import (
        CERT_NAME,
        KEY_NAME,
        VALIDITY_DAYS,
        TlsFilesExist,
        default_names,
        load_identity,
        make_certificate,
        valid_name,
        write_certificate,
    )

    from .event import find_event

    for name in host:
        if not valid_name(name.strip()):
            raise kit.BadParameter(t("{name!r} is neither an IP address nor a host name", name=name), "--host")
    ev = find_event(event, None, config)
    cfg = ev.config
    configured = cfg.tls_cert is not None and cfg.tls_key is not None
    if cfg.tls_cert is not None and cfg.tls_key is not None:
        cert_path, key_path = ev.path(cfg.tls_cert), ev.path(cfg.tls_key)
    else:
        cert_path, key_path = ev.var_dir / CERT_NAME, ev.var_dir / KEY_NAME
    names = default_names(tuple(h.strip() for h in host))
    cert_pem, key_pem = make_certificate(names, days=VALIDITY_DAYS)
    try:
        write_certificate(cert_path, key_path, cert_pem, key_pem, force)
    except TlsFilesExist as exc:
        raise fail(t("{path} exists: nothing was written (--force replaces the certificate and its key)",
                     path=exc.path)) from None  # fmt: skip
    except OSError as exc:
        raise fail(t("cannot write {path}: {reason}", path=exc.filename or cert_path, reason=os_reason(exc))) from None
    identity = load_identity(cert_path, key_path, str(cert_path))  # read back as dealer serve will
    out.print(t("certificate written to {cert}, its key (owner-only) to {key}", cert=cert_path, key=key_path))
    out.print(t("valid for {names} until {date}", names=", ".join(identity.names),
                date=identity.not_after.date().isoformat()))  # fmt: skip
    print_line(t("SHA-256 fingerprint {fingerprint}", fingerprint=identity.fingerprint))
    if configured:
        out.print(t("the configuration names these files already: restart dealer serve to use them"))
        return
    where = ev.config_file or ev.folder / "config" / "service.toml"
    out.print(t("add these lines to {config}, then restart dealer serve:", config=where))
    print_line("[tls]")
    print_line(f"cert = {toml_string(cfg.var_dir / CERT_NAME)}")
    print_line(f"key = {toml_string(cfg.var_dir / KEY_NAME)}")
