"""Study design: how many systems and queries an experiment needs to answer.

From a finished run's system-level MT scores and per-query IR values, simulate studies of other
sizes and count how often they answer:

- a **single τ** (MT metric vs IR measure) is *significant* when p < α, p from Kendall's exact
  null (:func:`.significance.min_significant_tau`, untied; the normal approximation where that has
  no value). Its power is not the share of bootstrap studies that reject (that share centres on
  the observed, noisy τ and over-states power where there is no effect: about 0.2 instead of α in
  the shipped test). Instead: the squared effect is estimated without that bias,
  ``d² = max(0, τ̂² − Var*(τ̂))`` (Var* = the bootstrap variance at the observed size), scaled to
  each size by the ratio of the bootstrap mean τ there to the one at the observed size (fewer
  queries attenuate τ, more sharpen it), and power at n systems is
  ``Φ((d − c_n)/σ_n) + Φ((−d − c_n)/σ_n)`` with c_n the critical τ and σ_n the null standard
  deviation of Kendall's τ, ``sqrt(2(2n+5)/(9n(n−1)))``;
- a **pair of metrics** is *separated* on a target when PERM-BOTH (one-sided, the metric with the
  higher τ in the simulated study against the other, k permutations, p = (c+1)/(k+1)) gives
  p < α — one planned comparison, without the family correction the verdicts apply; its power is
  the share of bootstrap studies that separate (centred on the observed Δτ).

Each simulated study draws ``n_systems`` of the observed systems and ``n_queries`` of the
observed queries with replacement (the bootstrap) and takes each drawn system's IR score as its mean over the drawn
queries (its MT scores are fixed: the MT test set is not resampled). Power = share of
``reps`` studies that answer. Assumptions: systems and queries are exchangeable draws from the
populations a real study would draw from, and the observed ones stand for them; a drawn system
can repeat (tied with itself on both sides), so power is an estimate from the observed systems,
not from new ones — least reliable far above the observed size.

Seeded (``numpy.random.default_rng([seed, cell])`` per grid cell) and vectorised over studies;
grid cells are independent units, so an executor's ``map`` can run them.
"""

from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..settings import default
from .settings import CorrelationSettings, DesignSettings
from .significance import min_significant_tau
from .statistics import _coef_batch


@dataclass(frozen=True)
class DesignData:
    systems: tuple[str, ...]
    queries: tuple[str, ...]
    metrics: Mapping[str, np.ndarray]  # metric -> (S,) scores, oriented (higher is better)
    targets: Mapping[str, np.ndarray]  # IR measure -> (S, Q) per-query values (NaN = missing)


@dataclass(frozen=True)
class Cell:
    """One grid cell: a study size and the draws to simulate there."""

    n_systems: int
    n_queries: int
    index: int
    reps: int
    permutations: int
    alpha: float
    seed: int


def _draw(rng: np.random.Generator, pool: int, size: int, reps: int) -> np.ndarray:
    return rng.integers(0, pool, (reps, size))


def simulate_cell(data: DesignData, cell: Cell) -> dict[str, Any]:
    """Power of every single τ and every metric pair, per target, at one study size."""
    rng = np.random.default_rng([cell.seed, cell.index])
    S, Q = len(data.systems), len(data.queries)
    si = _draw(rng, S, cell.n_systems, cell.reps)  # (R, n)
    qi = _draw(rng, Q, cell.n_queries, cell.reps)  # (R, q)
    names = list(data.metrics)
    out: dict[str, Any] = {"n_systems": cell.n_systems, "n_queries": cell.n_queries, "tau": {}, "pairs": {}}
    k = cell.permutations
    n = cell.n_systems
    swap = rng.random((cell.reps, k, n)) < 0.5 if len(names) > 1 and k > 0 else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y, pq in data.targets.items():
            vals = pq[:, qi]  # (S, R, q)
            means = np.nanmean(vals, axis=2).T  # (R, S): each system's mean over the drawn queries
            Y = np.take_along_axis(means, si, axis=1)  # (R, n)
            Y = np.nan_to_num(Y, nan=0.0)
            xs = {m: data.metrics[m][si] for m in names}
            taus = {m: _coef_batch(xs[m], Y, "kendall", "b") for m in names}
            for m in names:
                out["tau"][(y, m)] = (float(np.nanmean(taus[m])), float(np.nanstd(taus[m])))
            if swap is None:
                continue
            z = {m: (xs[m] - xs[m].mean(axis=1, keepdims=True)) / np.where(xs[m].std(axis=1, keepdims=True) > 0,
                                                                             xs[m].std(axis=1, keepdims=True), 1.0)
                 for m in names}
            Yk = np.repeat(Y, k, axis=0)
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    delta = np.nan_to_num(taus[a] - taus[b])
                    hi = np.where(delta >= 0, 1.0, -1.0)[:, None]  # test the study's leader against the other
                    za, zb = z[a][:, None, :], z[b][:, None, :]
                    ca = _coef_batch(np.where(swap, zb, za).reshape(-1, n), Yk, "kendall", "b").reshape(cell.reps, k)
                    cb = _coef_batch(np.where(swap, za, zb).reshape(-1, n), Yk, "kendall", "b").reshape(cell.reps, k)
                    d = np.nan_to_num(ca - cb) * hi
                    p = ((d >= (np.abs(delta)[:, None] - 1e-12)).sum(axis=1) + 1) / (k + 1)
                    out["pairs"][(y, a, b)] = float((p < cell.alpha).mean())
    return out


