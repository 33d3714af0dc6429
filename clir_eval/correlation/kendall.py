"""Kendall's τ-b / τ-c and its two-sided p-value, the floats ``scipy.stats.kendalltau`` returns, without
importing ``scipy.stats`` (≈ 1.3 CPU-s; the demo, ``pool`` and a Kendall run need only this test).

Pair counts are integers (exact whatever the algorithm): discordant pairs are the inversions of y's ranks in
(x, y) order, counted by kendall_rows' vectorised bottom-up merge sort in O(n log² n) time and O(n) memory; ties from the
counts of equal values. Everything computed from the counts follows scipy 1.17's ``kendalltau`` operation for
operation (same expressions, same order, Python ints where it has them): the statistic, the tie-corrected
variance of the asymptotic test (normal survival from ``scipy.special.ndtr``, as scipy's), and the exact null
distribution of untied rankings (Kendall's recursion on the Mahonian numbers, ``scipy.stats._mstats_basic.
_kendall_p_exact``). The formulas are scipy's (BSD-3-Clause, Copyright (c) 2001-2002 Enthought, Inc. and
2003-2024 SciPy Developers); tests/test_kendall.py compares every float with ``scipy.stats.kendalltau``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import lazylibs
from .kendall_rows import inversions

EXACT_MAX_N = 33  # scipy's "auto" rule: the exact null distribution up to this many untied values


def _tied_pairs(*cols: np.ndarray) -> int:
    """Pairs i<j equal in every one of ``cols``."""
    counts = np.unique(np.stack(cols, axis=1), axis=0, return_counts=True)[1].astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


PAIRWISE_MAX_N = 128  # up to this many values the pairs are compared one by one (faster than sorting)


def _pairwise_stats(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int, int]:
    i, j = np.triu_indices(len(x), k=1)
    dx = (x[i] > x[j]).astype(np.int8) - (x[i] < x[j])
    dy = (y[i] > y[j]).astype(np.int8) - (y[i] < y[j])
    prod = dx * dy
    tx, ty = dx == 0, dy == 0
    both = int((tx & ty).sum())
    return int((prod > 0).sum()), int((prod < 0).sum()), int(tx.sum()) - both, int(ty.sum()) - both, both


def pair_stats(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int, int]:
    """(concordant, discordant, tied only in x, tied only in y, tied in both) over i<j pairs, counted in
    O(n log^2 n) time and O(n) memory (a 12,000-row table's n x n sign matrices took 4.6 GB): discordant
    pairs are the inversions of y's ranks in (x, y) order, ties come from the counts of equal values. Up to
    :data:`PAIRWISE_MAX_N` values, pair by pair."""
    n = len(x)
    if n <= PAIRWISE_MAX_N:
        return _pairwise_stats(np.asarray(x), np.asarray(y))
    order = np.lexsort((y, x))
    ranks = np.unique(y, return_inverse=True)[1].reshape(-1)[order]
    dis = int(inversions(ranks[None])[0])  # one row of kendall_rows' merge count
    both = _tied_pairs(x, y)
    tx, ty = _tied_pairs(x) - both, _tied_pairs(y) - both
    con = n * (n - 1) // 2 - dis - tx - ty - both
    return con, dis, tx, ty, both


class Ties(NamedTuple):
    """One variable's ties as scipy's ``count_rank_tie`` sums them over its groups of t equal values:
    Σ t(t-1)/2 (tied pairs), Σ t(t-1)(t-2) and Σ t(t-1)(2t+5) (float sums, as scipy's), and the number of
    distinct values."""

    pairs: int
    t2: int
    t5: int
    classes: int


def _ties(v: np.ndarray) -> Ties:
    _, cnt = np.unique(v, return_counts=True)
    classes = len(cnt)
    cnt = cnt.astype("int64", copy=False)
    cnt = cnt[cnt > 1]
    return Ties(int((cnt * (cnt - 1) // 2).sum()), int((cnt * (cnt - 1.) * (cnt - 2)).sum()),
                int((cnt * (cnt - 1.) * (2 * cnt + 5)).sum()), classes)


class Counts(NamedTuple):
    """What Kendall's τ and its p-value depend on: n, discordant pairs, pairs tied in both, each variable's ties."""

    n: int
    dis: int
    both: int
    x: Ties
    y: Ties

    @property
    def pairs(self) -> int:
        return self.n * (self.n - 1) // 2

    @property
    def untied(self) -> bool:
        return self.x.pairs == 0 and self.y.pairs == 0

    @property
    def s(self) -> int:
        """Concordant minus discordant pairs."""
        return self.pairs - self.x.pairs - self.y.pairs + self.both - 2 * self.dis


def counts(x, y) -> Counts:
    """The pair counts of two equally long 1-D arrays without NaN."""
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    if x.size != y.size:
        raise ValueError(f"x and y must be of equal length, got {x.size} and {y.size}")
    _, dis, _, _, both = pair_stats(x, y)
    return Counts(x.size, dis, both, _ties(x), _ties(y))


def untied(n: int, discordant: int) -> Counts:
    """The counts of two untied rankings of n items with ``discordant`` discordant pairs."""
    none = Ties(0, 0, 0, n)
    return Counts(n, discordant, 0, none, none)


def statistic(c: Counts, variant: str = "b") -> float:
    """τ-b or τ-c (NaN when either variable is constant or n < 2), clipped to [-1, 1] as scipy clips it."""
    tot = c.pairs
    if c.n < 2 or c.x.pairs == tot or c.y.pairs == tot:
        return math.nan
    if variant == "b":
        tau = c.s / math.sqrt(tot - c.x.pairs) / math.sqrt(tot - c.y.pairs)
    elif variant == "c":
        m = min(c.x.classes, c.y.classes)
        tau = 2 * c.s / (c.n ** 2 * (m - 1) / m)
    else:
        raise ValueError(f"unknown Kendall variant {variant!r}; use b or c")
    return min(1.0, max(-1.0, tau))


def p_method(c: Counts) -> str:
    """scipy's ``method="auto"``: exact without ties when n <= 33 or at most one pair is discordant (or concordant)."""
    if c.untied and (c.n <= EXACT_MAX_N or min(c.dis, c.pairs - c.dis) <= 1):
        return "exact"
    return "asymptotic"


def p_value(c: Counts, method: str = "auto") -> float:
    """Two-sided p of τ = 0 (the same for τ-b and τ-c): ``exact`` (untied only), ``asymptotic`` or ``auto``
    (:func:`p_method`). NaN where the statistic is undefined."""
    if c.n < 2 or c.x.pairs == c.pairs or c.y.pairs == c.pairs:
        return math.nan
    if method == "auto":
        method = p_method(c)
    if method == "exact":
        if not c.untied:
            raise ValueError("Ties found, exact method cannot be used.")
        return exact_p(c.n, c.pairs - c.dis)
    if method != "asymptotic":
        raise ValueError(f"unknown Kendall p method {method!r}; use auto, exact or asymptotic")
    size, (xtie, x0, x1, _), (ytie, y0, y1, _) = c.n, c.x, c.y
    m = size * (size - 1.)
    var = ((m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2)))
    z = c.s / math.sqrt(var)
    return float(2 * lazylibs.scipy_special().ndtr(-abs(z)))


def exact_p(n: int, c: int) -> float:
    """Two-sided p of untied rankings of n items with ``c`` concordant pairs under Kendall's exact null
    distribution (scipy's ``_kendall_p_exact``: the count of permutations with at most min(c, pairs - c)
    inversions, by the Mahonian recursion; scaled by 1/j at each step above 170 items, where n! overflows)."""
    c = int(min(c, (n * (n - 1)) // 2 - c))
    if n <= 0:
        raise ValueError(f"n ({n}) must be positive")
    if c < 0 or 4 * c > n * (n - 1):
        raise ValueError(f"c ({c}) must satisfy 0 <= 4c <= n(n-1) = {n * (n - 1)}.")
    if n <= 2:
        prob = 1.0
    elif c == 0:
        prob = 2.0 / math.factorial(n) if n < 171 else 0.0
    elif c == 1:
        prob = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
    elif 4 * c == n * (n - 1):
        prob = 1.0
    else:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new) if n < 171 else np.cumsum(new) / j
            if j <= c:
                new[j:] -= new[:c + 1 - j]
        prob = 2.0 * np.sum(new) / math.factorial(n) if n < 171 else np.sum(new)
    return float(np.clip(prob, 0, 1))


def kendalltau(x, y, variant: str = "b", method: str = "auto") -> tuple[float, float]:
    """(τ, two-sided p) of two equally long 1-D arrays, as ``scipy.stats.kendalltau(x, y, variant=variant,
    method=method)``; (NaN, NaN) when either holds NaN (scipy's ``nan_policy="propagate"``) or is constant."""
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    if x.size != y.size:
        raise ValueError(f"x and y must be of equal length, got {x.size} and {y.size}")
    if (x.dtype.kind == "f" and np.isnan(x).any()) or (y.dtype.kind == "f" and np.isnan(y).any()):
        return math.nan, math.nan
    c = counts(x, y)
    return statistic(c, variant), p_value(c, method)
