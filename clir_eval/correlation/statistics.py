"""Correlation statistics between per-system MT metric scores and IR measures.

Pure functions on score vectors (one value per system), in the spirit of
mt-metrics-eval's ``stats.py``:

- :func:`correlate`: Kendall τ (variants ``b``, ``c``, ``acc23``), Pearson r or Spearman ρ,
  with a p-value and a significance mark at ``alpha``. Fewer than 3 usable points or a
  constant vector give ``None`` values and a ``reason`` instead of an exception.
- :func:`bootstrap_ci` (resample systems) and :func:`query_bootstrap_ci` (resample queries,
  recompute each system's mean, recompute the coefficient): percentile CIs, seeded.
- :func:`permutation_sigdiff`: PERM-BOTH test (Deutsch et al. 2021; mt-metrics-eval
  ``PermutationSigDiff``) for the difference between two metrics' correlations.
- :func:`pairwise_accuracy`: share of system pairs ordered the same way (ties agree only
  with ties), i.e. Deutsch et al. 2023's ``acc23`` with epsilon 0.

Resampling is done in seed blocks of :data:`RESAMPLE_BLOCK` draws: block ``k`` draws from
``numpy.random.default_rng([seed, k])`` (block 0 is ``default_rng(seed)``, so up to 1000
resamples draw exactly as one generator seeded with ``seed``). A block depends only on
(seed, k, its size), so the blocks can run anywhere — the resampling functions take
``map`` (e.g. an executor's ``map``) — and the draws, CIs and p-values are identical however
they are spread. :func:`batched` runs every block of a whole computation (all pairs, all
tests) in one ``map`` call.

Kendall τ and p-values are ``scipy.stats.kendalltau``'s floats, computed by :mod:`.kendall` (which does
not import scipy.stats) with the method chosen here
explicitly and recorded in ``Correlation.p_method``: ``exact`` when neither vector has ties
and (n <= 33 or at most one pair is discordant/concordant), else ``asymptotic`` — the same
rule as scipy's ``method="auto"`` (scipy 1.10-1.17), made explicit so it is part of the
signature. The p-value is two-sided and the same for τ-b and τ-c (it depends only on
concordant minus discordant pairs). ``acc23`` has no analytic p-value: ``p_value`` and
``significant`` are ``None`` (use a CI instead).
"""

from __future__ import annotations

import hashlib
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..settings import default
from ..stats import zscore
from . import kendall
from .kendall import pair_stats
from .settings import METHODS, VARIANTS, CorrelationSettings, StatsSettings
from .verdict import leaders

# keyword defaults of the functions below: the settings records' (correlation/settings.py)
_METHOD, _VARIANT = default(CorrelationSettings, "method"), default(CorrelationSettings, "variant")
_ALPHA, _LEVEL, _SEED = default(CorrelationSettings, "alpha"), default(StatsSettings, "level"), default(StatsSettings, "seed")
_BOOTSTRAP, _PERMUTATION = default(CorrelationSettings, "bootstrap"), default(CorrelationSettings, "permutation")

@dataclass(frozen=True)
class Correlation:
    """One correlation result. ``tau`` holds the coefficient whatever the method."""

    tau: float | None
    p_value: float | None
    n: int
    significant: bool | None
    method: str = _METHOD
    variant: str | None = _VARIANT
    reason: str | None = None
    p_method: str | None = None
    alpha: float = _ALPHA

    @property
    def signature(self) -> str:
        """Reproducibility string, e.g. ``method:kendall|variant:b|p:exact|alpha:0.05|scipy:1.17.1``."""
        parts = [f"method:{self.method}"]
        if self.method == "kendall":
            parts.append(f"variant:{self.variant}")
        parts += [f"p:{self.p_method or 'none'}", f"alpha:{self.alpha:g}", f"scipy:{lazylibs.scipy().__version__}"]
        return "|".join(parts)

    def to_dict(self) -> dict:
        return {
            "tau": self.tau,
            "p_value": self.p_value,
            "n": self.n,
            "significant": self.significant,
            "method": self.method,
            "variant": self.variant,
            "p_method": self.p_method,
            "alpha": self.alpha,
            "reason": self.reason,
            "signature": self.signature,
        }


def check_method(method: str, variant: str | None) -> tuple[str, str | None]:
    """Validate and normalise (method, variant); variant only applies to Kendall."""
    if method not in METHODS:
        raise UserError(f"unknown correlation method {method!r}; use one of {', '.join(METHODS)}")
    if method != "kendall":
        return method, None
    variant = "b" if variant is None else variant
    if variant not in VARIANTS:
        raise UserError(f"unknown Kendall variant {variant!r}; use one of {', '.join(VARIANTS)}")
    return method, variant


