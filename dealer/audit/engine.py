"""Run every check, correct for multiplicity (Holm) and word the verdicts in English and Russian."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dealer.core.json_types import JsonObject
from dealer.i18n import pick_plural

from .checks import ALL_CHECKS, Check
from .records import AuditRecord, DealSet
from .stats import holm

DEFAULT_ALPHA = 0.01

TITLES: dict[str, tuple[str, str]] = {
    "patterns": ("Hand patterns", "Распределения мастей в руках"),
    "hcp_N": ("HCP of North", "Очки (HCP) Севера"),
    "hcp_E": ("HCP of East", "Очки (HCP) Востока"),
    "hcp_S": ("HCP of South", "Очки (HCP) Юга"),
    "hcp_W": ("HCP of West", "Очки (HCP) Запада"),
    "card_seat": ("Every card equally likely in every seat", "Каждая карта равновероятно у каждого игрока"),
    "pair_repeat": (
        "Pairs of cards together again in the next deal",
        "Пары карт снова вместе в следующей сдаче",
    ),
    "same_seat": ("Same card in the same seat in the next deal", "Та же карта у того же игрока в следующей сдаче"),
    "position_seat": ("Position in the dealing order against seat", "Позиция в порядке раздачи и место"),
    "order_kept": (
        "Runs of the previous deal's order kept in the next deal",
        "Сохранение порядка карт предыдущей сдачи",
    ),
    "duplicates": ("Duplicate deals", "Повторяющиеся сдачи"),
}

# What a failure means, in plain words.
HINTS: dict[str, tuple[str, str]] = {
    "patterns": (
        "some hand shapes come up more or less often than chance allows",
        "одни распределения встречаются чаще или реже, чем допускает случай",
    ),
    "hcp": (
        "this seat gets high cards more or less often than chance allows",
        "этот игрок получает старшие карты чаще или реже, чем допускает случай",
    ),
    "card_seat": (
        "some cards go to some seats more often than others",
        "некоторые карты попадают к некоторым игрокам чаще других",
    ),
    "pair_repeat": (
        "cards that shared a hand share a hand in the next deal more or less often than chance: "
        "the shuffle is too weak",
        "карты, бывшие в одной руке, оказываются вместе в следующей сдаче не так, как при случайной "
        "раздаче: тасовка недостаточна",
    ),
    "same_seat": (
        "cards stay in (or avoid) the seat they had in the previous deal",
        "карты остаются у того же игрока (или избегают его), что и в предыдущей сдаче",
    ),
    "position_seat": (
        "the seat a card goes to depends on when it is dealt",
        "место, куда идёт карта, зависит от момента раздачи",
    ),
    "order_kept": (
        "the cards of each previous hand come out in nearly the same order: the pack is barely shuffled",
        "карты каждой прежней руки выходят почти в том же порядке: колода почти не тасуется",
    ),
    "duplicates": (
        "the same deal appears more than once",
        "одна и та же сдача встречается более одного раза",
    ),
}


@dataclass
class StationSummary:
    station: str | None
    deals: int
    passed: bool
    failed: list[str]
    min_p_holm: float | None
    alpha: float  # the level this station was judged at: alpha / number of stations


@dataclass
class AuditResult:
    deals: int
    with_order: int
    pairs: int
    alpha: float
    checks: list[Check]
    passed: bool
    verdict_en: str
    verdict_ru: str
    stations: list[StationSummary] = field(default_factory=list)
    scope: JsonObject = field(default_factory=dict)
    dealset: DealSet | None = None

    def check(self, check_id: str) -> Check:
        return next(c for c in self.checks if c.id == check_id)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]


def _fmt(p: float) -> str:
    return "< 1e-12" if p < 1e-12 else f"= {p:.3g}"


def _comma(text: str) -> str:
    """Russian writes a decimal comma: ``0,05``, ``= 0,123``."""
    return text.replace(".", ",")


# the verdict when every test passed, with the count's plural form (CLDR, through Babel)
ALL_PASSED = {
    "en": {
        "one": "The {n} test is consistent with random dealing at the {alpha} level (family-wise, Holm).",
        "other": "All {n} tests are consistent with random dealing at the {alpha} level (family-wise, Holm).",
    },
    "ru": {
        "one": "{n} проверка из {n} согласуется со случайной раздачей на уровне {alpha} (с поправкой Холма).",
        "few": "Все {n} проверки согласуются со случайной раздачей на уровне {alpha} (с поправкой Холма).",
        "many": "Все {n} проверок согласуются со случайной раздачей на уровне {alpha} (с поправкой Холма).",
        "other": "Все {n} проверки согласуются со случайной раздачей на уровне {alpha} (с поправкой Холма).",
    },
}


def all_passed_verdict(n: int, alpha: float, lang: str) -> str:
    """``Все 3 проверки согласуются …`` / ``All 3 tests are consistent …``: the plural form agrees with ``n``."""
    shown = f"{alpha:g}"
    return pick_plural(ALL_PASSED[lang], lang, n).format(n=n, alpha=_comma(shown) if lang == "ru" else shown)


def _word(check: Check, alpha: float) -> None:
    en, ru = TITLES[check.id]
    if check.p_value is None or check.p_holm is None:
        check.status = "skipped"
        check.verdict_en = f"{en}: not tested — {check.reason_en}."
        check.verdict_ru = f"{ru}: не проверялось — {check.reason_ru}."
        return
    hint_en, hint_ru = HINTS["hcp" if check.id.startswith("hcp_") else check.id]
    p, ph = _fmt(check.p_value), _fmt(check.p_holm)
    p_ru, ph_ru, alpha_ru = _comma(p), _comma(ph), _comma(f"{alpha:g}")
    if check.p_holm < alpha:
        check.status = "fail"
        check.verdict_en = f"{en}: NOT random — {hint_en} (p {p}, after Holm {ph}, below {alpha:g})."
        check.verdict_ru = f"{ru}: НЕ случайно — {hint_ru} (p {p_ru}, с поправкой Холма {ph_ru}, меньше {alpha_ru})."
    else:
        check.status = "pass"
        check.verdict_en = f"{en}: consistent with random dealing (p {p}, after Holm {ph})."
        check.verdict_ru = f"{ru}: согласуется со случайной раздачей (p {p_ru}, с поправкой Холма {ph_ru})."


def audit_dealset(ds: DealSet, alpha: float = DEFAULT_ALPHA) -> AuditResult:
    """Run every check on one set of deals; Holm's correction over the checks that ran."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    checks = [run(ds) for run in ALL_CHECKS]
    ran = [c for c in checks if c.p_value is not None]
    for c, adj in zip(ran, holm([c.p_value for c in ran if c.p_value is not None]), strict=True):
        c.p_holm = adj
    for c in checks:
        _word(c, alpha)
    failed = [c for c in checks if c.status == "fail"]
    if not ran:
        en = "Too few deals to test anything."
        ru = "Слишком мало сдач для проверки."
    elif failed:
        names_en = "; ".join(TITLES[c.id][0] for c in failed)
        names_ru = "; ".join(TITLES[c.id][1] for c in failed)
        en = f"The dealing is NOT random at the {alpha:g} level (family-wise, Holm): {names_en}."
        ru = f"Раздача НЕ случайна на уровне {_comma(f'{alpha:g}')} (с поправкой Холма): {names_ru}."
    else:
        en = all_passed_verdict(len(ran), alpha, "en")
        ru = all_passed_verdict(len(ran), alpha, "ru")
    return AuditResult(
        deals=ds.n,
        with_order=int(ds.has_order.sum()),
        pairs=len(ds.pairs),
        alpha=alpha,
        checks=checks,
        passed=not failed,
        verdict_en=en,
        verdict_ru=ru,
        dealset=ds,
    )


