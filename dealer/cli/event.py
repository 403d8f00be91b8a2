"""The event folder: where every command finds the running event's configuration, regulation, bank and
documents, the same way ``dealer serve`` does (README, «The event folder»).

The folder is ``--event DIR``, else ``DEALER_EVENT``, else the current folder. In it:

- the configuration: ``--config FILE``, else ``config/service.toml``, else the embedded one;
- the regulation: ``--regulation FILE``, else the configuration's ``regulation``, else ``config/regulation.toml``,
  else the embedded default — and then the command says so on stderr, never silently;
- ``var/`` (the configuration's ``var_dir``): the bank (``[bank] path``), its keys beside it, ``documents/``.

Relative paths in the configuration are taken from the event folder. Every command that acts by the regulation
names the one it uses on stderr (machine output on stdout stays clean).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from . import kit

if TYPE_CHECKING:
    from dealer.app.config import ServiceConfig
    from dealer.regulation import Regulation

ENV = "DEALER_EVENT"
EventOption = kit.Option(
    None, "--event", help="The event folder (its config/ and var/; default: DEALER_EVENT, then the current folder)."
)


class Event:
    """An event folder as the commands read it: its configuration and its regulation (a plain class: the
    dataclasses machinery costs the command line's start a few milliseconds)."""

    __slots__ = ("config", "config_file", "folder", "regulation", "regulation_file")

    def __init__(
        self,
        folder: Path,
        config: ServiceConfig,
        regulation: Regulation,
        regulation_file: Path | None,  # None: the embedded default regulation
        config_file: Path | None = None,  # None: the embedded configuration
    ) -> None:
        self.folder = folder
        self.config = config
        self.regulation = regulation
        self.regulation_file = regulation_file
        self.config_file = config_file

    def path(self, p: Path) -> Path:
        """A path of the configuration, taken from the event folder when relative."""
        return p if p.is_absolute() else self.folder / p

    @property
    def var_dir(self) -> Path:
        return self.path(self.config.var_dir)

    @property
    def bank_path(self) -> Path:
        return self.path(self.config.bank_path)

    @property
    def bank(self) -> Path:
        """The bank as the service opens it: the configuration's PostgreSQL URL, else its SQLite file."""
        return Path(self.config.bank_url) if self.config.bank_url else self.bank_path

    @property
    def keys(self) -> Path | None:
        return self.var_dir if self.config.bank_url else None

    @property
    def documents_dir(self) -> Path:
        return self.var_dir / "documents"  # where the consoles issue them (dealer.web.routes_documents)


def event_folder(event: Path | None) -> Path:
    if event is not None:
        return event
    env = os.environ.get(ENV, "")
    return Path(env) if env else Path(".")


def find_event(event: Path | None = None, regulation: Path | None = None, config: Path | None = None) -> Event:
    """The event of ``event`` (see the module's text); an unreadable file is an error naming it."""
    from dealer.app.config import load_config, load_config_embedded
    from dealer.regulation import load_regulation

    folder = event_folder(event)
    if event is not None and not folder.is_dir():
        from .i18n import t
        from .root import fail

        raise fail(t("--event {folder}: not a folder", folder=folder))
    config_file: Path | None = config if config is not None else folder / "config" / "service.toml"
    if config is None and not (config_file and config_file.is_file()):
        config_file = None
    cfg = load_config(config_file) if config_file is not None else load_config_embedded()
    chosen: Path | None = regulation
    if chosen is None and cfg.regulation is not None:
        chosen = cfg.regulation if cfg.regulation.is_absolute() else folder / cfg.regulation
    if chosen is None and (folder / "config" / "regulation.toml").is_file():
        chosen = folder / "config" / "regulation.toml"
    return Event(folder, cfg, load_regulation(chosen), chosen, config_file)


def regulation_line(ev: Event) -> str:
    """Which regulation a command acts by, in words: its file (or the embedded default), title, variant, sets."""
    from dealer.i18n import error_text

    from .i18n import language, t

    reg = ev.regulation
    what = error_text(reg.plan_phrase(), language())
    if ev.regulation_file is None:
        return t(
            "regulation: the embedded default (no config/regulation.toml in {folder}; give --event or --regulation): "
            "variant {variant}, copies of each board: {copies}; {plan}",
            folder=ev.folder.resolve(),
            variant=int(reg.variant),
            copies=reg.copies,
            plan=what,
        )
    return t(
        "regulation: {file} ({title}): variant {variant}, copies of each board: {copies}; {plan}",
        file=ev.regulation_file,
        title=reg.title or "—",
        variant=int(reg.variant),
        copies=reg.copies,
        plan=what,
    )


def say_regulation(ev: Event) -> None:
    """The regulation line on stderr, plain (machine output on stdout stays one document)."""
    import sys

    print(regulation_line(ev), file=sys.stderr, flush=True)
