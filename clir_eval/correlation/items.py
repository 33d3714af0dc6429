"""Item-level meta-evaluation: correlations of item MT scores with item retrieval signals.

Each item kind (documents, queries) is a systems x items matrix per MT metric (x) and per
target (y). The groupings are mt-metrics-eval's (``stats.AverageCorrelation``'s ``average_by``,
its ``sys`` named ``system`` here):

- ``none``: flatten the matrices and correlate all (system, item) pairs at once. This mixes
  item difficulty with translation quality (an easy document is easy for every system), so it
  is reported with that caveat and never drives a verdict.
- ``item``: per item, correlate across the systems; average the items' coefficients (items
  whose coefficient is undefined, e.g. every system tied, are left out and counted). It mixes the systems'
  overall quality (as many units as systems) with the within-item part.
- ``system``: per system, correlate across the items; average over the systems.

Missing cells (NaN) are dropped per group, as mt-metrics-eval filters ``None``.

Significance and intervals (valid for the crossed systems x items design, both random; docs/statistics.md, "Item
level"):

- ``within``: each cell's normal score among the matrix's cells, minus its system's mean over the items
  (:func:`system_centred`), correlated per item and averaged: on which items a system does worse than its own
  average (an additive system effect on the normal scale cancels; the normal scores undo bounded and floored
  scales where one side is a monotone function of an additive score).
- p-values of ``item`` and ``within``: the crossed test (:func:`crossed_item_test`): the item-averaged coefficient
  over its standard error for systems and items both random (jackknife over systems and over items, the interaction
  counted once), t with Satterthwaite's degrees of freedom, two-sided; its null is the reported estimand (the
  expected coefficient of a study of the same design is 0), and ``ci_crossed`` is the interval of the same
  statistic, so a row is significant only where ``ci_crossed`` excludes 0. ``none`` and ``system`` are
  descriptive (no p-value).
- ``ci_items`` / ``ci_systems``: percentile bootstrap resampling only items (columns) or only systems (rows),
  descriptive (each ignores the other factor); only with ``bootstrap`` > 0 (the default 0 leaves them out: no
  answer, test or verdict uses them). When every metric's ``ci_crossed`` lies within ±x and contains 0,
  "no metric predicts it beyond ±x" is an answer.
- Metric comparisons (``within`` grouping): the crossed test of the per-item Δτ (:func:`crossed_pair_test`), two-sided,
  adjusted per family; clusters as mt-metrics-eval's ``AssignRanks`` (:mod:`.verdict`).
- Kept for measurements and pooling: the joint permutation test (:func:`joint_permutation_tests`, whose sharp null
  "no association in any system" is not the reported average) and whole-system swaps (:func:`system_swap_deltas`).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .. import lazylibs
from ..settings import default
from ..stats import t_ppf
from .kendall_rows import kendall_rows
from .pairsums import group_sums, quad_forms, tau_draws
from .settings import CorrelationSettings, ItemLevelSettings, StatsSettings
from .significance import adjust
from .statistics import check_method, coef_batch, percentile_ci
from .verdict import clusters, oriented, ranking

# version of the item-level computation: change it when a change alters its results (cached
# results of another version are not reused)
# 1: PERM-BOTH swaps from uniform floats < 0.5; 2: from the bits of the generator's bytes; 3: the ``item``
# permutation test permutes the target once per (item kind, target), shared by every metric's row;
# 4: answers say "within-query" (were "within-querie"); 5: an analysis with the same values as an earlier one
# (up to the order of the items) is computed once (:func:`distinct_analyses`), so later rows' generators are numbered
# without it; 6: answers name only the significantly separated pairs; 7: a table's items are "items" in answers;
# 8: items whose target is constant (no defined coefficient in any draw) are left out of the draws' arithmetic
# (the same draws; the means over the other items may differ in the last bit); 9: tests valid for the crossed
# systems x items design: the ``within`` grouping (system-centred scores), ``item`` and ``within`` p-values from system
# labels permuted jointly across items, ``none``/``system`` descriptive (no p-value), verdicts on ``within`` with
# whole-system swaps (two-sided, exact or sequential Monte Carlo), the family and resolution of the correlation section;
# 10: ``ci_crossed`` on the tested groupings (systems and items both random), the answers' bound read from it;
# 11: ``within`` on normal scores (then system-centred); ``item``/``within`` p-values and the verdicts' pair p-values
# from the crossed statistic of ``ci_crossed`` (null: the expected coefficient is 0), no permutations or swaps;
# 12: a ``within`` row whose metric and target are both step-valued (:func:`discrete_scales`), and every pair with
# such a metric, is not tested (``untested_reason``)
ITEM_PROCEDURE = "12"
GROUPINGS = ("none", "item", "system", "within")
TESTED_GROUPINGS = ("item", "within")  # groupings whose p-value holds its level for the crossed design
VERDICT_GROUPING = "within"
EXACT_MAX = 5040  # enumerate every joint permutation / swap pattern when there are at most this many
Mapper = Callable[[Callable[[tuple], Any], list], list]  # map(function, jobs) -> results in order, e.g. an executor's
BATCH_MAX_N = 40  # rows up to this length: all-pairs sign matrices; longer: O(n log n) merge counts


@dataclass(frozen=True)
class ItemMatrix:
    """One item kind: (systems x items) matrices of the MT metrics (``x``) and the targets (``y``)."""

    items: str  # documents | queries
    systems: tuple[str, ...]
    ids: tuple[str, ...]
    x: Mapping[str, np.ndarray]
    y: Mapping[str, np.ndarray]


@dataclass(frozen=True)
class ItemSettings:
    """The item-level statistics' settings; their defaults are the ``correlation:`` section's (level: the
    driver's), but ``bootstrap``: the draws of each row's descriptive ``ci_items``/``ci_systems``, 0 (none) as
    ``item_level.bootstrap``'s."""

    method: str = default(CorrelationSettings, "method")
    variant: str | None = default(CorrelationSettings, "variant")
    alpha: float = default(CorrelationSettings, "alpha")
    bootstrap: int = default(ItemLevelSettings, "bootstrap")
    permutation: int = default(CorrelationSettings, "permutation")
    seed: int = default(CorrelationSettings, "seed")
    level: float = default(StatsSettings, "level")
    correction: str = default(CorrelationSettings, "correction")
    family: str = default(CorrelationSettings, "family")
    resolution: str = default(CorrelationSettings, "resolution")

    def __post_init__(self) -> None:
        method, variant = check_method(self.method, self.variant)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "variant", variant)


def coef_rows(A: np.ndarray, B: np.ndarray, method: str, variant: str | None) -> np.ndarray:
    """Coefficient of each row of A against the same row of B; NaN cells dropped per row; NaN
    where undefined (fewer than 3 cells, a constant row)."""
    A = np.asarray(A, float)
    B = np.asarray(B, float)
    out = np.full(A.shape[0], np.nan)
    if A.size == 0:
        return out
    full = ~(np.isnan(A) | np.isnan(B)).any(axis=1)
    if full.any():
        out[full] = _coef_full(A[full], B[full], method, variant)
    for i in np.flatnonzero(~full):
        keep = ~(np.isnan(A[i]) | np.isnan(B[i]))
        if keep.sum() >= 3:
            out[i] = _coef_full(A[i, keep][None], B[i, keep][None], method, variant)[0]
    return out


def _coef_full(A: np.ndarray, B: np.ndarray, method: str, variant: str | None) -> np.ndarray:
    n = A.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "kendall" and variant in ("b", "c") and n > BATCH_MAX_N:
            ok = (np.ptp(A, axis=1) > 0) & (np.ptp(B, axis=1) > 0)
            return np.where(ok, kendall_rows(A, B, variant), np.nan)
        return coef_batch(A, B, method, variant)


def group_coefs(X: np.ndarray, Y: np.ndarray, grouping: str, method: str, variant: str | None) -> np.ndarray:
    """The coefficients the grouping averages: per item (``item``), per system (``system``) or
    the one flattened coefficient (``none``)."""
    if grouping == "item":
        return coef_rows(X.T, Y.T, method, variant)
    if grouping == "system":
        return coef_rows(X, Y, method, variant)
    if grouping == "none":
        return coef_rows(X.reshape(1, -1), Y.reshape(1, -1), method, variant)
    if grouping == "within":
        return coef_rows(*(R.T for R in system_centred(X, Y)), method, variant)
    raise ValueError(f"unknown grouping {grouping!r}; use one of {', '.join(GROUPINGS)}")


def _varying(Y: np.ndarray) -> np.ndarray:
    """Per item (column): whether its target takes two different values among its defined cells.
    An item whose target does not has no defined coefficient across systems, observed or in any
    draw that resamples or permutes its systems (all its pairs are tied in the target), so the
    draws may leave it out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an item without a defined cell: NaN bounds, not varying
        return np.nanmax(Y, axis=0) > np.nanmin(Y, axis=0)


def system_centred(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``within`` component of an item-level analysis: (X, Y) on the items whose target varies across
    systems (the items with a coefficient), each cell replaced by its normal score among the matrix's defined
    cells (:func:`normal_scores`: a transform common to every system, so it changes no within-item order by
    itself), then each system's row minus its own mean over those items. A within-item τ of these values is the
    τ of the system-and-item-centred residuals on a normal scale: does a system score lower on the items where it
    retrieves worse than its own average? An additive system effect on that scale cancels; the normal scores
    undo a bounded or floored scale (100·Φ, reciprocal ranks, BLEU-like floors at 0) where one side is a
    monotone function of an additive score, which plain centring does not (docs/statistics.md, "Item level").
    Each row's centred values depend on the whole matrix through the normal scores, so the tests of this
    grouping draw no permutations or swaps of systems (:func:`crossed_item_test`)."""
    v = _varying(Y)
    X, Y = np.asarray(X, float)[:, v], np.asarray(Y, float)[:, v]
    if not v.any():
        return X, Y
    X, Y = normal_scores(X), normal_scores(Y)
    return _snapped(X - _row_means(X)), _snapped(Y - _row_means(Y))


