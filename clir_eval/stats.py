"""Small statistics shared by the MT, IR and correlation stages (no dependency on any of them):
p-value adjustment over a family of tests, the bias-corrected bootstrap interval, half-up rounding, and the
few ``scipy.stats`` functions the stages use on every run, computed as scipy.stats computes them.

- **scipy.stats without importing it** (1.3 CPU-s from a bare interpreter; 0.63 more than ``scipy.special``
  where numpy and scipy.sparse are loaded, docs/performance.md): :func:`norm_ppf`,
  :func:`norm_cdf`, :func:`t_ppf`, :func:`t_sf`, :func:`beta_ppf`, :func:`zscore` and Benjamini-Hochberg in
  :func:`adjust_p` call the ``scipy.special`` functions that scipy.stats' distributions call (``ndtri``,
  ``ndtr``, ``stdtrit``, ``stdtr``, ``betaincinv``) with scipy 1.17's handling of the bounds, or repeat its
  numpy operations (zscore, false_discovery_control): the same floats (tests/test_stats_scipy.py compares
  them with scipy.stats).

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
        return _bh(p)
    if method != "holm":
        raise UserError(f"unknown correction {method!r}; choose holm, bh or none")
    order = np.argsort(p, kind="stable")
    m = len(p)
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values, as ``scipy.stats.false_discovery_control(p, method="bh")``."""
    if not np.all(p == np.clip(p, 0.0, 1.0)):
        raise ValueError("`ps` must include only numbers between 0 and 1.")
    m = len(p)
    if m <= 1:
        return p.copy()
    order = np.argsort(p)
    ps = p[order] * (m / np.arange(1, m + 1, dtype=p.dtype))
    np.minimum.accumulate(ps[::-1], out=ps[::-1])
    out = np.empty_like(ps)
    out[order] = ps
    return np.clip(out, 0.0, 1.0)


def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)`` of a scalar: ∓inf at 0 and 1, NaN outside [0, 1]."""
    if not 0 <= q <= 1:
        return math.nan
    return float(lazylibs.scipy_special().ndtri(q)) + 0.0  # + loc as scipy adds it (-0.0 -> 0.0)


def norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)`` of a scalar."""
    return float(lazylibs.scipy_special().ndtr(x))


def t_ppf(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)`` of scalars: NaN unless df > 0 and 0 <= q <= 1."""
    if not (df > 0 and 0 <= q <= 1):
        return math.nan
    if q == 0 or q == 1:
        return -math.inf if q == 0 else math.inf
    return float(lazylibs.scipy_special().stdtrit(df, q)) + 0.0


def t_sf(x: float, df: float) -> float:
    """``scipy.stats.t.sf(x, df)`` of scalars: NaN unless df > 0."""
    if not df > 0 or math.isnan(x):
        return math.nan
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    return float(lazylibs.scipy_special().stdtr(df, -x))


def beta_ppf(q: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``scipy.stats.beta.ppf(q, a, b)`` for 0 < q < 1, elementwise over the shapes (NaN unless a, b > 0)."""
    if not 0 < q < 1:
        raise ValueError(f"q must be strictly between 0 and 1, got {q}")
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    ok = (a > 0) & (b > 0)
    with np.errstate(all="ignore"):
        return np.where(ok, lazylibs.scipy_special().betaincinv(np.where(ok, a, 1.0), np.where(ok, b, 1.0), q), np.nan)


def zscore(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.zscore(x)`` of a 1-D float array (population sd; NaN where the sd is within an epsilon of
    the mean's size), with scipy's operations in scipy's order."""
    x = np.asarray(x, np.float64)
    mn = np.mean(x, axis=0, keepdims=True)
    d = x - mn
    std = np.mean(d * d, axis=0, keepdims=True) ** 0.5
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (x - mn) / std
    z[np.broadcast_to(std <= np.abs(np.finfo(z.dtype).eps * mn), z.shape)] = np.nan
    return z


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
    z0 = norm_ppf(prop)
    dev = jackknife.mean() - jackknife
    den = 6.0 * (dev ** 2).sum() ** 1.5
    a = float((dev ** 3).sum() / den) if den > 0 else 0.0
    qs = []
    for q in (lo_q, hi_q):
        z = norm_ppf(q)
        qs.append(norm_cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
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
