"""clir_eval.correlation.kendall gives scipy.stats.kendalltau's floats (τ-b, τ-c, exact and asymptotic
p-values) without importing scipy.stats: compared float for float with scipy (the reference) on random
rankings with and without ties, small and large n."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.stats

from clir_eval.correlation import kendall
from clir_eval.correlation.significance import kendall_exact_p, permutation_with_inversions


def same(a: float, b: float) -> bool:
    """Equal floats (NaN equal to NaN), bit for bit."""
    return (math.isnan(a) and math.isnan(b)) or a == b


def reference(x, y, variant: str, method: str) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = scipy.stats.kendalltau(x, y, variant=variant, method=method)
    return float(res.statistic), float(res.pvalue)


def outcome(f, *args):
    """f's (τ, p), or the type of what it raised (scipy's asymptotic variance divides by n - 2: n = 2 raises)."""
    try:
        return f(*args)
    except ZeroDivisionError as e:
        return type(e).__name__


def random_pair(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two columns of n values: continuous, or drawn from a few levels (ties), or one derived from the other."""
    kind = int(rng.integers(0, 4))
    if kind == 0:
        x, y = rng.random(n), rng.random(n)
    elif kind == 1:
        k = int(rng.integers(1, 6))
        x, y = rng.integers(0, k, n).astype(float), rng.integers(0, 2 * k, n).astype(float)
    elif kind == 2:
        x = rng.random(n)
        y = x + rng.normal(0, float(rng.choice([0.01, 0.3, 3.0])), n)
    else:
        x = np.round(rng.normal(size=n), 1)
        y = np.round(-x + rng.normal(0, 0.5, n), 1)
    return x, y


@pytest.mark.parametrize("seed", range(5))
def test_tau_and_p_equal_scipy_on_random_columns(seed):
    rng = np.random.default_rng(seed)
    checked = {"exact": 0, "asymptotic": 0, "tied": 0}
    for _ in range(80):
        n = int(rng.choice([int(rng.integers(0, 12)), int(rng.integers(12, 60)), int(rng.integers(60, 250))]))
        x, y = random_pair(rng, n)
        tied = len(np.unique(x)) < n or len(np.unique(y)) < n
        checked["tied"] += tied
        for variant in ("b", "c"):
            methods = ["auto", "asymptotic"] + ([] if tied else ["exact"])
            for method in methods:
                ours, ref = outcome(kendall.kendalltau, x, y, variant, method), outcome(reference, x, y, variant, method)
                if isinstance(ref, str):
                    assert ours == ref and n == 2, (n, ours, ref)
                    continue
                assert same(ours[0], ref[0]) and same(ours[1], ref[1]), (n, variant, method, ours, ref, x, y)
                if method != "auto" and not math.isnan(ref[1]):
                    checked[method] += 1
    assert min(checked.values()) > 20, checked


def test_exact_p_equals_scipy_at_every_discordant_count_and_large_n():
    """Every discordant count for n <= 9; the scaled recursion above 170 items; c = 0, 1 and the centre."""
    for n in range(1, 10):
        for d in range(n * (n - 1) // 2 + 1):
            y = permutation_with_inversions(n, d)
            ref = reference(np.arange(n), y, "b", "exact")
            ours = kendall.kendalltau(np.arange(n), y, "b", "exact")
            assert same(ours[0], ref[0]) and same(ours[1], ref[1]), (n, d)
    rng = np.random.default_rng(3)
    for n in (33, 34, 60, 170, 171, 172, 250):
        pairs = n * (n - 1) // 2
        for d in (0, 1, 2, pairs // 2, pairs // 3, int(rng.integers(0, pairs + 1)), pairs - 1, pairs):
            y = permutation_with_inversions(n, d)
            ref = reference(np.arange(n), y, "b", "exact")
            assert same(kendall.p_value(kendall.untied(n, d), "exact"), ref[1]), (n, d)
            assert same(kendall.statistic(kendall.untied(n, d)), ref[0]), (n, d)
            auto = "exact" if n <= kendall.EXACT_MAX_N else "asymptotic"
            assert same(kendall_exact_p(n, d), reference(np.arange(n), y, "b", auto)[1]), (n, d)


def test_integer_and_constant_inputs_as_scipy():
    cases = [([1, 2, 3], [3, 3, 3]), ([5, 5, 5, 5], [1, 2, 3, 4]), ([1], [2]), ([], []), ([1, 2], [2, 1]),
             ([0.0, -0.0, 1.0], [1.0, 2.0, 3.0]), ([1, 2, np.nan, 4], [4, 3, 2, 1])]
    for x, y in cases:
        for variant in ("b", "c"):
            ours, ref = kendall.kendalltau(x, y, variant), reference(x, y, variant, "auto")
            assert same(ours[0], ref[0]) and same(ours[1], ref[1]), (x, y, variant, ours, ref)


def test_exact_method_refuses_ties_and_unknown_names():
    with pytest.raises(ValueError, match="Ties found"):
        kendall.kendalltau([1, 1, 2], [1, 2, 3], "b", "exact")
    with pytest.raises(ValueError, match="variant"):
        kendall.kendalltau([1, 2, 3], [1, 2, 3], "x")
    with pytest.raises(ValueError, match="p method"):
        kendall.kendalltau([1, 2, 3], [1, 3, 2], "b", "permutation")


def test_the_module_does_not_import_scipy_stats():
    code = ("import sys\nfrom clir_eval.correlation import kendall\n"
            "print(kendall.kendalltau([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]), kendall.kendalltau(list(range(40)), [1, 0] * 20),"
            " 'scipy.stats' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "False", proc.stdout
