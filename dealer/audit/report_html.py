"""The audit as one self-contained HTML page (jinja2; plots inline as SVG)."""

from __future__ import annotations

import jinja2

from dealer.core.json_types import JsonObject

from .engine import AuditResult
from .plots import all_plots
from .report_json import to_json

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "title": "Fairness audit of the dealing",
        "scope": "Scope",
        "all": "all deals",
        "deals": "deals",
        "with_order": "with dealing order",
        "pairs": "pairs of consecutive deals",
        "holm": "family-wise, Holm's correction",
        "holm_short": "Holm",
        "tests": "Tests",
        "test": "Test",
        "statistic": "Statistic",
        "verdict": "Verdict",
        "stations": "Stations",
        "station": "Station",
        "result": "Result",
        "imported": "(imported)",
        "ok": "random",
        "bad": "NOT random",
        "duplicates": "Duplicate deals",
        "same_deal": "the same deal",
        "no_duplicates": "No deal occurs twice.",
        "plots": "Observed against expected",
        "patterns": "Hand patterns",
        "pattern": "Pattern",
        "probability": "Probability",
        "observed": "Observed",
        "expected": "Expected",
        "hcp": "High-card points by seat",
        "seat": "Seat",
        "mean_hcp": "Mean HCP (exact 10)",
        "footer": "Expected values are exact (combinatorics). Method, power and calibration: docs/audit.md.",
    },
    "ru": {
        "title": "Проверка случайности раздачи",
        "scope": "Выборка",
        "all": "все сдачи",
        "deals": "сдачи",
        "with_order": "с порядком раздачи",
        "pairs": "пары соседних сдач",
        "holm": "групповой уровень, поправка Холма",
        "holm_short": "Холм",
        "tests": "Проверки",
        "test": "Проверка",
        "statistic": "Статистика",
        "verdict": "Вывод",
        "stations": "Места раздачи",
        "station": "Место",
        "result": "Итог",
        "imported": "(импорт)",
        "ok": "случайно",
        "bad": "НЕ случайно",
        "duplicates": "Повторяющиеся сдачи",
        "same_deal": "одна и та же сдача",
        "no_duplicates": "Ни одна сдача не встречается дважды.",
        "plots": "Наблюдаемое и ожидаемое",
        "patterns": "Распределения мастей",
        "pattern": "Распределение",
        "probability": "Вероятность",
        "observed": "Наблюдаемое",
        "expected": "Ожидаемое",
        "hcp": "Очки по игрокам",
        "seat": "Игрок",
        "mean_hcp": "Среднее (точно 10)",
        "footer": "Ожидаемые значения точные (комбинаторика). Метод, мощность и калибровка: docs/audit.md.",
    },
}

SEAT_NAMES = {"en": "NESW", "ru": "СВЮЗ"}

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("dealer.audit", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    undefined=jinja2.StrictUndefined,
)


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "—"
    return "< 1e-12" if p < 1e-12 else f"{p:.3g}"


def render_html(result: AuditResult, lang: str = "en", doc: JsonObject | None = None) -> str:
    if lang not in TEXT:
        raise ValueError(f"unknown language {lang!r}: expected en or ru")
    data = doc if doc is not None else to_json(result)
    text = TEXT[lang]
    scope = data["scope"]
    scope_text = ", ".join(f"{k} = {v}" for k, v in scope.items() if v is not None) or text["all"]
    tests = {t["id"]: t for t in data["tests"]}
    hcp = [
        {
            "seat": SEAT_NAMES[lang][i],
            "mean": tests[f"hcp_{s}"]["details"].get("mean"),
            "statistic": tests[f"hcp_{s}"]["statistic"],
            "df": tests[f"hcp_{s}"]["df"],
            "p": tests[f"hcp_{s}"]["p_value"],
        }
        for i, s in enumerate("NESW")
    ]
    template = _ENV.get_template("report.html.j2")
    return template.render(
        r=data,
        t=text,
        lang=lang,
        scope_text=scope_text,
        plots=all_plots(result, lang),
        patterns=tests["patterns"]["details"].get("table", []),
        hcp=hcp,
        fmt_p=_fmt_p,
    )
