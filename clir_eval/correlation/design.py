"""Study design: the power of a run's questions at other study sizes, for an assumed effect.

Power is computed the way G*Power and simr compute it, never from the observed effect ("observed power", Hoenig &
Heisey 2001, rises and falls with the observed p-value and says nothing new):

1. **Nuisance parameters from the pilot** (the finished run or a per-query score table), per target:
   the spread of the systems' true quality and the per-query noise (a two-way analysis of variance of the
   systems x queries matrix, :func:`variance_components`), from which the reliability of a system's mean over q
   queries, ``rel(q) = var_s / (var_s + var_e / q)``; each metric's loading on the systems' true quality
   (``r_m = sin(pi tau_m / 2) / sqrt(rel(Q))``, Greiner's relation between Kendall's tau and a normal correlation);
   and the metrics' correlation with each other beyond that quality (:func:`fit_target`).
2. **The effect is an input**: a single tau is the population Kendall tau between a metric and the target at the
   pilot's number of queries; a pair's effect is the population difference Delta tau = tau_a - tau_b at the pilot's
   number of queries, with the two metrics' mean tau and every other metric kept as in the pilot. The observed
   effect is reported beside it with its interval, never used as "the" effect.
3. **New studies are simulated** from the fitted normal model: new systems (true quality, metrics from their
   loadings and correlations) and new queries (a system's mean over q queries is its true quality plus noise
   of variance ``var_e / q``).
4. **The run's test is applied** to every simulated study. A single tau is significant when the run's two-sided,
   uncorrected Kendall test gives p < alpha: ``|tau| >= min_significant_tau(n)``, from Kendall's exact null (scipy's
   exact test up to 33 systems, its normal approximation above, as the run), so where the exact test cannot reject
   (4 systems at alpha 0.05) the power is 0. A pair is declared "a significantly above b" when a is ranked above b
   and PERM-BOTH's p, adjusted with the run's correction over the run's family (every pair of the target's metrics),
   is below alpha. PERM-BOTH's p is the exact one its Monte Carlo draws estimate (the run's sequential draws settle
   each decision on it): without ties the permuted Delta tau is a linear function of the systems' swap bits, so
   its null distribution is counted exactly by the function the run's verdicts use
   (:func:`.statistics.perm_both_tail_p`), at every size where the run's p is exact (up to
   ``statistics.EXACT_DP_MAX_N`` systems); above, where the run estimates it by Monte Carlo draws, by its normal
   approximation (:func:`pair_p`).
5. **Power with its Monte Carlo error**: the share of ``reps`` simulated studies that reject, ``mc_se =
   sqrt(p (1 - p) / reps)``. A single tau at effect 0 is the one exception: its studies are Kendall's null
   exactly, so its power is the test's size from Kendall's exact null distribution (:func:`null_size`,
   ``mc_se`` 0) — 400 simulated studies would put it anywhere in about alpha +- 0.02.

Seeded by question, size and effect (``numpy.random.default_rng([seed, kind, crc32(question), n_systems,
n_queries, effect in millionths])``), so one estimate does not depend on the other sizes or effects asked for; a
grid cell is one task, so an executor's ``map`` can run them in any order with the same result.
"""

from __future__ import annotations

import functools
import math
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..settings import default
from . import kendall
from .settings import CorrelationSettings, DesignSettings
from .significance import min_significant_tau
from .statistics import EXACT_DP_MAX_N, perm_both_tail_p, perm_both_weights

MAX_R = 0.995  # loadings and correlations are kept below this (the model needs some noise)
BLOCK = 2_000_000  # cells (studies x system pairs) per block of arithmetic: memory stays bounded whatever reps is
DEFAULT_EFFECTS = (0.1, 0.2, 0.3)
MAX_SYSTEMS = 1000  # largest study size in systems (the simulation holds a study's n^2 pair signs)
MAX_WORKERS = 8  # worker processes at most: each holds a few BLOCK-sized arrays (peak 0.17 GiB measured at
#                  --reps 100000), so design stays under 4 GiB whatever --reps and --jobs

METHOD = ("nuisance parameters from the pilot (variance of the systems' true quality and per-query noise by a "
          "two-way analysis of variance; each metric's loading on the systems' quality, sin(pi tau/2)/sqrt(rel); "
          "the metrics' correlation beyond it); the effect assumed, not observed (population tau, or Delta tau "
          "between two metrics, at the pilot's number of queries); new systems and queries simulated from that "
          "normal model; the run's tests applied: a single tau two-sided, uncorrected, Kendall's exact critical "
          "value; a pair, a significantly above b by PERM-BOTH (exact p) after the run's correction over the "
          "target's metric pairs; power = share of simulated studies that answer, with its Monte Carlo se")


