"""Observed-against-expected plots as inline SVG (matplotlib, Agg backend; text kept as text)."""

from __future__ import annotations

import io
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from dealer.core.cards import RANK_CHARS, SUIT_SYMBOLS

from . import exact
from .checks import hcp_of, overlap_tables
from .engine import AuditResult

LABELS = {
    "en": {
        "observed": "observed",
        "expected": "expected (exact)",
        "hands": "hands",
        "pattern": "hand pattern",
        "hcp": "HCP",
        "patterns_title": "Hand patterns",
        "hcp_title": "HCP of all hands",
        "heat_title": "Card × seat: (observed − expected) / sd",
        "pairs_title": "Pairs together again in the next deal, per pair of deals",
        "pairs_x": "repeated pairs S",
        "pairs_y": "pairs of deals",
        "seats": "NESW",
    },
    "ru": {
        "observed": "наблюдаемое",
        "expected": "ожидаемое (точно)",
        "hands": "руки",
        "pattern": "распределение",
        "hcp": "очки (HCP)",
        "patterns_title": "Распределения мастей",
        "hcp_title": "Очки всех рук",
        "heat_title": "Карта × игрок: (наблюдаемое − ожидаемое) / ст. откл.",
        "pairs_title": "Пары карт снова вместе в следующей сдаче",
        "pairs_x": "повторившиеся пары S",
        "pairs_y": "пары сдач",
        "seats": "СВЮЗ",
    },
}

_SVG_HEAD = re.compile(r"^.*?(?=<svg)", re.S)


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element to inline in HTML (no XML prolog)."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "bridge-dealer-audit"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return _SVG_HEAD.sub("", buf.getvalue(), count=1)


def patterns_svg(result: AuditResult, lang: str = "en", top: int = 16) -> str:
    text = LABELS[lang]
    table = result.check("patterns").details.get("table", [])[:top]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    x = np.arange(len(table))
    ax.bar(x - 0.2, [r["observed"] for r in table], 0.4, label=text["observed"], color="#3b6ea5")
    ax.bar(x + 0.2, [r["expected"] for r in table], 0.4, label=text["expected"], color="#c8a04a")
    ax.set_xticks(x, [r["pattern"] for r in table], rotation=60, fontsize=8)
    ax.set_xlabel(text["pattern"])
    ax.set_ylabel(text["hands"])
    ax.set_title(text["patterns_title"])
    ax.legend()
    return to_svg(fig)


def hcp_svg(result: AuditResult, lang: str = "en") -> str:
    text = LABELS[lang]
    ds = result.dealset
    n = result.deals
    observed = np.bincount(hcp_of(ds).ravel(), minlength=38) if ds is not None and n else np.zeros(38)
    expected = 4 * n * exact.hcp_distribution()
    fig, ax = plt.subplots(figsize=(9, 3.4))
    x = np.arange(38)
    ax.bar(x, observed, 0.8, label=text["observed"], color="#3b6ea5")
    ax.plot(x, expected, "o-", color="#c8a04a", markersize=3, label=text["expected"])
    ax.set_xlabel(text["hcp"])
    ax.set_ylabel(text["hands"])
    ax.set_title(text["hcp_title"])
    ax.legend()
    return to_svg(fig)


def card_seat_svg(result: AuditResult, lang: str = "en") -> str:
    text = LABELS[lang]
    n = max(result.deals, 1)
    observed = np.array(result.check("card_seat").details["observed"], dtype=np.float64)
    residual = (observed - n / 4) / np.sqrt(n * 3 / 16)
    fig, ax = plt.subplots(figsize=(11, 2.6))
    image = ax.imshow(residual.T, cmap="RdBu_r", vmin=-4, vmax=4, aspect="auto")
    ax.set_yticks(range(4), list(text["seats"]))
    ax.set_xticks(range(52), [RANK_CHARS[c % 13] for c in range(52)], fontsize=7)
    for s in range(1, 4):
        ax.axvline(13 * s - 0.5, color="black", linewidth=0.8)
    for s in range(4):
        ax.text(13 * s + 6, -0.75, SUIT_SYMBOLS[s], ha="center", fontsize=12, color="#b00" if s in (1, 2) else "#000")
    ax.set_title(text["heat_title"], pad=26)
    fig.colorbar(image, ax=ax, fraction=0.02)
    return to_svg(fig)


def pair_repeat_svg(result: AuditResult, lang: str = "en") -> str | None:
    text = LABELS[lang]
    ds = result.dealset
    if ds is None or not len(ds.pairs):
        return None
    tables = overlap_tables(ds)
    s = (tables * (tables - 1) // 2).sum(axis=(1, 2))
    law = exact.overlap_pair_law()
    support = np.flatnonzero(law > 1e-5)
    lo, hi = int(min(support[0], s.min())), int(max(support[-1], s.max()))
    fig, ax = plt.subplots(figsize=(9, 3.2))
    ax.hist(s, bins=[x - 0.5 for x in range(lo, hi + 2)], color="#3b6ea5", label=text["observed"])
    x = np.arange(lo, hi + 1)
    ax.plot(x, law[lo : hi + 1] * len(s), color="#c8a04a", label=text["expected"])
    ax.set_xlabel(text["pairs_x"])
    ax.set_ylabel(text["pairs_y"])
    ax.set_title(text["pairs_title"])
    ax.legend()
    return to_svg(fig)


def all_plots(result: AuditResult, lang: str = "en") -> dict[str, str]:
    plots = {
        "patterns": patterns_svg(result, lang),
        "hcp": hcp_svg(result, lang),
        "card_seat": card_seat_svg(result, lang),
    }
    pairs = pair_repeat_svg(result, lang)
    if pairs is not None:
        plots["pair_repeat"] = pairs
    return plots