def normal_scores(X: np.ndarray) -> np.ndarray:
    """Each defined cell's normal score Φ⁻¹((r − ½) / n) among the n defined cells of the matrix, r its mid-rank
    (tied values keep one score, so ties stay ties); NaN stays NaN. A monotone transform common to every cell."""
    X = np.asarray(X, float)
    ok = ~np.isnan(X)
    vals = X[ok]
    n = len(vals)
    out = np.full(X.shape, np.nan)
    if not n:
        return out
    order = np.argsort(vals, kind="stable")
    sv = vals[order]
    start = np.r_[True, sv[1:] != sv[:-1]]
    group = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    last = np.r_[first[1:], n] - 1
    mid = (first + last) / 2 + 1  # 1-based mid-rank of each tied group
    ranks = np.empty(n)
    ranks[order] = mid[group]
    out[ok] = lazylibs.scipy_special().ndtri((ranks - 0.5) / n)
    return out


SNAP = 1e9  # centred values are kept on a grid of 1/SNAP of the matrix's largest |value|


def _snapped(R: np.ndarray) -> np.ndarray:
    """Centred values in units of the matrix's largest |value|, rounded to 1/:data:`SNAP`: two cells that are
    tied in real arithmetic (x - m_s = x' - m_t) stay tied whatever the rounding of the row means (retrieval
    scores such as 1/2, 1/3 make such ties common); orders that differ by more than that are kept. A
    coefficient is unchanged by the common scale."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scale = np.nanmax(np.abs(R)) if R.size and not np.isnan(R).all() else 0.0
    return np.rint(R / scale * SNAP) / SNAP if scale > 0 else R


def _row_means(X: np.ndarray) -> np.ndarray:
    """Each row's mean over its defined cells, summed in sorted order so that it does not depend on the
    order of the items (the same analysis with its items in another order gives the same bits); NaN for a
    row without a defined cell."""
    n = (~np.isnan(X)).sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nansum(np.sort(X, axis=1), axis=1, keepdims=True) / np.where(n > 0, n, np.nan)


def _mean(v: np.ndarray) -> float | None:
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else None


def grouped(X: np.ndarray, Y: np.ndarray, grouping: str, method: str = "kendall", variant: str | None = "b"
            ) -> tuple[float | None, int]:  # fmt: skip
    """(the grouping's coefficient, the number of groups with a defined coefficient)."""
    c = group_coefs(X, Y, grouping, method, variant)
    return _mean(c), int((~np.isnan(c)).sum())


def _ci(draws: np.ndarray, level: float) -> list[float] | None:
    lo, hi = percentile_ci(draws, level)
    return None if lo is None else [lo, hi]


def _resampled_means(per_group: np.ndarray, rng: np.random.Generator, k: int) -> np.ndarray:
    """Means of the groups' coefficients over ``k`` draws of the groups with replacement."""
    g = len(per_group)
    idx = rng.integers(0, g, (k, g))
    vals = per_group[idx]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.nanmean(vals, axis=1)


def _draw_coefs(X: np.ndarray, Y: np.ndarray, grouping: str, s: ItemSettings, axis: int,
                rng: np.random.Generator) -> np.ndarray:  # fmt: skip
    """Bootstrap draws of the grouping's coefficient resampling rows (axis 0, systems) or
    columns (axis 1, items) with replacement. Kendall coefficients are computed from pair sums
    (:mod:`.pairsums`), exactly those of the resampled data; Pearson/Spearman recompute."""
    k = s.bootstrap
    if grouping == "within":  # centring is per system: resampled systems or items keep their centred values
        X, Y = system_centred(X, Y)
        grouping = "item"
    averaged_axis = {"item": 1, "system": 0}.get(grouping)
    if averaged_axis == axis:  # resampling the averaged groups: resample their coefficients
        return _resampled_means(group_coefs(X, Y, grouping, s.method, s.variant), rng, k)
    n = X.shape[axis]
    idx = rng.integers(0, n, (k, n))
    if s.method != "kendall":
        return _recomputed(X, Y, grouping, s, axis, idx)
    U = np.bincount((idx + n * np.arange(k)[:, None]).ravel(), minlength=k * n).reshape(k, n).astype(float)
    if grouping == "item" and not (v := _varying(Y)).all() and v.any():  # items without a coefficient in any draw
        X, Y = X[:, v], Y[:, v]
    if grouping == "none":
        return tau_draws(group_sums(X, Y, axis), U, s.variant)
    if grouping == "item" and s.variant == "b":  # systems resampled; every item at once
        per = _items_tau_b(X, Y, U)
    elif grouping == "item":  # systems resampled; per item across the drawn systems
        per = np.stack([tau_draws(group_sums(X[:, j:j + 1], Y[:, j:j + 1], 0), U, s.variant)
                        for j in range(X.shape[1])], axis=1)
    else:  # system grouping, items resampled; per system across the drawn items
        per = np.stack([tau_draws(group_sums(X[i:i + 1], Y[i:i + 1], 1), U, s.variant)  # one items x items
                        for i in range(X.shape[0])], axis=1)  # matrix at a time (the same exact sums)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.nanmean(per, axis=1)


def _items_tau_b(X: np.ndarray, Y: np.ndarray, U: np.ndarray) -> np.ndarray:
    """τ-b of every item across resampled systems, (draws, items): the pair sums of :mod:`.pairsums`
    with each item's systems x systems matrices stacked, one einsum per sum."""
    Xt, Yt = X.T, Y.T  # (I, S)
    pres = ~(np.isnan(Xt) | np.isnan(Yt))
    xs, ys = np.where(pres, Xt, 0.0), np.where(pres, Yt, 0.0)
    w = (pres[:, :, None] & pres[:, None, :]).astype(float)
    dx, dy = xs[:, :, None] - xs[:, None, :], ys[:, :, None] - ys[:, None, :]

    W = U @ pres.T.astype(float)  # (k, I)
    I, S = Xt.shape
    # each item's S x S matrices side by side: the draws' quadratic forms are one matrix product
    mats = [M.transpose(1, 0, 2).reshape(S, I * S) for M in (np.sign(dx) * np.sign(dy) * w, (dx == 0) * w, (dy == 0) * w)]
    q = quad_forms(U, mats, W).reshape(len(U), 3, I)
    P = W * (W - 1) / 2
    S_ = q[:, 0] / 2
    n1 = (q[:, 1] - W) / 2
    n2 = (q[:, 2] - W) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        val = S_ / np.sqrt((P - n1) * (P - n2))
    ok = (W >= 3) & (n1 < P - 1e-9) & (n2 < P - 1e-9)
    return np.where(ok, np.clip(val, -1.0, 1.0), np.nan)


def _recomputed(X: np.ndarray, Y: np.ndarray, grouping: str, s: ItemSettings, axis: int, idx: np.ndarray) -> np.ndarray:
    out = np.full(len(idx), np.nan)
    for b, i in enumerate(idx):
        v = group_coefs(np.take(X, i, axis=axis), np.take(Y, i, axis=axis), grouping, s.method, s.variant)
        out[b] = np.nan if np.isnan(v).all() else np.nanmean(v)
    return out


# --------------------------------------------------------------------------- interval for the crossed design
def loo_system_coefs(X: np.ndarray, Y: np.ndarray, method: str, variant: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(per-item coefficients across systems (I,), the same with each system left out in turn (S, I)); NaN
    where undefined (fewer than 3 cells, a constant side). τ-b from each item's pair sign matrices: leaving
    system s out subtracts its row of the matrices from the item's sums (missing cells drop their pairs, as
    :func:`coef_rows` drops them); other coefficients are recomputed without each system."""
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    S, I = X.shape
    if not (method == "kendall" and variant == "b"):
        full = coef_rows(X.T, Y.T, method, variant)
        loo = np.stack([coef_rows(np.delete(X, s, 0).T, np.delete(Y, s, 0).T, method, variant) for s in range(S)])
        return full, loo.reshape(S, I)
    full, loo = np.empty(I), np.empty((S, I))
    step = max(1, 2_000_000 // max(1, S * S))
    for a in range(0, I, step):
        x, y = X[:, a:a + step].T, Y[:, a:a + step].T  # (c, S)
        present = ~(np.isnan(x) | np.isnan(y))
        with np.errstate(invalid="ignore"):
            sx = np.sign(np.where(present, x, 0.0)[:, :, None] - np.where(present, x, 0.0)[:, None, :])
            sy = np.sign(np.where(present, y, 0.0)[:, :, None] - np.where(present, y, 0.0)[:, None, :])
        w = present[:, :, None] & present[:, None, :]
        sx, sy = (sx * w).astype(np.int8), (sy * w).astype(np.int8)
        rows = [(sx * sy).sum(axis=2, dtype=np.int64), np.abs(sx).sum(axis=2, dtype=np.int64),
                np.abs(sy).sum(axis=2, dtype=np.int64)]  # per item and system: its pairs' sums (c, S)
        num, nx, ny = (r.sum(axis=1) // 2 for r in rows)  # every pair counted from both ends
        cells = present.sum(axis=1)
        full[a:a + step] = _tau_b_of(num, nx, ny, cells)
        loo[:, a:a + step] = _tau_b_of(num[:, None] - rows[0], nx[:, None] - rows[1], ny[:, None] - rows[2],
                                       cells[:, None] - present).T
    return full, loo


def crossed_item_ci(X: np.ndarray, Y: np.ndarray, grouping: str, s: ItemSettings) -> list[float] | None:
    """A ``s.level`` interval for the item-averaged coefficient of the ``item`` or ``within`` grouping when the
    systems and the items are both random samples, crossed: :func:`crossed_item_test`'s interval."""
    return crossed_item_test(X, Y, grouping, s)[0]


CROSSED_MIN_SYSTEMS = 4  # fewer systems: no crossed interval or test
CROSSED_FULL_SYSTEMS = 7  # fewer systems: the interaction is left in the systems' jackknife (conservative)


@dataclass(frozen=True)
class CrossedMoments:
    """An item-averaged statistic's estimate, its variance for systems and items both random (crossed) and the
    Satterthwaite degrees of freedom of that variance (:func:`crossed_moments`)."""

    est: float
    var: float
    df: float


def crossed_moments(c: np.ndarray, loo: np.ndarray) -> CrossedMoments | None:
    """The crossed variance of the mean of per-item values ``c`` (I,) given the same with each system left out
    in turn ``loo`` (S, I) (NaN where undefined; items with an undefined ``c`` are left out). Over items
    (systems fixed): the items' variance / I, which holds the item part and the system x item interaction. Over
    systems (items fixed; Efron & Stein 1981, Arvesen 1969 for U-statistics such as τ): the jackknife of the
    leave-one-system-out means, which holds the system part and the interaction again; the interaction's share
    is read off the pseudo-values (S−1)(c_i − c_i^(−s)) as a two-way table, its residual mean square / (S·I), and
    subtracted (a variance component of crossed random effects; McCullagh 2000, Owen 2007 on why resampling rows
    and columns together counts it three times). Degrees of freedom: Satterthwaite (1946) over the mean squares
    the variance is made of (the items' with I − 1, the systems' jackknife with S − 1, the interaction's with
    (S − 1)(I − 1); the last two only where the systems' part is above 0). Below :data:`CROSSED_FULL_SYSTEMS`
    systems the interaction is not subtracted (the systems' jackknife alone: conservative, as a few systems'
    pseudo-values estimate it poorly). Linear: the moments of a difference
    of two statistics are those of the differences of their ``c`` and ``loo``. None with fewer than 4 systems,
    2 items or 3 systems whose leave-one-out mean is defined."""
    S = loo.shape[0]
    ok = ~np.isnan(c)
    n = int(ok.sum())
    if S < CROSSED_MIN_SYSTEMS or n < 2:
        return None
    c, loo = c[ok], loo[:, ok]
    est = float(c.mean())
    v_items = float(c.var(ddof=1)) / n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_loo = np.nanmean(loo, axis=1)
    t_loo = t_loo[~np.isnan(t_loo)]
    k = len(t_loo)
    if k < 3:
        return None
    v_jack = (k - 1) / k * float(((t_loo - t_loo.mean()) ** 2).sum())
    full = ~np.isnan(loo).any(axis=0)  # items with every leave-one-out value: the two-way table
    twice, df_twice = 0.0, 1
    if full.sum() >= 2 and S >= CROSSED_FULL_SYSTEMS:
        psi = (S - 1) * (c[full][None] - loo[:, full])
        res = psi - psi.mean(axis=1, keepdims=True) - psi.mean(axis=0, keepdims=True) + psi.mean()
        df_twice = (S - 1) * (int(full.sum()) - 1)
        twice = float((res ** 2).sum()) / df_twice / (S * n)
    v_sys = max(0.0, v_jack - twice)
    var = v_items + v_sys
    if var <= 0:
        return CrossedMoments(est, 0.0, math.inf)
    df = var ** 2 / (v_items ** 2 / (n - 1) + ((v_jack ** 2 / (k - 1) + twice ** 2 / df_twice) if v_sys > 0 else 0.0))
    return CrossedMoments(est, var, df)


def crossed_moments_full(c: np.ndarray, loo: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`crossed_moments` of many studies at once, every value defined: ``c`` (R, I), ``loo`` (R, S, I) ->
    (estimate, variance, degrees of freedom), each (R,) (study design's simulations; equal to the run's)."""
    R, S, I = loo.shape
    est = c.mean(axis=1)
    v_items = c.var(axis=1, ddof=1) / I
    t_loo = loo.mean(axis=2)
    v_jack = (S - 1) / S * ((t_loo - t_loo.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    twice, df_twice = np.zeros(R), (S - 1) * (I - 1)
    if S >= CROSSED_FULL_SYSTEMS:
        psi = (S - 1) * (c[:, None, :] - loo)
        res = psi - psi.mean(axis=2, keepdims=True) - psi.mean(axis=1, keepdims=True) + psi.mean(axis=(1, 2))[:, None, None]
        twice = (res ** 2).sum(axis=(1, 2)) / df_twice / (S * I)
    v_sys = np.maximum(0.0, v_jack - twice)
    var = v_items + v_sys
    with np.errstate(invalid="ignore", divide="ignore"):
        df = var ** 2 / (v_items ** 2 / (I - 1) + np.where(v_sys > 0, v_jack ** 2 / (S - 1) + twice ** 2 / df_twice, 0.0))
    return est, var, np.where(var > 0, df, np.inf)


def crossed_p(est: np.ndarray, var: np.ndarray, df: np.ndarray, fisher: bool) -> np.ndarray:
    """Two-sided p of t = estimate / se with ``df`` degrees of freedom, on Fisher's z scale (``fisher``: a
    coefficient, se by the delta method) or on the raw scale (a difference of coefficients); 0 where the variance
    is 0 and the estimate is not, 1 where both are (vectorised; the p of :func:`crossed_item_test` and
    :func:`crossed_pair_test`)."""
    est, var, df = (np.asarray(v, float) for v in (est, var, df))
    with np.errstate(invalid="ignore", divide="ignore"):
        if fisher:
            t = np.abs(np.arctanh(np.clip(est, -1, 1))) * (1 - est * est) / np.sqrt(var)
            t = np.where(np.abs(est) >= 1, np.inf, t)
        else:
            t = np.abs(est) / np.sqrt(var)
        p = 2 * lazylibs.scipy_special().stdtr(np.where(np.isfinite(df), df, 1e300), -t)
    return np.where(var > 0, p, np.where(est != 0, 0.0, 1.0))


def loo_tau_b_full(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`loo_system_coefs` (τ-b) of many studies at once, every cell defined: X, Y (R, S, I) -> per-item τ-b
    (R, I) and each system left out (R, S, I), from the same integer pair counts."""
    R, S, I = X.shape
    c, loo = np.empty((R, I)), np.empty((R, S, I))
    step = max(1, 4_000_000 // max(1, S * S * I))
    for a in range(0, R, step):
        x, y = X[a:a + step], Y[a:a + step]
        sx = np.sign(x[:, :, None, :] - x[:, None, :, :]).astype(np.int8)  # (r, S, S, I)
        sy = np.sign(y[:, :, None, :] - y[:, None, :, :]).astype(np.int8)
        rows = [(sx * sy).sum(axis=2, dtype=np.int64), np.abs(sx).sum(axis=2, dtype=np.int64),
                np.abs(sy).sum(axis=2, dtype=np.int64)]  # per study, system and item (r, S, I)
        num, nx, ny = (r.sum(axis=1) // 2 for r in rows)
        c[a:a + step] = _tau_b_of(num, nx, ny, S)
        loo[a:a + step] = _tau_b_of(num[:, None] - rows[0], nx[:, None] - rows[1], ny[:, None] - rows[2], S - 1)
    return c, loo


def within_full(V: np.ndarray) -> np.ndarray:
    """:func:`system_centred`'s values of many studies at once (R, S, I), every cell defined and no ties: each
    study's normal scores, each system's row minus its mean (without the 1e-9 grid, which changes no order of
    untied values)."""
    R = V.shape[0]
    flat = V.reshape(R, -1)
    ranks = np.empty(flat.shape)
    np.put_along_axis(ranks, np.argsort(flat, axis=1), np.arange(1, flat.shape[1] + 1, dtype=float)[None], axis=1)
    G = lazylibs.scipy_special().ndtri((ranks - 0.5) / flat.shape[1]).reshape(V.shape)
    return G - G.mean(axis=2, keepdims=True)


def crossed_item_test(X: np.ndarray, Y: np.ndarray, grouping: str, s: ItemSettings, with_df: bool = False
                      ) -> tuple:  # fmt: skip
    """(interval, two-sided p[, degrees of freedom with ``with_df``]) of the item-averaged coefficient of the ``item`` or ``within`` grouping when the
    systems and the items are both random samples, crossed (every item judged by the same systems). The
    estimand is the coefficient's expectation over studies of the same design: as many systems and items,
    drawn anew from their populations; the null of the p-value is that this expectation is 0, whatever the
    association in single systems or items (a slope that varies by system or by item around 0 is not an
    effect). Variance: :func:`crossed_moments`. Interval: estimate ± t·se on Fisher's z scale (delta method),
    t with the Satterthwaite degrees of freedom; p from the same statistic, so the interval at level 1 − α
    holds 0 exactly when p ≥ α. No random draws: the same data give the same result. (None, None) with fewer
    than 4 systems or 2 items with a coefficient."""
    if grouping == "within":
        X, Y = system_centred(X, Y)
    elif grouping != "item":
        raise ValueError(f"crossed_item_test: grouping {grouping!r} has no crossed interval (item, within)")
    m = crossed_moments(*loo_system_coefs(X, Y, s.method, s.variant))
    ci, p = _crossed_z(m, s.level)
    return (ci, p, None if m is None else m.df) if with_df else (ci, p)


def _crossed_z(m: CrossedMoments | None, level: float) -> tuple[list[float] | None, float | None]:
    """(interval, two-sided p) of a coefficient from its crossed moments on Fisher's z scale (delta method)."""
    if m is None:
        return None, None
    if m.var <= 0:
        return [m.est, m.est], (0.0 if m.est != 0 else 1.0)
    q = t_ppf(1 - (1 - level) / 2, m.df)
    sd = math.sqrt(m.var)
    if abs(m.est) >= 1:
        return [max(-1.0, m.est - q * sd), min(1.0, m.est + q * sd)], 0.0
    z, se = math.atanh(m.est), sd / (1 - m.est * m.est)  # Fisher's z, its se by the delta method
    return [math.tanh(z - q * se), math.tanh(z + q * se)], float(crossed_p(m.est, m.var, m.df, True))


def item_coefs(Xd: np.ndarray, Y: np.ndarray, method: str, variant: str | None) -> np.ndarray:
    """Per draw and item, the coefficient across systems of Xd (k, S, I) against the fixed Y (S, I):
    (k, I). Kendall τ-b from int8 sign matrices, Y's computed once; NaN cells left out."""
    k, S, I = Xd.shape
    if method != "kendall" or variant != "b":
        return coef_rows(Xd.transpose(0, 2, 1).reshape(k * I, S), np.broadcast_to(Y.T, (k, I, S)).reshape(k * I, S),
                         method, variant).reshape(k, I)
    iu, ju = np.triu_indices(S, k=1)
    Yt = Y.T  # (I, S)
    dy = Yt[:, iu] - Yt[:, ju]  # (I, pairs)
    my = ~np.isnan(dy)
    sy = np.sign(np.where(my, dy, 0.0)).astype(np.int8)
    has_nan = bool(np.isnan(Xd).any()) or not my.all()
    out = np.empty((k, I))
    step = max(1, 4_000_000 // max(1, I * len(iu)))
    for a in range(0, k, step):
        Xt = Xd[a:a + step].transpose(0, 2, 1)  # (c, I, S)
        dx = Xt[:, :, iu] - Xt[:, :, ju]  # (c, I, pairs)
        if has_nan:
            valid = my[None] & ~np.isnan(dx)
            sx = np.sign(np.where(valid, dx, 0.0)).astype(np.int8)
            ny = (np.abs(sy)[None] * valid).sum(axis=2, dtype=np.int64)
            present = ~np.isnan(Xt) & ~np.isnan(Yt)[None]
            cells = present.sum(axis=2)
        else:
            sx = np.sign(dx).astype(np.int8)
            ny = np.broadcast_to(np.abs(sy).sum(axis=1, dtype=np.int64), (len(sx), I))
            cells = np.full((len(sx), I), S)
        num = (sx * sy[None]).sum(axis=2, dtype=np.int64)
        nx = np.abs(sx).sum(axis=2, dtype=np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            val = num / np.sqrt(nx * ny)
        out[a:a + step] = np.where((cells >= 3) & (nx > 0) & (ny > 0), np.clip(val, -1, 1), np.nan)
    return out


def _full_tau_b(s: ItemSettings, *mats: np.ndarray) -> bool:
    """Whether the exact integer fast paths apply: τ-b, no missing cell, fewer than 128 systems."""
    return (s.method == "kendall" and s.variant == "b" and mats[0].shape[0] < 128
            and not any(np.isnan(m).any() for m in mats))


def _column_ranks(X: np.ndarray) -> np.ndarray:
    """Dense ranks (0..) of each column's values, int8 (fewer than 128 rows)."""
    order = np.argsort(X, axis=0, kind="stable")
    vs = np.take_along_axis(X, order, axis=0)
    new = np.zeros(X.shape, np.int8)
    new[1:] = vs[1:] != vs[:-1]
    ranks = np.empty(X.shape, np.int8)
    np.put_along_axis(ranks, order, np.cumsum(new, axis=0, dtype=np.int8), axis=0)
    return ranks


def _tau_b_of(num: np.ndarray, nx: np.ndarray, ny: np.ndarray, cells: int) -> np.ndarray:
    """τ-b from integer pair counts, as :func:`item_coefs` computes it (NaN where undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        val = num / np.sqrt(nx * ny)
    return np.where((cells >= 3) & (nx > 0) & (ny > 0), np.clip(val, -1, 1), np.nan)


def _swap_forms(a: np.ndarray, b: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per item, the integer forms of :func:`_swapped_tau_b` in the swap bits w (S,) of full matrices: the
    constants ``const`` (I, 4: a's sign-product sum, b's, a's x-untied pairs, b's), the linear coefficients
    ``lin`` (I, S, 4, the same order), the quadratic coefficients ``quad`` (I, pairs, 2: per pair of systems
    s < t in ``np.triu_indices`` order, of the sign products and of the x-untied pairs, the same for both
    orientations) and the target's untied pairs ``ny`` (I,), so that a's sign-product sum after swapping w is
    ``const[:, 0] + lin[..., 0] @ w + quad[..., 0] @ (w[s] w[t] per pair)``.
    Per item, a pair of systems' sign product (and whether x ties) depends only on the two cells' swap bits
    e, f: h(e, f) = h00 + (h10 − h00)e + (h01 − h00)f + (h11 − h10 − h01 + h00)ef. The second orientation's
    cell values are the first's with every bit flipped, h'(e, f) = h(1 − e, 1 − f): the same quadratic
    coefficients, other constants and linear terms."""
    S, I = Y.shape
    iu, ju = np.triu_indices(S, k=1)
    Yt = Y.T
    sy = np.sign(Yt[:, iu] - Yt[:, ju])  # (I, pairs); small integers, exact in float64 (BLAS products below)
    ny = np.abs(sy).sum(axis=1)
    vals = (a.T, b.T)  # a cell's value when its bit is 0, 1 in the first orientation: where(swap, b, a)
    sx = {(e, f): np.sign(vals[e][:, iu] - vals[f][:, ju]) for e in (0, 1) for f in (0, 1)}
    first = np.zeros((len(iu), S))
    first[np.arange(len(iu)), iu] = 1.0
    second = np.zeros((len(iu), S))
    second[np.arange(len(iu)), ju] = 1.0
    quads, consts, linears = [], [], []
    for h in ({ef: v * sy for ef, v in sx.items()}, {ef: np.abs(v) for ef, v in sx.items()}):
        quads.append(h[1, 1] - h[1, 0] - h[0, 1] + h[0, 0])
        # per orientation: the constant and each cell's linear coefficient (its pairs as first and as second cell)
        consts += [h[0, 0].sum(axis=1), h[1, 1].sum(axis=1)]
        linears += [(h[1, 0] - h[0, 0]) @ first + (h[0, 1] - h[0, 0]) @ second,
                    (h[0, 1] - h[1, 1]) @ first + (h[1, 0] - h[1, 1]) @ second]
    whole = lambda v: np.rint(v).astype(np.int64)  # noqa: E731
    return whole(np.stack(consts, axis=1)), whole(np.stack(linears, axis=2)), whole(np.stack(quads, axis=2)), whole(ny)


def _swapped_tau_b(a: np.ndarray, b: np.ndarray, Y: np.ndarray, swap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`item_coefs` of where(swap, b, a), of where(swap, a, b)) for full matrices and τ-b, each item with
    its own swap bits (``swap`` (k, S, I)): each draw's counts are a constant, a linear form and a quadratic form
    of the item's bits (:func:`_swap_forms`). Per item one batched matrix product of the bits (for the sign
    products and the x ties) serves both orientations; every number is an integer below S², exact in float32
    (S < 128)."""
    k, S, I = swap.shape
    const, lin, quad, ny = _swap_forms(a, b, Y)
    iu, ju = np.triu_indices(S, k=1)
    Q = np.zeros((I, S, 2, S), np.float32)
    Q[:, iu, :, ju] = quad.transpose(1, 0, 2)  # (pairs, I, 2) into the upper triangle of each item's S x S
    Qs = Q.reshape(I, S, 2 * S)  # (I, S, 2S): both forms' matrices side by side
    Ls = lin.astype(np.float32)  # (I, S, 4)
    out = np.empty((4, I, k), np.int64)  # per form: ca's num, cb's num, ca's x-untied, cb's x-untied
    step = max(1, 2_000_000 // max(1, I * S))
    for a0 in range(0, k, step):
        sw = np.ascontiguousarray(swap[a0:a0 + step].transpose(2, 0, 1)).astype(np.float32)  # (I, c, S)
        q = np.matmul(np.matmul(sw, Qs).reshape(I, -1, 2, S), sw[:, :, :, None])[..., 0]  # (I, c, 2)
        lin_w = np.matmul(sw, Ls)  # (I, c, 4)
        q2 = np.repeat(q, 2, axis=2)  # the same quadratic part for both orientations
        out[:, :, a0:a0 + step] = (np.rint(q2 + lin_w).astype(np.int64) + const[:, None, :]).transpose(2, 0, 1)
    ca = _tau_b_of(out[0].T, out[2].T, ny[None], S)
    cb = _tau_b_of(out[1].T, out[3].T, ny[None], S)
    return ca, cb


def _whole_swap_deltas_tau_b(a: np.ndarray, b: np.ndarray, Y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """:func:`system_swap_deltas` for full matrices and τ-b, where every item shares the draw's swap bits (W
    (k, S)): the per-item forms (:func:`_swap_forms`) are summed over the items before any draw. An item whose
    x-untied count does not depend on the bits (no tie in x whichever cells are swapped: its x-untied forms
    are 0) has a constant denominator d = √(n_x n_y), and its Δ numerator (a's sign-product sum minus b's)
    is linear in the bits (the quadratic parts are the same for both orientations). Such items are grouped by
    n_x·n_y, each group's coefficients summed as integers, so a draw costs one integer-valued product of its
    bits per group (exact in float64), divided by the group's d and summed over the groups. Items whose
    x ties depend on the bits keep their per-item counts (:func:`_swapped_tau_b`) and join the means item by
    item; so does the quadratic part then, as a's and b's means may average different items."""
    S, I = Y.shape
    k = len(W)
    const, lin, quad, ny = _swap_forms(a, b, Y)
    fixed = ~(quad[..., 1].any(axis=1) | lin[:, :, 2:].any(axis=(1, 2)))  # x-untied count constant in w
    dd = const[:, 2] * ny  # n_x·n_y of the fixed items (a's and b's n_x are equal there)
    use = fixed & (dd > 0) & (S >= 3)  # fixed items with a defined τ (in every draw)
    keys, group = np.unique(dd[use], return_inverse=True)
    member = np.zeros((len(keys), int(use.sum())), np.int64)
    member[group, np.arange(use.sum())] = 1  # (G, items used): which group each item is in
    Wf = W.astype(float)
    d = np.sqrt(keys.astype(float))
    la, lb = member @ lin[use, :, 0], member @ lin[use, :, 1]  # (G, S) integer sums
    ca_g, cb_g = member @ const[use, 0], member @ const[use, 1]
    dnum = Wf @ (la - lb).T.astype(float) + (ca_g - cb_g).astype(float)  # (k, G): Δ numerators, integers
    n_used = int(use.sum())
    moving = ~fixed
    with np.errstate(invalid="ignore", divide="ignore"):
        if not moving.any():
            out = (dnum / d).sum(axis=1) / n_used if n_used else np.full(k, np.nan)
        else:
            iu, ju = np.triu_indices(S, k=1)
            qg = (member @ quad[use, :, 0]).T.astype(float)  # (pairs, G)
            num_a = Wf @ la.T.astype(float) + ca_g.astype(float) + (Wf[:, iu] * Wf[:, ju]) @ qg
            sw = np.broadcast_to(W[:, :, None], (k, S, int(moving.sum())))
            ta, tb = _swapped_tau_b(a[:, moving], b[:, moving], Y[:, moving], sw)
            mean_a = ((num_a / d).sum(axis=1) + np.nansum(ta, axis=1)) / (n_used + (~np.isnan(ta)).sum(axis=1))
            mean_b = (((num_a - dnum) / d).sum(axis=1) + np.nansum(tb, axis=1)) / (n_used + (~np.isnan(tb)).sum(axis=1))
            out = mean_a - mean_b
    return np.nan_to_num(out, nan=0.0)


PERMUTATION_TEST = ("permutation within items: each item's target values shuffled across its systems (the same k "
                    "permutations for every metric against this target), k={k}, two-sided, p=(c+1)/(k+1)")


def target_permutation_tests(Xs: Sequence[np.ndarray], Y: np.ndarray, taus: Sequence[float], s: ItemSettings,
                             key: tuple[int, int]) -> list[tuple[float | None, str]]:  # fmt: skip
    """NOT VALID for a run's data (kept to measure it: ``scripts/sim_item_level.py --uncentred``, docs/statistics.md):
    each item's target shuffled across its systems independently of the other items, which treats one system in
    two items as two independent units (Clark 1973); with system effects it rejects far above α. The run's
    ``item`` p-values come from :func:`joint_permutation_tests`. Two-sided, p = (c+1)/(k+1)."""
    k = s.permutation
    if k < 1:
        return [(None, NOT_TESTED)] * len(Xs)
    S, I = Y.shape
    rng = np.random.default_rng(list(key))
    perm = rng.permuted(np.broadcast_to(np.arange(S, dtype=np.int64)[:, None], (k, S, I)).copy(), axis=1)
    out = []
    for m, tau in zip(_perm_means(perm, Xs, Y, s), taus):
        hits = int((np.abs(m) >= abs(tau) - 1e-12).sum())
        out.append(((hits + 1) / (k + 1), PERMUTATION_TEST.format(k=k)))
    return out


def _permuted_target_tau_b(perm: np.ndarray, Xs: Sequence[np.ndarray], Y: np.ndarray) -> list[np.ndarray]:
    """:func:`item_coefs` of each full X against Y permuted within items by ``perm`` (k, S, I) (the
    permuted target's cell (b, s, i) is Y[perm[b, s, i], i]), τ-b: a permutation keeps each item's
    pairs tied in the target, so only the sign products change; the permuted target's pair signs
    (from int8 ranks) are computed once and every metric's counts are one batched matrix product
    (float32: integers below the number of pairs, exact)."""
    k, S, I = perm.shape
    iu, ju = np.triu_indices(S, k=1)
    R = _column_ranks(Y).T  # (I, S)
    ny = (R[:, iu] != R[:, ju]).sum(axis=1, dtype=np.int64)  # (I,)
    sx = np.stack([np.sign(X.T[:, iu] - X.T[:, ju]) for X in Xs], axis=2).astype(np.float32)  # (I, pairs, M)
    nx = np.abs(sx).sum(axis=1, dtype=np.int64)  # (I, M)
    Rf = R.astype(np.float32)
    num = np.empty((len(Xs), k, I), np.int64)
    items = np.arange(I)[:, None, None]
    step = max(1, 4_000_000 // max(1, I * len(iu)))
    for a in range(0, k, step):
        Rp = Rf[items, perm[a:a + step].transpose(2, 0, 1)]  # (I, c, S): the permuted target's ranks
        sy = np.sign(Rp[:, :, iu] - Rp[:, :, ju])  # (I, c, pairs)
        num[:, a:a + step] = np.rint(np.matmul(sy, sx)).astype(np.int64).transpose(2, 1, 0)
    return [_tau_b_of(num[j], nx[None, :, j], ny[None], S) for j in range(len(Xs))]


# --------------------------------------------------------------------------- tests valid for the crossed design
# Every item is judged by the same systems, so the systems are the units of replication for anything that
# compares systems (Clark 1973: items, here systems, as a random factor). Each test below draws one permutation
# or one swap pattern of the SYSTEMS and applies it in every item alike (restricted permutations: Anderson & ter
# Braak 2003), so no draw treats one system in two items as two independent units.
NOT_TESTED = "not tested (permutation: 0)"
DESCRIPTIVE = {
    "none": "descriptive: no p-value (the flattened (system, item) pairs share systems and items, so no test that "
            "treats them as independent holds its level; it mixes item difficulty with translation quality)",
    "system": "descriptive: no p-value (the systems' coefficients across items share the items, so a test over "
              "systems does not hold its level; it mostly reflects which items are easy for every system)",
}


def joint_permutations(S: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """((draws, S) permutations of S systems, exact): every permutation when there are at most
    :data:`EXACT_MAX` (the identity among them), else ``k`` uniform ones from ``rng``."""
    if math.factorial(S) <= EXACT_MAX:
        return np.array(list(itertools.permutations(range(S))), np.int64).reshape(-1, S), True
    return rng.permuted(np.broadcast_to(np.arange(S, dtype=np.int64), (k, S)).copy(), axis=1), False


def swap_patterns(S: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """((draws, S) bool swap patterns, one bit per system, exact): with at most :data:`EXACT_MAX` patterns
    once system 0 is kept unswapped, every such pattern (a pattern and its complement give Δτ and −Δτ, so
    they stand for all 2^S), else ``k`` fair coin flips per system (:func:`swap_bits`)."""
    if S >= 1 and 2 ** (S - 1) <= EXACT_MAX:
        n = 2 ** (S - 1)
        bits = (np.arange(n)[:, None] >> np.arange(S - 1)[None]) & 1
        return np.concatenate([np.zeros((n, 1), bool), bits.astype(bool)], axis=1), True
    return swap_bits(rng, (k, S)), False


def _perm_means(perm: np.ndarray, Xs: Sequence[np.ndarray], Y: np.ndarray, s: ItemSettings) -> list[np.ndarray]:
    """Per metric, the item-averaged coefficient of X against Y permuted within items by ``perm`` (k, S, I)
    (cell (b, s, i) of the permuted target is Y[perm[b, s, i], i]); items whose target is constant left out."""
    k, S, I = perm.shape
    if not (v := _varying(Y)).all() and v.any():  # items without a coefficient under any permutation
        perm, Y, Xs = perm[:, :, v], Y[:, v], [X[:, v] for X in Xs]
        I = Y.shape[1]
    fast = [j for j, X in enumerate(Xs) if _full_tau_b(s, X, Y)]
    coefs: dict[int, np.ndarray] = dict(zip(fast, _permuted_target_tau_b(perm, [Xs[j] for j in fast], Y))) if fast else {}
    if len(fast) < len(Xs):
        Yp = np.take_along_axis(np.broadcast_to(Y, (k, S, I)), perm, axis=1)
        for j in set(range(len(Xs))) - set(fast):
            coefs[j] = item_coefs(Yp, Xs[j], s.method, s.variant)  # symmetric: coefficient of (Yp, X) = of (X, Yp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [np.nanmean(coefs[j], axis=1) for j in range(len(Xs))]


def joint_test_text(grouping: str, n: int, exact: bool) -> str:
    what = ("system-centred scores (each system's values minus its own mean)" if grouping == "within" else "scores")
    how = f"exact: all {n} permutations" if exact else f"k={n} Monte Carlo permutations, p=(c+1)/(k+1)"
    return (f"system labels of the target permuted jointly across items (the same permutation in every item; "
            f"Anderson & ter Braak 2003), {how}, two-sided; null: the systems' {what} of the metric are unrelated "
            f"to those of the target")


def joint_permutation_tests(Xs: Sequence[np.ndarray], Y: np.ndarray, taus: Sequence[float | None], s: ItemSettings,
                            key: tuple[int, ...], grouping: str = "item") -> list[tuple[float | None, str]]:  # fmt: skip
    """Valid p-values for the crossed systems x items design: the ``item`` (or, with ``grouping="within"``,
    the ``within``) grouping's item-averaged coefficient of every metric in ``Xs`` against the target ``Y``
    (systems x items; observed values ``taus``), tested by permuting the target's system labels JOINTLY
    across items, the same permutation in every item. Under the null that a system's row of metric values
    (for ``within``: of system-centred values, :func:`system_centred`) is unrelated to its row of target
    values, with systems exchangeable, every permutation of the rows is equally likely, so the test is exact
    whatever the item effects (easy items easy for every metric and target) and, for ``within``, whatever
    the systems' overall qualities have in common. Exact enumeration for up to 7 systems (7! = 5040), else
    ``s.permutation`` draws from ``default_rng(key)``, p = (c+1)/(k+1); two-sided (|τ'| ≥ |τ|). One set of
    permutations serves every metric (their p-values are dependent, each exact). ``s.permutation`` 0: not
    tested. Pure function: every argument is data, the result depends on nothing else."""
    if s.permutation < 1:
        return [(None, NOT_TESTED)] * len(Xs)
    S, I = Y.shape
    perms, exact = joint_permutations(S, s.permutation, np.random.default_rng(list(key)))
    if grouping == "within":
        Xs = [system_centred(X, Y)[0] for X in Xs]
        Y = system_centred(Y, Y)[1]
        I = Y.shape[1]
    P = np.broadcast_to(perms[:, :, None], (len(perms), S, I))
    means = _perm_means(P, Xs, Y, s) if I else [np.full(len(perms), np.nan) for _ in Xs]
    text = joint_test_text(grouping, len(perms), exact)
    out: list[tuple[float | None, str]] = []
    for m, tau in zip(means, taus):
        if tau is None:
            out.append((None, text))
            continue
        hits = int((np.abs(m) >= abs(tau) - 1e-12).sum())
        out.append((hits / len(m) if exact else (hits + 1) / (len(m) + 1), text))
    return out


def _z(v: np.ndarray) -> np.ndarray:
    sd = np.nanstd(v)
    return (v - np.nanmean(v)) / (sd if sd > 0 else 1.0)


def swap_setup(Xa: np.ndarray, Xb: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The data of :func:`system_swap_deltas` for two metrics (oriented: higher = better) and a target: each
    metric's system-centred values (:func:`system_centred`, on the cells defined in all three) z-scored over
    its cells, and the system-centred target."""
    keep = ~(np.isnan(Xa) | np.isnan(Xb) | np.isnan(Y))
    Yk = np.where(keep, Y, np.nan)
    ra, ry = system_centred(np.where(keep, Xa, np.nan), Yk)
    rb, _ = system_centred(np.where(keep, Xb, np.nan), Yk)
    return _z(ra), _z(rb), ry


def system_swap_deltas(a: np.ndarray, b: np.ndarray, Y: np.ndarray, W: np.ndarray, s: ItemSettings) -> np.ndarray:
    """Δτ (item-averaged coefficient of a against Y minus that of b) after each swap pattern of ``W``
    (draws, systems): where W[d, i] the whole row of system i is swapped between a and b, in every item alike
    (PERM-BOTH, Deutsch et al. 2021, with the system as the unit, as the systems are the units that the same
    items share). For full τ-b from the items' integer counts summed before the draws (:func:`_whole_swap_deltas_tau_b`)."""
    S, I = Y.shape
    if I == 0:
        return np.zeros(len(W))
    if _full_tau_b(s, a, b, Y):
        return _whole_swap_deltas_tau_b(a, b, Y, W)
    sw = np.broadcast_to(W[:, :, None], (len(W), S, I))
    ca = item_coefs(np.where(sw, b, a), Y, s.method, s.variant)
    cb = item_coefs(np.where(sw, a, b), Y, s.method, s.variant)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.nan_to_num(np.nanmean(ca, axis=1) - np.nanmean(cb, axis=1), nan=0.0)


def system_swap_test(Xa: np.ndarray, Xb: np.ndarray, Y: np.ndarray, s: ItemSettings, rng: np.random.Generator
                     ) -> tuple[float | None, float | None]:  # fmt: skip
    """One pair of metrics (oriented: higher = better) on the ``within`` grouping, valid for the crossed design:
    (Δτ = within-τ(a) − within-τ(b), two-sided p). Whole-system swaps of the two metrics' system-centred,
    z-scored values (:func:`swap_setup`, :func:`system_swap_deltas`), one bit per system, the same in every
    item; exact over all 2^(S−1) patterns up to 13 systems (p = share with |Δτ'| ≥ |Δτ|), else ``s.permutation``
    draws, p = (c+1)/(k+1). Two-sided because a verdict orders the pair by its observed Δτ before testing it.
    Valid where the two metrics' system-centred rows are exchangeable within each system under the null (as
    PERM-BOTH's own condition at system level). The run's verdicts draw the same test in seed blocks and
    sequentially (:func:`item_verdicts`); this single call is for other callers (study design)."""
    a, b, ry = swap_setup(Xa, Xb, Y)
    ta, tb = _mean(group_coefs(a, ry, "item", s.method, s.variant)), _mean(group_coefs(b, ry, "item", s.method, s.variant))
    if ta is None or tb is None or s.permutation < 1:
        return None, None
    delta = ta - tb
    W, exact = swap_patterns(Y.shape[0], s.permutation, rng)
    hits = int((np.abs(system_swap_deltas(a, b, ry, W, s)) >= abs(delta) - 1e-12).sum())
    return float(delta), hits / len(W) if exact else (hits + 1) / (len(W) + 1)


def distinct_analyses(mats: Sequence[ItemMatrix]) -> tuple[list[ItemMatrix], dict[tuple[str, str], tuple[str, str]]]:
    """The matrices with every (item kind, target) analysis that repeats an earlier one left out, and
    ``{(items, target): (items, target) it repeats}``. Two analyses are the same when they have the
    same systems and metrics and the same (system x item) values of every metric and of the target
    up to the order of the items (a column permutation): every coefficient, test and interval of
    one is then one of the other's, e.g. with one relevant document per query a query's reciprocal
    rank, its average precision and its document's retrievability are the same numbers."""
    seen: dict[tuple, tuple[str, str]] = {}
    same: dict[tuple[str, str], tuple[str, str]] = {}
    out = []
    for m in mats:
        keep = {}
        for y, Y in m.y.items():
            key = _canonical(m, Y)
            if key in seen:
                same[m.items, y] = seen[key]
            else:
                seen[key] = (m.items, y)
                keep[y] = Y
        out.append(ItemMatrix(m.items, m.systems, m.ids, m.x, keep))
    return out, same


def _canonical(m: ItemMatrix, Y: np.ndarray) -> tuple:
    """The analysis of target ``Y`` over ``m``'s metrics with its items in a canonical order (the
    columns of all values, sorted), as a hashable key; NaN cells kept apart from every number."""
    A = np.stack([*(np.asarray(X, float) for X in m.x.values()), np.asarray(Y, float)])
    cols = A.reshape(-1, A.shape[-1]).T + 0.0  # one row per item; + 0.0 makes -0.0 equal to 0.0
    canon = cols[np.lexsort(cols.T[::-1])] if len(cols) else cols
    nan = np.isnan(canon)
    return (m.systems, tuple(m.x), canon.shape, np.where(nan, 0.0, canon).tobytes(), nan.tobytes())


def repeated_rows(rows: Sequence[Mapping[str, Any]], verdicts: Sequence[Mapping[str, Any]], mats: Sequence[ItemMatrix],
                  same: Mapping[tuple[str, str], tuple[str, str]], lower: Sequence[str], s: ItemSettings
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """Rows and verdicts of every (item kind, target) of ``mats`` in their order: those computed, and
    for an analysis that repeats one (:func:`distinct_analyses`) copies of that one's, renamed, marked
    ``same_as`` (``{"items", "target"}``), the verdict's answer worded for the copy."""
    by_rows: dict[tuple[str, str], list] = {}
    for r in rows:
        by_rows.setdefault((r["items"], r["target"]), []).append(r)
    by_verdict = {(v["items"], v["target"]): v for v in verdicts}
    out_rows: list[dict[str, Any]] = []
    out_verdicts: list[dict[str, Any]] = []
    for m in mats:
        for y in m.y:
            src = same.get((m.items, y))
            key = src or (m.items, y)
            mark = {"items": m.items, "target": y, **({"same_as": {"items": src[0], "target": src[1]}} if src else {})}
            mine = [{**r, **mark} for r in by_rows.get(key, [])]
            out_rows += mine
            if key in by_verdict:
                v = {**by_verdict[key], **mark}
                if src:
                    tau = {r["mt_metric"]: r for r in mine if r["grouping"] == VERDICT_GROUPING}
                    v["answer"] = _answer(m.items, y, v["ranking"], v["clusters"], v["winner"], tau, lower, s,
                                          v["pairwise"])
                out_verdicts.append(v)
    return out_rows, out_verdicts


def correlate_matrix(m: ItemMatrix, s: ItemSettings, seed: int, map: Mapper | None = None) -> list[dict[str, Any]]:
    """Every (metric, target, grouping) row of one item kind; pair i uses seed ``seed + i``.
    ``map`` (e.g. an executor's) runs the resampling of each row elsewhere; results never depend on it."""
    rows, jobs = plan_rows(m, s, seed)
    return finish_rows(rows, jobs, run_jobs(jobs, map), s)


def plan_rows(m: ItemMatrix, s: ItemSettings, seed: int) -> tuple[list[dict[str, Any]], list[tuple]]:
    """The rows of one item kind with their coefficients (``none`` and ``system`` descriptive, without a
    p-value), one job (:func:`run_jobs`) per row for its descriptive bootstrap CIs from the row's own generator
    (seed ``[seed, i]``, i the row's number; only with ``s.bootstrap`` > 0), and one job per tested row (``item``, ``within``) for its crossed
    test and interval (:func:`crossed_row`, no random draws)."""
    rows: list[dict[str, Any]] = []
    jobs: list[tuple] = []
    i = 0
    for y, Y in m.y.items():
        for x, X in m.x.items():
            for grouping in GROUPINGS:
                key = (seed, i)
                i += 1
                keep = ~(np.isnan(X) | np.isnan(Y))
                per = group_coefs(X, Y, grouping, s.method, s.variant)
                tau = _mean(per)
                row: dict[str, Any] = {
                    "items": m.items, "grouping": grouping, "mt_metric": x, "target": y, "tau": tau,
                    "n_systems": int(keep.any(axis=1).sum()), "n_items": int(keep.any(axis=0).sum()),
                    "n_cells": int(keep.sum()), "n_groups": int((~np.isnan(per)).sum()),
                }
                rows.append(row)
                if tau is None:
                    row.update(p_value=None, significant=None, reason="no group with a defined coefficient")
                    continue
                if grouping == VERDICT_GROUPING:
                    row["discrete_scales"] = discrete_scales(X, Y)
                if grouping in TESTED_GROUPINGS:  # filled in by the row's crossed test
                    row.update(p_value=None, p_test=None, significant=None)
                    jobs.append((len(rows) - 1, (crossed_row, X, Y, grouping, s)))
                else:  # descriptive: no test holds its level for the crossed design
                    row.update(p_value=None, p_test=DESCRIPTIVE[grouping], significant=None)
                if s.bootstrap > 0:
                    jobs.append((len(rows) - 1, (_row_draws, X, Y, grouping, s, key, tau)))
    return rows, jobs


def crossed_test_text(grouping: str, df: float | None) -> str:
    what = "normal-scored, system-centred scores" if grouping == "within" else "scores"
    dof = "" if df is None else f" (here {df:.1f})" if math.isfinite(df) else " (here ∞)"
    return (f"crossed test: the item-averaged τ of the {what} over its standard error for systems and items both "
            f"random (jackknife over systems plus the items' variance, the interaction counted once), Fisher's z, t "
            f"with Satterthwaite's degrees of freedom{dof}, two-sided; null: the expected coefficient of a study of "
            "this design (systems and items drawn at random) is 0; no random draws")


def crossed_row(X: np.ndarray, Y: np.ndarray, grouping: str, s: ItemSettings) -> dict[str, Any]:
    """A tested row's p-value, decision and ``ci_crossed`` (:func:`crossed_item_test`): significant when p < α and
    the interval does not hold 0 (the same statistic: at level 1 − α the two agree)."""
    ci, p, df = crossed_item_test(X, Y, grouping, s, with_df=True)
    if ci is None:
        return {"p_value": None, "significant": None, "ci_crossed": None,
                "p_test": f"not tested: the crossed test needs {CROSSED_MIN_SYSTEMS} systems and 2 items with a "
                          "coefficient"}
    out: dict[str, Any] = {"ci_crossed": ci, "p_method": "crossed", "df": df if df is None or math.isfinite(df) else None}
    if s.permutation < 1:
        return {**out, "p_value": None, "significant": None, "p_test": NOT_TESTED}
    if grouping == VERDICT_GROUPING and discrete_scales(X, Y):
        return {**out, "p_value": None, "significant": False, "p_test": STEP_UNTESTED, "untested_reason": STEP_UNTESTED}
    return {**out, "p_value": p, "p_test": crossed_test_text(grouping, df),
            "significant": bool(p < s.alpha and not ci[0] <= 0 <= ci[1])}


def _row_draws(X: np.ndarray, Y: np.ndarray, grouping: str, s: ItemSettings, key: tuple[int, int],
               tau: float) -> dict[str, Any]:  # fmt: skip
    """One row's descriptive intervals: the bootstrap over items, then over systems (in the order of its
    generator)."""
    rng = np.random.default_rng(list(key))
    return {"ci_items": _ci(_draw_coefs(X, Y, grouping, s, 1, rng), s.level),
            "ci_systems": _ci(_draw_coefs(X, Y, grouping, s, 0, rng), s.level)}


def finish_rows(rows: list[dict[str, Any]], jobs: list[tuple], results: Sequence[Any],
                s: ItemSettings) -> list[dict[str, Any]]:  # fmt: skip
    """The planned rows completed with their jobs' results (:func:`plan_rows`): a row's crossed test and
    interval, its bootstrap CIs."""
    for (ri, _), res in zip(jobs, results):
        rows[ri].update(res)
    return rows


JOB_CHUNKS = 8  # jobs go to the executor in this many chunks (a few per worker: balance without many round trips)


def _call(job: tuple) -> Any:
    return job[0](*job[1:])


def _call_all(jobs: list[tuple]) -> list:
    return [_call(j) for j in jobs]


def run_jobs(jobs: Sequence[tuple], map: Mapper | None = None) -> list:
    """Each planned job's result (``(index, (function, *args))``), in order: through ``map`` (an
    executor's, in :data:`JOB_CHUNKS` chunks of consecutive jobs) when given, else here. Each job
    seeds its own generator, so results never depend on where it runs."""
    calls = [job for _, job in jobs]
    if map is None or len(calls) < 2:
        return _call_all(calls)
    n = min(JOB_CHUNKS, len(calls))
    bounds = [len(calls) * i // n for i in range(n + 1)]
    return [r for part in map(_call_all, [calls[a:b] for a, b in zip(bounds, bounds[1:])]) for r in part]


def swap_bits(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Independent fair coin flips (bool array of ``shape``): the bits of the generator's random
    bytes, one per cell (8x fewer draws than comparing a float with 0.5)."""
    n = int(np.prod(shape))
    return np.unpackbits(np.frombuffer(rng.bytes((n + 7) // 8), np.uint8), count=n).reshape(shape).view(bool)


def item_verdicts(mats: Sequence[ItemMatrix], rows: Sequence[Mapping[str, Any]], lower: Sequence[str],
                  s: ItemSettings, seed: int, map: Mapper | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Per (item kind, target), ``within`` grouping: metrics ranked, every pair tested by the crossed test of
    their Δτ (:func:`crossed_pair_test`), p adjusted per family (``s.family``: each target's pairs, or all),
    clusters, and the answer in words."""
    plan, jobs = plan_verdicts(mats, rows, lower, s, seed)
    return finish_verdicts(plan, jobs, run_jobs(jobs, map), rows, lower, s, map)


@dataclass(frozen=True)
class PairPlan:
    """The verdicts to build: per (item kind, target) its ranking, and its pairs of metrics (verdict, a, b)."""

    verdicts: list[tuple[ItemMatrix, str, list[str]]]
    pairs: list[tuple[int, str, str]]
    systems: int


def plan_verdicts(mats: Sequence[ItemMatrix], rows: Sequence[Mapping[str, Any]], lower: Sequence[str],
                  s: ItemSettings, seed: int) -> tuple[PairPlan, list[tuple]]:  # fmt: skip
    """The metrics' ranking per (item kind, target) from the ``within`` rows' coefficients, and one job per (item
    kind, target) with tested pairs (``(pair indices, job)``): their crossed tests (:func:`crossed_pair_tests`, no
    random draws; ``seed`` is not used by them)."""
    sign = lambda name: -1.0 if name in lower else 1.0  # noqa: E731
    verdicts, pairs, jobs = [], [], []
    for m in mats:
        for y, Y in m.y.items():
            taus = {r["mt_metric"]: r["tau"] for r in rows
                    if r["items"] == m.items and r["target"] == y and r["grouping"] == VERDICT_GROUPING}
            order = ranking(taus, lower)
            verdicts.append((m, y, order))
            tested: list[int] = []
            for i, a in enumerate(order):
                for b in order[i + 1:]:
                    if s.permutation > 0 and not (discrete_scales(m.x[a], Y) or discrete_scales(m.x[b], Y)):
                        tested.append(len(pairs))
                    pairs.append((len(verdicts) - 1, a, b))
            if tested:  # one job per verdict: each metric's coefficients computed once for its pairs
                used = dict.fromkeys(x for k in tested for x in pairs[k][1:])
                jobs.append((tested, (crossed_pair_tests, {x: sign(x) * m.x[x] for x in used},
                                      [pairs[k][1:] for k in tested], Y, s)))
    return PairPlan(verdicts, pairs, max((len(m.systems) for m in mats), default=0)), jobs


def crossed_pair_test(Xa: np.ndarray, Xb: np.ndarray, Y: np.ndarray, s: ItemSettings
                      ) -> tuple[float | None, float | None, list[float] | None]:  # fmt: skip
    """One pair of metrics (oriented: higher = better) on the ``within`` grouping: (Δτ = within τ(a) − within τ(b)
    on the cells defined in all three, two-sided p, ``s.level`` interval of Δτ). The per-item differences'
    crossed variance (:func:`crossed_moments`: systems and items both random, so a Δτ carried by a few systems
    or items is not taken for an effect), t = Δτ / se with Satterthwaite's degrees of freedom; the interval is
    Δτ ± t·se, so it holds 0 exactly when p ≥ 1 − level. (Δτ, None, None) with fewer than 4 systems."""
    keep = ~(np.isnan(Xa) | np.isnan(Xb) | np.isnan(Y))
    return _pair_result(*_within_loo(Xa, Y, keep, s), *_within_loo(Xb, Y, keep, s), s)


def crossed_pair_tests(Xs: Mapping[str, np.ndarray], pairs: Sequence[tuple[str, str]], Y: np.ndarray,
                       s: ItemSettings) -> list[tuple[float | None, float | None, list[float] | None]]:  # fmt: skip
    """:func:`crossed_pair_test` of each pair (a, b) of the metrics ``Xs`` (oriented: higher = better) against
    ``Y``, in order: each metric's per-item coefficients (and those with each system left out) are computed once
    per set of cells a pair uses, not once per pair (the same numbers)."""
    memo: dict[tuple[str, bytes], tuple[np.ndarray, np.ndarray]] = {}

    def coefs(x: str, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = (x, keep.tobytes())
        if key not in memo:
            memo[key] = _within_loo(Xs[x], Y, keep, s)
        return memo[key]

    out = []
    for a, b in pairs:
        keep = ~(np.isnan(Xs[a]) | np.isnan(Xs[b]) | np.isnan(Y))
        out.append(_pair_result(*coefs(a, keep), *coefs(b, keep), s))
    return out


def _within_loo(X: np.ndarray, Y: np.ndarray, keep: np.ndarray, s: ItemSettings) -> tuple[np.ndarray, np.ndarray]:
    """:func:`loo_system_coefs` of the ``within`` values (:func:`system_centred`) of X against Y on the cells ``keep``."""
    Yk = np.where(keep, Y, np.nan)
    return loo_system_coefs(*system_centred(np.where(keep, X, np.nan), Yk), s.method, s.variant)


def _pair_result(ca: np.ndarray, la: np.ndarray, cb: np.ndarray, lb: np.ndarray, s: ItemSettings
                 ) -> tuple[float | None, float | None, list[float] | None]:  # fmt: skip
    """:func:`crossed_pair_test`'s result from the two metrics' per-item coefficients and leave-one-system-out ones."""
    ta, tb = _mean(ca), _mean(cb)
    if ta is None or tb is None:
        return None, None, None
    m = crossed_moments(ca - cb, la - lb)
    delta = ta - tb
    if m is None:
        return delta, None, None
    if m.var <= 0:
        return delta, (0.0 if m.est != 0 else 1.0), [m.est, m.est]
    sd, q = math.sqrt(m.var), t_ppf(1 - (1 - s.level) / 2, m.df)
    return delta, float(crossed_p(m.est, m.var, m.df, False)), [m.est - q * sd, m.est + q * sd]


PAIR_TEST = ("crossed test of the within-τ difference: per item the two metrics' within-item τ difference, its "
             "mean's variance for systems and items both random (jackknife over systems plus the items' variance, "
             "the interaction counted once), t with Satterthwaite's degrees of freedom, two-sided; no random draws")


def _families(plan: PairPlan, tested: Sequence[int], s: ItemSettings) -> list[list[int]]:
    if s.family == "all":
        return [list(tested)]
    return [[k for k in tested if plan.pairs[k][0] == v] for v in range(len(plan.verdicts))]


def finish_verdicts(plan: PairPlan, jobs: list[tuple], results: Sequence[tuple], rows: Sequence[Mapping[str, Any]],
                    lower: Sequence[str], s: ItemSettings, map: Mapper | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """The verdicts of :func:`plan_verdicts` from their pairs' crossed tests (``jobs``/``results``): p adjusted
    per family with ``s.correction``, a pair significant where its adjusted p is below α (and its interval
    excludes 0), clusters (mt-metrics-eval's ``AssignRanks``) and answers. ``map`` is unused (no second round)."""
    n = len(plan.pairs)
    res: dict[int, tuple] = {k: r for (ks, _), rs in zip(jobs, results) for k, r in zip(ks, rs)}
    delta = [res[k][0] if k in res else None for k in range(n)]
    p = [res[k][1] if k in res else None for k in range(n)]
    ci = [res[k][2] if k in res else None for k in range(n)]
    tested = [k for k in range(n) if p[k] is not None]
    adjusted: dict[int, float] = {}
    for fam in _families(plan, tested, s):
        if fam:
            adjusted.update(zip(fam, adjust([p[k] for k in fam], s.correction)))
    test = PAIR_TEST if s.permutation > 0 else NOT_TESTED
    out = []
    for vi, (m, y, order) in enumerate(plan.verdicts):
        pairwise = []
        for k, (pv, a, b) in enumerate(plan.pairs):
            if pv != vi:
                continue
            pa = adjusted.get(k)
            holds0 = ci[k] is not None and ci[k][0] <= 0 <= ci[k][1]
            pairwise.append({"a": a, "b": b, "delta": delta[k], "p_value": p[k], "p_adjusted": pa,
                             "significant": pa is not None and pa < s.alpha and not holds0, "ci_crossed": ci[k],
                             "draws": 0, "settled": True,
                             **({"untested_reason": STEP_UNTESTED} if s.permutation > 0 and any(
                                 discrete_scales(m.x[x], m.y[y]) for x in (a, b)) else {})})
        groups = clusters(order, {(r["a"], r["b"]): r["p_adjusted"] if r["significant"] or r["p_adjusted"] is None
                                  or r["p_adjusted"] >= s.alpha else 1.0 for r in pairwise}, s.alpha)
        mine = {r["mt_metric"]: r for r in rows
                if r["items"] == m.items and r["target"] == y and r["grouping"] == VERDICT_GROUPING}
        winner = groups[0][0] if groups and len(groups[0]) == 1 and len(order) > 1 else None
        out.append({
            "items": m.items, "grouping": VERDICT_GROUPING, "target": y, "ranking": order, "clusters": groups,
            "winner": winner, "pairwise": pairwise, "test": test, "p_method": "crossed",
            "correction": s.correction, "family": s.family, "alpha": s.alpha, "resolution": s.resolution,
            "exact": False, "p_floor": None, "unsettled": 0,
            "n_items": max((r["n_items"] for r in mine.values()), default=0),
            "n_systems": max((r["n_systems"] for r in mine.values()), default=0),
            "answer": _answer(m.items, y, order, groups, winner, mine, lower, s, pairwise),
        })
    return out


DISCRETE_LEVELS = 20  # a matrix with at most this many distinct values is a discrete scale (e.g. P@10)
STEP_UNTESTED = ("not tested: both scales are step-valued (the metric and the target each take at most "
                 f"{DISCRETE_LEVELS} distinct values): system-centring cannot remove overall quality; the within τ "
                 "is descriptive here")
DISCRETE_NOTE = ("; not tested for {which}: both scales are step-valued, so system-centring cannot remove overall "
                 "quality (about +0.01 to +0.02 of within τ in simulations with none within items); the within τ is "
                 "descriptive here, and so is any comparison with it")


def discrete_scales(X: np.ndarray, Y: np.ndarray) -> bool:
    """Whether both the metric and the target take at most :data:`DISCRETE_LEVELS` distinct values on the cells
    the ``within`` grouping uses (there, and only there, its null simulations found overall quality leaking in)."""
    v = _varying(Y)
    keep = ~(np.isnan(X) | np.isnan(Y)) & v[None]
    return bool(keep.any()) and all(len(np.unique(M[keep])) <= DISCRETE_LEVELS for M in (X, Y))


def _answer(items: str, y: str, order: Sequence[str], groups, winner, mine: Mapping[str, Mapping[str, Any]],
            lower: Sequence[str], s: ItemSettings, pairwise: Sequence[Mapping[str, Any]] = ()) -> str:
    """:func:`_answer_line`, with a sentence where a metric's scale and the target's are both discrete
    (:func:`discrete_scales`): what the within τ then counts."""
    line = _answer_line(items, y, order, groups, winner, mine, lower, s, pairwise)
    which = [x for x in order if mine[x].get("discrete_scales")]
    return line + DISCRETE_NOTE.format(which=", ".join(which)) if which else line


def _answer_line(items: str, y: str, order: Sequence[str], groups, winner, mine: Mapping[str, Mapping[str, Any]],
                 lower: Sequence[str], s: ItemSettings, pairwise: Sequence[Mapping[str, Any]] = ()) -> str:
    """One line on the ``within`` component: which metric tells on which items a system does worse than its
    own average, or how tightly the CIs bound every metric. A metric is said to be above another only where
    that pair's adjusted p is below α."""
    # a run's item kinds are documents and queries; a table's (correlate --item-col) are its items
    unit, one = {"documents": ("documents", "document"), "queries": ("queries", "query")}.get(items, ("items", "item"))
    what = f"on which {unit} a system does worse than its own average"
    if not order:
        return f"{y} over {unit}: no metric has a defined within-{one} coefficient"
    sig = [x for x in order if mine[x].get("significant") and oriented(mine[x]["tau"], x, lower) > 0]
    cis = [mine[x].get("ci_crossed") for x in order]
    bound = max((max(abs(c[0]), abs(c[1])) for c in cis if c), default=None)
    zero_in_all = all(c and c[0] <= 0 <= c[1] for c in cis)
    above = [(r["a"], r["b"]) for r in pairwise if r.get("significant")]
    if winner is not None and winner in sig:
        below = [b for a, b in above if a == winner]
        rest = len(order) - 1 - len(below)
        return (f"{y} over {unit}: {winner} tells best {what} (within-{one} τ of system-centred scores "
                f"{mine[winner]['tau']:+.3f}; significantly above {', '.join(below)}"
                + (f"; not separated from {rest} other metric(s))" if rest else ")"))
    if zero_in_all and bound is not None:
        return (f"{y} over {unit}: no metric tells {what} beyond ±{bound:.3f} "
                f"(the {s.level:.0%} interval for systems and {unit} both random of every metric's within-{one} τ of "
                "system-centred scores contains 0)")
    if sig and above:
        pairs = ", ".join(f"{a} > {b}" for a, b in above)
        return (f"{y} over {unit}: {', '.join(groups[0])} rank first on telling {what}; the pairs separated "
                f"significantly: {pairs} (no other pair)")
    if sig:
        return (f"{y} over {unit}: {', '.join(sig)} tell {what} (within-{one} τ significant), but the metrics "
                f"cannot be separated")
    return (f"{y} over {unit}: no significant within-{one} correlation of system-centred scores, and the intervals "
            "are too wide to rule one out")


# --------------------------------------------------------------------------- correlate --item-col
def item_table_groups(table, xs: Sequence[str], ys: Sequence[str], item_col: str, system_col: str,
                      group_by: str | None, rounding: Mapping[str, int]) -> list[tuple[str | None, ItemMatrix]]:  # fmt: skip
    """A long table (one row per system and item) as one :class:`ItemMatrix` per ``group_by`` value;
    a (group, system, item) given twice is an error naming both lines; absent cells are NaN."""
    group_cols = [c.strip() for c in group_by.split(",") if c.strip()] if group_by else []
    for col in [*xs, *ys, item_col, system_col, *group_cols]:
        table.index(col)
    table.check_unique([*group_cols, system_col, item_col], "the (system, item) row")
    values = {c: table.numbers(c, rounding.get(c)) for c in dict.fromkeys([*xs, *ys])}
    systems_all, items_all = table.strings(system_col), table.strings(item_col)
    keys = ["/".join(v) for v in zip(*(table.strings(c) for c in group_cols))] if group_cols else [None] * len(table.rows)
    out = []
    for g in dict.fromkeys(keys):
        sel = [i for i, k in enumerate(keys) if k == g]
        systems = tuple(dict.fromkeys(systems_all[i].strip() for i in sel))
        items = tuple(dict.fromkeys(items_all[i].strip() for i in sel))
        sp, ip = {s: k for k, s in enumerate(systems)}, {s: k for k, s in enumerate(items)}

        def mat(col: str) -> np.ndarray:
            m = np.full((len(systems), len(items)), np.nan)
            for i in sel:
                m[sp[systems_all[i].strip()], ip[items_all[i].strip()]] = values[col][i]
            return m

        out.append((g, ItemMatrix(item_col, systems, items, {x: mat(x) for x in xs}, {y: mat(y) for y in ys})))
    return out


def correlate_item_table(groups: Sequence[tuple[str | None, ItemMatrix]], s: ItemSettings, lower: Sequence[str],
                         verdicts: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """``correlate --item-col``: rows (``group``, ``x``, ``y``, ``grouping``, τ, p, CIs, counts) and,
    with ``verdicts``, the ``item``-grouping verdicts per group and y (one family over all)."""
    rows, mats, raw = [], [], []
    for gi, (g, m) in enumerate(groups):
        rs = correlate_matrix(m, s, s.seed + 7919 * gi)
        raw.append(rs)
        mats.append(m)
        for r in rs:
            rows.append({"group": g, "x": r["mt_metric"], "y": r["target"], "grouping": r["grouping"],
                         **{k: v for k, v in r.items() if k not in ("mt_metric", "target", "grouping", "items")},
                         "n": r["n_cells"], "method": s.method, "variant": s.variant, "alpha": s.alpha})
    vds: list[dict[str, Any]] = []
    if verdicts:
        tagged = [ItemMatrix(f"{gi}", m.systems, m.ids, m.x, m.y) for gi, m in enumerate(mats)]
        flat = [{**r, "items": f"{gi}"} for gi, rs in enumerate(raw) for r in rs]
        for v in item_verdicts(tagged, flat, lower, s, s.seed + 1):
            gi = int(v.pop("items"))
            vds.append({"group": groups[gi][0], "y": v["target"], **v})
    return rows, vds
