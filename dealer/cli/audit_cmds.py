"""``dealer audit``: the fairness audit of a set of deals (a deal file, audit JSON, or a simulated shuffler)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from dealer.fsutil import MAX_INPUT_BYTES, InputFileError, read_input, write_atomic

from . import kit
from .bank_cmds import bank_app
from .console import Console
from .i18n import error, language, t
from .options import BankOption
from .root import app

if TYPE_CHECKING:  # the audit pulls in numpy and scipy: imported when the command runs, not at CLI start-up
    from dealer.audit import AuditRecord
    from dealer.audit.engine import AuditResult
    from dealer.core.json_types import JsonObject

DEFAULT_ALPHA = 0.01  # dealer.audit.engine.DEFAULT_ALPHA (checked by a test)

out = Console(highlight=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)


def load_records(path: Path, fmt: str | None, max_bytes: int = MAX_INPUT_BYTES) -> tuple[list[AuditRecord], list[str]]:
    """Records from a file: the audit JSON, or any deal file the formats registry reads. Returns warnings too.
    Only a regular file of at most ``max_bytes`` is read (a FIFO, a device or a link to one is refused unread)."""
    from dealer.audit.inputs import looks_like_audit_json, parse_audit_json, records_from_boards
    from dealer.audit.records import AuditInputError

    try:
        data = read_input(path, max_bytes)
    except InputFileError as exc:
        raise AuditInputError("{path}: {exc}", path=path, exc=exc) from None
    if fmt in (None, "audit-json") and path.suffix.lower() == ".json" and looks_like_audit_json(data):
        return parse_audit_json(data, str(path)), []
    if fmt == "audit-json":
        return parse_audit_json(data, str(path)), []
    from dealer.formats import by_name, by_path, load_all

    load_all()
    reader = by_name(fmt) if fmt else by_path(str(path))
    result = reader.read(data, str(path))
    warnings = [
        t(
            "{path}: {where}: {reason} (deal left out)",
            path=path,
            where=error(p.where_phrase()),
            reason=error(p.reason_phrase()),
        )
        for p in result.problems
    ]
    return records_from_boards(result), warnings


def simulate_records(spec: str, deals: int, with_order: bool, station: str) -> list[AuditRecord]:
    from dealer.audit import AuditRecord, deal_from_order, parse_shuffler

    shuffler = parse_shuffler(spec)
    records = []
    for i in range(deals):
        order = shuffler.next_order()
        records.append(
            AuditRecord(
                deal_from_order(order), i + 1, station, None, tuple(int(c) for c in order) if with_order else None
            )
        )
    return records


def print_result(result: AuditResult, lang: str) -> None:
    from rich.table import Table
    from rich.text import Text

    from dealer.audit.engine import TITLES

    table = Table(title=t("Audit"))
    for head in (t("test"), t("statistic"), "p", t("p (Holm)"), t("result")):
        table.add_column(head)
    shown = {"pass": t("pass"), "fail": t("fail"), "skipped": t("skipped")}
    statistics = {"repeated deals": t("repeated deals"), "repeated pairs": t("repeated pairs"), "Wald χ²": t("Wald χ²")}
    colours = {"pass": "green", "fail": "bold red", "skipped": "dim"}
    for c in result.checks:
        stat_name = statistics.get(c.statistic_name, c.statistic_name)
        stat = f"{stat_name} = {c.statistic:.4g}" if c.statistic is not None else ""
        p = f"{c.p_value:.3g}" if c.p_value is not None else "—"
        ph = f"{c.p_holm:.3g}" if c.p_holm is not None else "—"
        name = c.id if lang == "en" or c.id not in TITLES else TITLES[c.id][1]
        table.add_row(name, stat, p, ph, Text(shown.get(c.status, c.status), style=colours[c.status]))
    out.print(table)
    for c in result.checks:
        if c.status == "fail":
            out.print(c.verdict_en if lang == "en" else c.verdict_ru, markup=False)
    for s in result.stations:
        state = t("random") if s.passed else t("NOT random: {failed}", failed=", ".join(s.failed))
        name = s.station or t("(imported)")
        out.print(t("station {name}: {n} deals, {state}", name=name, n=s.deals, state=state), markup=False)
    out.print(result.verdict_en if lang == "en" else result.verdict_ru, markup=False)


def audit_and_report(
    records: list[AuditRecord],
    scope: JsonObject,
    alpha: float,
    html: Path | None,
    json_path: Path | None,
    lang: str,
) -> AuditResult:
    from dealer.audit import run_audit
    from dealer.audit.report_json import to_json

    result = run_audit(records, alpha, scope)
    doc = to_json(result)
    if json_path is not None:
        write_atomic(json_path, json.dumps(doc, ensure_ascii=False, indent=1).encode())
    if html is not None:
        from dealer.audit.report_html import render_html

        write_atomic(html, render_html(result, lang, doc).encode())
    print_result(result, lang)
    return result


def _time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    from dealer.audit.inputs import parse_timestamp
    from dealer.audit.records import AuditInputError

    try:
        return parse_timestamp(value, option)
    except AuditInputError as exc:
        raise kit.BadParameter(error(exc), param_hint=option) from None


@app.command("audit")
def audit_cmd(
    path: Path | None = kit.Argument(None, help="Deal file: audit JSON, or any format the registry reads."),
    fmt: str | None = kit.Option(None, "--format", help="Format name when the extension does not tell it."),
    simulate: str | None = kit.Option(
        None, "--simulate", help="Audit deals from a shuffler instead of a file: fair, gsr:K (K riffles), gsr:K:SEED."
    ),
    deals: int = kit.Option(600, "--deals", min=1, max=1_000_000, help="With --simulate: how many deals."),
    hands_only: bool = kit.Option(False, "--hands-only", help="With --simulate: forget the dealing order."),
    station: str | None = kit.Option(None, "--station", help="Only the deals of this station."),
    since: str | None = kit.Option(None, "--since", help="Only deals dealt at or after this ISO time."),
    until: str | None = kit.Option(None, "--until", help="Only deals dealt before this ISO time."),
    alpha: float = kit.Option(DEFAULT_ALPHA, "--alpha", min=1e-9, max=0.5, help="Family-wise false-alarm rate."),
    html: Path | None = kit.Option(None, "--html", help="Write the HTML report here."),
    json_path: Path | None = kit.Option(None, "--json", help="Write the JSON report here."),
    save_deals: Path | None = kit.Option(None, "--save-deals", help="Write the audited deals as audit JSON."),
    lang: str | None = kit.Option(
        None, "--lang", help="Language of the report: ru or en (default: the command line's language)."
    ),
    check: bool = kit.Option(False, "--check", help="Exit with 1 when the dealing is found not random."),
    max_mib: int = kit.Option(
        MAX_INPUT_BYTES // 2**20, "--max-size", min=1, help="Largest file to read, in MiB (raise it for huge files)."
    ),
) -> None:
    """Test whether deals are as random as the rules require; print the verdict, write HTML/JSON reports."""
    lang = _check_lang(lang)
    if (path is None) == (simulate is None):
        raise kit.BadParameter(t("give a deal file or --simulate SHUFFLER (exactly one)"))
    since_t, until_t = _time(since, "--since"), _time(until, "--until")
    if path is not None:
        records, warnings = load_records(path, fmt, max_mib * 2**20)
        source = str(path)
    else:
        assert simulate is not None
        records, warnings = simulate_records(simulate, deals, not hands_only, "simulator"), []
        source = f"simulated {simulate}"  # recorded in the report (data, not a message)

    result = filter_audit_report(
        records, warnings, source, "dealer audit", station, since_t, until_t, alpha, html, json_path, save_deals, lang
    )
    if check and not result.passed:
        raise kit.Exit(1)


def _check_lang(lang: str | None) -> str:
    if lang is None:
        return language()
    if lang not in ("en", "ru"):
        raise kit.BadParameter(t("{value!r}: expected ru or en", value=lang), param_hint="--lang")
    return lang


def filter_audit_report(
    records: list[AuditRecord],
    warnings: list[str],
    source: str,
    command: str,
    station: str | None,
    since_t: datetime | None,
    until_t: datetime | None,
    alpha: float,
    html: Path | None,
    json_path: Path | None,
    save_deals: Path | None,
    lang: str,
) -> AuditResult:
    from dealer.audit.inputs import filter_records, records_to_json

    for w in warnings:
        err.print(t("warning: {text}", text=w), markup=False)
    records = filter_records(records, station, since_t, until_t)
    if not records:  # nothing to test is no evidence of random dealing
        from dealer.audit.records import AuditInputError

        if station is None and since_t is None and until_t is None:
            raise AuditInputError("{source}: no deals to audit", source=source)
        raise AuditInputError("{source}: no deals left to audit after --station, --since and --until", source=source)
    if save_deals is not None:
        write_atomic(save_deals, records_to_json(records))
    scope = {
        "source": source,
        "station": station,
        "since": since_t.isoformat() if since_t else None,
        "until": until_t.isoformat() if until_t else None,
        "warnings": len(warnings),
        "generated_by": command,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return audit_and_report(records, scope, alpha, html, json_path, lang)


@bank_app.command("audit")
def bank_audit_cmd(
    bank: Path = BankOption,
    station: str | None = kit.Option(None, "--station", help="Only the deals of this station."),
    since: str | None = kit.Option(None, "--since", help="Only deals committed at or after this ISO time."),
    until: str | None = kit.Option(None, "--until", help="Only deals committed before this ISO time."),
    alpha: float = kit.Option(DEFAULT_ALPHA, "--alpha", min=1e-9, max=0.5, help="Family-wise false-alarm rate."),
    html: Path | None = kit.Option(None, "--html", help="Write the HTML report here."),
    json_path: Path | None = kit.Option(None, "--json", help="Write the JSON report here."),
    save_deals: Path | None = kit.Option(None, "--save-deals", help="Write the audited deals as audit JSON."),
    lang: str | None = kit.Option(
        None, "--lang", help="Language of the report: ru or en (default: the command line's language)."
    ),
    check: bool = kit.Option(False, "--check", help="Exit with 1 when the dealing is found not random."),
) -> None:
    """Fairness audit of the bank's deals (all, one station, a time range); per station when there are several."""
    lang = _check_lang(lang)
    since_t, until_t = _time(since, "--since"), _time(until, "--until")
    if not bank.exists():
        raise kit.BadParameter(t("{bank}: no bank there", bank=bank), param_hint="--bank")
    from dealer.audit.bank_source import records_from_stored
    from dealer.bank.store import SqliteBank

    with SqliteBank(bank, bank.parent) as store:
        records, warnings = records_from_stored(store.iter_deals())
    result = filter_audit_report(
        records, warnings, str(bank), "dealer bank audit", station, since_t, until_t, alpha, html, json_path,
        save_deals, lang,
    )  # fmt: skip
    if check and not result.passed:
        raise kit.Exit(1)
