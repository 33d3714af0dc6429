"""Study design: how many systems and queries an experiment needs to answer.

From a finished run's system-level MT scores and per-query IR values, simulate studies of other
sizes and count how often they answer:

- a **single τ** (MT metric vs IR measure) is *significant* when p < α, p from Kendall's exact
  null (:func:`.significance.min_significant_tau`, untied; the normal approximation where that has
  no value). Its power is not the share of bootstrap studies that reject (that share centres on
  the observed, noisy τ and over-states power where there is no effect: about 0.2 instead of α in
  the shipped test). Instead: the squared effect is estimated without that bias,
  ``d² = max(0, τ̂² − Var*(τ̂))`` (Var* = the bootstrap variance at the observed size), kept at the
  observed number of queries (the number of systems does not change what τ estimates) and scaled
  at other numbers of queries by the ratio of the mean τ over the observed systems with the
  queries drawn there to the one at the observed number (fewer queries attenuate τ, more sharpen
  it), and power at n systems is
  ``Φ((d − c_n)/σ_n) + Φ((−d − c_n)/σ_n)`` with c_n the critical τ and σ_n the null standard
  deviation of Kendall's τ, ``sqrt(2(2n+5)/(9n(n−1)))``;
- a **pair of metrics** is *separated* on a target when PERM-BOTH (one-sided, the metric with the
  higher τ in the study against the other, p = (c+1)/(k+1)) gives p < α — one planned comparison,
  without the family correction the verdicts apply. Its power is not the share of bootstrap studies
  whose own PERM-BOTH separates: a system drawn twice is tied with itself, and the test's draws
  either untie its copies (own swap bits: too lenient; for two equally good metrics 0.32 predicted
  against 0.08 observed in tests/test_design.py) or keep them tied (too few distinct systems: too
  strict). As for a single τ, the effect is debiased, ``D² = max(0, Δτ̂² − s₀²)`` with s₀ the
  standard deviation of PERM-BOTH's permuted Δτ on the observed study (the spread the run's test
  uses), kept at the observed queries (the number of systems does not change what τ estimates) and
  scaled at other numbers of queries by how much the two metrics' mean |τ| over the observed
  systems with the queries drawn shrink or grow there; at n systems the test's spread is
  s = s₀·σ_n/σ_S (σ Kendall's null standard deviation, as for a single τ), and power is
  ``Φ((D − c)/s) + Φ((−D − c)/s)`` with c = z₁₋α·s (the leader's one-sided test, either metric
  leading).

Each simulated study draws ``n_systems`` of the observed systems and ``n_queries`` of the
observed queries with replacement (the bootstrap) and takes each drawn system's IR score as its
mean over the drawn queries (its MT scores are fixed: the MT test set is not resampled); ``reps``
studies per size give the bootstrap means and spreads above. These are post-hoc estimates centred
on the observed effects (debiased), each for one planned test, without a multiple-comparison
correction. Assumptions: systems and queries are exchangeable draws from the populations a real
study would draw from, and the observed ones stand for them; a drawn system can repeat (tied with
itself on both sides), so power is an estimate from the observed systems, not from new ones —
least reliable far above the observed size.

With a run's item-level documents matrix, the **item-level τ over documents** (each document's τ-b across
systems, averaged: the ``item`` grouping) is simulated too, drawing systems and documents with replacement
(:func:`design_documents`): its power is that of the run's test (permutation within documents) for a debiased
effect, with the test's null spread from Kendall's tie-corrected variance of each drawn document's τ. Each **pair
of metrics within documents** (:func:`design_document_pairs`): the run's item-level verdict test (PERM-BOTH
within documents) is run on every permutation of every simulated study, with its own, smaller numbers of studies
and permutations (``doc_pair_reps``, ``doc_pair_permutations``, carried by each row); as for a system-level pair
the power is that of the test for a debiased effect, the simulation giving how the effect and the test's null
spread change with the numbers of systems and documents (docs/item-level.md: its check against fresh studies).

Seeded by study size (``numpy.random.default_rng([seed, n_systems, n_queries])``; documents' sizes
``[seed, n_systems, n_documents, 1]``; the document pairs' studies ``[seed, n_systems, n_documents, 2]`` and
each pair's permutations ``[seed, n_systems, n_documents, 2, pair]``), so a size's estimate does not depend on the
other sizes asked for, and vectorised over studies;
grid cells (document pairs: each cell's pairs) are independent units, so an executor's ``map`` can run them.
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
    reps: int
    seed: int


def _draw(rng: np.random.Generator, pool: int, size: int, reps: int) -> np.ndarray:
    return rng.integers(0, pool, (reps, size))


def simulate_cell(data: DesignData, cell: Cell) -> dict[str, Any]:
    """At one study size, over ``reps`` bootstrap studies: each metric's τ with each target (mean, sd), and
    over the observed systems with only the queries drawn, its mean τ and mean |τ| (``tau_queries``)."""
    rng = np.random.default_rng([cell.seed, cell.n_systems, cell.n_queries])  # by size: the same draws in any grid
    S, Q = len(data.systems), len(data.queries)
    si = _draw(rng, S, cell.n_systems, cell.reps)  # (R, n)
    qi = _draw(rng, Q, cell.n_queries, cell.reps)  # (R, q)
    out: dict[str, Any] = {"n_systems": cell.n_systems, "n_queries": cell.n_queries, "tau": {}, "tau_queries": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y, pq in data.targets.items():
            means = np.nanmean(pq[:, qi], axis=2).T  # (R, S): each system's mean over the drawn queries
            Y = np.nan_to_num(np.take_along_axis(means, si, axis=1), nan=0.0)  # (R, n)
            Yq = np.nan_to_num(means, nan=0.0)  # the observed systems, only the queries drawn
            for m, x in data.metrics.items():
                taus = _coef_batch(x[si], Y, "kendall", "b")
                out["tau"][(y, m)] = (float(np.nanmean(taus)), float(np.nanstd(taus)))
                tq = _coef_batch(np.broadcast_to(x, Yq.shape), Yq, "kendall", "b")
                out["tau_queries"][(y, m)] = (float(np.nanmean(tq)), float(np.nanmean(np.abs(tq))))
    return out


def perm_both_null_sd(data: DesignData, permutations: int, seed: int) -> dict[tuple[str, str, str], float]:
    """Per (target, a, b): the standard deviation of PERM-BOTH's permuted Δτ on the observed study (both
    metrics z-scored, each system's two values swapped with probability 0.5, ``permutations`` draws) —
    the spread the run's test compares the observed Δτ with."""
    names = list(data.metrics)
    S = len(data.systems)
    rng = np.random.default_rng([seed, 0, 0, 2])
    swap = rng.random((permutations, S)) < 0.5
    z = {m: (x - x.mean()) / (x.std() if x.std() > 0 else 1.0) for m, x in data.metrics.items()}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y, pq in data.targets.items():
            Y = np.repeat(np.nan_to_num(np.nanmean(pq, axis=1), nan=0.0)[None, :], permutations, axis=0)
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    ca = _coef_batch(np.where(swap, z[b], z[a]), Y, "kendall", "b")
                    cb = _coef_batch(np.where(swap, z[a], z[b]), Y, "kendall", "b")
                    out[(y, a, b)] = float(np.nanstd(ca - cb))
    return out


