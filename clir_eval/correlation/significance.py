"""Significance beyond one correlation: multiple-testing adjustment, power of τ, joint resampling, IR discriminability.

- :func:`adjust`: Holm (step-down, family-wise error) or Benjamini-Hochberg (false discovery
  rate) adjusted p-values.
- :func:`min_significant_tau`: for n systems, the smallest |τ| whose p-value is below α,
  read from the exact null distribution of untied rankings (scipy's exact Kendall test).
- :func:`boot_both_ci`: BOOT-BOTH (Deutsch et al. 2021): percentile CI of the coefficient
  resampling systems and queries together (conservative: it counts the system x query interaction
  three times); :func:`crossed_ci` / :func:`crossed_interval`: the calibrated interval for systems
  and queries both random (docs/statistics.md) that results.json's ``ci_both`` and the verdicts'
  ``delta_ci`` use.
- :func:`paired_randomization`: per pair of systems, a two-sided paired randomization test
  over queries (random sign flips of the per-query differences), p = (c+1)/(k+1).
- :func:`monte_carlo_family`: the verdict engine of every level: a family of tests, exact ones
  (``patterns``) enumerated once, Monte Carlo ones drawn sequentially until every
  decision (adjusted p below α or not) is settled, as in Gandy & Hahn's MMCTest: tests whose
  Clopper-Pearson interval can still change a decision get more draws, up to a maximum derived
  from the family size and α so that the smallest attainable adjusted p is far below α.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..errors import UserError
from ..settings import default
from ..stats import adjust_p, beta_ppf, norm_ppf
from . import kendall
from .settings import CORRECTIONS, FAMILIES, RESOLUTIONS, CorrelationSettings, StatsSettings  # noqa: F401  (the choices, declared with the settings)
from .statistics import (
    RESAMPLE_BLOCK,
    Mapper,
    ResampleBlock,
    block_tasks,
    check_level,
    check_method,
    coef_batch,
    is_pending,
    joint_sample,
    pair_coef,
    percentile_ci,
    resample_block,
    resample_blocks,
    resample_draws,
    serial_map,
)

# keyword defaults of the functions below: the settings records' (correlation/settings.py)
_METHOD, _VARIANT = default(CorrelationSettings, "method"), default(CorrelationSettings, "variant")
_ALPHA, _LEVEL, _SEED = default(CorrelationSettings, "alpha"), default(StatsSettings, "level"), default(StatsSettings, "seed")
_BOOTSTRAP, _PERMUTATION = default(CorrelationSettings, "bootstrap"), default(CorrelationSettings, "permutation")

SETTLE_RISK = 1e-3  # two-sided error of each Clopper-Pearson interval that settles a decision
FLOOR_SHARE = 0.05  # sequential: the maximum draws make the smallest attainable adjusted p <= FLOOR_SHARE * alpha
MAX_DRAWS = 1_000_000  # per test, whatever the family


def adjust(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values in input order: ``holm`` (Holm 1979) or ``bh`` (Benjamini-Hochberg 1995)
    (:func:`clir_eval.stats.adjust_p`, one implementation for MT and correlation tests)."""
    if method not in CORRECTIONS:
        raise UserError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    return [float(v) for v in adjust_p(list(p_values), method)]


# --------------------------------------------------------------------------- sequential Monte Carlo tests
def p_floor(m: int, draws: int, correction: str) -> float:
    """The smallest adjusted p a family of ``m`` Monte Carlo tests with ``draws`` draws each can
    reach: m/(k+1) under Holm or BH (BH: for a single discovery), 1/(k+1) uncorrected."""
    return min(1.0, (1 if correction == "none" else max(1, m)) / (draws + 1))