def default_sizes(observed: int, minimum: int) -> list[int]:
    """Six sizes around the observed one: ×0.5, ×0.75, ×1, ×1.5, ×2, ×3 (at least ``minimum``, distinct)."""
    return sorted({max(minimum, int(round(observed * f))) for f in (0.5, 0.75, 1, 1.5, 2, 3)})


def null_sd(n: int) -> float:
    """Standard deviation of Kendall's τ between n untied values under independence."""
    return math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))


def critical_tau(n: int, alpha: float) -> float:
    """The smallest |τ| significant at ``alpha`` (two-sided): Kendall's exact untied null where
    :func:`.significance.min_significant_tau` has it, else the normal approximation."""
    c = min_significant_tau(n, alpha, "b")
    return float(c) if c is not None else statistics.NormalDist().inv_cdf(1 - alpha / 2) * null_sd(n)


def tau_power(effect: float, n: int, alpha: float) -> float:
    """P(|τ̂| >= c_n) for τ̂ ~ N(effect, σ_n²): the power of the single-τ test at n systems."""
    if n < 3:
        return 0.0
    sd, c = null_sd(n), critical_tau(n, alpha)
    phi = statistics.NormalDist().cdf
    return min(1.0, phi((effect - c) / sd) + phi((-effect - c) / sd))


def observed_taus(data: DesignData) -> dict[tuple[str, str], float]:
    """τ-b of every metric with every target's per-system mean over the observed queries."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y, pq in data.targets.items():
            means = np.nan_to_num(np.nanmean(pq, axis=1), nan=0.0)[None, :]
            for m, x in data.metrics.items():
                out[(y, m)] = float(np.nan_to_num(_coef_batch(x[None, :], means, "kendall", "b"))[0])
    return out


def design(data: DesignData, systems: Sequence[int], queries: Sequence[int], *,
           reps: int = default(DesignSettings, "reps"), permutations: int = default(DesignSettings, "permutations"),
           alpha: float = default(CorrelationSettings, "alpha"), seed: int = default(DesignSettings, "seed"),
           map: Callable[[Callable, list], list] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Power rows over the grid: every size of ``systems`` at the observed number of queries and
    every size of ``queries`` at the observed number of systems. Rows: ``{"target", "a", "b"
    (pairs only), "n_systems", "n_queries", "power", "what"}``; single-τ rows also carry
    ``"effect"``, the debiased τ assumed at that size."""
    S, Q = len(data.systems), len(data.queries)
    sizes = [(n, Q) for n in systems] + [(S, q) for q in queries if (S, q) not in {(n, Q) for n in systems}]
    if (S, Q) not in sizes:  # the observed size: the reference for the effect's bias and scale
        sizes.append((S, Q))
    cells = [Cell(n, q, i, reps, permutations, alpha, seed) for i, (n, q) in enumerate(sizes)]
    run = map or (lambda f, xs: [f(x) for x in xs])
    import functools

    results = run(functools.partial(simulate_cell, data), cells)
    wanted = set((n, Q) for n in systems) | set((S, q) for q in queries)
    ref = next(r for r in results if (r["n_systems"], r["n_queries"]) == (S, Q))
    tau_hat = observed_taus(data)
    rows = []
    for r in results:
        if (r["n_systems"], r["n_queries"]) not in wanted:
            continue
        for (y, m), (mean, _) in r["tau"].items():
            t, (ref_mean, ref_sd) = tau_hat[(y, m)], ref["tau"][(y, m)]
            d = math.copysign(math.sqrt(max(0.0, t * t - ref_sd * ref_sd)), t)
            scale = max(0.0, mean / ref_mean) if abs(ref_mean) > 1e-12 and not math.isnan(mean) else 0.0
            effect = d * scale
            rows.append({"target": y, "a": m, "n_systems": r["n_systems"], "n_queries": r["n_queries"],
                         "power": tau_power(effect, r["n_systems"], alpha), "what": "tau significant",
                         "effect": effect})
        for (y, a, b), pw in r["pairs"].items():
            rows.append({"target": y, "a": a, "b": b, "n_systems": r["n_systems"], "n_queries": r["n_queries"],
                         "power": pw, "what": "pair separated"})
    return rows