# --------------------------------------------------------------------------- data and fit
@dataclass(frozen=True)
class Target:
    """A target's values over the pilot's systems: its score (S,) and, where it is a mean over queries, the
    per-query values (S, Q) (NaN: missing)."""

    name: str
    values: np.ndarray
    per_query: np.ndarray | None = None


@dataclass(frozen=True)
class DesignData:
    """A pilot: systems, MT metrics (oriented: higher is better, no missing score), targets, and what was left
    out with why (``dropped``: (name, reason))."""

    systems: tuple[str, ...]
    metrics: Mapping[str, np.ndarray]
    targets: Mapping[str, Target]
    dropped: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fit:
    """The fitted model of one target (:func:`fit_target`)."""

    target: str
    n_systems: int
    n_queries: int | None  # None: no per-query values (the systems dimension only)
    var_system: float | None
    var_noise: float | None
    metrics: tuple[str, ...]  # ranked as the run ranks them (observed tau, best first)
    taus: tuple[float, ...]  # observed tau-b of each metric with the target's score
    loadings: np.ndarray  # (M,) each metric's correlation with the systems' true quality
    corr: np.ndarray  # (M, M) the metrics' correlation with each other (sin(pi tau / 2) over the pilot's systems)
    notes: tuple[str, ...] = field(default=())

    def reliability(self, q: int | None) -> float:
        """The reliability of a system's mean over ``q`` queries (1 without queries)."""
        if self.n_queries is None or q is None:
            return 1.0
        vs, ve = max(self.var_system, 1e-12), self.var_noise
        return vs / (vs + ve / q) if ve > 0 else 1.0


def variance_components(pq: np.ndarray) -> tuple[float, float, int] | None:
    """(variance of the systems' true means, per-query noise variance, queries used) of a systems x queries
    matrix by the two-way analysis of variance without replication (systems and queries as main effects,
    the rest noise), over the queries every system has; None with fewer than 2 such queries."""
    pq = np.asarray(pq, float)
    cols = ~np.isnan(pq).any(axis=0)
    P = pq[:, cols]
    S, Q = P.shape
    if Q < 2 or S < 2:
        return None
    row, col, grand = P.mean(axis=1), P.mean(axis=0), P.mean()
    resid = P - row[:, None] - col[None, :] + grand
    ms_e = float((resid ** 2).sum() / ((S - 1) * (Q - 1)))
    ms_s = float(Q * ((row - grand) ** 2).sum() / (S - 1))
    return max(0.0, (ms_s - ms_e) / Q), ms_e, Q


