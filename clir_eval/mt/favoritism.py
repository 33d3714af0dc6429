"""Metric favoritism (Gowda et al. 2021 §4.1): which segments a corpus-level metric credits to one system over another.

The benefit of segment i to system h under metric M is δ_M(i; h) = M(h, y) − M(h^(−i), y^(−i)), the
corpus score minus the score of the corpus without segment i; the favoritism of M towards S over U on
segment i is δ_M(i; S) − δ_M(i; U). Leave-one-out scores come from sufficient statistics (corpus
totals minus the segment's row), so all n of them cost O(n) metric evaluations, and for MacroF/MicroF
only the types of segment i are re-scored (vectorised over all segments at once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from .base import MTMetric, collect_stats, totals
from .typebased import TypeFMetric, prf

__all__ = ["leave_one_out", "segment_deltas", "Favoritism", "favoritism", "top_segments", "favoritism_tables"]


def type_entries(stats) -> tuple[np.ndarray, ...]:
    """The (segment, type) pairs of a MacroF/MicroF statistics matrix where the segment predicts or
    references the type: rows, cols, and their PREDS, REFS, MATCH counts."""
    stats = lazylibs.scipy_sparse().csr_array(stats)
    V = (stats.shape[1] - 2) // 3
    blocks = [stats[:, 2 + b * V:2 + (b + 1) * V].tocsr() for b in range(3)]
    union = (blocks[0] + blocks[1]).tocoo()
    rows, cols = union.row, union.col
    pv, rv, mv = (np.asarray(b[rows, cols], dtype=np.float64).ravel() for b in blocks)
    return rows, cols, pv, rv, mv


def _typef_leave_one_out(metric: TypeFMetric, stats) -> np.ndarray:
    n, width = stats.shape
    V = (width - 2) // 3
    tot = np.asarray(stats.sum(axis=0), dtype=np.float64).ravel()
    P, R, Mt = tot[2:2 + V], tot[2 + V:2 + 2 * V], tot[2 + 2 * V:]
    beta = metric.params["beta"]
    _, _, f = prf(P, R, Mt, beta)
    w = metric._weights(R) * ((P + R) > 0)
    num0, den0 = float((f * w).sum()), float(w.sum())
    rows, cols, pv, rv, mv = type_entries(stats)
    p2, r2, m2 = P[cols] - pv, R[cols] - rv, Mt[cols] - mv
    _, _, f2 = prf(p2, r2, m2, beta)
    w2 = metric._weights(r2) * ((p2 + r2) > 0)
    dnum = np.bincount(rows, weights=f2 * w2 - f[cols] * w[cols], minlength=n)
    dden = np.bincount(rows, weights=w2 - w[cols], minlength=n)
    den = den0 + dden
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 100.0 * (num0 + dnum) / np.where(den > 0, den, 1), 0.0)


def leave_one_out(metric: MTMetric, stats) -> np.ndarray:
    """For every segment i, the corpus score of the test set without segment i."""
    if isinstance(metric, TypeFMetric):
        return _typef_leave_one_out(metric, stats)
    arr = np.asarray(stats)
    tot = totals(arr)
    return np.array([metric.score_totals(tot - row)[0] for row in arr], dtype=np.float64)


def segment_deltas(metric: MTMetric, stats) -> tuple[float, np.ndarray]:
    """The corpus score and δ(i) = score − score without segment i, for every segment."""
    full = float(metric.score_from_stats(stats))
    return full, full - leave_one_out(metric, stats)


@dataclass(frozen=True)
class Favoritism:
    """Per-segment δ of systems A and B and the favoritism δ_A − δ_B, on the metric's own scale."""

    metric: str
    score_a: float
    score_b: float
    delta_a: np.ndarray
    delta_b: np.ndarray

    @property
    def values(self) -> np.ndarray:
        return self.delta_a - self.delta_b

    def entry(self, i: int) -> dict[str, Any]:
        return {"segment": int(i), "favoritism": float(self.values[i]), "delta_a": float(self.delta_a[i]),
                "delta_b": float(self.delta_b[i])}


def favoritism(metric: MTMetric, stats_a, stats_b) -> Favoritism:
    """Favoritism of ``metric`` towards system A over system B on every segment."""
    if stats_a.shape[0] != stats_b.shape[0]:
        raise UserError(f"favoritism needs line-aligned systems: A has {stats_a.shape[0]} segments, B {stats_b.shape[0]}")
    sa, da = segment_deltas(metric, stats_a)
    sb, db = segment_deltas(metric, stats_b)
    return Favoritism(metric.name, sa, sb, da, db)


def top_segments(values: np.ndarray, k: int) -> list[int]:
    """Indices of the k largest |values|, ties broken by segment index (ascending)."""
    order = np.lexsort((np.arange(len(values)), -np.abs(values)))
    return [int(i) for i in order[:k]]


def favoritism_tables(metrics: Sequence[MTMetric], hyps_a: Sequence[str], hyps_b: Sequence[str], refs,
                      src: Sequence[str] | None, top: int) -> tuple[dict[str, tuple[float, float]], dict[str, list[dict[str, Any]]]]:
    """Per metric: (corpus score of A, of B) and its top segments by |favoritism| with their texts,
    which other metrics' top lists hold them and whether this metric's list alone does."""
    stats_a = collect_stats(metrics, hyps_a, refs)
    stats_b = collect_stats(metrics, hyps_b, refs)
    favs = {m.name: favoritism(m, stats_a[m.name], stats_b[m.name]) for m in metrics}
    tops = {name: top_segments(f.values, top) for name, f in favs.items()}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, f in favs.items():
        rows = []
        for rank, i in enumerate(tops[name], 1):
            others = [o for o in tops if o != name and i in tops[o]]
            rows.append({**f.entry(i), "rank": rank, "also_top_in": others,
                         "only_this_metric": len(metrics) > 1 and not others,
                         **({"source": src[i]} if src is not None else {}),
                         "reference": refs[0][i], "hyp_a": hyps_a[i], "hyp_b": hyps_b[i]})
        out[name] = rows
    return {name: (f.score_a, f.score_b) for name, f in favs.items()}, out
