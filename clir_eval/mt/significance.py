"""Paired significance tests between MT systems on one test set: approximate randomization, sign test, comparison with a baseline.

- **Paired approximate randomization** (sacrebleu ``--paired-ar``; Riezler & Maxwell 2005): in each of
  k trials every segment's statistics are swapped between the two systems with probability 1/2 (the
  same draws as sacrebleu for the same seed); the statistic is |M(A') − M(B')|; p = (c + 1)/(k + 1)
  with c the trials whose statistic is at least the observed |M(A) − M(B)| (sacrebleu counts only
  strictly larger ones; ``strict=True`` does the same).
- **Sign test** (Collins et al. 2005, as used by Chiang et al. 2008 §3.1): per segment, the metric's
  own score of that segment alone (its formula on the segment's statistics) decides a win, loss or
  tie; p is the two-sided exact binomial test of wins vs losses (ties dropped).
- p-values of a family of comparisons are adjusted with :func:`clir_eval.stats.adjust_p` (Holm or
  Benjamini-Hochberg).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import lazylibs
from ..errors import UserError
from ..settings import default
from ..stats import adjust_p
from .base import MTMetric, check_segment_memory, totals
from .favoritism import type_entries
from .recognition import RecognitionRateMetric
from .resampling import paired_bootstrap
from .settings import SignificanceSettings
from .typebased import TypeFMetric, prf

__all__ = ["PairedAR", "SignTest", "compare_to_baseline", "paired_ar", "sentence_scores", "sign_test"]

_CHUNK_CELLS = 2_000_000  # trials × statistic columns per vectorised block


def _check_pair(stats_a, stats_b) -> int:
    n = stats_a.shape[0]
    if stats_b.shape[0] != n:
        raise UserError(f"paired tests need the same segments: system A has {n}, system B {stats_b.shape[0]}")
    if n == 0:
        raise UserError("cannot test an empty corpus")
    return n


@dataclass(frozen=True)
class PairedAR:
    """Paired approximate randomization between A and B (two-sided)."""

    score_a: float
    score_b: float
    p_value: float
    count: int
    n_samples: int
    seed: int
    strict: bool

    def to_dict(self) -> dict[str, Any]:
        return {"p_value": self.p_value, "count": self.count, "ar_trials": self.n_samples, "seed": self.seed}


def paired_ar(metric: MTMetric, stats_a, stats_b, n_samples: int = default(SignificanceSettings, "ar_trials"),
              seed: int = default(SignificanceSettings, "seed"),
              strict: bool = False) -> PairedAR:
    """Approximate randomization with sacrebleu's swap draws; p = (c + 1)/(k + 1). The two statistics
    matrices must share columns (use ``metric.paired_stats`` for MacroF/MicroF)."""
    if n_samples < 1:
        raise UserError(f"--ar-trials must be >= 1, got {n_samples}")
    n = _check_pair(stats_a, stats_b)
    rng = np.random.default_rng(seed)
    sel = rng.integers(2, size=(n_samples, n), dtype=bool)  # sacrebleu: pos_sel (A's row goes to A')
    ta, tb = totals(stats_a).astype(np.float64), totals(stats_b).astype(np.float64)
    diff = (stats_a - stats_b) if lazylibs.scipy_sparse().issparse(stats_a) else np.asarray(stats_a, np.float64) - np.asarray(stats_b, np.float64)
    sa, sb = metric.score_totals(ta)[0], metric.score_totals(tb)[0]
    observed = abs(sa - sb)
    const = (0.0, 0.0)
    if isinstance(metric, TypeFMetric):
        diff, ta, tb, const = _active_types(metric, lazylibs.scipy_sparse().csc_array(diff), ta, tb)
    perm = np.empty(n_samples)
    chunk = max(1, _CHUNK_CELLS // max(1, diff.shape[1]))
    for start in range(0, n_samples, chunk):
        w = sel[start:start + chunk].astype(np.float64)
        moved = np.asarray((diff.T @ w.T).T) if lazylibs.scipy_sparse().issparse(diff) else w @ diff
        perm[start:start + len(w)] = np.abs(_scores(metric, tb + moved, const) - _scores(metric, ta - moved, const))
    tol = 1e-9 * max(1.0, observed)
    c = int((perm > observed + tol).sum()) if strict else int((perm >= observed - tol).sum())
    return PairedAR(float(sa), float(sb), (c + 1) / (n_samples + 1), c, n_samples, seed, strict)


def _typef_parts(metric: TypeFMetric, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Σ F·w and Σ w over the types present, per row of MacroF/MicroF statistic totals."""
    V = (rows.shape[-1] - 2) // 3
    p, r, m = rows[..., 2:2 + V], rows[..., 2 + V:2 + 2 * V], rows[..., 2 + 2 * V:]
    b2 = metric.params["beta"] ** 2
    den = b2 * r + p  # F_β = (1 + β²)·MATCH / (β²·REFS + PREDS), the reference's P/R form simplified
    present = den > 0  # (β > 0) the type occurs in the hypothesis or the reference
    f = (1 + b2) * m / np.where(present, den, 1.0)
    w = metric._weights(r) * present
    return (f * w).sum(axis=-1), w.sum(axis=-1)


