"""Property tests: agreement with scipy (coefficients and scipy's own method="auto"
p-value), brute-force pair counting for acc23, and ranges/invariances."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from clir_eval.correlation.statistics import correlate, pairwise_accuracy

vectors = st.integers(3, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 12), min_size=n, max_size=n),
        st.lists(st.integers(0, 12), min_size=n, max_size=n),
    )
)
distinct = st.integers(3, 45).flatmap(
    lambda n: st.tuples(st.permutations(list(range(n))), st.permutations(list(range(n))))
)


def _brute_acc(x, y):
    agree = sum(np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]) for i, j in itertools.combinations(range(len(x)), 2))
    return agree / (len(x) * (len(x) - 1) / 2)


@settings(max_examples=60, deadline=None)
@given(vectors)
def test_matches_scipy_auto(xy):
    x, y = xy
    c = correlate(x, y)
    ref = scipy.stats.kendalltau(x, y)  # method="auto"
    if c.tau is None:
        assert len(set(x)) == 1 or len(set(y)) == 1
        return
    assert -1 <= c.tau <= 1
    assert np.isclose(c.tau, ref.statistic)
    assert np.isclose(c.p_value, ref.pvalue)
    cc = correlate(x, y, variant="c")
    assert np.isclose(cc.tau, scipy.stats.kendalltau(x, y, variant="c").statistic)
    acc = correlate(x, y, variant="acc23").tau
    assert np.isclose(acc, _brute_acc(x, y))
    assert np.isclose(pairwise_accuracy(x, y), acc)


@settings(max_examples=40, deadline=None)
@given(distinct)
def test_no_ties_exact_up_to_33(xy):
    x, y = xy
    c = correlate(x, y)
    ref = scipy.stats.kendalltau(x, y)
    assert np.isclose(c.p_value, ref.pvalue)
    if len(x) <= 33:
        assert c.p_method == "exact"


@settings(max_examples=30, deadline=None)
@given(vectors)
def test_symmetric_and_monotone_invariant(xy):
    x, y = xy
    a, b = correlate(x, y), correlate(y, x)
    assert (a.tau is None) == (b.tau is None)
    if a.tau is not None:
        assert np.isclose(a.tau, b.tau)
        # a strictly increasing transform of x leaves tau unchanged
        assert np.isclose(correlate([v**3 + 7 for v in x], y).tau, a.tau)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.lists(
    st.tuples(st.integers(0, 5), st.floats(-3, 3, allow_nan=False)), min_size=n * 4, max_size=n * 4).map(
    lambda v: (n, v))))
def test_batched_coefficients_match_scipy(nv):
    """The vectorised draws (coef_batch) agree with per-draw scipy (pair_coef) for every method,
    on rows with ties, constant rows and duplicates."""
    from clir_eval.correlation.statistics import coef_batch, pair_coef

    n, v = nv
    X = np.array([a for a, _ in v], dtype=float).reshape(4, n)
    Y = np.round(np.array([b for _, b in v]), 1).reshape(4, n)
    for method, variant in [("kendall", "b"), ("kendall", "c"), ("kendall", "acc23"), ("pearson", None),
                            ("spearman", None)]:
        got = coef_batch(X, Y, method, variant)
        ref = np.array([pair_coef(X[i], Y[i], method, variant) for i in range(4)])
        assert np.allclose(got, ref, equal_nan=True, atol=1e-9), (method, variant, X, Y, got, ref)
