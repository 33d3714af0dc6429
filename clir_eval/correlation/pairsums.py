"""Kendall coefficients of weighted cells from pair sums: bootstrap draws as matrix products.

A bootstrap draw that resamples groups of cells (items, or systems) with replacement gives each
cell a multiplicity. Kendall's τ of the drawn multiset depends only on sums over pairs of
distinct cells weighted by the product of their multiplicities (duplicates of one cell are pairs
tied in both variables). With the pair matrices of the original cells aggregated per group
(``M[g, h]`` = sum over cells of group g and cells of group h), every draw's sums are
``u @ M @ u`` for its group multiplicities ``u``: k draws cost k·G² instead of k·n log n with
n = cells. Exactly the coefficient of the resampled data (tests/test_item_level.py compares
with recomputing it).

Sums used (w = cell weights, W = Σw): S = Σ_{i<j} w_i w_j sign(dx) sign(dy); pairs tied in x
n1 = (wᵀ Tx w - W)/2 (Tx with its diagonal), in y n2, in both n3, P = W(W-1)/2.
τ-b = S / sqrt((P - n1)(P - n2)); acc23 = (concordant + n3)/P with concordant = (S + P - n1 - n2 + n3)/2;
τ-c = 2S / (W²(m-1)/m), m = min(distinct x, distinct y) among the drawn cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GroupSums:
    """Pair matrices of the cells aggregated to groups (G x G), cells per group (G), and for τ-c
    which distinct x / y values each group holds (G x Vx, G x Vy)."""

    c: np.ndarray
    tx: np.ndarray
    ty: np.ndarray
    txy: np.ndarray
    cells: np.ndarray
    has_x: np.ndarray
    has_y: np.ndarray


def group_sums(X: np.ndarray, Y: np.ndarray, axis: int) -> GroupSums:
    """Aggregate the pair matrices of the cells of X, Y (systems x items; NaN = absent) to the
    rows (``axis=0``: systems) or the columns (``axis=1``: items)."""
    X = np.asarray(X, float)
    Y = np.asarray(Y, float)
    if axis == 1:
        X, Y = X.T, Y.T
    present = ~(np.isnan(X) | np.isnan(Y))
    G = X.shape[0]
    xs = np.where(present, X, 0.0)
    ys = np.where(present, Y, 0.0)
    pm = present.astype(float)
    out = {k: np.zeros((G, G)) for k in ("c", "tx", "ty", "txy")}
    if X.shape[1] == 1:  # one cell per group: the pair matrices themselves
        dx = xs[:, 0][:, None] - xs[:, 0][None, :]
        dy = ys[:, 0][:, None] - ys[:, 0][None, :]
        w = pm[:, 0][:, None] * pm[:, 0][None, :]
        ex, ey = (dx == 0), (dy == 0)
        out = {"c": np.sign(dx) * np.sign(dy) * w, "tx": ex * w, "ty": ey * w, "txy": (ex & ey) * w}
    for g in range(G if X.shape[1] > 1 else 0):  # one group against all: G x n x n cells at a time
        dx = xs[g][None, :, None] - xs[:, None, :]  # (G, n_g, n_h)
        dy = ys[g][None, :, None] - ys[:, None, :]
        w = pm[g][None, :, None] * pm[:, None, :]
        ex, ey = (dx == 0), (dy == 0)
        out["c"][g] = (np.sign(dx) * np.sign(dy) * w).sum(axis=(1, 2))
        out["tx"][g] = (ex * w).sum(axis=(1, 2))
        out["ty"][g] = (ey * w).sum(axis=(1, 2))
        out["txy"][g] = ((ex & ey) * w).sum(axis=(1, 2))
    vx = np.unique(X[present])
    vy = np.unique(Y[present])
    has_x = np.zeros((G, len(vx)), bool)
    has_y = np.zeros((G, len(vy)), bool)
    for g in range(G):
        has_x[g, np.searchsorted(vx, X[g][present[g]])] = True
        has_y[g, np.searchsorted(vy, Y[g][present[g]])] = True
    return GroupSums(out["c"], out["tx"], out["ty"], out["txy"], pm.sum(axis=1), has_x, has_y)


def cell_sums(x: np.ndarray, y: np.ndarray) -> GroupSums:
    """Each cell its own group (x, y 1-D without NaN)."""
    return group_sums(np.asarray(x, float)[:, None], np.asarray(y, float)[:, None], axis=0)


def tau_draws(gs: GroupSums, U: np.ndarray, variant: str | None = "b") -> np.ndarray:
    """Kendall coefficient for each row of group multiplicities U (k x G); NaN where undefined
    (fewer than 3 cells, x or y constant)."""
    U = np.asarray(U, float)

    def q(M: np.ndarray) -> np.ndarray:
        return ((U @ M) * U).sum(axis=1)

    W = U @ gs.cells
    P = W * (W - 1) / 2
    S = q(gs.c) / 2
    n1 = (q(gs.tx) - W) / 2
    n2 = (q(gs.ty) - W) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            val = S / np.sqrt((P - n1) * (P - n2))
        elif variant == "acc23":
            n3 = (q(gs.txy) - W) / 2
            val = ((S + P - n1 - n2 + n3) / 2 + n3) / P
        elif variant == "c":
            drawn = (U > 0).astype(float)
            m = np.minimum((drawn @ gs.has_x > 0).sum(axis=1), (drawn @ gs.has_y > 0).sum(axis=1)).astype(float)
            val = 2 * S / (W * W * (m - 1) / m)
        else:
            raise ValueError(f"unknown Kendall variant {variant!r}")
    ok = (W >= 3) & (n1 < P - 1e-9) & (n2 < P - 1e-9)
    return np.where(ok, np.clip(val, -1.0, 1.0), np.nan)
