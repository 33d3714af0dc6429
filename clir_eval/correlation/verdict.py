"""The one rule that orders MT metrics by their correlation with a target, names the best and groups them into significance clusters."""

from __future__ import annotations

import math
from typing import Any, Collection, Mapping, Sequence

TIE_TOL = 1e-12  # coefficients this close are tied (the same pair counts give the same float)


def oriented(tau: float, metric: str, lower: Collection[str] = ()) -> float:
    """The coefficient with a lower-is-better metric's sign flipped (so larger is always better)."""
    return -tau if metric in lower else tau


def ranking(taus: Mapping[str, float | None], lower: Collection[str] = ()) -> list[str]:
    """Metrics with a defined coefficient, best first: oriented τ descending, exact ties by
    name descending (deterministic). Every output orders and names metrics with this."""
    vals = [(oriented(t, m, lower), m) for m, t in taus.items() if t is not None and not math.isnan(t)]
    return [m for _, m in sorted(vals, reverse=True)]


def leaders(taus: Mapping[str, float | None], lower: Collection[str] = ()) -> list[str]:
    """The first of :func:`ranking` and every metric tied with it (``[]`` when none is defined).

    Without a significance test this is only "highest point estimate"; outputs that can show
    clusters show those instead (see :mod:`clir_eval.correlation.verdicts`)."""
    order = ranking(taus, lower)
    if not order:
        return []
    top = oriented(taus[order[0]], order[0], lower)
    return [m for m in order if abs(oriented(taus[m], m, lower) - top) <= TIE_TOL]


def best_per_target(correlations: Sequence[Mapping[str, Any]], lower: Collection[str] = (),
                    kinds: Sequence[str] = ("mt-ir", "mt-human")) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(target, its :func:`leaders` joined by " = ", the first leader's correlation row) per target of the
    correlation rows of ``kinds`` (in that order, targets in first-appearance order): the "highest τ"
    that outputs without significance clusters name."""
    out = []
    for kind in kinds:
        by_target: dict[str, dict[str, Mapping[str, Any]]] = {}
        for c in correlations:
            if c.get("kind", "mt-ir") == kind:
                by_target.setdefault(c["y"], {})[c["x"]] = c
        for y, row in by_target.items():
            lead = leaders({x: c["tau"] for x, c in row.items()}, lower)
            if lead:
                out.append((y, " = ".join(lead), row[lead[0]]))
    return out


def clusters(order: Sequence[str], p_better: Mapping[tuple[str, str], float | None], alpha: float) -> list[list[str]]:
    """Rank clusters as mt-metrics-eval's ``AssignRanks``: walk ``order`` (best first); a metric
    starts a new cluster when some metric from the current cluster's first member up to the one
    just above it is significantly better (``p_better[(a, b)] < alpha``, a above b); otherwise
    it joins the current cluster. Untested pairs (None) count as not significant."""
    out: list[list[str]] = []
    start = 0
    for i, m in enumerate(order):
        if not out or any(_below(p_better.get((order[k], m)), alpha) for k in range(start, i)):
            out.append([])
            start = i
        out[-1].append(m)
    return out


def _below(p: float | None, alpha: float) -> bool:
    return p is not None and p < alpha