def _active_types(metric: TypeFMetric, diff, ta, tb):
    """Keep only the types whose counts differ between A and B in some segment (the others score the
    same in every trial): reduced diff and totals, and the constant (Σ F·w, Σ w) of the rest."""
    V = (diff.shape[1] - 2) // 3
    nz = np.diff(diff.indptr) > 0
    active = nz[2:2 + V] | nz[2 + V:2 + 2 * V] | nz[2 + 2 * V:]
    idx = np.flatnonzero(active)
    cols = np.concatenate([[0, 1], 2 + idx, 2 + V + idx, 2 + 2 * V + idx])
    rest = np.flatnonzero(~active)
    rest_cols = np.concatenate([[0, 1], 2 + rest, 2 + V + rest, 2 + 2 * V + rest])
    num_c, den_c = _typef_parts(metric, ta[rest_cols])
    return diff[:, cols], ta[cols], tb[cols], (float(num_c), float(den_c))


def _scores(metric: MTMetric, rows: np.ndarray, const: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """Corpus scores for each row of a matrix of statistic totals (vectorised for MacroF/MicroF, whose
    types outside ``rows`` add the constant (Σ F·w, Σ w) ``const``)."""
    if isinstance(metric, TypeFMetric):
        num, den = _typef_parts(metric, rows)
        num, den = num + const[0], den + const[1]
        return np.where(den > 0, 100.0 * num / np.where(den > 0, den, 1), 0.0)
    return np.array([metric.score_totals(x)[0] for x in rows], dtype=np.float64)


def sentence_scores(metric: MTMetric, stats) -> np.ndarray:
    """Each segment's score under the metric's own formula applied to that segment alone."""
    if isinstance(metric, RecognitionRateMetric):
        return metric.sentence_scores(stats)
    if isinstance(metric, TypeFMetric):
        return _typef_sentence_scores(metric, stats)
    return np.array([metric.score_totals(np.asarray(row))[0] for row in np.asarray(stats)], dtype=np.float64)


def _typef_sentence_scores(metric: TypeFMetric, stats) -> np.ndarray:
    n = stats.shape[0]
    rows, _, p, r, m = type_entries(stats)
    _, _, f = prf(p, r, m, metric.params["beta"])
    w = metric._weights(r)
    num = np.bincount(rows, weights=f * w, minlength=n)
    den = np.bincount(rows, weights=w, minlength=n)
    return np.where(den > 0, 100.0 * num / np.where(den > 0, den, 1), 0.0)


@dataclass(frozen=True)
class SignTest:
    """Paired sign test over segments: A's wins, losses (B wins) and ties, exact binomial p."""

    wins: int
    losses: int
    ties: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return {"wins": self.wins, "losses": self.losses, "ties": self.ties, "p_value": self.p_value}


def sign_test(metric: MTMetric, stats_a, stats_b) -> SignTest:
    """Sign test of A against B by sentence-level scores (lower is better for TER)."""
    _check_pair(stats_a, stats_b)
    d = sentence_scores(metric, stats_a) - sentence_scores(metric, stats_b)
    if not metric.higher_is_better:
        d = -d
    tol = 1e-9
    wins, losses = int((d > tol).sum()), int((d < -tol).sum())
    ties = len(d) - wins - losses
    p = 1.0 if wins + losses == 0 else float(lazylibs.scipy_stats().binomtest(wins, wins + losses, 0.5).pvalue)
    return SignTest(wins, losses, ties, p)


def compare_to_baseline(metrics: Sequence[MTMetric], baseline: tuple[str, Sequence[str]],
                        systems: Sequence[tuple[str, Sequence[str]]], refs,
                        n_bootstrap: int = default(SignificanceSettings, "bootstrap"),
                        n_ar: int = default(SignificanceSettings, "ar_trials"), seed: int = default(SignificanceSettings, "seed"),
                        correction: str = default(SignificanceSettings, "correction"),
                        sources: Sequence[str] | None = None) -> dict[str, Any]:
    """Every system against the baseline on every metric: paired bootstrap (Koehn 2004), paired
    approximate randomization and the sign test, each with p-values adjusted over its family (all
    system × metric comparisons of that test). ``sources``: the source segments, for the metrics
    that read them (COMET)."""
    adjust_p([], correction)  # validate the name early
    for _, hyps in [baseline, *systems]:
        check_segment_memory(metrics, hyps, refs)
    rows: list[dict[str, Any]] = []
    base_name, base_hyps = baseline
    base_memo: dict[tuple, Any] = {}  # the baseline's statistics, computed once for all systems
    for name, hyps in systems:
        memo: dict[tuple, Any] = {}
        for m in metrics:
            key = m.stats_key()
            if key not in memo:
                if type(m).paired_stats is MTMetric.paired_stats:  # each system's statistics on their own
                    src = {"sources": sources} if m.uses_source else {}
                    if key not in base_memo:
                        base_memo[key] = m.segment_stats(base_hyps, refs, **src)
                    memo[key] = (base_memo[key], m.segment_stats(hyps, refs, **src))
                else:  # statistics over a vocabulary shared by the pair (MacroF/MicroF)
                    memo[key] = m.paired_stats(base_hyps, hyps, refs)
            sb, ss = memo[key]
            bs = paired_bootstrap(m, sb, ss, n_samples=n_bootstrap, seed=seed)
            ar = paired_ar(m, sb, ss, n_samples=n_ar, seed=seed)
            st = sign_test(m, ss, sb)
            better = {"a": "baseline", "b": "system", "tie": "tie"}[bs.better]
            rows.append({
                "system": name, "metric": m.name, "score_baseline": bs.score_a, "score_system": bs.score_b,
                "delta": bs.score_b - bs.score_a, "better": better,
                "bootstrap": {"p_value": bs.p_value, "win_system": bs.win_b, "win_baseline": bs.win_a, "tie": bs.tie},
                "ar": {"p_value": ar.p_value, "count": ar.count},
                "sign": st.to_dict(),
                "signature": m.signature(len(refs), bs=n_bootstrap, ar=n_ar, seed=seed),
            })
    for test in ("bootstrap", "ar", "sign"):
        adj = adjust_p([r[test]["p_value"] for r in rows], correction)
        for r, a in zip(rows, adj):
            r[test]["p_adjusted"] = float(a)
    return {"baseline": base_name, "systems": [n for n, _ in systems], "metrics": [m.name for m in metrics],
            "correction": correction, "family_size": len(rows), "bootstrap_samples": n_bootstrap,
            "ar_trials": n_ar, "seed": seed, "comparisons": rows}