def _pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Float arrays with the pairs where either value is NaN/None dropped."""
    xa = np.asarray([np.nan if v is None else v for v in x], dtype=float)
    ya = np.asarray([np.nan if v is None else v for v in y], dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {xa.shape} and {ya.shape}")
    keep = ~(np.isnan(xa) | np.isnan(ya))
    return xa[keep], ya[keep]


def _acc23(x: np.ndarray, y: np.ndarray) -> float:
    con, dis, tx, ty, txy = pair_stats(x, y)
    return (con + txy) / (con + dis + tx + ty + txy)


def _undefined_reason(x: np.ndarray, y: np.ndarray) -> str | None:
    if len(x) < 3:
        return f"fewer than 3 systems with both values (n={len(x)})"
    if np.all(x == x[0]):
        return "x is constant"
    if np.all(y == y[0]):
        return "y is constant"
    return None


def pair_coef(x: np.ndarray, y: np.ndarray, method: str, variant: str | None) -> float:
    """The coefficient only (NaN when undefined); used inside resampling loops."""
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "kendall":
            if variant == "acc23":
                return _acc23(x, y)
            return kendall.statistic(kendall.counts(x, y), variant)
        if method == "pearson":
            return float(lazylibs.scipy_stats().pearsonr(x, y).statistic)
        return float(lazylibs.scipy_stats().spearmanr(x, y).statistic)


def coef_batch(X: np.ndarray, Y: np.ndarray, method: str, variant: str | None) -> np.ndarray:
    """Coefficients of many draws at once: row b of X (B, n) against row b of Y (B, n).

    Same values as :func:`pair_coef` (which uses scipy) up to float rounding: Kendall from the signs
    of the n(n-1)/2 pair differences (computed once for a y shared by every row) (τ-b = S/sqrt(pairs not tied in x * pairs not tied in y), τ-c with the
    number of distinct values, acc23 = (concordant + tied in both)/pairs); Pearson on
    centred rows; Spearman = Pearson on average ranks. NaN where a row is constant.
    Fewer than 3 columns -> NaN (as in :func:`correlate`). Rows are processed in chunks to
    bound memory (about 2M pair cells at a time).
    """
    B, n = X.shape
    out = np.full(B, np.nan)
    if n < 3:
        return out
    fixed_y = Y.ndim == 2 and Y.strides[0] == 0  # np.broadcast_to of one vector
    if method == "kendall":
        iu, ju = np.triu_indices(n, k=1)
        # every row's y is the same vector: its pair signs once, for all chunks
        y_signs = np.sign(Y[0, iu] - Y[0, ju]) if fixed_y and B else None
    chunk = max(1, 2_000_000 // (n * n))
    for s in range(0, B, chunk):
        x, y = X[s:s + chunk], Y[s:s + chunk]
        ok = (np.ptp(x, axis=1) > 0) & (np.ptp(y, axis=1) > 0)
        if method == "kendall":
            sx = np.sign(x[:, iu] - x[:, ju])  # (rows, pairs i<j)
            if y_signs is not None:
                sy = np.broadcast_to(y_signs, sx.shape)
            else:
                sy = np.sign(y[:, iu] - y[:, ju])
            prod = sx * sy
            if variant == "acc23":
                agree = (prod > 0).sum(axis=1) + ((sx == 0) & (sy == 0)).sum(axis=1)
                val = agree / len(iu)
            else:
                smd = prod.sum(axis=1)
                if variant == "b":
                    nx = (sx != 0).sum(axis=1)
                    ny = (sy != 0).sum(axis=1)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        val = smd / np.sqrt(nx * ny)
                else:
                    dx = (np.diff(np.sort(x, axis=1), axis=1) != 0).sum(axis=1) + 1
                    dy = (np.diff(np.sort(y, axis=1), axis=1) != 0).sum(axis=1) + 1
                    m = np.minimum(dx, dy)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        val = 2 * smd / (n * n * (m - 1) / m)
                val = np.clip(val, -1.0, 1.0)
        else:
            if method == "spearman":
                x = lazylibs.scipy_stats().rankdata(x, axis=1)
                y = lazylibs.scipy_stats().rankdata(y, axis=1)
            xc = x - x.mean(axis=1, keepdims=True)
            yc = y - y.mean(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                val = np.clip((xc * yc).sum(axis=1) / np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1)), -1, 1)
        out[s:s + chunk] = np.where(ok, val, np.nan)
    return out


def correlate(x: Sequence[float], y: Sequence[float], method: str = _METHOD, variant: str | None = _VARIANT,
              alpha: float = _ALPHA) -> Correlation:
    """Correlation of ``x`` (e.g. an MT metric) with ``y`` (e.g. an IR measure) over systems.

    Pairs with a missing (NaN/None) value are dropped; ``n`` counts the pairs used.
    Significant means ``p_value < alpha``.
    """
    method, variant = check_method(method, variant)
    xa, ya = _pairs(x, y)
    n = len(xa)
    reason = _undefined_reason(xa, ya)
    if reason is not None:
        return Correlation(None, None, n, None, method, variant, reason, None, alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "kendall" and variant == "acc23":
            return Correlation(_acc23(xa, ya), None, n, None, method, variant,
                               "acc23 has no analytic p-value; use a bootstrap CI", None, alpha)
        if method == "kendall":
            counts = kendall.counts(xa, ya)
            p_method = kendall.p_method(counts)
            tau, p = kendall.statistic(counts, variant), kendall.p_value(counts, p_method)
        else:
            p_method = "t-test"
            if method == "pearson":
                res = lazylibs.scipy_stats().pearsonr(xa, ya)
            else:
                res = lazylibs.scipy_stats().spearmanr(xa, ya)
            tau, p = float(res.statistic), float(res.pvalue)
    if math.isnan(tau):
        return Correlation(None, None, n, None, method, variant, "undefined (scipy returned NaN)", None, alpha)
    p_value = None if math.isnan(p) else p
    sig = None if p_value is None else bool(p_value < alpha)
    return Correlation(tau, p_value, n, sig, method, variant, None, p_method, alpha)


def pairwise_accuracy(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Share of system pairs whose order agrees (sign(x_i-x_j) == sign(y_i-y_j), ties agree
    only with ties); equals ``acc23`` with epsilon 0. ``None`` with fewer than 2 pairs' worth."""
    xa, ya = _pairs(x, y)
    if len(xa) < 2:
        return None
    return _acc23(xa, ya)