def run_audit(
    records: Sequence[AuditRecord], alpha: float = DEFAULT_ALPHA, scope: JsonObject | None = None
) -> AuditResult:
    """Audit all the records together and, when they come from several stations, each station alone.

    A station's verdict uses alpha / (number of stations), so that scanning many stations does not by itself
    make one of them look guilty. The stations' ``min_p_holm`` are Holm-adjusted within the station only.
    """
    ds = DealSet.build(records)
    result = audit_dealset(ds, alpha)
    result.scope = dict(scope or {})
    stations = list(dict.fromkeys(ds.stations))
    if len(stations) > 1:
        # Bonferroni over the stations: the whole station table keeps its false-alarm rate at most alpha
        per_station = alpha / len(stations)
        for station in stations:
            sub = audit_dealset(DealSet.build([r for r in records if r.station == station]), per_station)
            p_values = [c.p_holm for c in sub.checks if c.p_holm is not None]
            result.stations.append(
                StationSummary(
                    station,
                    sub.deals,
                    sub.passed,
                    [c.id for c in sub.failed],
                    min(p_values) if p_values else None,
                    per_station,
                )
            )
    return result


def min_p(result: AuditResult) -> float:
    values = [c.p_holm for c in result.checks if c.p_holm is not None]
    return float(np.min(values)) if values else 1.0
