"""Rank-biased overlap (Webber, Moffat & Zobel 2010, "A similarity measure for indefinite
rankings", ACM TOIS 28(4)) of two rankings without ties, vectorised with numpy.

Notation of the paper: S is the shorter list (length s), L the longer (length l), X_d the
overlap of the two depth-d prefixes (a prefix longer than its list is the whole list).

- ``ext``: extrapolated point estimate, eq. 32 (handles unequal lengths; equals eq. 23
  when s == l). Agrees with PyPI ``rbo`` 0.1.3 ``RankingSimilarity(S, T).rbo_ext(p)``.
- ``min``: tight lower bound, eq. 11, evaluated to depth l with the observed overlaps, i.e.
  every unseen item is assumed disjoint (for s == l this is eq. 11 at k = s; it is the
  lower bound to which the eq. 30 residual is relative, so min <= ext <= min + res).
- ``res``: residual ``RBO_max - RBO_min``, eq. 30.

Empty lists follow the ``rbo`` package for ``ext`` (both empty -> 1, one empty -> 0); ``min``
takes the same values and ``res`` the complement (0 when both are empty, else 1).
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import repeat
from typing import Hashable, Mapping, Sequence

import numpy as np

VARIANTS = ("ext", "min", "res")
P = 0.98  # persistence of rbo (Webber et al. 2010; Lignos et al. 2019): the default of the measure and the functions here
VARIANT = "ext"  # extrapolated RBO: the default variant


@lru_cache(maxsize=32)
def _powers(p: float, n: int) -> np.ndarray:
    """p**d for d = 1..n (read-only, cached per p)."""
    out = np.power(p, np.arange(1, n + 1, dtype=np.float64))
    out.flags.writeable = False
    return out


def _grow_powers(p: float, n: int) -> np.ndarray:
    size = 1024
    while size < n:
        size *= 2
    return _powers(p, size)[:n]


def overlaps(pos_a: np.ndarray, pos_b: np.ndarray, length: int) -> np.ndarray:
    """X_d for d = 1..length from the 0-based positions of the common items in each list."""
    depth = np.maximum(pos_a, pos_b)  # item counts from depth max(i, j) + 1
    counts = np.bincount(depth, minlength=length)[:length]
    return np.cumsum(counts, dtype=np.float64)


def rbo_from_overlaps(X: np.ndarray, s: int, l: int, p: float, variant: str = VARIANT) -> float:
    """RBO given X_d (d = 1..l), the shorter length s and the longer length l (s, l >= 1)."""
    d = np.arange(1, l + 1, dtype=np.float64)
    pw = _grow_powers(p, l)
    c = (1.0 - p) / p
    if variant == "ext":  # eq. 32
        x_s, x_l = X[s - 1], X[l - 1]
        total = float(np.dot(X / d, pw))
        if l > s:
            tail = d[s:]
            total += x_s * float(np.dot((tail - s) / (s * tail), pw[s:]))
        return c * total + ((x_l - x_s) / l + x_s / s) * p**l
    if variant == "min":  # eq. 11 at depth l with observed overlaps
        x_l = X[l - 1]
        return c * (float(np.dot((X - x_l) / d, pw)) - x_l * math.log(1.0 - p))
    if variant == "res":  # eq. 30
        x_l = int(X[l - 1])
        f = l + s - x_l
        pf = _grow_powers(p, f)
        inv = pf / np.arange(1, f + 1, dtype=np.float64)  # p^d / d, d = 1..f
        term1 = s * float(inv[s:f].sum())
        term2 = l * float(inv[l:f].sum())
        term3 = x_l * (math.log(1.0 / (1.0 - p)) - float(inv.sum()))
        return p**s + p**l - p**f - c * (term1 + term2 + term3)
    raise ValueError(f"unknown RBO variant {variant!r}; use one of {', '.join(VARIANTS)}")


def _empty_case(n_a: int, n_b: int, variant: str) -> float | None:
    if n_a and n_b:
        return None
    if variant == "res":  # nothing seen of one list: everything is still open ...
        return 0.0 if not (n_a or n_b) else 1.0
    return 1.0 if not (n_a or n_b) else 0.0


def overlap_profile(
    ranking: Sequence[Hashable], ref_pos: Mapping[Hashable, int], ref_len: int
) -> tuple[np.ndarray | None, int, int]:
    """(X_d for d = 1..l, s, l) of ``ranking`` against the first ``ref_len`` items of a
    reference given as {item: 0-based position}; X is None when a list is empty."""
    n = len(ranking)
    s, l = (n, ref_len) if n <= ref_len else (ref_len, n)
    if not s:
        return None, n, ref_len
    pos_b = np.fromiter(map(ref_pos.get, ranking, repeat(-1)), dtype=np.int64, count=n)
    pos_a = np.flatnonzero((pos_b >= 0) & (pos_b < ref_len))
    return overlaps(pos_a, pos_b[pos_a], l), s, l


def rbo_from_profile(profile: tuple[np.ndarray | None, int, int], p: float, variant: str = VARIANT) -> float:
    X, a, b = profile
    if X is None:
        return _empty_case(a, b, variant)  # type: ignore[return-value]
    return rbo_from_overlaps(X, a, b, p, variant)


def rbo_positions(
    ranking: Sequence[Hashable], ref_pos: Mapping[Hashable, int], ref_len: int, p: float, variant: str = VARIANT
) -> float:
    """RBO of ``ranking`` against the first ``ref_len`` items of a reference given as
    {item: 0-based position} (fast path; positions >= ref_len are ignored)."""
    return rbo_from_profile(overlap_profile(ranking, ref_pos, ref_len), p, variant)


def rbo(a: Sequence[Hashable], b: Sequence[Hashable], p: float = P, variant: str = VARIANT, depth: int | None = None) -> float:
    """RBO of two rankings (lists of distinct items, best first), optionally cut at ``depth``.

    Both empty -> 1 (``res`` -> 0); exactly one empty -> 0 (``res`` -> 1).
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must be in (0, 1), got {p}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown RBO variant {variant!r}; use one of {', '.join(VARIANTS)}")
    if depth is not None:
        a, b = a[:depth], b[:depth]
    pos = {x: j for j, x in enumerate(b)}
    if len(pos) != len(b) or len(set(a)) != len(a):
        raise ValueError("RBO needs rankings without repeated items")
    return rbo_positions(a, pos, len(b), p, variant)