def percentile_ci(values: Sequence[float] | np.ndarray, level: float) -> tuple[float | None, float | None]:
    vals = np.asarray(values, dtype=float).ravel()
    vals = vals[~np.isnan(vals)]
    if len(vals) == 0:
        return None, None
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(vals, [tail, 100 - tail])
    return float(lo), float(hi)


def check_level(level: float, n_resamples: int) -> None:
    if not 0 < level < 1:
        raise UserError(f"confidence level must be between 0 and 1, got {level}")
    if n_resamples < 1:
        raise UserError(f"number of resamples must be at least 1, got {n_resamples}")


RESAMPLE_BLOCK = 1000  # draws per seed block


def resample_blocks(n_resamples: int) -> list[tuple[int, int]]:
    """(block index, draws) of ``n_resamples`` draws cut into :data:`RESAMPLE_BLOCK`-sized seed blocks."""
    return [(k, min(RESAMPLE_BLOCK, n_resamples - s)) for k, s in enumerate(range(0, n_resamples, RESAMPLE_BLOCK))]


@dataclass(frozen=True)
class ResampleBlock:
    """One seed block of a resampling statistic: ``kind`` (systems | queries | both |
    permutation | signflip), its data (arrays), the coefficient, and (seed, block, size) that
    fix its draws."""

    kind: str
    data: tuple
    method: str
    variant: str | None
    seed: int
    block: int
    size: int


