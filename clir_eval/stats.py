"""Small statistics shared by the MT, IR and correlation stages (no dependency on any of them):
p-value adjustment over a family of tests, the bias-corrected bootstrap interval, half-up rounding.

- **Adjustment** over a family of tests: Holm (default) or Benjamini-Hochberg.
- **Bias-corrected bootstrap interval**: BCa (Efron 1987) with the jackknife acceleration taken from
  the leave-one-out scores; when every resample lies on one side of the score (BCa undefined),
  the percentile interval shifted by the bootstrap bias.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Sequence

import numpy as np

from . import lazylibs
from .errors import UserError


def adjust_p(pvalues: Sequence[float], method: str = "holm") -> np.ndarray:
    """Family-wise (Holm) or false-discovery-rate (Benjamini-Hochberg, ``bh``) adjusted p-values."""
    p = np.asarray(pvalues, dtype=np.float64)
    if method == "none" or len(p) == 0:
        return p.copy()
    if method == "bh":
        return lazylibs.scipy_stats().false_discovery_control(p, method="bh")
    if method != "holm":
        raise UserError(f"unknown correction {method!r}; choose holm, bh or none")
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def bias_corrected_interval(score: float, boot: np.ndarray, jackknife: np.ndarray,
                            level: float) -> tuple[float, float, str]:
    """(low, high, method): BCa from bootstrap scores and leave-one-out (jackknife) scores, or the
    bias-shifted percentile interval when all resamples fall on one side of ``score``."""
    boot = np.asarray(boot, dtype=np.float64)
    below = (boot < score).sum() + 0.5 * (boot == score).sum()
    prop = below / len(boot)
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    if prop <= 0 or prop >= 1:
        bias = boot.mean() - score
        lo, hi = np.percentile(boot, [100 * lo_q, 100 * hi_q])
        return float(lo - bias), float(hi - bias), "percentile-shifted"
    z0 = lazylibs.scipy_stats().norm.ppf(prop)
    dev = jackknife.mean() - jackknife
    den = 6.0 * (dev ** 2).sum() ** 1.5
    a = float((dev ** 3).sum() / den) if den > 0 else 0.0
    qs = []
    for q in (lo_q, hi_q):
        z = lazylibs.scipy_stats().norm.ppf(q)
        qs.append(lazylibs.scipy_stats().norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
    lo, hi = np.percentile(boot, [100 * qs[0], 100 * qs[1]])
    return float(lo), float(hi), "bca"


def round_half_up(value: float | None, ndigits: int) -> float | None:
    """Round to ``ndigits`` decimals with ties (.5) rounded away from zero, on the shortest
    decimal representation of the float (``repr``): 0.4565 -> 0.457, 2.675 -> 2.68,
    -0.5 -> -1.0. This is how a human or a spreadsheet rounds published scores, unlike
    Python's ``round`` (ties to even, on the binary value: round(2.675, 2) == 2.67).
    NaN/None pass through."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return value
    q = Decimal(1).scaleb(-ndigits)
    return float(Decimal(repr(float(value))).quantize(q, rounding=ROUND_HALF_UP))