def pair_power(effect: float, sd: float, alpha: float) -> float:
    """P(the leader's one-sided PERM-BOTH p < α) for Δτ̂ ~ N(effect, sd²) and the test's permuted Δτ ~
    N(0, sd²): rejected when |Δτ̂| exceeds the null's (1 − α) quantile, in either direction."""
    if not sd > 0:
        return 0.0
    c = statistics.NormalDist().inv_cdf(1 - alpha) * sd
    phi = statistics.NormalDist().cdf
    return min(1.0, phi((effect - c) / sd) + phi((-effect - c) / sd))


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
    (pairs only), "n_systems", "n_queries", "power", "what"}``; single-τ and pair rows also carry
    ``"effect"``, the debiased τ assumed at that size."""
    S, Q = len(data.systems), len(data.queries)
    sizes = [(n, Q) for n in systems] + [(S, q) for q in queries if (S, q) not in {(n, Q) for n in systems}]
    if (S, Q) not in sizes:  # the observed size: the reference for the effect's bias and scale
        sizes.append((S, Q))
    cells = [Cell(n, q, reps, seed) for n, q in sizes]
    run = map or (lambda f, xs: [f(x) for x in xs])
    import functools

    results = run(functools.partial(simulate_cell, data), cells)
    wanted = set((n, Q) for n in systems) | set((S, q) for q in queries)
    ref = next(r for r in results if (r["n_systems"], r["n_queries"]) == (S, Q))
    tau_hat = observed_taus(data)
    null0 = perm_both_null_sd(data, permutations, seed) if len(data.metrics) > 1 else {}
    rows = []
    for r in results:
        if (r["n_systems"], r["n_queries"]) not in wanted:
            continue
        for (y, m) in r["tau"]:
            t, (_, ref_sd) = tau_hat[(y, m)], ref["tau"][(y, m)]
            d = math.copysign(math.sqrt(max(0.0, t * t - ref_sd * ref_sd)), t)
            # as for pairs: kept at the observed queries, scaled along queries by the mean τ over the observed
            # systems with the queries drawn (a ratio of two bootstrap means over drawn systems is noisy)
            here, there = r["tau_queries"][(y, m)][0], ref["tau_queries"][(y, m)][0]
            scale = (1.0 if r["n_queries"] == Q else
                     max(0.0, here / there) if abs(there) > 1e-12 and not math.isnan(here) else 0.0)
            effect = d * scale
            rows.append({"target": y, "a": m, "n_systems": r["n_systems"], "n_queries": r["n_queries"],
                         "power": tau_power(effect, r["n_systems"], alpha), "what": "tau significant",
                         "effect": effect})
        for (y, a, b), s0 in null0.items():
            obs = tau_hat[(y, a)] - tau_hat[(y, b)]
            d = math.copysign(math.sqrt(max(0.0, obs * obs - s0 * s0)), obs)
            # fewer or more queries change the target's noise and every τ with it; the number of systems does not
            # change what τ estimates, so at the observed queries the effect stays (a ratio of two noisy bootstrap
            # means would only add noise)
            effect = d * (_attenuation(r["tau_queries"], ref["tau_queries"], y, a, b) if r["n_queries"] != Q else 1.0)
            # the test's null spread at this size: the observed one scaled as Kendall's null spread scales with
            # the number of systems (a bootstrap spread there is noisy and, with repeated systems, biased)
            sd_n = s0 * null_sd(r["n_systems"]) / null_sd(S)
            rows.append({"target": y, "a": a, "b": b, "n_systems": r["n_systems"], "n_queries": r["n_queries"],
                         "power": pair_power(effect, sd_n, alpha), "what": "pair separated", "effect": effect})
    return rows


def _attenuation(here: Mapping, ref: Mapping, y: str, a: str, b: str) -> float:
    """How much the two metrics' mean |τ| over the observed systems with the queries drawn shrink (or grow)
    at this number of queries relative to the observed one: fewer queries make the IR target noisier and
    every τ with it weaker, so Δτ too (the systems are not drawn here: their draws would only add noise)."""
    num = here[(y, a)][1] + here[(y, b)][1]
    den = ref[(y, a)][1] + ref[(y, b)][1]
    return num / den if den > 1e-12 and not math.isnan(num) else 0.0


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
            goal: float = default(DesignSettings, "power"), n_documents: int | None = None) -> list[str]:
    """One line per single τ and per pair: the study size that reaches ``goal`` power. Rows with
    ``n_documents`` (the item-level τ over documents) vary systems at ``n_documents`` documents and
    documents at ``n_systems`` systems."""
    keys = list(dict.fromkeys((r["target"], r["a"], r.get("b"), "n_documents" in r) for r in rows))
    out = []
    for y, a, b, docs in keys:
        mine = [r for r in rows if (r["target"], r["a"], r.get("b"), "n_documents" in r) == (y, a, b, docs)]
        if docs:
            axis, unit, at = "n_documents", "documents", n_documents
            by_s = [(r["n_systems"], r["power"]) for r in mine if r["n_documents"] == n_documents]
        else:
            axis, unit, at = "n_queries", "queries", n_queries
            by_s = [(r["n_systems"], r["power"]) for r in mine if r["n_queries"] == n_queries]
        by_q = [(r[axis], r["power"]) for r in mine if r["n_systems"] == n_systems]
        ns, nq = needed(by_s, goal), needed(by_q, goal)
        what = (f"to separate {a} from {b} on {y}" if b else
                f"for the item-level τ({a}, {y}) over documents to be significant" if docs else
                f"for τ({a}, {y}) to be significant")
        opts = []
        if ns is not None:  # reached already at the smallest size tried: an upper bound, not an estimate
            opts.append(f"{_approx(ns, by_s)} {math.ceil(ns)} systems at {at} {unit}")
        if nq is not None:
            opts.append(f"{_approx(nq, by_q)} {math.ceil(nq)} {unit} at {n_systems} systems")
        tried = (f"not reachable within the sizes tried ({min(s for s, _ in by_s)}-{max(s for s, _ in by_s)} systems, "
                 f"{min(q for q, _ in by_q)}-{max(q for q, _ in by_q)} {unit})")
        if not opts and mine and all(r.get("effect") == 0 for r in mine):
            tried += ("; the observed Δτ is within its test's null spread (debiased effect 0)" if b else
                      "; the observed τ is within its own bootstrap noise (debiased effect 0)")
        out.append(f"{what} with {goal:.0%} power: " + (", or ".join(opts) if opts else tried))
    return out


def design_data(results: Mapping[str, Any]) -> DesignData:
    """The systems' MT scores (oriented: lower-is-better negated) and per-query IR values of a run's results.json;
    targets are the IR measures whose score is the mean of their per-query values."""
    from ..errors import UserError

    systems = [s for s, e in results["systems"].items() if e.get("mt") and e.get("ir_per_query")]
    if len(systems) < 3:
        entries = results["systems"].values()
        n_mt, n_pq = sum(1 for e in entries if e.get("mt")), sum(1 for e in entries if e.get("ir_per_query"))
        why = (f"{n_mt} system(s) have MT scores but {n_pq} have per-query IR values"
               + ("; IR scores read from a table (external:) have no per-query values: design needs the run to "
                  "retrieve and score queries itself" if n_pq < 3 and any(e.get("external") for e in entries) else ""))
        raise UserError(f"design needs a run with at least 3 systems that have both MT scores and per-query IR "
                        f"values; {why}")
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


# --------------------------------------------------------------------------- documents
@dataclass(frozen=True)
class DocumentData:
    """A run's documents matrix (``item_documents.json``, :mod:`clir_eval.io.item_matrix`): per system and
    judged-relevant document the MT scores (oriented: higher is better) and the document-level target."""

    systems: tuple[str, ...]
    documents: tuple[str, ...]
    metrics: Mapping[str, np.ndarray]  # metric -> (S, D), no missing cell
    target: np.ndarray  # (S, D): the target of every document (retrievability)
    n_queries: int  # the queries whose relevant documents these are (fixed: documents are resampled)
    target_name: str = "retrievability"
    left_out: tuple[str, ...] = ()  # metrics with missing cells, not simulated
    queries_per_document: tuple[int, ...] = ()  # how many queries judge each document relevant


@dataclass(frozen=True)
class DocCell:
    n_systems: int
    n_documents: int
    reps: int
    seed: int


DOC_CHUNK = 4_000_000  # (study, document, system pair) cells per block of a document cell


def _tie_sums(signs: np.ndarray, inc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of pair signs (rows, pairs): Σ t(t−1), Σ t(t−1)(t−2), Σ t(t−1)(2t+5) over the row's groups of
    tied values (t = a group's size), from each value's group size t_i = 1 + its tied pairs
    (Σ_groups f(t) = Σ_i f(t_i)/t_i)."""
    t = 1.0 + (signs == 0).astype(np.float32) @ inc  # (rows, n)
    return (t - 1).sum(axis=1), ((t - 1) * (t - 2)).sum(axis=1), ((t - 1) * (2 * t + 5)).sum(axis=1)


