"""Significance beyond one correlation: multiple-testing adjustment, power of τ, joint resampling, IR discriminability.

- :func:`adjust`: Holm (step-down, family-wise error) or Benjamini-Hochberg (false discovery
  rate) adjusted p-values.
- :func:`min_significant_tau`: for n systems, the smallest |τ| whose p-value is below α,
  read from the exact null distribution of untied rankings (scipy's exact Kendall test).
- :func:`boot_both_ci`: BOOT-BOTH (Deutsch et al. 2021): percentile CI of the coefficient
  resampling systems and queries together.
- :func:`paired_randomization`: per pair of systems, a two-sided paired randomization test
  over queries (random sign flips of the per-query differences), p = (c+1)/(k+1).
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import scipy  # scipy.stats loads on first use (scipy's lazy submodules): importing this module stays cheap

from ..errors import UserError
from ..stats import adjust_p
from .statistics import (Mapper, _check_level, _draws, _percentile_ci, _serial_map, block_tasks, check_method,
                         joint_sample, resample_block, resample_blocks)

CORRECTIONS = ("holm", "bh")


def adjust(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values in input order: ``holm`` (Holm 1979) or ``bh`` (Benjamini-Hochberg 1995)
    (:func:`clir_eval.stats.adjust_p`, one implementation for MT and correlation tests)."""
    if method not in CORRECTIONS:
        raise UserError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
    return [float(v) for v in adjust_p(list(p_values), method)]


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = permutation_with_inversions(n, discordant)
        method = "exact" if n <= 33 else "asymptotic"  # the rule of statistics.correlate
        return float(scipy.stats.kendalltau(range(n), y, method=method).pvalue)


def min_significant_tau(n: int, alpha: float = 0.05, variant: str | None = "b") -> float | None:
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


def joint_draws(per_query_y, n_resamples: int = 1000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """BOOT-BOTH draws of a systems x queries matrix: (system indices (draws, n), the drawn
    systems' means over the drawn queries (draws, n), NaN ignored), in seed blocks (block k
    from ``default_rng([seed, k])``), as :func:`boot_both_ci` draws them."""
    pq = np.asarray(per_query_y, dtype=float)
    parts = [joint_sample(pq, np.random.default_rng([int(seed), k]), size) for k, size in resample_blocks(n_resamples)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def boot_both_ci(x: Sequence[float], per_query_y, method: str = "kendall", variant: str | None = "b",
                 n_resamples: int = 1000, seed: int = 0, level: float = 0.95, map: Mapper | None = None
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
    _check_level(level, n_resamples)
    return _percentile_ci(list(_draws("both", (xa, pq), method, variant, n_resamples, seed, map)), level)


def paired_randomization(per_query: np.ndarray, n_resamples: int = 1000, seed: int = 0, map: Mapper | None = None
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
    c = np.sum((map or _serial_map)(resample_block, tasks), axis=0)
    p = (c + 1) / (n_resamples + 1)
    p = np.where(cnt > 0, p, 1.0)
    return pairs, np.where(cnt > 0, obs, 0.0), p