def kendall_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row of X with the same row of Y (R, n), in blocks of rows."""
    R, n = X.shape
    iu, ju = np.triu_indices(n, k=1)
    out = np.empty(R)
    step = max(1, BLOCK // max(1, len(iu)))
    for s in range(0, R, step):
        x, y = X[s:s + step], Y[s:s + step]
        sx = np.sign(x[:, iu] - x[:, ju])
        sy = np.sign(y[:, iu] - y[:, ju])
        nx, ny = np.abs(sx).sum(axis=1), np.abs(sy).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s:s + step] = (sx * sy).sum(axis=1) / np.sqrt(nx * ny)
    return out


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    v = kendall_rows(np.asarray(x, float)[None], np.asarray(y, float)[None])[0]
    return 0.0 if math.isnan(v) else float(v)


def _psd_correlation(C: np.ndarray) -> tuple[np.ndarray, bool]:
    """The nearest-by-eigenvalue-clipping correlation matrix (unit diagonal, eigenvalues >= 1e-6); whether it
    had to change."""
    C = np.clip(np.nan_to_num((C + C.T) / 2, nan=0.0), -1, 1)
    np.fill_diagonal(C, 1.0)
    w, V = np.linalg.eigh(C)
    if w.min() >= 1e-6:
        return C, False
    C2 = (V * np.maximum(w, 1e-6)) @ V.T
    d = np.sqrt(np.diag(C2))
    C2 = C2 / d[:, None] / d[None, :]
    np.fill_diagonal(C2, 1.0)
    return C2, True


def fit_target(data: DesignData, name: str) -> Fit:
    """The model of ``name`` fitted on the pilot (module docstring, step 1); metrics ranked by observed tau."""
    t = data.targets[name]
    y = np.asarray(t.values, float)
    notes = []
    taus = {m: _tau(x, y) for m, x in data.metrics.items()}
    order = sorted(taus, key=lambda m: (taus[m], m), reverse=True)  # as verdict.ranking: tau, then name descending
    vc = variance_components(t.per_query) if t.per_query is not None else None
    if t.per_query is not None and vc is None:
        notes.append(f"{name}: fewer than 2 queries judged for every system; the queries' dimension is not modelled")
    if vc is not None:
        vs, ve, qn = vc
        if vs <= 0:
            notes.append(f"{name}: the systems' spread is not above the per-query noise in the pilot (true-score "
                         "variance estimated 0): every tau with it is noise at the pilot's size; the assumed effects "
                         "are taken as given there and the queries' dimension is extrapolated from a tiny variance")
        fit_q = t.per_query.shape[1]
    else:
        vs = ve = None
        fit_q = None
    base = Fit(name, len(y), fit_q, vs, ve, tuple(order), tuple(taus[m] for m in order), np.zeros(0), np.eye(0))
    rel = base.reliability(fit_q)
    r = np.array([_loading(taus[m], rel) for m in order])
    M = len(order)
    C = np.eye(M)
    for i in range(M):
        for j in range(i + 1, M):
            C[i, j] = C[j, i] = math.sin(math.pi / 2 * _tau(data.metrics[order[i]], data.metrics[order[j]]))
    change = corr_change(tuple(order), r, C)
    if change is not None:
        notes.append(f"{name}: the pilot's correlations between the metrics, less what their loadings on the "
                     "systems' quality explain, are not a valid correlation matrix (too few systems to estimate "
                     "them); the nearest valid one is simulated: " + change_text(change))
    return Fit(name, len(y), fit_q, vs, ve, tuple(order), tuple(taus[m] for m in order), r, C, tuple(notes))


def residual_correlation(r: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, bool]:
    """The metrics' correlation beyond the systems' quality for loadings r and metric correlations C (a valid
    correlation matrix: eigenvalues clipped where C and r do not fit together); whether it had to be clipped."""
    d = np.sqrt(1 - r ** 2)
    return _psd_correlation((C - np.outer(r, r)) / np.outer(d, d))


def corr_change(metrics: Sequence[str], r: np.ndarray, C: np.ndarray) -> dict[str, Any] | None:
    """How the metrics' correlations that are simulated differ from the assumed ones ``C`` (loadings ``r``) where
    :func:`residual_correlation` had to clip: the pair of metrics whose correlation changed most, its assumed and
    simulated correlation (normal model) and the change; None where the assumed model is simulated as it is."""
    R, clipped = residual_correlation(r, C)
    if not clipped:
        return None
    d = np.sqrt(1 - r ** 2)
    S = np.outer(r, r) + np.outer(d, d) * R
    diff = np.abs(S - C)
    np.fill_diagonal(diff, 0.0)
    i, j = (int(v) for v in np.unravel_index(int(np.argmax(diff)), diff.shape))
    i, j = min(i, j), max(i, j)
    return {"metrics": [metrics[i], metrics[j]], "assumed": float(C[i, j]), "simulated": float(S[i, j]),
            "max_change": float(diff[i, j])}


def change_text(change: Mapping[str, Any]) -> str:
    """:func:`corr_change` in words."""
    a, b = change["metrics"]
    return (f"the largest change is {a}–{b}'s correlation, {change['assumed']:.3f} assumed → {change['simulated']:.3f} "
            f"simulated ({change['max_change']:.3f})")


def _loading(tau: float, rel: float) -> float:
    """The correlation with the systems' true quality that gives population tau ``tau`` with a target of
    reliability ``rel`` (normal model; capped at MAX_R)."""
    rho = math.sin(math.pi / 2 * tau) / math.sqrt(max(rel, 1e-12))
    return max(-MAX_R, min(MAX_R, rho))


# --------------------------------------------------------------------------- the run's tests, vectorised
@functools.lru_cache(maxsize=256)
def critical_tau(n: int, alpha: float, variant: str | None = "b") -> float | None:
    """The smallest |tau| the run's two-sided Kendall test calls significant at n untied systems (exact null up to
    33 systems, as the run); None where no tau can be (e.g. 4 systems at alpha 0.05)."""
    return min_significant_tau(n, alpha, variant)


@functools.lru_cache(maxsize=256)
def null_size(n: int, alpha: float, variant: str | None = "b") -> float:
    """The size of the run's two-sided Kendall test at n untied systems: the probability, under independence, that
    |tau| reaches :func:`critical_tau` — Kendall's exact null distribution at every n (above 33 systems the run's
    critical value comes from the normal approximation, so its size is not exactly alpha: 0.0510 at 36, 0.0495 at
    100 for alpha 0.05); 0 where the test cannot reject."""
    c = critical_tau(n, alpha, variant)
    if c is None:
        return 0.0
    pairs = n * (n - 1) // 2
    d = int(round((pairs - c * pairs) / 2))  # discordant pairs at the critical value
    return kendall.p_value(kendall.untied(n, d), "exact")


def pair_p(a: np.ndarray, b: np.ndarray, y: np.ndarray, sides: int = 1) -> np.ndarray:
    """PERM-BOTH's p of "a correlates with y better than b" in each study (rows of (R, n) arrays), as the run's
    verdicts compute it: both metrics z-scored per study, the permuted Δτ a sum over the systems' swap bits
    (:func:`.statistics.perm_both_weights`), its null distribution counted by :func:`subset_sum_p`. ``sides`` 2:
    two-sided, min(1, 2 x the one-sided p) — for a the leader (the run tests the leader's tail)."""
    if a.shape[0] == 0:
        return np.zeros(0)
    W, linear = perm_both_weights(_z(a), _z(b), y)
    p = subset_sum_p(W) if linear.all() else normal_p(W)  # continuous simulated scores: no ties, linear always
    return np.minimum(1.0, sides * p)


def _z(v: np.ndarray) -> np.ndarray:
    """Each row z-scored (population sd, as scipy.stats.zscore, which the run's test uses on one study)."""
    return (v - v.mean(axis=1, keepdims=True)) / v.std(axis=1, keepdims=True)


def subset_sum_p(W: np.ndarray) -> np.ndarray:
    """PERM-BOTH's one-sided p per row of integer swap weights W (R, n) (:func:`.statistics.perm_both_weights`):
    the share of swap patterns s with sum_i W_i s_i <= 0, the identity counted. Exact — the run's own count,
    :func:`.statistics.perm_both_tail_p` — up to the run's exact limit (``statistics.EXACT_DP_MAX_N`` systems);
    above it, where the run estimates this p by Monte Carlo draws, its normal approximation (:func:`normal_p`)."""
    W = np.asarray(W, np.int64)
    if W.shape[0] == 0:
        return np.zeros(0)
    return perm_both_tail_p(W) if W.shape[1] <= EXACT_DP_MAX_N else normal_p(W)


def adjust_rows(P: np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values of each row (a family) of P (R, K): holm, bh or none (as :func:`.significance.adjust`)."""
    if method == "none" or P.shape[1] <= 1:
        return P.copy()
    K = P.shape[1]
    order = np.argsort(P, axis=1, kind="stable")
    ps = np.take_along_axis(P, order, axis=1)
    if method == "holm":
        adj = np.maximum.accumulate(ps * (K - np.arange(K)), axis=1)
    elif method == "bh":
        adj = np.minimum.accumulate((ps * K / np.arange(1, K + 1))[:, ::-1], axis=1)[:, ::-1]
    else:
        raise ValueError(f"unknown correction {method!r}")
    out = np.empty_like(P)
    np.put_along_axis(out, order, np.minimum(adj, 1.0), axis=1)
    return out


# --------------------------------------------------------------------------- simulation
@dataclass(frozen=True)
class Question:
    """One grid task: a question (a single tau of ``target``, or pair ``a`` above ``b``) at one study size, for
    every assumed effect."""

    target: str
    a: str | None  # None: a single tau (its power does not depend on the metric)
    b: str | None
    n_systems: int
    n_queries: int | None
    effects: tuple[float, ...]
    reps: int
    alpha: float
    correction: str
    extra_family: int  # pairs of other targets in the family (family: all), counted as not rejected
    seed: int
    variant: str | None = "b"
    sides: int = 1  # PERM-BOTH as the run computes it: 1 one-sided (the leader's tail), 2 two-sided


RUN_SIDES = 2  # the run's verdicts test PERM-BOTH two-sided (correlation/driver.py's pair test; a run's verdicts
#               say so in their "test" text, and tests/test_design.py checks the two agree)


def run_sides() -> int:
    """2 where this version's verdicts test PERM-BOTH two-sided (p = share of |Δ*| >= |Δ|), else 1 (the leader's
    one-sided p): the run's own pair test (:data:`RUN_SIDES`), used where no run's verdicts say it (``--table``)."""
    return RUN_SIDES


def _rng(q: Question, effect: float) -> np.random.Generator:
    key = zlib.crc32(f"{q.target}\0{q.a}\0{q.b}".encode())
    return np.random.default_rng([q.seed, 1 if q.b else 0, key, q.n_systems, q.n_queries or 0,
                                  int(round(effect * 1e6))])


def tau_power(fit: Fit, q: Question, effect: float) -> tuple[float, float, str | None]:
    """(power, Monte Carlo se, note) of the single tau at population tau ``effect`` (at the pilot's queries)."""
    c = critical_tau(q.n_systems, q.alpha, q.variant)
    if c is None:
        return 0.0, 0.0, None
    if effect == 0:  # independence: the power is the test's size, known exactly (no Monte Carlo error)
        return null_size(q.n_systems, q.alpha, q.variant), 0.0, None
    rho_q = math.sin(math.pi / 2 * effect) * math.sqrt(fit.reliability(q.n_queries) / fit.reliability(fit.n_queries))
    note = None
    if rho_q > MAX_R:
        rho_q, note = MAX_R, "capped"
    rng = _rng(q, effect)
    hits = 0
    for size in _chunks(q.reps, q.n_systems):
        Z = rng.standard_normal((size, q.n_systems))
        X = rho_q * Z + math.sqrt(1 - rho_q ** 2) * rng.standard_normal((size, q.n_systems))
        hits += int((np.abs(kendall_rows(X, Z)) >= c - 1e-12).sum())
    p = hits / q.reps
    return p, math.sqrt(p * (1 - p) / q.reps), note


def _chunks(reps: int, n: int, m: int = 1) -> list[int]:
    """Studies per block (memory bounded by BLOCK cells of n x n pair signs or n x m scores, whatever reps is)."""
    per = max(1, BLOCK // max(1, n * max(n, m)))
    return [min(per, reps - s) for s in range(0, reps, per)]


def _pair_loadings(fit: Fit, ia: int, ib: int, effect: float) -> tuple[np.ndarray, bool]:
    """The loadings with metrics ia, ib at tau-bar +- effect/2 (their pilot mean tau-bar, shifted down where the
    upper one would exceed what the target's reliability allows); whether it had to shift."""
    rel = fit.reliability(fit.n_queries)
    top = 2 / math.pi * math.asin(min(1.0, MAX_R * math.sqrt(rel)))  # the largest tau the model can give
    bar = (fit.taus[ia] + fit.taus[ib]) / 2
    ta = bar + effect / 2
    shifted = ta > top
    ta = min(ta, top)
    r = fit.loadings.copy()
    r[ia], r[ib] = _loading(ta, rel), _loading(ta - effect, rel)
    return r, shifted


def simulate_family(fit: Fit, r: np.ndarray, n: int, n_q: int | None, reps: int, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``reps`` new studies of n systems (and n_q queries): metrics (R, n, M) and the target's system means (R, n).
    The metrics keep the pilot's correlations with each other (``fit.corr``) around the loadings ``r``."""
    M = len(r)
    L = np.linalg.cholesky(residual_correlation(r, fit.corr)[0] + 1e-9 * np.eye(M))
    u = rng.standard_normal((reps, n))
    eta = rng.standard_normal((reps, n, M)) @ L.T
    X = u[:, :, None] * r + eta * np.sqrt(1 - r ** 2)
    rel = fit.reliability(n_q)
    Y = math.sqrt(rel) * u + math.sqrt(1 - rel) * rng.standard_normal((reps, n))
    return X, Y


def normal_p(W: np.ndarray) -> np.ndarray:
    """PERM-BOTH's one-sided p from its weights (:func:`.statistics.perm_both_weights`) by the normal
    approximation of sum_i t_i W_i (t_i = +-1 uniform: mean 0, variance sum W_i^2), continuity-corrected: used
    above the run's exact limit only."""
    ndtr = lazylibs.scipy_special().ndtr
    obs = W.sum(axis=1).astype(float)
    sd = np.sqrt((W.astype(float) ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, ndtr(-(obs - 1) / np.where(sd > 0, sd, 1.0)), 1.0)


def verdict_rejects(X: np.ndarray, Y: np.ndarray, ia: int, ib: int, alpha: float, correction: str,
                    extra_family: int = 0, sides: int = 1) -> np.ndarray:  # fmt: skip
    """Per study (X: (R, n, M) metrics, Y: (R, n) target): whether the run's verdict procedure declares metric
    ia significantly above metric ib — ia ranked above ib (higher tau) and PERM-BOTH's one-sided p of the pair
    (leader against the other), adjusted with ``correction`` over every pair of the M metrics (and
    ``extra_family`` pairs of other targets, counted as not rejected), below alpha. Every pair's p is the run's
    (:func:`pair_p`: exact wherever the run's is). ``sides`` 2: the two-sided p, P(|Δ*| >= |Δ|) =
    min(1, 2 P(Δ* >= |Δ|)) (the permutation distribution is symmetric)."""
    R, n, M = X.shape
    ta, tb = kendall_rows(X[:, :, ia], Y), kendall_rows(X[:, :, ib], Y)
    above = ta > tb  # only studies that rank ia above ib can declare it
    out = np.zeros(R, bool)
    if not above.any():
        return out
    pairs = [(i, j) for i in range(M) for j in range(i + 1, M)]
    K = len(pairs) + extra_family
    X, Y = X[above], Y[above]
    p_focal = pair_p(X[:, :, ia], X[:, :, ib], Y, sides)  # ia leads
    if correction == "none" or K == 1:
        out[above] = p_focal < alpha
        return out
    # an adjusted p is at least the raw one and at most K times it (Holm, BH): only studies in between need the
    # family's other pairs
    sure, open_ = p_focal < alpha / K, (p_focal >= alpha / K) & (p_focal < alpha)
    decided = sure.copy()
    if open_.any():
        Xo, Yo = X[open_], Y[open_]
        taus = np.stack([kendall_rows(Xo[:, :, m], Yo) for m in range(M)], axis=1)
        focal = pairs.index((min(ia, ib), max(ia, ib)))
        P = np.ones((len(Xo), K))
        for k, (i, j) in enumerate(pairs):
            if k == focal:
                P[:, k] = p_focal[open_]
                continue
            lead = (taus[:, i] >= taus[:, j])[:, None]  # the leader's test; continuous: no ties
            P[:, k] = pair_p(np.where(lead, Xo[:, :, i], Xo[:, :, j]), np.where(lead, Xo[:, :, j], Xo[:, :, i]), Yo,
                             sides)
        decided[open_] = adjust_rows(P, correction)[:, focal] < alpha
    out[above] = decided
    return out


def pair_power(fit: Fit, q: Question, effect: float) -> tuple[float, float, str | None]:
    """(power, Monte Carlo se, note) of "a significantly above b" for population Delta tau ``effect``."""
    ia, ib = fit.metrics.index(q.a), fit.metrics.index(q.b)
    r, shifted = _pair_loadings(fit, ia, ib, effect)
    rng = _rng(q, effect)
    hits = 0
    for size in _chunks(q.reps, q.n_systems, len(r)):
        X, Y = simulate_family(fit, r, q.n_systems, q.n_queries, size, rng)
        hits += int(verdict_rejects(X, Y, ia, ib, q.alpha, q.correction, q.extra_family, q.sides).sum())
    p = hits / q.reps
    return p, math.sqrt(p * (1 - p) / q.reps), "shifted" if shifted else None


def run_question(fits: Mapping[str, Fit], q: Question) -> list[dict[str, Any]]:
    """The rows of one grid task (one per effect)."""
    fit = fits[q.target]
    out = []
    for e in q.effects:
        p, se, note = (pair_power if q.b else tau_power)(fit, q, e)
        row = {"target": q.target, "a": q.a, **({"b": q.b} if q.b else {}), "n_systems": q.n_systems,
               "n_queries": q.n_queries, "effect": e, "power": p, "mc_se": se}
        if note:
            row["note"] = note
        if q.b:  # the assumed correlations between the metrics, where the pair's loadings made them invalid
            ia, ib = fit.metrics.index(q.a), fit.metrics.index(q.b)
            change = corr_change(fit.metrics, _pair_loadings(fit, ia, ib, e)[0], fit.corr)
            if change is not None:
                row["corr_change"] = change
        out.append(row)
    return out


class _Runner:
    """A picklable callable for an executor's map: the fits travel once per task."""

    def __init__(self, fits: Mapping[str, Fit]):
        self.fits = dict(fits)

    def __call__(self, q: Question) -> list[dict[str, Any]]:
        return run_question(self.fits, q)


def default_sizes(observed: int, minimum: int) -> list[int]:
    """Six sizes around the observed one: x0.5, x0.75, x1, x1.5, x2, x3 (at least ``minimum``, distinct)."""
    return sorted({max(minimum, int(round(observed * f))) for f in (0.5, 0.75, 1, 1.5, 2, 3)})


def adjacent_pairs(fit: Fit) -> list[tuple[str, str]]:
    """The pairs that decide the pilot's clusters: each metric against the next one in the pilot's ranking."""
    return list(zip(fit.metrics, fit.metrics[1:]))


def all_pairs(fit: Fit) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(fit.metrics) for b in fit.metrics[i + 1:]]


def plan(fits: Mapping[str, Fit], systems: Sequence[int], queries: Sequence[int], effects: Sequence[float],
         pair_effects: Sequence[float], *, pairs: str = "adjacent", reps: int = default(DesignSettings, "reps"),
         alpha: float = default(CorrelationSettings, "alpha"), correction: str = "holm", family: str = "target",
         seed: int = default(DesignSettings, "seed"), variant: str | None = "b",
         metrics: Sequence[str] | None = None, sides: int = 1) -> list[Question]:  # fmt: skip
    """The grid's tasks: per target, every size of ``systems`` at the pilot's queries and every size of
    ``queries`` at the pilot's systems (targets without queries: systems only); a single tau per target (its
    power is every metric's), and the pairs (``adjacent`` in the pilot's ranking, or ``all``)."""
    total_pairs = sum(len(f.metrics) * (len(f.metrics) - 1) // 2 for f in fits.values())
    out = []
    for name, fit in fits.items():
        S, Q = fit.n_systems, fit.n_queries
        sizes = [(n, Q) for n in systems]
        if Q is not None:
            sizes += [(S, q) for q in queries if (S, q) not in sizes]
        extra = total_pairs - len(fit.metrics) * (len(fit.metrics) - 1) // 2 if family == "all" else 0
        chosen = all_pairs(fit) if pairs == "all" else adjacent_pairs(fit)
        if metrics is not None:
            chosen = [(a, b) for a, b in all_pairs(fit) if a in metrics and b in metrics]
        for n, q in sizes:
            if effects:
                out.append(Question(name, None, None, n, q, tuple(effects), reps, alpha, correction, extra, seed,
                                    variant, sides))
            for a, b in chosen:
                if pair_effects:
                    out.append(Question(name, a, b, n, q, tuple(pair_effects), reps, alpha, correction, extra, seed,
                                        variant, sides))
    return out


def simulate(fits: Mapping[str, Fit], questions: Sequence[Question], map: Callable[[Callable, list], list] | None = None,
             ) -> list[dict[str, Any]]:  # fmt: skip
    """Every task's rows, in task order (``map``: an executor's, or serial)."""
    run = map or (lambda f, xs: [f(x) for x in xs])
    return [row for rows in run(_Runner(fits), list(questions)) for row in rows]


def expand_taus(rows: Sequence[Mapping[str, Any]], fits: Mapping[str, Fit]) -> list[dict[str, Any]]:
    """Single-tau rows (``a`` None) repeated for each metric of their target (the power is the same for every
    metric: it depends only on tau, the number of systems and the target's reliability)."""
    out = []
    for r in rows:
        if r["a"] is None and "b" not in r:
            out += [{**r, "a": m} for m in fits[r["target"]].metrics]
        else:
            out.append(dict(r))
    return out


# --------------------------------------------------------------------------- answers
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


def size_text(points: Sequence[tuple[int, float]], goal: float, unit: str) -> str:
    n = needed(points, goal)
    if n is None:
        return f"> {max(s for s, _ in points)} {unit}"
    return f"{'≤' if n <= min(s for s, _ in points) else '≈'} {math.ceil(n)} {unit}"


def answers(rows: Sequence[Mapping[str, Any]], fits: Mapping[str, Fit], goal: float,
            observed: Mapping[tuple, Mapping[str, Any]] | None = None,
            lead_pairs: Mapping[str, tuple[str, str]] | None = None) -> list[str]:  # fmt: skip
    """One line per question: per target the single tau and the pilot's leading pair (its first two metrics), each
    with every assumed effect, the systems needed at the pilot's queries for ``goal`` power and the power at the
    pilot's size; the observed effect with its interval beside it where known."""
    observed = observed or {}
    out = []
    for name, fit in fits.items():
        S, Q = fit.n_systems, fit.n_queries
        at = f" at {Q} queries" if Q else ""
        mine = [r for r in rows if r["target"] == name]
        singles = [r for r in mine if "b" not in r and r["a"] in (None, fit.metrics[0] if fit.metrics else None)]
        if singles:
            parts = []
            for e in dict.fromkeys(r["effect"] for r in singles):
                pts = [(r["n_systems"], r["power"]) for r in singles if r["effect"] == e and r["n_queries"] == Q]
                here = next((r for r in singles if r["effect"] == e and (r["n_systems"], r["n_queries"]) == (S, Q)), None)
                parts.append(f"τ={e:g}: {size_text(pts, goal, 'systems')}"
                             + (f" (power here {here['power']:.2f})" if here else ""))
            out.append(f"{name}: τ(metric, {name}) significant with {goal:.0%} power{at}: " + "; ".join(parts))
        pair = (lead_pairs or {}).get(name) or (tuple(fit.metrics[:2]) if len(fit.metrics) > 1 else None)
        pr = [r for r in mine if pair and (r["a"], r.get("b")) == pair]
        if pr:
            parts = []
            for e in dict.fromkeys(r["effect"] for r in pr):
                pts = [(r["n_systems"], r["power"]) for r in pr if r["effect"] == e and r["n_queries"] == Q]
                here = next((r for r in pr if r["effect"] == e and (r["n_systems"], r["n_queries"]) == (S, Q)), None)
                parts.append(f"Δτ={e:g}: {size_text(pts, goal, 'systems')}"
                             + (f" (power here {here['power']:.2f})" if here else ""))
            obs = observed.get((name, *pair))
            seen = (f" [observed Δτ {obs['delta']:+.2f}" + (f", 95% CI {obs['ci'][0]:+.2f} to {obs['ci'][1]:+.2f}"
                                                          if obs.get("ci") and None not in obs["ci"] else "") + "]"
                    if obs and obs.get("delta") is not None else "")
            out.append(f"{name}: {pair[0]} significantly above {pair[1]} with {goal:.0%} power{at}: "
                       + "; ".join(parts) + seen)
    return out


# --------------------------------------------------------------------------- pilots
def design_data(results: Mapping[str, Any]) -> DesignData:
    """A run's pilot from its results.json: the systems with MT scores, every MT metric scored on all of them
    (oriented: lower-is-better negated), and every target of its verdicts (IR measures; human judgements) with
    a score for every one of them; an IR measure whose score is the mean of its per-query values keeps them.
    Everything left out is named in ``dropped`` with its reason."""
    sysres = results.get("systems") or {}
    systems = [s for s, e in sysres.items() if e.get("mt")]
    kinds = results.get("score_kinds") or {}
    lower = set(kinds.get("lower_is_better", []))
    dropped: list[tuple[str, str]] = []
    notes: list[str] = []
    metrics = {}
    for m in kinds.get("mt", []):
        miss = [s for s in systems if sysres[s]["mt"].get(m) is None]
        if miss:
            dropped.append((m, f"MT metric without a score for {len(miss)} of {len(systems)} systems "
                               f"({', '.join(miss[:3])}{' ...' if len(miss) > 3 else ''})"))
            continue
        metrics[m] = np.array([(-1 if m in lower else 1) * float(sysres[s]["mt"][m]) for s in systems])
    targets = {}
    for kind, key in (("ir", "ir"), ("human", "human")):
        for y in kinds.get(kind, []):
            vals = [(sysres[s].get(key) or {}).get(y) for s in systems]
            if any(v is None for v in vals):
                n_miss = sum(v is None for v in vals)
                dropped.append((y, f"target without a score for {n_miss} of {len(systems)} systems"))
                continue
            v = np.array(vals, float)
            if np.all(v == v[0]):
                dropped.append((y, "target with the same value for every system (no metric can be ranked by it)"))
                continue
            pq = None
            if kind == "human":
                notes.append(f"{y}: human scores (no queries): designed over systems only, the scores' own noise "
                             "taken as in the pilot")
            if kind == "ir":
                pq = _per_query(sysres, systems, y)
                if pq is None:
                    notes.append(f"{y}: no per-query values whose mean is its score; designed over systems only")
            targets[y] = Target(y, v, pq)
    if len(systems) < 3:
        raise UserError(f"design needs a run with at least 3 systems with MT scores; this one has {len(systems)}")
    if len(metrics) < 1 or not targets:
        why = "; ".join(f"{n}: {r}" for n, r in dropped) or "none in results.json"
        raise UserError(f"design needs MT metrics and targets scored for every system ({why})")
    return DesignData(tuple(systems), metrics, targets, tuple(dropped), tuple(notes))


def _per_query(sysres: Mapping[str, Any], systems: Sequence[str], y: str) -> np.ndarray | None:
    per = [sysres[s].get("ir_per_query") for s in systems]
    if any(not p for p in per):
        return None
    qids = sorted({q for p in per for q in p})
    pq = np.array([[((p.get(q) or {}).get(y) if isinstance(p.get(q), Mapping) else None) for q in qids] for p in per],
                  dtype=object)
    pq = np.where(pq == None, np.nan, pq).astype(float)  # noqa: E711
    agg = np.array([float(sysres[s]["ir"][y]) for s in systems])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if np.isnan(pq).all() or not np.allclose(np.nanmean(pq, axis=1), agg, atol=1e-6):
            return None
    return pq