def joint_sample(pq: np.ndarray, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` BOOT-BOTH draws of a systems x queries matrix from ``rng``: (system indices
    (size, n), the drawn systems' means over the drawn queries (size, n), NaN ignored)."""
    n, q = pq.shape
    sys_idx = rng.integers(0, n, (size, n))
    q_idx = rng.integers(0, q, (size, q))
    # how often each query is drawn in each draw (whole numbers: exact as floats)
    counts = np.bincount((np.arange(size)[:, None] * q + q_idx).ravel(), minlength=size * q).reshape(size, q)
    counts = counts.astype(float)
    known = ~np.isnan(pq)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (counts @ np.where(known, pq, 0.0).T) / (counts @ known.T)  # (draws, all systems)
    return sys_idx, np.take_along_axis(means, sys_idx, axis=1)


def query_means(pq: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Each system's mean over each draw's queries, NaN ignored: row d is ``np.nanmean(pq[:, idx[d]], axis=1)``
    bit for bit (the drawn queries' values added one after another in draw order, as nanmean adds them, then
    divided by the count of values not NaN), computed for many draws at once (about 2M cells at a time); NaN
    where a system has no drawn query."""
    known = ~np.isnan(pq)
    filled = np.ascontiguousarray(np.where(known, pq, 0.0).T)  # (queries, systems)
    has = known.T.astype(np.intp)
    draws, q = idx.shape
    out = np.empty((draws, pq.shape[0]))
    chunk = max(1, 2_000_000 // max(1, pq.shape[0] * q))
    with np.errstate(invalid="ignore", divide="ignore"):
        for s in range(0, draws, chunk):
            rows = idx[s:s + chunk]
            tot = filled[rows].sum(axis=1)  # (draws, systems): a sum over the middle axis adds query by query
            times = np.bincount((np.arange(len(rows))[:, None] * q + rows).ravel(), minlength=len(rows) * q)
            out[s:s + chunk] = tot / (times.reshape(len(rows), q) @ has)  # whole numbers: exact
    return out


def resample_block(b: ResampleBlock) -> np.ndarray:
    """The ``b.size`` draws of one block: coefficients (systems, queries, both) or, for a
    permutation, the differences corr(x1', y) - corr(x2', y) of the swapped pairs; for
    ``signflip`` (paired randomization over queries), per system pair the number of draws
    whose |mean difference| reaches the observed one."""
    rng = np.random.default_rng([b.seed, b.block])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if b.kind == "systems":
            xa, ya = b.data
            idx = rng.integers(0, len(xa), (b.size, len(xa)))
            return coef_batch(xa[idx], ya[idx], b.method, b.variant)
        if b.kind == "queries":
            xa, pq = b.data
            idx = rng.integers(0, pq.shape[1], (b.size, pq.shape[1]))
            ym = query_means(pq, idx)  # (draws, systems)
            draws = coef_batch(np.broadcast_to(xa, ym.shape), np.nan_to_num(ym, nan=0.0), b.method, b.variant)
            for i in np.flatnonzero(np.isnan(ym).any(axis=1)):  # a system without any drawn query
                draws[i] = pair_coef(*_pairs(xa, ym[i]), b.method, b.variant)
            return draws
        if b.kind == "both":
            xa, pq = b.data
            sys_idx, ys = joint_sample(pq, rng, b.size)
            draws = coef_batch(xa[sys_idx], np.nan_to_num(ys), b.method, b.variant)
            draws[np.isnan(ys).any(axis=1)] = np.nan
            return draws
        if b.kind == "signflip":
            d0, cnt, obs = b.data  # (pairs, queries) differences with NaN as 0, queries used, observed means
            signs = np.where(rng.random((b.size, d0.shape[1])) < 0.5, -1.0, 1.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                sims = (signs @ d0.T) / cnt  # (draws, pairs)
            tol = 1e-12 * np.maximum(1.0, np.abs(obs))
            return (np.abs(sims) >= np.abs(obs) - tol).sum(axis=0)
        if b.kind == "permutation-exact":  # every one of the 2^n swap patterns once: b.size == 2^n
            return np.array([perm_both_exact_hits(*b.data, b.method, b.variant)], np.int64)
        if b.kind == "permutation":
            a, bb, g = b.data
            swap = rng.random((b.size, len(a))) < 0.5
            gg = np.broadcast_to(g, swap.shape)
            c1 = np.nan_to_num(coef_batch(np.where(swap, bb, a), gg, b.method, b.variant), nan=0.0)
            c2 = np.nan_to_num(coef_batch(np.where(swap, a, bb), gg, b.method, b.variant), nan=0.0)
            return c1 - c2
    raise ValueError(f"unknown resampling kind {b.kind!r}")


PERM_EXACT_CHUNK = 1 << 14  # swap patterns per enumeration step (bounds memory)
EXACT_ENUM_MAX_N = 14  # PERM-BOTH by full enumeration (2^(n-1) patterns) up to this many systems
EXACT_DP_MAX_N = 60  # PERM-BOTH by the sum over systems (Kendall, no ties in either metric) up to this many
#                     (the run's verdicts; above, Monte Carlo draws estimate the same p)


def swap_patterns(n: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop-1`` of the 2^n swap patterns of n systems (row r swaps system i when bit i of r is set)."""
    return ((np.arange(start, stop, dtype=np.int64)[:, None] >> np.arange(n)) & 1).astype(bool)


def perm_both_weights(a: np.ndarray, bb: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kendall PERM-BOTH as a sum over systems, for one study (arrays (n,)) or many (rows of (R, n) arrays).

    Returns (W, linear): integer weights W (R, n) and, per study, whether the sum is exact. Under swap
    pattern s (s_i = 1: system i's two values exchanged) the difference of the two metrics' concordant-minus-
    discordant counts against g is ``S(s) = sum(W) - 2 sum_i W_i s_i`` (so ``S(0) = sum(W)``, P·Δτ for τ-b
    without ties), with ``W_i = sum_(j != i) sg_ij (sign(a_i - a_j) - sign(b_i - b_j) + sign(a_i - b_j) -
    sign(b_i - a_j)) / 2`` and ``sg_ij = sign(g_i - g_j)``. Why: per system pair (i, j) the term is A =
    sg·(sign(a_i−a_j) − sign(b_i−b_j)) when neither is swapped, −A when both are, and B = sg·(sign(b_i−a_j)
    − sign(a_i−b_j)) when only i is, −B when only j is: A + (B−A)s_i + (−B−A)s_j, linear in the bits.
    Not linear (``linear`` False) when a metric value ties another system's value of either metric (a τ-b
    denominator then moves with s). Ties in g are allowed. The metrics are used as given (the run's test
    z-scores them first: :func:`perm_both_setup`)."""
    a, bb, g = (np.atleast_2d(np.asarray(v, float)) for v in (a, bb, g))
    R, n = a.shape
    W = np.zeros((R, n), np.int64)
    # a value tied with another (a_i = a_j, b_i = b_j or a_i = b_j, i != j): sort each study's 2n values once;
    # only studies with equal neighbours need the full check below
    both = np.concatenate([a, bb], axis=1)
    maybe = (np.diff(np.sort(both, axis=1), axis=1) == 0).any(axis=1)
    linear = np.ones(R, bool)
    off = ~np.eye(n, dtype=bool)
    step = max(1, 2_000_000 // max(1, n * n))

    def sign(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # sign(x - y) as int8, without a float temporary
        return (x > y).view(np.int8) - (x < y).view(np.int8)

    for s in range(0, R, step):
        A, B, G = a[s:s + step, :, None], bb[s:s + step, :, None], g[s:s + step, :, None]
        At, Bt, Gt = A.transpose(0, 2, 1), B.transpose(0, 2, 1), G.transpose(0, 2, 1)
        saa, sbb, sab, sba = sign(A, At), sign(B, Bt), sign(A, Bt), sign(B, At)
        check = maybe[s:s + step]
        if check.any():
            tied = ((saa[check] == 0) | (sbb[check] == 0) | (sab[check] == 0) | (sba[check] == 0)) & off
            linear[s:s + step][check] = ~tied.any(axis=(1, 2))
        W[s:s + step] = (sign(G, Gt) * (saa - sbb + sab - sba)).sum(axis=2, dtype=np.int64) // 2
    return W, linear


COUNT_EXACT_MAX_N = 62  # swap-pattern counts in int64 (2^62 patterns at most): exact up to this many systems


def perm_both_tail_counts(W: np.ndarray) -> np.ndarray:
    """Per study (row of integer weights W (R, n), :func:`perm_both_weights`): how many of the 2^n swap
    patterns s have ``sum_i W_i s_i <= 0``, i.e. a difference at least the observed one — PERM-BOTH's exact
    upper-tail count (the identity among them), p = count / 2^n. The distribution of the partial sums is
    built one system at a time, every study at once, in integers: exact for n <= COUNT_EXACT_MAX_N (above,
    a ValueError: use :func:`perm_both_tail_p`)."""
    W = np.atleast_2d(np.asarray(W, np.int64))
    R, n = W.shape
    if n > COUNT_EXACT_MAX_N:
        raise ValueError(f"{n} systems: more than {COUNT_EXACT_MAX_N}, the counts would overflow int64")
    # counts reach 2^n: int32 holds them up to 30 systems (half the memory traffic), int64 above
    return _subset_sums_at_most_zero(W, np.int32 if n <= 30 else np.int64).astype(np.int64)


def perm_both_tail_p(W: np.ndarray, sides: int = 1) -> np.ndarray:
    """PERM-BOTH's exact p per study from its weights (:func:`perm_both_weights`): one-sided, the share of swap
    patterns whose difference reaches the observed one (count / 2^n, :func:`perm_both_tail_counts`); ``sides``
    2: the two-sided p, min(1, 2 x the one-sided) (swapping every system negates the difference, so the
    two tails hold equally many patterns). Up to COUNT_EXACT_MAX_N systems from the integer counts; above, the
    same recursion in floating point (probabilities; rounding only)."""
    W = np.atleast_2d(np.asarray(W, np.int64))
    n = W.shape[1]
    if n <= COUNT_EXACT_MAX_N:
        p = perm_both_tail_counts(W) / float(2 ** n)
    else:
        p = _subset_sums_at_most_zero(W, np.float64)
    return np.minimum(1.0, sides * p)


def _subset_sums_at_most_zero(W: np.ndarray, dtype: type) -> np.ndarray:
    """Per row of W: the number (int64) or share (float64) of subsets A of the columns with sum_(i in A) W_i <= 0,
    from the distribution of the partial sums, one column at a time, every row at once (in blocks of rows)."""
    R, n = W.shape
    out = np.zeros(R, dtype)
    if R == 0:
        return out
    lo = np.where(W < 0, W, 0).sum(axis=1)  # each row's smallest subset sum: index 0 of its distribution
    width = int(np.abs(W).sum(axis=1).max()) + 1
    pad = int(np.abs(W).max()) if W.size else 0
    stride = width + 2 * pad  # a row's buffer: pad zeros, the distribution, pad zeros
    step = max(1, 2_000_000 // stride)
    cols = np.arange(width)
    for s in range(0, R, step):
        w, base = W[s:s + step], lo[s:s + step]
        r = len(w)
        buf = np.zeros((r, stride), dtype)
        flat = buf.reshape(-1)
        core = buf[:, pad:pad + width]
        core[np.arange(r), -base] = 1  # the empty subset: sum 0
        start = np.arange(r, dtype=np.int64) * stride + pad
        for i in range(n):
            # take system i or not: dist'[v] = dist[v] + dist[v - w_i] (reads beyond the row land on its zeros)
            moved = flat[(start - w[:, i])[:, None] + cols]
            core += moved
            if dtype is np.float64:
                core *= 0.5
        out[s:s + step] = np.where(cols[None, :] <= -base[:, None], core, 0).sum(axis=1)
    return out


def perm_both_exact_kind(a: np.ndarray, bb: np.ndarray, method: str, variant: str | None) -> str | None:
    """How PERM-BOTH's exact p of these z-scored metrics is computed cheaply: ``sum`` (Kendall τ-b/τ-c
    with no tied values: the distribution of a sum over systems, any n up to EXACT_DP_MAX_N),
    ``enumerate`` (every swap pattern, up to EXACT_ENUM_MAX_N systems), or None (Monte Carlo)."""
    n = len(a)
    if method == "kendall" and variant in ("b", "c") and n <= EXACT_DP_MAX_N and \
            perm_both_weights(a, bb, np.arange(n, dtype=float))[1][0]:
        return "sum"
    return "enumerate" if n <= EXACT_ENUM_MAX_N else None


def perm_both_exact_hits(a: np.ndarray, bb: np.ndarray, g: np.ndarray, delta: float, method: str,
                         variant: str | None) -> int:  # fmt: skip
    """How many of the 2^n swap patterns of PERM-BOTH give a difference >= ``delta`` (the observed
    one, less 1e-12): the exact null count, p = hits / 2^n.

    Kendall without tied metric values: the difference is (Σ W_i − 2 Σ W_i s_i)/D with integer W and a
    constant D (:func:`perm_both_weights`); pattern 0 is the observation, so the count is the number of
    bit vectors with Σ W_i s_i <= 0 (:func:`perm_both_tail_counts`, the same function design applies to
    its simulated studies). Otherwise every pattern is enumerated, half of them: swapping every system exchanges the
    two metrics, so pattern ~s gives exactly −Δ(s); the coefficients are those of the Monte Carlo
    blocks (:func:`coef_batch`, NaN as 0)."""
    n = len(a)
    if method == "kendall" and variant in ("b", "c") and n <= COUNT_EXACT_MAX_N:
        W, linear = perm_both_weights(a, bb, g)
        if linear[0]:
            return int(perm_both_tail_counts(W)[0])
    half = 1 << (n - 1)
    hits = 0
    for start in range(0, half, PERM_EXACT_CHUNK):
        swap = swap_patterns(n, start, min(half, start + PERM_EXACT_CHUNK))
        gg = np.broadcast_to(g, swap.shape)
        c1 = np.nan_to_num(coef_batch(np.where(swap, bb, a), gg, method, variant), nan=0.0)
        c2 = np.nan_to_num(coef_batch(np.where(swap, a, bb), gg, method, variant), nan=0.0)
        d = c1 - c2
        hits += int((d >= delta - 1e-12).sum()) + int((-d >= delta - 1e-12).sum())
    return hits


Mapper = Callable[[Callable[[Any], Any], list], list]


def serial_map(fn: Callable[[Any], Any], tasks: list) -> list:
    return [fn(t) for t in tasks]


def block_tasks(kind: str, data: tuple, method: str, variant: str | None, n_resamples: int,
                seed: int) -> list[ResampleBlock]:  # fmt: skip
    """The seed blocks of ``n_resamples`` draws of one statistic."""
    return [ResampleBlock(kind, data, method, variant, int(seed), k, size) for k, size in resample_blocks(n_resamples)]


def resample_draws(kind: str, data: tuple, method: str, variant: str | None, n_resamples: int, seed: int,
           map: Mapper | None) -> np.ndarray:  # fmt: skip
    """All draws of a statistic, block by block through ``map`` (default: in this process)."""
    return np.concatenate((map or serial_map)(resample_block, block_tasks(kind, data, method, variant,
                                                                           n_resamples, seed)))


# --------------------------------------------------------------------------- batching
T = TypeVar("T")
MIN_BATCH_COST = 5e8  # below this estimated work (draws x cells; a few CPU-seconds) blocks run in this process


def block_key(b: ResampleBlock) -> tuple:
    """What fixes a block's result: its settings and a digest of its data's bytes."""
    h = hashlib.sha1()
    for a in b.data:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape};".encode())
        h.update(a.tobytes())
    return (b.kind, b.method, b.variant, b.seed, b.block, b.size, h.hexdigest())


def block_cost(b: ResampleBlock) -> float:
    """Rough work of a block (draws x cells), to decide whether spreading it pays."""
    if b.kind == "signflip":
        return float(b.size) * b.data[0].size
    n = len(b.data[0])
    if b.kind == "permutation-exact":  # the sum over systems is ~n^3 work; enumeration 2^(n-1) patterns
        return float(n) ** 3 if perm_both_exact_kind(b.data[0], b.data[1], b.method, b.variant) == "sum" \
            else float(b.size) * n * n
    q = b.data[1].shape[1] if b.kind in ("queries", "both") else 0
    per_draw = 3500 if b.kind == "queries" else 0  # its per-draw Python loop (~35 µs), in cells of ~10 ns
    return float(b.size) * (n * n * (2 if b.kind == "permutation" else 1) + n * q + per_draw)


class Pending(np.ndarray):
    """A placeholder answer for a block not computed yet (:func:`batched`'s recording pass).
    Sequential procedures check :func:`is_pending` and stop asking for further draws."""


def is_pending(a: Any) -> bool:
    return isinstance(a, Pending)


def _placeholder(b: ResampleBlock) -> np.ndarray:
    if b.kind == "signflip":
        return np.zeros(b.data[0].shape[0], dtype=np.int64).view(Pending)
    if b.kind == "permutation-exact":
        return np.zeros(1, dtype=np.int64).view(Pending)
    return np.full(b.size, np.nan).view(Pending)


def run_block_chunk(chunk: tuple[ResampleBlock, ...]) -> list[np.ndarray]:
    """A worker's share of the blocks (one executor task)."""
    return [resample_block(b) for b in chunk]


def _chunks(blocks: list[ResampleBlock], n: int) -> list[tuple[ResampleBlock, ...]]:
    """``blocks`` cut into at most ``n`` consecutive runs of about equal cost."""
    costs = np.cumsum([block_cost(b) for b in blocks])
    edges = np.searchsorted(costs, costs[-1] * np.arange(1, n) / n, side="right")
    bounds = [0, *sorted(set(int(e) for e in edges) - {0, len(blocks)}), len(blocks)]
    return [tuple(blocks[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]


def _once_map() -> Mapper:
    """An in-process map that computes a block asked for again (the same :func:`block_key`: the same data,
    settings and seed, so the same draws) once, as :func:`batched`'s passes through an executor do: a run's
    intervals and its verdicts resample the same (metric, target) pairs."""
    done: dict[tuple, Any] = {}

    def once(fn: Callable[[Any], Any], tasks: list) -> list:
        return [done[k] if (k := (fn, *block_key(t))) in done else done.setdefault(k, fn(t)) for t in tasks]

    return once


MAX_PASSES = 64  # rounds of a sequential computation sent through ``map`` before the rest runs here


def batched(compute: Callable[[Mapper], T], map: Mapper | None = None, chunks: int = 1,
            min_cost: float | None = None) -> T:  # fmt: skip
    """``compute(mapper)`` with the seed blocks it asks for run in as few ``map`` calls as it allows.

    ``compute`` runs in passes: each pass answers the blocks already computed and records the
    others (answering them with :class:`Pending` placeholders); the recorded blocks then run
    through ``map`` in ``chunks`` tasks of about equal cost, and the next pass starts. A
    computation whose later blocks depend on earlier results (sequential Monte Carlo tests stop
    asking when they see a placeholder) thus needs one pass per round; all others one. The
    last pass, which asks for nothing new, gives the result, equal to ``compute`` run serially
    whatever ``map`` is. Without ``map``, ``compute`` runs once, in this process.

    Spreading pays only for enough work (default :data:`MIN_BATCH_COST`, or ``min_cost``): the
    first blocks asked for are computed in this process as they come while their cost stays
    within it, so a computation that small finishes in its first pass, computed once, and never
    starts the executor's workers; from the first block over it, blocks are recorded for ``map``.
    When a later pass's new blocks cost less than it, a last pass computes them in this process.
    """
    if map is None:
        return compute(_once_map())
    budget = MIN_BATCH_COST if min_cost is None else min_cost
    done: dict[tuple, np.ndarray] = {}
    eager = [0.0]  # cost computed in this process as asked; -1 once a block did not fit
    for npass in range(MAX_PASSES):
        asked: dict[tuple, ResampleBlock] = {}

        def record(fn: Callable[[Any], Any], tasks: list) -> list:
            out = []
            for t in tasks:
                k = block_key(t)
                if k not in done and eager[0] >= 0 and not asked:
                    cost = block_cost(t)
                    if eager[0] + cost <= budget:
                        eager[0] += cost
                        done[k] = fn(t)
                    else:
                        eager[0] = -1.0
                if k in done:
                    out.append(done[k])
                else:
                    asked.setdefault(k, t)
                    out.append(_placeholder(t))
            return out

        result = compute(record)
        if not asked:
            return result
        eager[0] = -1.0  # later passes: only what the pool's answers left open
        if sum(block_cost(b) for b in asked.values()) < budget:
            break  # too little work left to spread: the rest in this process
        parts = map(run_block_chunk, _chunks(list(asked.values()), max(1, chunks)))
        done.update(zip(asked, (r for part in parts for r in part)))

    def serve(fn: Callable[[Any], Any], tasks: list) -> list:
        return [done[k] if (k := block_key(t)) in done else fn(t) for t in tasks]

    return compute(serve)


def bootstrap_ci(x: Sequence[float], y: Sequence[float], method: str = _METHOD, variant: str | None = _VARIANT,
                 n_resamples: int = _BOOTSTRAP, seed: int = _SEED, level: float = _LEVEL, map: Mapper | None = None
                 ) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of the coefficient, resampling systems with replacement.

    Draws where the coefficient is undefined (e.g. all drawn systems tie) are skipped.
    ``(None, None)`` when the coefficient itself is undefined. ``map`` runs the seed blocks.
    """
    method, variant = check_method(method, variant)
    check_level(level, n_resamples)
    xa, ya = _pairs(x, y)
    if _undefined_reason(xa, ya):
        return None, None
    return percentile_ci(resample_draws("systems", (xa, ya), method, variant, n_resamples, seed, map), level)


def query_bootstrap_ci(x: Sequence[float], per_query_y, method: str = _METHOD, variant: str | None = _VARIANT,
                       n_resamples: int = _BOOTSTRAP, seed: int = _SEED, level: float = _LEVEL, map: Mapper | None = None
                       ) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI resampling queries.

    ``per_query_y`` is (n_systems x n_queries); each draw resamples query columns with
    replacement, takes each system's mean over the drawn queries (NaN entries ignored) and
    recomputes the coefficient against ``x``. Systems with a missing ``x`` are dropped.
    """
    method, variant = check_method(method, variant)
    check_level(level, n_resamples)
    xa = np.asarray([np.nan if v is None else v for v in x], dtype=float)
    pq = np.asarray(per_query_y, dtype=float)
    if pq.ndim != 2 or pq.shape[0] != len(xa):
        raise ValueError(f"per_query_y must be (n_systems={len(xa)}, n_queries), got {pq.shape}")
    keep = ~np.isnan(xa)
    xa, pq = xa[keep], pq[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if pq.shape[1] == 0 or _undefined_reason(*_pairs(xa, np.nanmean(pq, axis=1))):
            return None, None
    return percentile_ci(resample_draws("queries", (xa, pq), method, variant, n_resamples, seed, map), level)


def permutation_sigdiff(x1: Sequence[float], x2: Sequence[float], y: Sequence[float], method: str = _METHOD,
                        variant: str | None = _VARIANT, n_resamples: int = _PERMUTATION, seed: int = _SEED, plus_one: bool = False,
                        map: Mapper | None = None, two_sided: bool = False) -> tuple[float | None, float | None]:
    """PERM-BOTH test of whether ``x1`` correlates with ``y`` better than ``x2`` does.

    Returns ``(delta, p)`` with ``delta = corr(x1, y) - corr(x2, y)`` and ``p`` the share of
    draws whose difference is >= ``delta`` (``plus_one``: (c+1)/(k+1), never 0); small ``p``
    means x1 is significantly better. ``two_sided``: the share of draws whose |difference| reaches
    |delta| (the test to use when which metric is x1 was chosen by looking at the data).
    (mt-metrics-eval's ``PermutationSigDiff(corr1, corr2)`` is the same test with the
    arguments the other way round: it returns corr2 - corr1.) Both metrics are z-scored,
    then in each draw each system's two values are swapped with probability 0.5.
    Systems missing any of the three values are dropped. ``(None, None)`` when either
    correlation is undefined.
    """
    method, variant = check_method(method, variant)
    check_level(0.5, n_resamples)
    setup = perm_both_setup(x1, x2, y, method, variant)
    if setup is None:
        return None, None
    a, b, g, delta = setup
    diffs = resample_draws("permutation", (a, b, g), method, variant, n_resamples, seed, map)
    hits = int(((np.abs(diffs) >= abs(delta) - 1e-12) if two_sided else (diffs >= delta - 1e-12)).sum())
    return float(delta), ((hits + 1) / (n_resamples + 1) if plus_one else hits / n_resamples)


def standardize(x: np.ndarray, name: str = "a metric") -> np.ndarray:
    """``x`` z-scored as ``scipy.stats.zscore`` (population sd), after an exact rescaling by a power of two so that
    no score up to the largest float overflows (the same floats as zscore(x) wherever that does not overflow).

    Raises a :class:`UserError` naming ``name`` when z-scoring would tie scores that differ (by more than 1e-9 of
    their size): scores so far apart (one at 1e100 beside others near 30) that floats cannot keep the others apart
    in z units, so PERM-BOTH would test a different, tied metric."""
    x = np.asarray(x, float)
    top = float(np.max(np.abs(x))) if len(x) else 0.0
    if top > 0 and math.isfinite(top):
        x = np.ldexp(x, -math.frexp(top)[1])
    z = zscore(x)
    order = np.argsort(x, kind="stable")
    xs, zs = x[order], z[order]
    lost = (zs[1:] == zs[:-1]) & (xs[1:] - xs[:-1] > 1e-9 * np.maximum(np.abs(xs[1:]), np.abs(xs[:-1])))
    if lost.any():
        raise UserError(
            f"{name}: its scores span too wide a range for the pairwise test (PERM-BOTH z-scores the scores; largest "
            f"|score| {top:.3g}, and {int(lost.sum())} pair(s) of distinct scores would become equal); rescale the "
            "metric (e.g. take its logarithm) or leave out the system with the outlying score")
    return z


def perm_both_setup(x1: Sequence[float], x2: Sequence[float], y: Sequence[float], method: str, variant: str | None,
                    names: tuple[str, str] = ("x1", "x2")) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
    """PERM-BOTH's inputs: the systems with all three values, both metrics z-scored (:func:`standardize`; the
    error names the metric as ``names`` give it), and the observed difference; None when either correlation is
    undefined."""
    a = np.asarray([np.nan if v is None else v for v in x1], dtype=float)
    b = np.asarray([np.nan if v is None else v for v in x2], dtype=float)
    g = np.asarray([np.nan if v is None else v for v in y], dtype=float)
    if not (a.shape == b.shape == g.shape) or a.ndim != 1:
        raise ValueError(f"x1, x2, y must be 1-D of equal length, got {a.shape}, {b.shape}, {g.shape}")
    keep = ~(np.isnan(a) | np.isnan(b) | np.isnan(g))
    a, b, g = a[keep], b[keep], g[keep]
    if _undefined_reason(a, g) or _undefined_reason(b, g):
        return None
    a, b = standardize(a, names[0]), standardize(b, names[1])
    return a, b, g, float(pair_coef(a, g, method, variant) - pair_coef(b, g, method, variant))


def summarize(results: Sequence[dict], x_columns: Sequence[str], lower: Sequence[str] = ()) -> list[dict]:
    """Per x column, like Table 3 of Gowda et al. 2021: mean and median of the significant
    τ values, how many are significant, and ``wins`` = the number of (group, y) rows in which
    the column leads by :func:`clir_eval.correlation.verdict.leaders` (ties: every tied column wins).

    ``results`` are dicts with ``group``, ``x``, ``y``, ``tau``, ``significant``.
    """
    rows: dict[tuple, dict[str, float]] = {}
    for r in results:
        if r.get("tau") is not None:
            rows.setdefault((r.get("group"), r["y"]), {})[r["x"]] = r["tau"]
    wins = {c: 0 for c in x_columns}
    for taus in rows.values():
        for c in leaders(taus, lower):
            if c in wins:
                wins[c] += 1
    out = []
    for c in x_columns:
        taus = [r["tau"] for r in results if r["x"] == c and r.get("tau") is not None]
        sig = [r["tau"] for r in results if r["x"] == c and r.get("significant") and r.get("tau") is not None]
        out.append({
            "x": c,
            "mean_significant_tau": float(np.mean(sig)) if sig else None,
            "median_significant_tau": float(np.median(sig)) if sig else None,
            "n_significant": len(sig),
            "n": len(taus),
            "wins": wins[c],
        })
    return out
