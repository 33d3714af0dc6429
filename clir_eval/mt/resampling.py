"""Resampling of MT metric statistics: bootstrap confidence intervals and paired bootstrap (Koehn 2004)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import lazylibs
from ..correlation.settings import CI_LEVEL
from ..errors import UserError
from ..settings import default
from ..stats import bias_corrected_interval
from .base import MTMetric, Refs
from .favoritism import leave_one_out
from .settings import SignificanceSettings


def _resample_weights(n_segments: int, n_samples: int, seed: int):
    """Per bootstrap sample, how often each segment was drawn (with replacement)."""
    rng = np.random.default_rng(seed)
    for _ in range(n_samples):
        yield np.bincount(rng.integers(0, n_segments, size=n_segments), minlength=n_segments)


def _weighted_totals(stats, w: np.ndarray) -> np.ndarray:
    if lazylibs.scipy_sparse().issparse(stats):
        return stats.T @ w
    return w @ np.asarray(stats)


def _n_rows(stats) -> int:
    return stats.shape[0]


def _check_resampling(stats, n_samples: int) -> int:
    if n_samples < 1:
        raise UserError(f"--bootstrap must be >= 1, got {n_samples}")
    n = _n_rows(stats)
    if n == 0:
        raise UserError("cannot bootstrap an empty corpus")
    return n


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap confidence interval of a corpus score (Efron & Tibshirani)."""

    score: float
    low: float
    high: float
    mean: float
    std: float
    n_samples: int
    seed: int
    level: float = CI_LEVEL
    bc_low: float | None = None
    bc_high: float | None = None
    bc_method: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {"ci_low": self.low, "ci_high": self.high, "bs_mean": self.mean, "bs_std": self.std,
               "bs_samples": self.n_samples, "seed": self.seed, "ci_level": self.level}
        if self.bc_method:
            out.update({"bs_bias": self.mean - self.score, "bc_low": self.bc_low, "bc_high": self.bc_high,
                        "bc_method": self.bc_method})
            if not self.low <= self.score <= self.high:
                out["ci_note"] = (f"the percentile CI excludes the score: resampling segments shifts this metric by "
                                  f"{self.mean - self.score:+.2f} on average (e.g. MacroF loses rare types); "
                                  f"the bias-corrected ({self.bc_method}) interval is [{self.bc_low:.2f}, {self.bc_high:.2f}]")
        return out


def bootstrap_ci(metric: MTMetric, stats, n_samples: int = default(SignificanceSettings, "bootstrap"),
                 seed: int = default(SignificanceSettings, "seed"),
                 level: float = CI_LEVEL) -> BootstrapCI:
    """Resample segments with replacement ``n_samples`` times; the CI is the
    ((1-level)/2, (1+level)/2) percentile range (numpy's linear interpolation) of the
    resampled corpus scores. ``bc_low``/``bc_high`` is the bias-corrected interval (BCa with the
    jackknife from leave-one-out scores; see :func:`clir_eval.stats.bias_corrected_interval`),
    which stays around the score when resampling biases the metric (MacroF/MicroF lose rare types)."""
    n = _check_resampling(stats, n_samples)
    scores = np.array([metric.score_totals(_weighted_totals(stats, w))[0]
                       for w in _resample_weights(n, n_samples, seed)])
    lo, hi = np.percentile(scores, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    score = metric.score_from_stats(stats)
    bc_lo, bc_hi, bc_method = bias_corrected_interval(score, scores, leave_one_out(metric, stats), level)
    return BootstrapCI(score, float(lo), float(hi), float(scores.mean()),
                       float(scores.std(ddof=1)) if n_samples > 1 else 0.0, n_samples, seed, level,
                       bc_lo, bc_hi, bc_method)


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired bootstrap resampling between systems A and B (Koehn 2004).

    ``win_a``/``win_b``/``tie``: fraction of resamples in which A (B) is better (by the
    metric's direction; lower is better for TER) or both are equal. ``p_value``: one-sided,
    (c + 1)/(k + 1) with c the resamples (of k) in which the system that is better on the full
    test set does not win (Koehn's "better with 1 - p confidence", never 0); 1.0 if the
    full-set scores are equal.
    """

    score_a: float
    score_b: float
    win_a: float
    win_b: float
    tie: float
    p_value: float
    better: str  # "a", "b" or "tie"
    n_samples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"score_a": self.score_a, "score_b": self.score_b, "delta": self.score_b - self.score_a,
                "better": self.better, "win_a": self.win_a, "win_b": self.win_b, "tie": self.tie,
                "p_value": self.p_value, "bs_samples": self.n_samples, "seed": self.seed}


def paired_bootstrap(metric: MTMetric, stats_a, stats_b, n_samples: int = default(SignificanceSettings, "bootstrap"),
                     seed: int = default(SignificanceSettings, "seed")) -> PairedBootstrap:
    """Paired bootstrap: the same resampled segment ids are scored for both systems.

    The statistics must come from the same test set (same rows). For MacroF/MicroF the two
    statistics matrices must be computed in one vocabulary: use :func:`paired_stats`.
    """
    n = _check_resampling(stats_a, n_samples)
    if _n_rows(stats_b) != n:
        raise UserError(f"paired bootstrap needs the same segments: system A has {n}, system B {_n_rows(stats_b)}")
    sign = 1.0 if metric.higher_is_better else -1.0
    wins_a = wins_b = ties = 0
    for w in _resample_weights(n, n_samples, seed):
        a = metric.score_totals(_weighted_totals(stats_a, w))[0]
        b = metric.score_totals(_weighted_totals(stats_b, w))[0]
        d = sign * (a - b)
        if d > 0:
            wins_a += 1
        elif d < 0:
            wins_b += 1
        else:
            ties += 1
    sa, sb = metric.score_from_stats(stats_a), metric.score_from_stats(stats_b)
    d = sign * (sa - sb)
    better = "a" if d > 0 else "b" if d < 0 else "tie"
    p = 1.0 if better == "tie" else (n_samples - (wins_a if better == "a" else wins_b) + 1) / (n_samples + 1)
    return PairedBootstrap(sa, sb, wins_a / n_samples, wins_b / n_samples, ties / n_samples, p, better,
                           n_samples, seed)


def paired_stats(metric: MTMetric, hyps_a: Sequence[str], hyps_b: Sequence[str], refs: Refs):
    """Segment statistics of two systems on the same references, column-compatible
    (MacroF/MicroF count both in one vocabulary; other metrics score each separately)."""
    return metric.paired_stats(hyps_a, hyps_b, refs)
