"""clir_eval.stats' normal, t and beta quantiles, zscore and Benjamini-Hochberg give scipy.stats' floats (bit for
bit) without importing scipy.stats; scipy.stats is the reference here."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats

from clir_eval import stats


def same(a, b) -> bool:
    """Equal floats or arrays (NaN equal to NaN, and the sign of zero too)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


def probabilities(rng: np.random.Generator) -> list[float]:
    """Edges, levels the code uses, and random values spread over the log scale of both tails."""
    edges = [0.0, 1.0, 0.5, -0.1, 1.1, math.nan, 5e-324, 1e-300, 1 - 2**-53, 0.025, 0.975, 0.005, 0.995, 0.0005,
             0.9995, 0.05, 0.95, 0.9]
    tails = 10.0 ** -rng.uniform(0, 17, 300)
    return edges + tails.tolist() + (1 - tails).tolist() + rng.random(300).tolist()


def test_normal_quantile_and_cdf_equal_scipy():
    rng = np.random.default_rng(0)
    for q in probabilities(rng):
        assert same(stats.norm_ppf(q), scipy.stats.norm.ppf(q)), q
    xs = [0.0, -0.0, math.inf, -math.inf, math.nan, 40.0, -40.0, 1e-300] + rng.normal(0, 3, 500).tolist()
    for x in xs:
        assert same(stats.norm_cdf(x), scipy.stats.norm.cdf(x)), x
    assert same(stats.norm_ppf(np.float64(0.3)), scipy.stats.norm.ppf(np.float64(0.3)))


def test_t_quantile_and_survival_equal_scipy():
    rng = np.random.default_rng(1)
    dfs = [-1, 0, 0.5, 1, 2, 3, 7, 30, 1000, 1e6, math.inf, math.nan] + rng.integers(1, 200, 30).tolist()
    qs = probabilities(rng)[::7]
    xs = [0.0, math.inf, -math.inf, math.nan, 1e-8, 50.0] + rng.normal(0, 4, 40).tolist()
    for df in dfs:
        for q in qs:
            assert same(stats.t_ppf(q, df), scipy.stats.t.ppf(q, df)), (q, df)
        for x in xs:
            assert same(stats.t_sf(x, df), scipy.stats.t.sf(x, df)), (x, df)


def test_beta_quantile_equals_scipy_on_clopper_pearson_shapes():
    rng = np.random.default_rng(2)
    n = np.concatenate([np.arange(1, 40), rng.integers(1, 200_000, 2000)]).astype(float)
    c = np.floor(rng.random(len(n)) * (n + 1))
    c[:39] = rng.integers(0, 2, 39) * n[:39]  # all or none: a shape of 0 (NaN in both)
    for q in (5e-4, 0.9995, 0.025, 0.975, 0.3):
        for a, b in ((c, n - c + 1), (c + 1, n - c)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = scipy.stats.beta.ppf(q, a, b)
            assert same(stats.beta_ppf(q, a, b), ref), q
    with pytest.raises(ValueError):
        stats.beta_ppf(0.0, c, n)


def test_zscore_equals_scipy():
    rng = np.random.default_rng(3)
    cases = [np.array([1.0, 1.0, 1.0]), np.array([3.0, 3.0 + 1e-15, 3.0]), np.array([1e300, -1e300, 0.0]),
             np.array([0.1, 0.2, 0.3]), np.array([5.0]), np.array([1.0, np.nan, 2.0])]
    cases += [rng.normal(float(rng.normal(0, 100)), float(rng.choice([1e-6, 1.0, 1e6])), int(rng.integers(2, 60)))
              for _ in range(300)]
    cases += [np.round(rng.normal(30, 5, int(rng.integers(3, 30))), 1) for _ in range(100)]
    for x in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, ours = scipy.stats.zscore(x), stats.zscore(x)  # both overflow on 1e300 (RuntimeWarning)
        assert same(ours, ref), x


def test_benjamini_hochberg_equals_scipy():
    rng = np.random.default_rng(4)
    cases = [np.array([]), np.array([0.3]), np.array([0.5, 0.5]), np.array([0.0, 1.0, 0.01, 0.01, 0.04])]
    cases += [rng.random(int(rng.integers(2, 40))) ** 3 for _ in range(200)]
    cases += [np.round(rng.random(int(rng.integers(2, 40))), 2) for _ in range(100)]  # ties
    for p in cases:
        ref = scipy.stats.false_discovery_control(p, method="bh") if len(p) else p
        assert same(stats.adjust_p(p, "bh"), ref), p
    with pytest.raises(ValueError):
        stats.adjust_p([0.2, 1.5], "bh")