def needed(points: Sequence[tuple[int, float]], goal: float) -> float | None:
    """The smallest size with power >= goal, linearly interpolated between grid sizes; None if never."""
    pts = sorted(points)
    for i, (n, p) in enumerate(pts):
        if p >= goal:
            if i == 0:
                return float(n)
            n0, p0 = pts[i - 1]
            return n0 + (goal - p0) * (n - n0) / (p - p0) if p > p0 else float(n)
    return None


def _approx(n: float, points: Sequence[tuple[int, float]]) -> str:
    """'≤' when ``n`` is the smallest size tried (power was already reached there), else '≈'."""
    return "≤" if n <= min(size for size, _ in points) else "≈"


def answers(rows: Sequence[Mapping[str, Any]], n_systems: int, n_queries: int,
            goal: float = default(DesignSettings, "power")) -> list[str]:
    """One line per single τ and per pair: the study size that reaches ``goal`` power."""
    keys = list(dict.fromkeys((r["target"], r["a"], r.get("b")) for r in rows))
    out = []
    for y, a, b in keys:
        mine = [r for r in rows if (r["target"], r["a"], r.get("b")) == (y, a, b)]
        by_s = [(r["n_systems"], r["power"]) for r in mine if r["n_queries"] == n_queries]
        by_q = [(r["n_queries"], r["power"]) for r in mine if r["n_systems"] == n_systems]
        ns, nq = needed(by_s, goal), needed(by_q, goal)
        what = f"to separate {a} from {b} on {y}" if b else f"for τ({a}, {y}) to be significant"
        opts = []
        if ns is not None:  # reached already at the smallest size tried: an upper bound, not an estimate
            opts.append(f"{_approx(ns, by_s)} {math.ceil(ns)} systems at {n_queries} queries")
        if nq is not None:
            opts.append(f"{_approx(nq, by_q)} {math.ceil(nq)} queries at {n_systems} systems")
        tried = (f"not reachable within the sizes tried ({min(s for s, _ in by_s)}-{max(s for s, _ in by_s)} systems, "
                 f"{min(q for q, _ in by_q)}-{max(q for q, _ in by_q)} queries)")
        if not opts and not b and mine and all(r.get("effect") == 0 for r in mine):
            tried += "; the observed τ is within its own bootstrap noise (debiased effect 0)"
        out.append(f"{what} with {goal:.0%} power: " + (", or ".join(opts) if opts else tried))
    return out


def design_data(results: Mapping[str, Any]) -> DesignData:
    """The systems' MT scores (oriented: lower-is-better negated) and per-query IR values of a run's results.json;
    targets are the IR measures whose score is the mean of their per-query values."""
    from ..errors import UserError

    systems = [s for s, e in results["systems"].items() if e.get("mt") and e.get("ir_per_query")]
    if len(systems) < 3:
        raise UserError("design needs a run with at least 3 systems that have MT scores and per-query IR values; "
                        f"this one has {len(systems)}")
    kinds = results.get("score_kinds") or {}
    lower = set(kinds.get("lower_is_better", []))
    metrics = [m for m in kinds.get("mt", []) if all(results["systems"][s]["mt"].get(m) is not None for s in systems)]
    qids = sorted({q for s in systems for q in results["systems"][s]["ir_per_query"]})
    targets = {}
    for y in kinds.get("ir", []):
        pq = np.array([[(results["systems"][s]["ir_per_query"].get(q) or {}).get(y, np.nan) for q in qids]
                       for s in systems], float)
        pq = np.where(pq == None, np.nan, pq).astype(float)  # noqa: E711
        agg = np.array([results["systems"][s]["ir"].get(y, np.nan) for s in systems], float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if np.isnan(pq).all() or not np.allclose(np.nanmean(pq, axis=1), agg, atol=1e-6):
                continue
        targets[y] = pq
    if not metrics or not targets:
        raise UserError("design needs MT metrics and IR measures with per-query values (their mean is the score)")
    return DesignData(tuple(systems), tuple(qids),
                      {m: np.array([(-1 if m in lower else 1) * results["systems"][s]["mt"][m] for s in systems], float)
                       for m in metrics}, targets)
