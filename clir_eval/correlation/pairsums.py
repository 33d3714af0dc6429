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

import functools
from dataclasses import dataclass

import numpy as np

from .. import lazylibs


@dataclass(frozen=True)
class GroupSums:
    """Pair matrices of the cells aggregated to groups (G x G), cells per group (G), and for τ-c
    which distinct x / y values each group holds (G x Vx, G x Vy). The tie matrices ``tx``,
    ``ty``, ``txy`` are computed on first use (one-cell groups do without them)."""

    c: np.ndarray
    cells: np.ndarray
    has_x: np.ndarray
    has_y: np.ndarray
    ranks: tuple  # (x ranks, y ranks, presence, G, cells per group) of the flattened cells

    @functools.cached_property
    def tx(self) -> np.ndarray:
        return _ties(self.ranks, self.ranks[0])

    @functools.cached_property
    def ty(self) -> np.ndarray:
        return _ties(self.ranks, self.ranks[1])

    @functools.cached_property
    def txy(self) -> np.ndarray:
        return _ties(self.ranks, self.ranks[0], self.ranks[1])


def _ties(cells: tuple, *ranks: np.ndarray) -> np.ndarray:
    """Pairs of cells (with their own diagonal) equal in ``ranks``, per pair of groups: the
    product of the groups' value counts."""
    _, _, pres, G, n = cells
    key = ranks[0].astype(np.int64)
    for r in ranks[1:]:
        key = key * (int(r.max(initial=0)) + 1) + r
    sparse = lazylibs.scipy_sparse()
    _, v = np.unique(key, return_inverse=True)
    # groups x values, sparse: at most n values per group (a dense one is G x distinct values, which
    # for continuous scores is G x all cells); integer counts, so the product is exact either way
    counts = sparse.csr_array((pres.astype(float), (np.repeat(np.arange(G), n), v.ravel())),
                              shape=(G, int(v.max(initial=-1)) + 1))
    return np.asarray((counts @ counts.T).toarray(), dtype=float)


def group_sums(X: np.ndarray, Y: np.ndarray, axis: int) -> GroupSums:
    """Aggregate the pair matrices of the cells of X, Y (systems x items; NaN = absent) to the
    rows (``axis=0``: systems) or the columns (``axis=1``: items)."""
    X = np.asarray(X, float)
    Y = np.asarray(Y, float)
    if axis == 1:
        X, Y = X.T, Y.T
    present = ~(np.isnan(X) | np.isnan(Y))
    G, n = X.shape
    pm = present.astype(float)
    vx = np.unique(X[present])
    vy = np.unique(Y[present])
    # dense ranks: their differences have the signs of the values' differences; absent cells
    # get rank 0 and weight 0
    rx = np.where(present, np.searchsorted(vx, np.where(present, X, vx[0] if vx.size else 0.0)), 0).ravel()
    ry = np.where(present, np.searchsorted(vy, np.where(present, Y, vy[0] if vy.size else 0.0)), 0).ravel()
    rdt = np.int16 if max(len(vx), len(vy)) < 2**15 else np.int64
    rx, ry = rx.astype(rdt), ry.astype(rdt)
    pres = present.ravel().astype(np.int8)
    c = np.zeros((G, G))
    N = G * n
    step = max(1, 4_000_000 // max(1, N))  # cells per chunk: at most ~4M cell pairs at a time
    group_of = np.arange(N) // max(n, 1)  # the cells are grouped: cell g * n + j is in group g
    for a0 in range(0, N, step):
        a = slice(a0, min(N, a0 + step))
        prod = np.sign(rx[a, None] - rx[None, :]).astype(np.int8)  # (cells of the chunk, all cells)
        prod *= np.sign(ry[a, None] - ry[None, :]).astype(np.int8)
        prod *= pres[None, :]
        per_cell = prod.reshape(-1, G, n).sum(axis=2, dtype=np.int64) * pres[a, None]  # (cells, G)
        g = group_of[a]
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])  # integer sums: exact in any order
        c[g[starts]] += np.add.reduceat(per_cell, starts, axis=0)

    has_x = np.zeros((G, len(vx)), bool)
    has_y = np.zeros((G, len(vy)), bool)
    rows = np.nonzero(present)[0]
    has_x[rows, np.searchsorted(vx, X[present])] = True
    has_y[rows, np.searchsorted(vy, Y[present])] = True
    return GroupSums(c, pm.sum(axis=1), has_x, has_y, (rx, ry, pres, G, n))


def cell_sums(x: np.ndarray, y: np.ndarray) -> GroupSums:
    """Each cell its own group (x, y 1-D without NaN)."""
    return group_sums(np.asarray(x, float)[:, None], np.asarray(y, float)[:, None], axis=0)