def tau_b_null_var(n: int, tx: tuple[np.ndarray, ...], ty: tuple[np.ndarray, ...], nx: np.ndarray,
                   ny: np.ndarray) -> np.ndarray:  # fmt: skip
    """Variance of τ-b under random permutation of one variable (ties kept): Kendall's tie-corrected
    variance of S (as scipy's asymptotic test) over the denominator (n0 − n1)(n0 − n2)."""
    v = ((n * (n - 1) * (2 * n + 5) - tx[2] - ty[2]) / 18 + tx[1] * ty[1] / (9 * n * (n - 1) * (n - 2))
         + tx[0] * ty[0] / (2 * n * (n - 1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / (nx * ny)


def simulate_documents_cell(data: DocumentData, cell: DocCell) -> dict[str, Any]:
    """At one study size: each of ``reps`` studies draws ``n_systems`` systems and ``n_documents``
    documents with replacement; per metric, every drawn document's τ-b across the drawn systems, their
    mean (the ``item`` grouping's coefficient; documents where it is undefined left out, as the run does)
    and the standard deviation of that mean under the run's test (permutation within documents:
    √(Σ Var₀(τ_d))/m, Var₀ Kendall's tie-corrected null variance). Returns per metric (mean of the
    studies' τ̄, their standard deviation, the mean null standard deviation)."""
    rng = np.random.default_rng([cell.seed, cell.n_systems, cell.n_documents, 1])  # by size, as simulate_cell
    S, D = data.target.shape
    n, m, R = cell.n_systems, cell.n_documents, cell.reps
    si = rng.integers(0, S, (R, n))
    di = rng.integers(0, D, (R, m))
    iu, ju = np.triu_indices(n, k=1)
    inc = np.zeros((len(iu), n), np.float32)
    inc[np.arange(len(iu)), iu] = 1
    inc[np.arange(len(iu)), ju] = 1
    names = list(data.metrics)
    tbar = {k: np.full(R, np.nan) for k in names}
    sd0 = {k: np.full(R, np.nan) for k in names}
    step = max(1, DOC_CHUNK // max(1, m * len(iu)))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore")
        for a in range(0, R, step):
            s_, d_ = si[a:a + step], di[a:a + step]
            c = len(s_)

            def rows(M: np.ndarray) -> np.ndarray:  # (c * m, pairs) signs of the drawn cells' system pairs
                V = M[s_[:, None, :], d_[:, :, None]].reshape(c * m, n)
                return np.sign(V[:, iu] - V[:, ju]).astype(np.int8)

            sy = rows(data.target)
            ny = np.abs(sy).sum(axis=1, dtype=np.int64)
            ty = _tie_sums(sy, inc)
            for k in names:
                sx = rows(data.metrics[k])
                nx = np.abs(sx).sum(axis=1, dtype=np.int64)
                num = (sx * sy).sum(axis=1, dtype=np.int64)
                ok = (nx > 0) & (ny > 0)
                tau = np.where(ok, num / np.sqrt(nx * ny), np.nan).reshape(c, m)
                var0 = np.where(ok, tau_b_null_var(n, _tie_sums(sx, inc), ty, nx, ny), np.nan).reshape(c, m)
                cnt = (~np.isnan(tau)).sum(axis=1)
                tbar[k][a:a + c] = np.nanmean(tau, axis=1)
                sd0[k][a:a + c] = np.where(cnt > 0, np.sqrt(np.nansum(var0, axis=1)) / np.maximum(cnt, 1), np.nan)
        out = {k: (float(np.nanmean(tbar[k])), float(np.nanstd(tbar[k])), float(np.nanmean(sd0[k]))) for k in names}
    return {"n_systems": n, "n_documents": m, "tau": out}


def _row_stats(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """τ-b of each row of X against the same row of Y and its null variance (NaN where undefined)."""
    n = X.shape[1]
    iu, ju = np.triu_indices(n, k=1)
    inc = np.zeros((len(iu), n), np.float32)
    inc[np.arange(len(iu)), iu] = 1
    inc[np.arange(len(iu)), ju] = 1
    sx = np.sign(X[:, iu] - X[:, ju]).astype(np.int8)
    sy = np.sign(Y[:, iu] - Y[:, ju]).astype(np.int8)
    nx, ny = np.abs(sx).sum(axis=1, dtype=np.int64), np.abs(sy).sum(axis=1, dtype=np.int64)
    ok = (nx > 0) & (ny > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(ok, (sx * sy).sum(axis=1, dtype=np.int64) / np.sqrt(nx * ny), np.nan)
        return tau, np.where(ok, tau_b_null_var(n, _tie_sums(sx, inc), _tie_sums(sy, inc), nx, ny), np.nan)


def observed_item_taus(data: DocumentData) -> dict[str, tuple[float, float]]:
    """Per metric: the ``item`` grouping's τ-b with the target over all observed systems and documents (the
    run's item-level coefficient, up to the orientation of lower-is-better metrics), and the spread of the
    documents' true τ around it, h² = max(0, Var_d(τ_d) − mean_d Var₀(τ_d)) (the observed spread less what
    each document's own sampling noise explains)."""
    out = {}
    for k, x in data.metrics.items():
        tau, var0 = _row_stats(x.T, data.target.T)
        ok = ~np.isnan(tau)
        if not ok.any():
            out[k] = (0.0, 0.0)
            continue
        h2 = max(0.0, float(np.var(tau[ok], ddof=1)) - float(np.mean(var0[ok]))) if ok.sum() > 1 else 0.0
        out[k] = (float(np.mean(tau[ok])), h2)
    return out


def item_tau_power(effect: float, sd0: float, sd1: float, alpha: float) -> float:
    """P(|τ̄| >= z·sd0) for τ̄ ~ N(effect, sd1²): the item-level test rejects when the mean of the documents'
    τ is beyond the (1 − α/2) quantile of its permutation null, N(0, sd0²)."""
    if not (sd0 > 0) or math.isnan(sd1):
        return 0.0
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    phi = statistics.NormalDist().cdf
    sd1 = max(sd1, 1e-12)
    return min(1.0, phi((effect - z * sd0) / sd1) + phi((-effect - z * sd0) / sd1))


def design_documents(data: DocumentData, systems: Sequence[int], documents: Sequence[int], *,
                     reps: int = default(DesignSettings, "reps"), alpha: float = default(CorrelationSettings, "alpha"),
                     seed: int = default(DesignSettings, "seed"),
                     map: Callable[[Callable, list], list] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Power rows of the item-level τ (grouping ``item``: each document's τ across systems, averaged) over
    the grid: every size of ``systems`` at the observed number of documents and every size of ``documents``
    at the observed number of systems. As for a single system-level τ, the effect is debiased,
    d = sign(τ̂)·√max(0, τ̂² − Var) (Var the spread of τ̄ at the observed size, sd0² + h²/D), scaled at other
    numbers of systems by the bootstrap mean τ̄ there over the one at the observed size; power = P(|N(d, sd1²)| ≥ z·sd0),
    sd1 the bootstrap standard deviation of τ̄ at that size, sd0 its null standard deviation. Rows:
    ``{"target", "a", "n_systems", "n_queries", "n_documents", "power", "what", "effect", "grouping"}``."""
    import functools

    S, D = data.target.shape
    sizes = [(n, D) for n in systems] + [(S, d) for d in documents if (S, d) not in {(n, D) for n in systems}]
    if (S, D) not in sizes:
        sizes.append((S, D))
    cells = [DocCell(n, d, reps, seed) for n, d in sizes]
    run = map or (lambda f, xs: [f(x) for x in xs])
    results = run(functools.partial(simulate_documents_cell, data), cells)
    wanted = {(n, D) for n in systems} | {(S, d) for d in documents}
    ref = next(r for r in results if (r["n_systems"], r["n_documents"]) == (S, D))
    tau_hat = observed_item_taus(data)
    rows = []
    for r in results:
        if (r["n_systems"], r["n_documents"]) not in wanted:
            continue
        for k, (mean, _, sd0) in r["tau"].items():
            (t, h2), (ref_mean, _, ref_sd0) = tau_hat[k], ref["tau"][k]
            sd1 = math.sqrt(sd0 * sd0 + h2 / r["n_documents"])  # a fresh study's spread of τ̄ at this size
            ref_sd = math.sqrt(ref_sd0 * ref_sd0 + h2 / D)
            d = math.copysign(math.sqrt(max(0.0, t * t - ref_sd * ref_sd)), t)
            # documents are exchangeable: their number leaves the mean τ as it is; systems drawn with replacement
            # (repeated, so tied) change it, measured by the bootstrap means
            scale = 1.0 if r["n_systems"] == S else (
                max(0.0, mean / ref_mean) if abs(ref_mean) > 1e-12 and not math.isnan(mean) else 0.0)
            effect = d * scale
            rows.append({"target": data.target_name, "a": k, "n_systems": r["n_systems"], "n_queries": data.n_queries,
                         "n_documents": r["n_documents"], "power": item_tau_power(effect, sd0, sd1, alpha),
                         "what": "item-level tau significant", "effect": effect, "grouping": "item"})
    return rows


@dataclass(frozen=True)
class DocPairJob:
    """One metric pair at one study size of the documents' simulation."""

    n_systems: int
    n_documents: int
    pair: int  # the pair's number: its PERM-BOTH draws (the studies drawn are every pair's of the size)
    a: str
    b: str
    reps: int
    permutations: int
    alpha: float
    seed: int


PAIR_CHUNK = 4_000_000  # cells of a PERM-BOTH block of stacked studies: documents x systems x max(systems, draws)


def _zscored(V: np.ndarray) -> np.ndarray:
    """Each study's (R, n, m) matrix z-scored over its cells, as PERM-BOTH within items does (NaN left out)."""
    mu = np.nanmean(V, axis=(1, 2), keepdims=True)
    sd = np.nanstd(V, axis=(1, 2), keepdims=True)
    return (V - mu) / np.where(sd > 0, sd, 1.0)


def simulate_document_pair(data: DocumentData, job: DocPairJob) -> dict[str, Any]:
    """The job's simulated studies (:func:`document_pair_draws`): their Δτ and permuted Δτ."""
    delta, diffs = document_pair_draws(data, job)
    return {"n_systems": job.n_systems, "n_documents": job.n_documents, "a": job.a, "b": job.b, "delta": delta,
            "diffs": diffs}


def pair_p_values(delta: np.ndarray, diffs: np.ndarray) -> np.ndarray:
    """PERM-BOTH's one-sided p of each study's leader (the sign of its Δτ) against its permuted Δτ (k, R):
    p = (c+1)/(k+1), c the draws at least as far in the leader's direction; NaN where Δτ is."""
    sign = np.where(delta >= 0, 1.0, -1.0)
    hits = (diffs * sign >= np.abs(delta) - 1e-12).sum(axis=0)
    return np.where(np.isnan(delta), np.nan, (hits + 1) / (len(diffs) + 1))


def document_pair_p_values(data: DocumentData, job: DocPairJob) -> np.ndarray:
    """Per simulated study as drawn, the p-value of PERM-BOTH within documents (:func:`document_pair_draws`)."""
    return pair_p_values(*document_pair_draws(data, job))


def document_pair_draws(data: DocumentData, job: DocPairJob) -> tuple[np.ndarray, np.ndarray]:
    """Per simulated study, PERM-BOTH within documents (the run's item-level verdict test,
    :func:`.items.perm_both_items`) between metrics ``a`` and ``b`` on the documents' target: the study's Δτ (R,)
    (NaN: a metric without a defined coefficient) and its permuted Δτ (k, R). Each study draws ``n_systems``
    systems (distinct up to the observed number, as a fresh study's are; beyond it with replacement) and
    ``n_documents`` documents with replacement (generator ``[seed, n_systems, n_documents, 2]``: the same studies
    for every pair of the size), z-scores both metrics over its cells and swaps every (system, document) cell's two
    values with probability 0.5 in each of ``permutations`` draws (generator ``[seed, n_systems, n_documents, 2,
    pair]``; the copies of a system drawn twice share their bits, so they stay tied as one system would). Studies
    are stacked along the documents axis (the test treats documents independently), so a block of studies is one
    exact integer count (:func:`.items._swapped_tau_b`) where that applies (no missing target, under 128
    systems)."""
    from .items import _swapped_tau_b, item_coefs, swap_bits

    S, D = data.target.shape
    n, m, R, k = job.n_systems, job.n_documents, job.reps, job.permutations
    rng = np.random.default_rng([job.seed, n, m, 2])  # by size, as simulate_cell
    # systems without replacement up to the observed number (a fresh study's systems are distinct), then with
    si = (rng.permuted(np.broadcast_to(np.arange(S), (R, S)), axis=1)[:, :n] if n <= S else
          rng.integers(0, S, (R, n)))
    di = rng.integers(0, D, (R, m))
    cells = (si[:, :, None], di[:, None, :])
    Y = data.target[cells]  # (R, n, m)
    miss = np.isnan(Y)
    za = _zscored(np.where(miss, np.nan, data.metrics[job.a][cells]))
    zb = _zscored(np.where(miss, np.nan, data.metrics[job.b][cells]))
    exact = n < 128 and not miss.any()
    rng = np.random.default_rng([job.seed, n, m, 2, job.pair])
    per = max(1, PAIR_CHUNK // (m * n * max(n, k + 1)))  # studies per block (its swap bits and quadratic forms)
    first = np.argmax(si[:, :, None] == si[:, None, :], axis=2)  # (R, n): each drawn system's first copy

    def stack(V: np.ndarray) -> np.ndarray:  # (c, n, m) -> (n, c*m): the block's studies side by side
        return V.transpose(1, 0, 2).reshape(n, -1)

    delta = np.full(R, np.nan)
    diffs = np.zeros((k, R))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s0 in range(0, R, per):
            c = min(per, R - s0)
            A, B, T = stack(za[s0:s0 + c]), stack(zb[s0:s0 + c]), stack(Y[s0:s0 + c])
            bits = swap_bits(rng, (k, n, c * m))
            bits = np.take_along_axis(bits, np.repeat(first[s0:s0 + c].T, m, axis=1)[None], axis=1)
            # draw 0 swaps nothing: the study's own coefficients, counted as the permutations are
            swap = np.concatenate([np.zeros((1, n, c * m), bool), bits])
            if exact:
                ca, cb = _swapped_tau_b(A, B, T, swap)
            else:
                ca = item_coefs(np.where(swap, B, A), T, "kendall", "b")
                cb = item_coefs(np.where(swap, A, B), T, "kendall", "b")
            ma = np.nanmean(ca.reshape(k + 1, c, m), axis=2)  # (k+1, c)
            mb = np.nanmean(cb.reshape(k + 1, c, m), axis=2)
            delta[s0:s0 + c] = ma[0] - mb[0]
            diffs[:, s0:s0 + c] = np.nan_to_num(ma[1:] - mb[1:], nan=0.0)
    return delta, diffs


def document_pair_effects(data: DocumentData, permutations: int, seed: int) -> dict[tuple[str, str], tuple[float, float]]:
    """Per metric pair (a, b): the observed Δτ (the ``item`` grouping's τ of a minus b, all systems and documents)
    and s₀, the standard deviation of PERM-BOTH's permuted Δτ within documents on the observed study
    (``permutations`` draws, generator ``[seed, 0, 0, 2, pair]``) — the spread the run's test compares Δτ with."""
    from .items import _swapped_tau_b, item_coefs, swap_bits

    S, D = data.target.shape
    miss = np.isnan(data.target)
    z = {x: _zscored(np.where(miss, np.nan, v)[None])[0] for x, v in data.metrics.items()}
    names = list(data.metrics)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j, (a, b) in enumerate((a, b) for i, a in enumerate(names) for b in names[i + 1:]):
            bits = swap_bits(np.random.default_rng([seed, 0, 0, 2, j]), (permutations, S, D))
            swap = np.concatenate([np.zeros((1, S, D), bool), bits])
            if S < 128 and not miss.any():
                ca, cb = _swapped_tau_b(z[a], z[b], data.target, swap)
            else:
                ca = item_coefs(np.where(swap, z[b], z[a]), data.target, "kendall", "b")
                cb = item_coefs(np.where(swap, z[a], z[b]), data.target, "kendall", "b")
            d = np.nanmean(ca, axis=1) - np.nanmean(cb, axis=1)
            out[(a, b)] = (float(np.nan_to_num(d[0])), float(np.nan_to_num(np.std(np.nan_to_num(d[1:])))))
    return out


def design_document_pairs(data: DocumentData, systems: Sequence[int], documents: Sequence[int], *,
                          reps: int = default(DesignSettings, "doc_pair_reps"),
                          permutations: int = default(DesignSettings, "doc_pair_permutations"),
                          alpha: float = default(CorrelationSettings, "alpha"), seed: int = default(DesignSettings, "seed"),
                          map: Callable[[Callable, list], list] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Power rows of every metric pair's separation within documents over the grid of :func:`design_documents`:
    every size of ``systems`` at the observed number of documents and every size of ``documents`` at the observed
    number of systems; one job per (size, pair) (:func:`simulate_document_pair`), the observed size always among
    them. The share of simulated studies whose own test separates is not the power: they centre on the observed,
    noisy Δτ (two equally good metrics were "separated" in 0.40 of them against 0.10 of fresh studies). As for a
    system-level pair, the effect is debiased, D = sign(Δτ̂)·√max(0, Δτ̂² − s₀²), s₀ the spread of PERM-BOTH's
    permuted Δτ on the observed study (:func:`document_pair_effects`); at each size D is scaled by the studies'
    mean Δτ there over the one at the observed size and s₀ by the studies' mean permutation spread there over the
    one at the observed size (the run's test simulated on every study: how its null widens with fewer systems or
    documents), and power = :func:`pair_power`. Rows: ``{"target", "a", "b", "n_systems", "n_queries",
    "n_documents", "power", "what", "grouping", "effect", "reps", "permutations"}`` (effect: D at that size)."""
    import functools

    S, D = data.target.shape
    sizes = [(n, D) for n in systems] + [(S, d) for d in documents if (S, d) not in {(n, D) for n in systems}]
    wanted = set(sizes)
    if (S, D) not in wanted:  # the observed size: the reference for the studies' spread
        sizes.append((S, D))
    observed = document_pair_effects(data, permutations, seed)
    jobs = [DocPairJob(n, m, j, a, b, reps, permutations, alpha, seed)
            for n, m in sizes for j, (a, b) in enumerate(observed)]
    run = map or (lambda f, xs: [f(x) for x in xs])
    results = run(functools.partial(simulate_document_pair, data), jobs)
    def spread(r: Mapping[str, Any]) -> tuple[float, float]:  # the studies' mean Δτ, their mean permutation null sd
        ok = ~np.isnan(r["delta"])
        if not ok.any():
            return 0.0, 0.0
        return float(np.mean(r["delta"][ok])), float(np.mean(np.std(r["diffs"][:, ok], axis=0)))

    ref = {(r["a"], r["b"]): spread(r) for r in results if (r["n_systems"], r["n_documents"]) == (S, D)}
    rows = []
    for r in results:
        if (r["n_systems"], r["n_documents"]) not in wanted:
            continue
        obs, s0 = observed[(r["a"], r["b"])]
        d = math.copysign(math.sqrt(max(0.0, obs * obs - s0 * s0)), obs)
        (mean, null), (ref_mean, ref_null) = spread(r), ref[(r["a"], r["b"])]
        effect = d * (max(0.0, mean / ref_mean) if abs(ref_mean) > 1e-12 else 1.0)
        sd = s0 * (null / ref_null) if ref_null > 0 else 0.0
        rows.append({"target": data.target_name, "a": r["a"], "b": r["b"], "n_systems": r["n_systems"],
                     "n_queries": data.n_queries, "n_documents": r["n_documents"],
                     "power": pair_power(effect, sd, alpha), "what": "document pair separated", "grouping": "item",
                     "effect": effect, "reps": reps, "permutations": permutations})
    return rows


METHOD = ("systems and queries drawn from the observed ones with replacement; single τ: power of the exact untied "
          "τ-b test for the debiased effect sqrt(max(0, τ² - bootstrap variance)), kept at the observed queries and "
          "scaled at other numbers of queries by the mean τ over the observed systems with the queries drawn; pair "
          "separated: power of one-sided PERM-BOTH (p=(c+1)/(k+1) < alpha, no family correction) for the debiased "
          "effect sqrt(max(0, Δτ² - s0²)), s0 the test's null spread on the observed study, scaled along queries as "
          "the single τ and s0 with Kendall's null sd in the number of systems")

DOC_TARGET = "retrievability"
DOC_METHOD = ("documents drawn from the run's judged-relevant documents with replacement (systems as above, queries "
              "fixed); item-level τ (grouping item: each document's τ-b across systems, averaged): power of the "
              "run's test (permutation within documents; its null N(0, sd0²) from Kendall's tie-corrected "
              "variance of each document's τ) for the debiased effect sqrt(max(0, τ² - var)), var = sd0² + h²/m "
              "(h² the spread of the documents' τ beyond their own noise), scaled at other numbers of systems by "
              "the bootstrap mean τ there")

DOC_PAIR_METHOD = ("document pair separated: power of PERM-BOTH within documents (the run's item-level verdict test: "
                   "both metrics z-scored, each (system, document) cell's two values swapped with probability 0.5, "
                   "one-sided, the higher-τ metric against the other, p=(c+1)/(k+1) < alpha; one planned comparison, "
                   "no family correction) for the debiased effect sqrt(max(0, Δτ² - s0²)), s0 the test's null spread "
                   "on the observed study; per size the effect and s0 scaled by the simulated studies' mean Δτ and "
                   "mean permutation spread (systems distinct up to the observed number, documents drawn with "
                   "replacement, the test run on every study); its own numbers of studies (reps) and permutations (k), "
                   "given with each row")


def has_documents(results: Mapping[str, Any]) -> bool:
    """Whether results.json names an item-level documents matrix (``item_level.documents_file``)."""
    il = results.get("item_level")
    return isinstance(il, Mapping) and "documents_file" in il


def document_data(out: Any, results: Mapping[str, Any]) -> DocumentData:
    """The run's documents matrix (:func:`clir_eval.io.item_matrix.read_documents_file`, checked against
    results.json), metrics oriented (lower-is-better negated); metrics with a missing cell are left out."""
    from pathlib import Path

    from ..errors import UserError
    from ..io.item_matrix import read_documents_file

    m = read_documents_file(Path(out), results)
    if DOC_TARGET not in m["targets"]:
        raise UserError(f"{Path(out) / results['item_level']['documents_file']['file']}: no {DOC_TARGET} target; "
                        f"re-run 'clir-eval run CONFIG --out {out}' with item_level enabled")
    lower = set((results.get("score_kinds") or {}).get("lower_is_better", []))
    ok = {k: (-v if k in lower else v) for k, v in m["metrics"].items() if not np.isnan(v).any()}
    if len(m["systems"]) < 3 or not ok:
        raise UserError(f"{Path(out)}: the item-level documents matrix needs at least 3 systems and one metric "
                        f"scored for every document (has {len(m['systems'])} systems, {len(ok)} such metrics)")
    return DocumentData(m["systems"], m["documents"], ok, m["targets"][DOC_TARGET], m["n_queries"],
                        DOC_TARGET, tuple(k for k in m["metrics"] if k not in ok),
                        tuple(int(q) for q in m["queries_per_document"]))


def document_notes(data: DocumentData) -> list[str]:
    notes = [f"{k}: missing scores for some documents; left out of the documents' simulation" for k in data.left_out]
    q = data.queries_per_document
    if q and max(q) > 1:
        notes.append(f"documents are judged relevant by {min(q)}-{max(q)} queries (mean {sum(q) / len(q):.2f}) and "
                     "resampled as independent units: documents that share a query are not independent, so the "
                     "documents' power is optimistic")
    return notes
