"""The answer of a run in a few short lines: what ``run`` and ``demo`` print first on stdout (the first
line starts with ``Answer``), before the per-target table; the warnings and caveats go to stderr."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .design import design_counts
from .items import disagreeing_targets
from .verdicts import UNINFORMATIVE_MARK

MAX_NAMES = 4  # targets named on one line; the rest counted
MAX_WIDTH = 70  # characters of names on one line (the answer's lines stay under ~110)


def names(items: Sequence[str], limit: int = MAX_NAMES, width: int = MAX_WIDTH) -> str:
    """``a, b, c`` (at most ``limit`` named and at most ``width`` characters of them, at least one; then
    ``and N more``)."""
    k = 1
    while k < min(limit, len(items)) and len(", ".join(items[:k + 1])) <= width:
        k += 1
    shown = ", ".join(items[:k])
    return shown + (f" and {len(items) - k} more" if len(items) > k else "")


def _label(v: Mapping[str, Any]) -> str:
    items = f" ({v['items']})" if v.get("items") else ""
    return v["target"] + items + ("" if v.get("informative", True) else UNINFORMATIVE_MARK)


def verdict_lines(vds: Sequence[Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """At most three lines: each winner with the targets it wins (two winners at most), then the targets
    without one."""
    won: dict[str, list[str]] = {}
    for v in vds:
        if v.get("winner"):
            won.setdefault(v["winner"], []).append(_label(v))
    lines = [f"{indent}{w} wins on {names(ts)} (alone in the first significance cluster)"
             for w, ts in list(won.items())[:2]]
    if len(won) > 2:
        lines.append(f"{indent}{len(won) - 2} more winners in the table below")
    open_ = [v for v in vds if not v.get("winner")]
    if len(open_) == 1 and open_[0].get("clusters"):
        lines.append(f"{indent}no single winner on {_label(open_[0])}: {names(open_[0]['clusters'][0])} not separable")
    elif open_:
        lines.append(f"{indent}no single winner on {names([_label(v) for v in open_])}")
    return lines


def answer_lines(results: Mapping[str, Any], no_correlations: str | None = None,
                 warnings: int = 0) -> list[str]:  # fmt: skip
    """The run's answer in at most ten short lines, the first starting with ``Answer``: the system level's
    winners (the level to choose a metric with), the item level's, where the levels disagree, the power at
    this size when ``clir-eval design`` has run, and how many warnings were printed (on stderr)."""
    if no_correlations:
        return [f"Answer: none; no correlations ({no_correlations})"]
    vds = results.get("verdicts") or []
    if not vds:
        return ["Answer: no significance clusters in this run (correlation.verdicts off); the highest τ per "
                "measure is in the table below"]
    n = max((v.get("n_systems") or 0 for v in vds), default=0)
    lines = [f"Answer (system level, {n} systems; the level to choose a metric with):", *verdict_lines(vds)]
    items = (results.get("item_level") or {}).get("verdicts") or []
    if items:
        lines.append("Item level (which queries or documents a metric misjudges; a diagnosis, not a choice):")
        lines += verdict_lines(items)[:2]
        clash = list(dict.fromkeys(disagreeing_targets(results)))
        if clash:
            lines.append(f"  the levels disagree on {names(clash)}: both can hold; choose with the system level")
    counts = design_counts(results)
    if counts:
        goal, rows = counts
        lines.append(f"Power at this size (questions reaching {goal:.0%}, per assumed effect): "
                     + "; ".join(f"{e:g}: {a}/{b} τ, {c}/{d} pairs" for e, a, b, c, d in rows))
    if warnings:
        lines.append(f"Limits: {warnings} WARNING/CAVEAT line(s) on stderr say what this run cannot show")
    return lines[:10]