def max_draws(m: int, alpha: float, correction: str, first: int) -> int:
    """Sequential mode's cap on draws per test: enough for :func:`p_floor` <= FLOOR_SHARE * alpha
    (whole blocks after the first ``first``), at most MAX_DRAWS, at least ``first``."""
    need = (1 if correction == "none" else max(1, m)) / (FLOOR_SHARE * alpha)
    extra = max(0, math.ceil((need - first) / RESAMPLE_BLOCK)) * RESAMPLE_BLOCK
    return max(first, min(first + extra, first + (MAX_DRAWS // RESAMPLE_BLOCK) * RESAMPLE_BLOCK))


def clopper_pearson(c: np.ndarray, n: np.ndarray, risk: float = SETTLE_RISK) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided (1 - risk) Clopper-Pearson interval of a proportion c/n, elementwise."""
    c = np.asarray(c, float)
    n = np.asarray(n, float)
    with np.errstate(all="ignore"):
        lo = np.where(c > 0, beta_ppf(risk / 2, c, n - c + 1), 0.0)
        hi = np.where(c < n, beta_ppf(1 - risk / 2, c + 1, n - c), 1.0)
    return np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=1.0)


@dataclass(frozen=True)
class Stream:
    """Tests whose draws come from one seeded stream of the built-in resampling blocks (kind, seed),
    run through the engine's ``map``: ``members`` are their indices in the family list; ``data(open
    members)`` gives a block's data for the members still drawing, ``hits(block result, open
    members)`` their exceedance counts in it. ``patterns`` > 0 marks an exact stream: one block of
    that size enumerates every equally likely resample once (e.g. kind ``permutation-exact``), the
    hits are the exact count and p = hits / patterns."""

    kind: str
    method: str
    variant: str | None
    seed: int
    members: tuple[int, ...]
    data: Callable[[list[int]], tuple]
    hits: Callable[[np.ndarray, list[int]], np.ndarray]
    patterns: int = 0


@dataclass(frozen=True)
class Source:
    """Tests whose draws come from the caller's own generator, run in this process (any statistic,
    any level: item-level swaps, pooled tests). ``draw(open members, block, size)`` returns, per open
    member in that order, how many of ``size`` fresh null draws reach its observed statistic (in the
    direction the test rejects). Block ``j`` must depend only on (the data, j, size) — draw it from
    :func:`block_rng` ``(seed, j)`` — so results are reproducible and do not depend on the rounds.
    ``patterns`` > 0 marks an exact source: ``draw(members, 0, patterns)`` counts over every one of
    ``patterns`` equally likely null resamples and p = hits / patterns."""

    members: tuple[int, ...]
    draw: Callable[[list[int], int, int], np.ndarray]
    patterns: int = 0


def block_rng(seed: int, block: int) -> np.random.Generator:
    """The generator of seed block ``block`` (as every built-in resampling: block 0 = ``default_rng(seed)``'s draws)."""
    return np.random.default_rng([int(seed), int(block)])


@dataclass(frozen=True)
class MCResult:
    """Per test: exceedances, draws (patterns for an exact test), p ((c+1)/(k+1) for Monte Carlo,
    c/patterns exact), its Monte Carlo standard error (0 exact), whether its decision was settled
    (False only where the maximum draws left it open) and whether it is exact."""

    hits: np.ndarray
    draws: np.ndarray
    p: np.ndarray
    se: np.ndarray
    settled: np.ndarray
    max_draws: int
    exact: np.ndarray | None = None

    def adjusted(self, families: Sequence[Sequence[int]], correction: str) -> np.ndarray:
        """Adjusted p of every test within its family (NaN for a test in no family)."""
        out = np.full(len(self.p), np.nan)
        for fam in families:
            idx = np.asarray(fam, int)
            if len(idx):
                out[idx] = adjust([float(v) for v in self.p[idx]], correction)
        return out


def _new_blocks(done: int, target: int, first: int) -> list[tuple[int, int]]:
    """(block index, size) to go from ``done`` to ``target`` draws: the first ``first`` draws
    are :func:`resample_blocks` (first), then whole blocks numbered on from there."""
    if done == 0:
        base = resample_blocks(first)
        return base + [(len(base) + j, RESAMPLE_BLOCK) for j in range((target - first) // RESAMPLE_BLOCK)]
    k0 = len(resample_blocks(first)) + (done - first) // RESAMPLE_BLOCK
    return [(k0 + j, RESAMPLE_BLOCK) for j in range((target - done) // RESAMPLE_BLOCK)]


def _bounds(hits: np.ndarray, draws: np.ndarray, exact: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, lower, upper) per test: Monte Carlo p = (c+1)/(k+1) within its Clopper-Pearson
    interval (widened to include p); exact p = c/patterns with no interval."""
    safe = np.maximum(draws, 1)
    phat = (hits + 1) / (safe + 1)
    lo, hi = clopper_pearson(hits, safe)
    hi = np.maximum(hi, phat)
    lo = np.minimum(lo, phat)
    if exact is not None and exact.any():
        pe = hits / safe
        phat, lo, hi = (np.where(exact, pe, v) for v in (phat, lo, hi))
    return phat, lo, hi


def open_decisions(hits: np.ndarray, draws: np.ndarray, families: Sequence[Sequence[int]], correction: str,
                   alpha: float, exact: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Tests whose decision could still change: rejected when every p is at its upper
    Clopper-Pearson bound (or p-hat, if larger) would not reject it, but rejected at the lower
    bounds would. Holm and BH are monotone, so the decision at the true p lies between. Exact
    tests have no Monte Carlo error (their bounds are their p)."""
    out = np.zeros(len(hits), bool)
    _, lo, hi = _bounds(np.asarray(hits), np.asarray(draws), exact)
    for fam in families:
        idx = np.asarray(fam, int)
        if not len(idx):
            continue
        sure = np.asarray(adjust(hi[idx], correction)) < alpha
        maybe = np.asarray(adjust(lo[idx], correction)) < alpha
        out[idx] = maybe & ~sure
    return out


def monte_carlo_family(streams: Sequence["Stream | Source"], n_tests: int, families: Sequence[Sequence[int]],
                       correction: str, alpha: float, first: int, sequential: bool = True,
                       map: Mapper | None = None) -> MCResult:  # fmt: skip
    """The verdict engine: decide a family of tests, each exact or Monte Carlo, under one resolution guard.

    ``streams`` (:class:`Stream`: built-in blocks run through ``map``; :class:`Source`: the caller's
    own generator, run here) cover tests ``0..n_tests-1``; ``families`` are lists of test indices
    adjusted together (``correction``: holm | bh | none, at ``alpha``). Exact streams/sources
    (``patterns`` > 0) are enumerated once. Monte Carlo tests get ``first`` draws; with
    ``sequential`` (Gandy & Hahn's MMCTest), tests whose decision is still open
    (:func:`open_decisions`: 99.9% Clopper-Pearson intervals of p on both sides of the adjusted
    threshold) get more, doubling in whole seed blocks, up to :func:`max_draws` for the largest
    family. A test's draws depend only on its stream's seed and block numbers, so results do not
    depend on how ``map`` spreads the blocks (one ``map`` call per round). Returns an
    :class:`MCResult`; :func:`settle_summary` says what the unsettled decisions would need."""
    hits = np.zeros(n_tests, np.int64)
    draws = np.zeros(n_tests, np.int64)
    exact = np.zeros(n_tests, bool)
    for st in streams:
        if st.patterns > 0:
            exact[list(st.members)] = True
    active = ~exact
    m = max((len(f) for f in families), default=1)
    cap = max_draws(m, alpha, correction, first) if sequential else first
    target = first
    run = map or serial_map
    round_ = 0
    while True:
        tasks, spec, local = [], [], []
        for st in streams:
            if st.patterns > 0:
                if round_ == 0 and st.members:
                    mem = list(st.members)
                    if isinstance(st, Source):
                        local.append((st, mem, 0, st.patterns))
                    else:
                        tasks.append(ResampleBlock(st.kind, st.data(mem), st.method, st.variant, int(st.seed), 0,
                                                   st.patterns))
                        spec.append((st, mem, st.patterns))
                continue
            mem = [i for i in st.members if active[i]]
            if not mem:
                continue
            for k, size in _new_blocks(int(draws[mem[0]]), target, first):
                if isinstance(st, Source):
                    local.append((st, mem, k, size))
                else:
                    tasks.append(ResampleBlock(st.kind, st.data(mem), st.method, st.variant, int(st.seed), k, size))
                    spec.append((st, mem, size))
        if not tasks and not local:
            break
        results = run(resample_block, tasks) if tasks else []
        if any(is_pending(r) for r in results):  # a recording pass: the next round depends on these
            break
        for (st, mem, size), r in zip(spec, results):
            hits[mem] += np.asarray(st.hits(r, mem), np.int64)
            draws[mem] += size
        for st, mem, k, size in local:
            hits[mem] += np.asarray(st.draw(mem, k, size), np.int64)
            draws[mem] += size
        round_ += 1
        if not sequential or target >= cap:
            break
        active = open_decisions(hits, draws, families, correction, alpha, exact) & ~exact
        if not active.any():
            break
        target = min(cap, first + math.ceil((2 * target - first) / RESAMPLE_BLOCK) * RESAMPLE_BLOCK)
    safe = np.maximum(draws, 1)
    p, _, _ = _bounds(hits, safe, exact)
    se = np.where(exact, 0.0, np.sqrt(p * (1 - p) / safe))
    settled = ~open_decisions(hits, safe, families, correction, alpha, exact)
    return MCResult(hits, draws, p, se, settled, cap, exact)


SETTLE_Z = 3.2905  # two-sided normal quantile of SETTLE_RISK (the intervals' half-width in standard errors)


def settle_draws(result: MCResult, families: Sequence[Sequence[int]], correction: str, alpha: float) -> int | None:
    """About how many draws per test would settle every decision still open in ``result``: per open
    test, its threshold t (the largest p at which its adjusted p stays below ``alpha``, the other
    tests at their estimates) and k with SETTLE_Z·√(p(1−p)/k) < |p − t|, rounded up to whole seed
    blocks; the largest over the open tests. None when nothing is open, or when an open p sits on
    its threshold (no number of draws would settle it)."""
    need = 0
    p = np.asarray(result.p, float)
    for fam in families:
        idx = list(fam)
        for pos, i in enumerate(idx):
            if result.settled[i]:
                continue
            lo, hi = 0.0, 1.0
            for _ in range(60):  # bisection: rejection is monotone in the test's own p
                mid = (lo + hi) / 2
                q = p[idx].copy()
                q[pos] = mid
                if adjust(list(q), correction)[pos] < alpha:
                    lo = mid
                else:
                    hi = mid
            gap = abs(p[i] - lo)
            if gap <= 1e-12:
                return None
            k = SETTLE_Z ** 2 * p[i] * (1 - p[i]) / gap ** 2
            need = max(need, int(math.ceil(k / RESAMPLE_BLOCK)) * RESAMPLE_BLOCK)
    return need or None


def settle_summary(result: MCResult, families: Sequence[Sequence[int]], correction: str, alpha: float,
                   test: str = "PERM-BOTH", setting: str = "correlation.permutation (--permutation)") -> str | None:
    """One sentence on the decisions ``result`` left open at its maximum draws and what would settle
    them (the ``setting`` that sets the first round's draws, which the maximum never undercuts); None
    when every decision is settled."""
    open_ = [i for fam in families for i in fam if not result.settled[i]]
    if not open_:
        return None
    k = settle_draws(result, families, correction, alpha)
    what = (f"about {k} draws per test would settle {'it' if len(open_) == 1 else 'them'} "
            f"(set {setting} to {k})" if k else
            "a p sits on its threshold, so no number of draws would settle it")
    return (f"{test}: {len(open_)} decision(s) not settled after the maximum of {result.max_draws} draws (p within "
            f"Monte Carlo error of its threshold; decided by the estimate); {what}")


def permutation_with_inversions(n: int, d: int) -> list[int]:
    """A permutation of 0..n-1 with exactly ``d`` inversions (0 <= d <= n(n-1)/2)."""
    rest, out = list(range(n)), []
    for i in range(n):
        k = min(d, n - 1 - i)  # place the element that is larger than k of the remaining ones
        out.append(rest.pop(k))
        d -= k
    return out


def kendall_exact_p(n: int, discordant: int) -> float:
    """Two-sided p-value of untied rankings of n items with ``discordant`` discordant pairs."""
    return kendall.p_value(kendall.untied(n, discordant), "exact" if n <= kendall.EXACT_MAX_N else "asymptotic")


def min_significant_tau(n: int, alpha: float = _ALPHA, variant: str | None = _VARIANT) -> float | None:
    """Smallest |τ| with p < ``alpha`` for n untied systems; None when no τ (not even ±1) can be.

    Exact null for n <= 33 (as :func:`clir_eval.correlation.statistics.correlate`), asymptotic
    above. With ties in the data the attainable values differ slightly.
    """
    if n < 3:
        return None
    pairs = n * (n - 1) // 2
    if kendall_exact_p(n, 0) >= alpha:
        return None
    lo, hi = 0, pairs // 2  # p grows with d up to pairs/2; largest d with p < alpha
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if kendall_exact_p(n, mid) < alpha:
            lo = mid
        else:
            hi = mid - 1
    s = pairs - 2 * lo
    if variant == "c":
        return float(2 * s / (n * n * (n - 1) / n))
    return float(s / pairs)


def joint_draws(per_query_y, n_resamples: int = _BOOTSTRAP, seed: int = _SEED) -> tuple[np.ndarray, np.ndarray]:
    """BOOT-BOTH draws of a systems x queries matrix: (system indices (draws, n), the drawn
    systems' means over the drawn queries (draws, n), NaN ignored), in seed blocks (block k
    from ``default_rng([seed, k])``), as :func:`boot_both_ci` draws them."""
    pq = np.asarray(per_query_y, dtype=float)
    parts = [joint_sample(pq, np.random.default_rng([int(seed), k]), size) for k, size in resample_blocks(n_resamples)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def boot_both_ci(x: Sequence[float], per_query_y, method: str = _METHOD, variant: str | None = _VARIANT,
                 n_resamples: int = _BOOTSTRAP, seed: int = _SEED, level: float = _LEVEL, map: Mapper | None = None
                 ) -> tuple[float | None, float | None]:
    """BOOT-BOTH percentile CI: each draw resamples systems and queries with replacement,
    averages each drawn system over the drawn queries (NaN ignored) and recomputes the
    coefficient. The draws depend only on (matrix, seed), so every metric correlated with the
    same matrix and seed sees the same draws. ``map`` runs the seed blocks."""
    method, variant = check_method(method, variant)
    xa = np.asarray(x, dtype=float)
    pq = np.asarray(per_query_y, dtype=float)
    if pq.ndim != 2 or pq.shape[0] != len(xa):
        raise ValueError(f"per_query_y must be (n_systems={len(xa)}, n_queries), got {pq.shape}")
    n, q = pq.shape
    if n < 3 or q < 1:
        return None, None
    check_level(level, n_resamples)
    return percentile_ci(resample_draws("both", (xa, pq), method, variant, n_resamples, seed, map), level)


# --------------------------------------------------------------------------- calibrated intervals
def jackknife_systems(x: np.ndarray, y: np.ndarray, method: str, variant: str | None) -> np.ndarray:
    """The coefficient of (x, y) with each system left out in turn (n values; NaN where undefined)."""
    n = len(x)
    idx = np.array([[j for j in range(n) if j != i] for i in range(n)], dtype=np.intp)
    return coef_batch(np.asarray(x, float)[idx], np.asarray(y, float)[idx], method, variant)


def crossed_parts(x: np.ndarray, y: np.ndarray, per_query_y: np.ndarray, method: str, variant: str | None,
                  n_resamples: int, seed: int, map: Mapper | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """What :func:`crossed_interval` needs of one coefficient: its draws resampling systems (of (x, y)),
    queries and both (BOOT-BOTH), each seeded ``seed`` (so two metrics' parts over the same systems are
    paired), and its leave-one-system-out values (``jack``)."""
    return {"systems": resample_draws("systems", (x, y), method, variant, n_resamples, seed, map),
            "queries": resample_draws("queries", (x, per_query_y), method, variant, n_resamples, seed, map),
            "both": resample_draws("both", (x, per_query_y), method, variant, n_resamples, seed, map),
            "jack": jackknife_systems(x, y, method, variant)}


def crossed_interval(estimate: float, parts: Mapping[str, np.ndarray], level: float = _LEVEL,
                     bound: float = 1.0) -> tuple[float | None, float | None]:  # fmt: skip
    """A (level) interval for the coefficient (or a difference of two: subtract their parts) of a study
    whose systems and queries are both random samples, clipped to ±``bound``.

    The estimand is the coefficient's expectation over studies of the same design (new systems, new
    queries, as many of each). Its standard error: se² = V_jack + v_q, where V_jack is the jackknife
    variance over systems (Efron & Stein 1981; Arvesen 1969 for U-statistics such as Kendall's τ: it keeps
    each system's target as measured, so it includes the query noise in the systems' means), and v_q the
    part that only the choice of queries adds, from the three bootstraps' variances (McCullagh 2000;
    Owen 2007): resampling systems gives v_s + v_sq, queries v_q + v_sq, both v_s + v_q + 3 v_sq — the
    interaction counted three times, which is why BOOT-BOTH's percentile interval is too wide — so
    v_q = 2 V_queries + V_systems − V_both (at least 0). The interval keeps the shape of the bootstrap over
    systems (τ's distribution is skewed near ±1): from the estimate, its distances to that bootstrap's
    percentiles, scaled by se / (that bootstrap's standard deviation); a normal interval (estimate ± z·se)
    where that bootstrap does not vary."""
    jack = np.asarray(parts["jack"], float)
    jack = jack[~np.isnan(jack)]
    if estimate is None or math.isnan(estimate) or len(jack) < 3:
        return None, None
    n = len(jack)
    v_jack = (n - 1) / n * float(((jack - jack.mean()) ** 2).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a recording pass of :func:`.statistics.batched` has only NaN draws
        var = {k: float(np.nanvar(parts[k])) for k in ("systems", "queries", "both")}
    if any(math.isnan(v) for v in var.values()):
        return None, None
    se = math.sqrt(v_jack + max(0.0, 2 * var["queries"] + var["systems"] - var["both"]))
    sys_draws = np.asarray(parts["systems"], float)
    sys_draws = sys_draws[~np.isnan(sys_draws)]
    tail = (1 - level) / 2 * 100
    if var["systems"] > 0:
        ql, qh = np.percentile(sys_draws, [tail, 100 - tail])
        r = se / math.sqrt(var["systems"])
        lo, hi = estimate - max(0.0, estimate - ql) * r, estimate + max(0.0, qh - estimate) * r
    else:
        z = norm_ppf(1 - (1 - level) / 2)
        lo, hi = estimate - z * se, estimate + z * se
    return max(-bound, float(lo)), min(bound, float(hi))


def crossed_ci(x: Sequence[float], y: Sequence[float], per_query_y, method: str = _METHOD,
               variant: str | None = _VARIANT, n_resamples: int = _BOOTSTRAP, seed: int = _SEED,
               level: float = _LEVEL, map: Mapper | None = None) -> tuple[float | None, float | None]:  # fmt: skip
    """:func:`crossed_interval` of the coefficient of x with the target y (the systems' means of
    ``per_query_y``, systems x queries); (None, None) when it is undefined or fewer than 3 systems."""
    method, variant = check_method(method, variant)
    xa, ya = np.asarray(x, float), np.asarray(y, float)
    pq = np.asarray(per_query_y, dtype=float)
    if pq.ndim != 2 or pq.shape[0] != len(xa) or len(ya) != len(xa):
        raise ValueError(f"per_query_y must be (n_systems={len(xa)}, n_queries), got {pq.shape}")
    if len(xa) < 4 or pq.shape[1] < 2:
        return None, None
    check_level(level, n_resamples)
    est = pair_coef(xa, ya, method, variant)
    if math.isnan(est):
        return None, None
    return crossed_interval(est, crossed_parts(xa, ya, pq, method, variant, n_resamples, seed, map), level)


def paired_randomization(per_query: np.ndarray, n_resamples: int = _PERMUTATION, seed: int = _SEED, map: Mapper | None = None
                         ) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Two-sided paired randomization test for every pair of rows of a systems x queries matrix.

    Queries with a NaN in either system are dropped for that pair. The statistic is the mean
    per-query difference; each draw flips the sign of every difference with probability 0.5
    (one sign matrix shared by all pairs, drawn in seed blocks; ``map`` runs them);
    p = (c+1)/(k+1) with c the draws whose |mean| reaches the observed one.
    Returns (pairs (i, j), mean differences, p-values).
    """
    pq = np.asarray(per_query, dtype=float)
    s, q = pq.shape
    pairs = [(i, j) for i in range(s) for j in range(i + 1, s)]
    if not pairs or q == 0:
        return pairs, np.zeros(len(pairs)), np.ones(len(pairs))
    d = np.stack([pq[i] - pq[j] for i, j in pairs])  # (pairs, queries)
    ok = ~np.isnan(d)
    cnt = ok.sum(axis=1)
    d0 = np.where(ok, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        obs = d0.sum(axis=1) / cnt
    tasks = block_tasks("signflip", (d0, cnt, obs), "paired-mean", None, n_resamples, seed)
    c = np.sum((map or serial_map)(resample_block, tasks), axis=0)
    p = (c + 1) / (n_resamples + 1)
    p = np.where(cnt > 0, p, 1.0)
    return pairs, np.where(cnt > 0, obs, 0.0), p