def quad_forms(U: np.ndarray, Ms: list[np.ndarray], W: np.ndarray) -> np.ndarray:
    """``uᵀ M u`` for each row u of U (k x G) and each G x G block of the matrices ``Ms`` (each
    G x m·G: m blocks side by side): (k, total blocks), one matrix product for all. The entries are integers (multiplicities, pair counts) and every
    partial sum is at most W² (W: the draws' cell counts), so float32 is exact below W = 4096
    and float64 is used above it."""
    k, G = U.shape
    exact32 = W.size == 0 or float(np.max(W)) < 4096
    dt = np.float32 if exact32 else np.float64
    Uc = np.ascontiguousarray(U, dtype=dt)
    out = []
    # one product per matrix and at most ~2**25 entries of U @ M at a time (never all matrices
    # side by side: that copy was len(Ms) x G x G); integer entries, so the sums are exact in any order
    step = max(1, 2**25 // max(1, max(M.shape[1] for M in Ms)))
    for M in Ms:
        Md = M.astype(dt, copy=False)
        m = M.shape[1] // G
        q = np.empty((k, m))
        for a in range(0, k, step):
            UM = Uc[a:a + step] @ Md  # (c, m * G)
            q[a:a + step] = np.matmul(UM.reshape(len(UM), m, G), Uc[a:a + step, :, None])[..., 0]
        out.append(q)
    return np.concatenate(out, axis=1).astype(np.float64)


def tau_draws(gs: GroupSums, U: np.ndarray, variant: str | None = "b") -> np.ndarray:
    """Kendall coefficient for each row of group multiplicities U (k x G); NaN where undefined
    (fewer than 3 cells, x or y constant)."""
    return tau_draws_many([gs], U, variant)[:, 0]


def tau_draws_many(gss: list[GroupSums], U: np.ndarray, variant: str | None = "b") -> np.ndarray:
    """:func:`tau_draws` of several pair sums over the same groups, (k, len(gss)): all quadratic
    forms in one matrix product."""
    U = np.asarray(U, float)
    W = U @ np.stack([gs.cells for gs in gss], axis=1)  # (k, n)
    if variant != "acc23" and all(gs.cells.max(initial=0) <= 1 for gs in gss):
        # one cell per group: the ties' forms are sums of squares over the values (no matrix product)
        qc = quad_forms(U, [gs.c for gs in gss], W)
        qs = np.stack([np.stack([qc[:, i], _tie_form(U, gs.has_x), _tie_form(U, gs.has_y)], axis=1)
                       for i, gs in enumerate(gss)], axis=1)
    else:
        mats = [m for gs in gss for m in ((gs.c, gs.tx, gs.ty, gs.txy) if variant == "acc23" else (gs.c, gs.tx, gs.ty))]
        qs = quad_forms(U, mats, W).reshape(len(U), len(gss), -1)
    return np.stack([_tau(gs, U, W[:, i], qs[:, i], variant) for i, gs in enumerate(gss)], axis=1)


def _tie_form(U: np.ndarray, has: np.ndarray) -> np.ndarray:
    """``uᵀ T u`` for the tie matrix T of groups holding one cell each (``has``: which value each
    group's cell has, a row of zeros for an absent cell): the sum over values of the squared
    multiplicity of the cells with that value (integers, exact)."""
    g, v = np.nonzero(has)
    if not len(g):
        return np.zeros(len(U))
    order = np.argsort(v, kind="stable")
    g, v = g[order], v[order]
    starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])
    per_value = np.add.reduceat(U[:, g], starts, axis=1)
    return (per_value * per_value).sum(axis=1)


def _tau(gs: GroupSums, U: np.ndarray, W: np.ndarray, qs: np.ndarray, variant: str | None) -> np.ndarray:
    P = W * (W - 1) / 2
    S = qs[:, 0] / 2
    n1 = (qs[:, 1] - W) / 2
    n2 = (qs[:, 2] - W) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            val = S / np.sqrt((P - n1) * (P - n2))
        elif variant == "acc23":
            n3 = (qs[:, 3] - W) / 2
            val = ((S + P - n1 - n2 + n3) / 2 + n3) / P
        elif variant == "c":
            drawn = (U > 0).astype(float)
            m = np.minimum((drawn @ gs.has_x > 0).sum(axis=1), (drawn @ gs.has_y > 0).sum(axis=1)).astype(float)
            val = 2 * S / (W * W * (m - 1) / m)
        else:
            raise ValueError(f"unknown Kendall variant {variant!r}")
    ok = (W >= 3) & (n1 < P - 1e-9) & (n2 < P - 1e-9)
    return np.where(ok, np.clip(val, -1.0, 1.0), np.nan)
