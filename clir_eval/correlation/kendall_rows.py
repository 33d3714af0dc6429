"""Kendall's τ of many long rows at once in O(n log n) per row (numpy, no Python loop per row).

:func:`clir_eval.correlation.statistics.coef_batch` compares every pair (n² cells per row),
which suits rows of a few systems; item-level resampling needs thousands of rows of hundreds of
items. Here each row is sorted by (x, y), ties are counted from run lengths, and discordant
pairs are the inversions of y, counted by a bottom-up merge sort vectorised over all rows (one
``searchsorted`` per level). Same values as ``scipy.stats.kendalltau`` (τ-b, τ-c) up to float
rounding (tests/test_item_level.py).
"""

from __future__ import annotations

import numpy as np


def _tied_pairs(sorted_vals: np.ndarray) -> np.ndarray:
    """Per row of a row-sorted array: the number of pairs with equal values."""
    B, n = sorted_vals.shape
    idx = np.broadcast_to(np.arange(n), (B, n))
    new = np.ones((B, n), bool)
    new[:, 1:] = sorted_vals[:, 1:] != sorted_vals[:, :-1]
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    return (idx - start).sum(axis=1)


def _distinct(sorted_vals: np.ndarray) -> np.ndarray:
    return (np.diff(sorted_vals, axis=1) != 0).sum(axis=1) + 1


def _dense_ranks(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dense ranks 0.. of each row's values, the rows sorted)."""
    order = np.argsort(V, axis=1)
    vs = np.take_along_axis(V, order, axis=1)
    new = np.zeros(V.shape, np.int64)
    new[:, 1:] = vs[:, 1:] != vs[:, :-1]
    ranks = np.empty(V.shape, np.int64)
    np.put_along_axis(ranks, order, np.cumsum(new, axis=1), axis=1)
    return ranks, vs


def inversions(r: np.ndarray) -> np.ndarray:
    """Per row of non-negative integers (< n): pairs i < j with r[i] > r[j]."""
    B, n = r.shape
    size = 1
    while size < n:
        size *= 2
    cur = np.full((B, size), n, dtype=np.int64)  # padding sorts last and inverts nothing
    cur[:, :n] = r
    inv = np.zeros(B, dtype=np.int64)
    w = 1
    base = np.int64(size + 1)
    while w < size:
        nb = size // (2 * w)
        blocks = cur.reshape(B, nb, 2, w)
        block_id = np.arange(B * nb, dtype=np.int64).reshape(B, nb)
        left = (block_id[:, :, None] * base + blocks[:, :, 0, :]).ravel()  # globally sorted
        right = (block_id[:, :, None] * base + blocks[:, :, 1, :]).ravel()
        at_or_below = np.searchsorted(left, right, side="right") - np.repeat(block_id.ravel() * w, w)
        inv += (w - at_or_below).reshape(B, nb * w).sum(axis=1)
        cur = np.sort(cur.reshape(B, nb, 2 * w), axis=2).reshape(B, size)
        w *= 2
    return inv


def kendall_rows(X: np.ndarray, Y: np.ndarray, variant: str = "b") -> np.ndarray:
    """τ-b or τ-c of row b of X (B, n) against row b of Y (no NaN); NaN where a row is
    constant or n < 3 (as :func:`clir_eval.correlation.statistics.correlate`)."""
    X = np.asarray(X, float)
    Y = np.asarray(Y, float)
    B, n = X.shape
    out = np.full(B, np.nan)
    if n < 3 or B == 0:
        return out
    rx, xsort = _dense_ranks(X)
    ry, ysort = _dense_ranks(Y)
    key = np.sort(rx * n + ry, axis=1)  # (x, y) order; y's dense rank is key % n
    # discordant pairs = inversions of y in (x, y) order (ties in x are in y order: no inversion)
    dis = inversions(key % n)
    pairs = n * (n - 1) // 2
    n1 = _tied_pairs(xsort)
    n2 = _tied_pairs(ysort)
    n3 = _tied_pairs(key)  # equal in x and y
    con_plus_dis = pairs - n1 - n2 + n3
    s = (con_plus_dis - dis) - dis  # concordant - discordant
    ok = (n1 < pairs) & (n2 < pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            val = s / np.sqrt((pairs - n1).astype(float) * (pairs - n2).astype(float))
        elif variant == "c":
            m = np.minimum(_distinct(xsort), _distinct(ysort)).astype(float)
            val = 2 * s / (n * n * (m - 1) / m)
        else:
            raise ValueError(f"kendall_rows supports τ-b and τ-c, not {variant!r}")
    return np.where(ok, np.clip(val, -1.0, 1.0), np.nan)
