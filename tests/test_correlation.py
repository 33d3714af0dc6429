"""Hand-computed and reference cases for clir_eval.correlation.statistics.

Hand computations are written out in the comments; "mt-metrics-eval" values are copied
from google-research/mt-metrics-eval mt_metrics_eval/stats_test.py (expected values in its
unit tests: testKendallVariants, testKendallVariants_23, testKendall, testKendallC,
testPearson with average_by='none').
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from clir_eval.correlation.statistics import (
    Correlation,
    bootstrap_ci,
    correlate,
    pairwise_accuracy,
    permutation_sigdiff,
    query_bootstrap_ci,
    summarize,
)
from clir_eval.errors import UserError
from clir_eval.stats import round_half_up


# x=[1,2,3,4], y=[1,3,2,4]: 6 pairs, only (2,3) discordant -> con 5, dis 1.
# tau-b = (5-1)/6 = 2/3; tau-c = 2*4 / (4^2 * (4-1)/4) = 8/12 = 2/3; acc23 = 5/6.
# Exact two-sided p: #inversions of 4 items ~ 1,3,5,6,5,3,1 (out of 24);
# P(dis <= 1) + P(dis >= 5) = (1+3+3+1)/24 = 1/3.
def test_no_ties_hand():
    c = correlate([1, 2, 3, 4], [1, 3, 2, 4])
    assert c.tau == pytest.approx(2 / 3)
    assert c.p_value == pytest.approx(1 / 3)
    assert c.p_method == "exact"
    assert c.significant is False
    assert c.n == 4 and c.reason is None
    assert correlate([1, 2, 3, 4], [1, 3, 2, 4], variant="c").tau == pytest.approx(2 / 3)
    assert correlate([1, 2, 3, 4], [1, 3, 2, 4], variant="acc23").tau == pytest.approx(5 / 6)
    assert pairwise_accuracy([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(5 / 6)


# x=[1,1,2,3], y=[1,2,2,3]: pairs (0,1) tie in x only, (1,2) tie in y only, 4 concordant.
# tau-b = 4 / sqrt((6-1)(6-1)) = 0.8; tau-c = 2*4 / (16 * (3-1)/3) = 0.75; acc23 = 4/6.
# Asymptotic p: var = (12*13 - 18 - 18)/18 + 2*1*1/12 + 0 = 41/6 ; z = 4/sqrt(41/6);
# p = erfc(z/sqrt 2).
def test_ties_hand():
    x, y = [1, 1, 2, 3], [1, 2, 2, 3]
    b = correlate(x, y)
    assert b.tau == pytest.approx(0.8)
    assert b.p_method == "asymptotic"
    z = 4 / math.sqrt(41 / 6)
    assert b.p_value == pytest.approx(math.erfc(z / math.sqrt(2)))
    c = correlate(x, y, variant="c")
    assert c.tau == pytest.approx(0.75)
    assert c.p_value == pytest.approx(b.p_value)  # same test statistic
    acc = correlate(x, y, variant="acc23")
    assert acc.tau == pytest.approx(4 / 6)
    assert acc.p_value is None and acc.significant is None and "p-value" in acc.reason


def test_tied_in_both_counts_as_agreement():
    # x=[1,1,2], y=[5,5,6]: (0,1) tied in both, 2 concordant -> acc23 = 1, tau-b = 2/sqrt(2*2) = 1
    assert pairwise_accuracy([1, 1, 2], [5, 5, 6]) == 1.0
    assert correlate([1, 1, 2], [5, 5, 6]).tau == pytest.approx(1.0)


def test_mt_metrics_eval_kendall_variants():
    gold, metric = [1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3]
    assert correlate(gold, metric, variant="b").tau == pytest.approx(0.316227766)
    assert correlate(gold, metric, variant="c").tau == pytest.approx(0.32)
    assert correlate(gold, metric, variant="acc23").tau == pytest.approx(0.6)
    # testKendallVariants_23: con 13, tie-both 1 of 21 pairs
    assert correlate([1, 1, 1, 2, 2, 3, 4], [1, 1, 2, 2, 4, 3, 3], variant="acc23").tau == pytest.approx(14 / 21)


def test_mt_metrics_eval_average_none():
    g, m = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 3, 7]
    assert round(correlate(g, m).tau, 3) == 0.552
    assert round(correlate(g, m, variant="c").tau, 3) == 0.556
    assert round(correlate(g, m, method="pearson").tau, 3) == 0.776


# x=[1,2,3], y=[1,2,4]: dx=[-1,0,1], dy=[-4/3,-1/3,5/3]; r = 3/sqrt(2*42/9) = 9/sqrt(84)
def test_pearson_spearman_hand():
    p = correlate([1, 2, 3], [1, 2, 4], method="pearson")
    assert p.tau == pytest.approx(9 / math.sqrt(84))
    assert p.variant is None and p.method == "pearson" and p.p_method == "t-test"
    s = correlate([1, 2, 3, 4], [1, 3, 2, 4], method="spearman")
    # ranks identical to values: rho = 1 - 6*sum d^2/(n(n^2-1)) = 1 - 6*2/60 = 0.8
    assert s.tau == pytest.approx(0.8)


def test_exact_n3_perfect():
    c = correlate([1, 2, 3], [10, 20, 30])
    assert c.tau == pytest.approx(1.0)
    assert c.p_value == pytest.approx(1 / 3)  # 2 * 1/3!


@pytest.mark.parametrize(
    "x,y,n,reason",
    [
        ([1, 2], [1, 2], 2, "fewer than 3"),
        ([], [], 0, "fewer than 3"),
        ([1, 1, 1], [1, 2, 3], 3, "x is constant"),
        ([1, 2, 3], [4, 4, 4], 3, "y is constant"),
        ([1, 2, float("nan"), 4], [1, None, 3, 4], 2, "fewer than 3"),
    ],
)
@pytest.mark.parametrize("method", ["kendall", "pearson", "spearman"])
def test_undefined_is_null_with_reason(x, y, n, reason, method):
    c = correlate(x, y, method=method)
    assert c.tau is None and c.p_value is None and c.significant is None
    assert c.n == n
    assert reason in c.reason


def test_missing_pairs_dropped():
    c = correlate([1, 2, None, 3, 4], [1, 3, 9, 2, float("nan")])
    assert c.n == 3
    assert c.tau == pytest.approx(correlate([1, 2, 3], [1, 3, 2]).tau)


def test_alpha_threshold():
    c = correlate([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], alpha=0.01)
    # exact two-sided p = 2/720
    assert c.p_value == pytest.approx(2 / 720)
    assert c.significant is True
    assert correlate([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], alpha=0.002).significant is False


def test_bad_method_variant():
    with pytest.raises(UserError, match="unknown correlation method"):
        correlate([1, 2, 3], [1, 2, 3], method="kendal")
    with pytest.raises(UserError, match="variant"):
        correlate([1, 2, 3], [1, 2, 3], variant="a")


def test_correlation_is_frozen_and_signed():
    c = correlate([1, 2, 3, 4], [1, 3, 2, 4])
    assert isinstance(c, Correlation)
    with pytest.raises(Exception):
        c.tau = 0.0  # type: ignore[misc]
    assert c.signature.startswith("method:kendall|variant:b|p:exact|alpha:0.05|scipy:")
    d = c.to_dict()
    assert list(d)[:4] == ["tau", "p_value", "n", "significant"]


# Bootstrap over systems, x=[1,2,3], y=[1,3,2]: a draw with all 3 systems gives 1/3, with
# systems {0,1} or {0,2} only gives +1, with {1,2} only gives -1 (P = 6/27 > 2.5%), with one
# system undefined (skipped). So the 95% percentile interval is exactly (-1, 1).
def test_bootstrap_ci_hand():
    lo, hi = bootstrap_ci([1, 2, 3], [1, 3, 2], n_resamples=500, seed=1)
    assert lo == pytest.approx(-1.0) and hi == pytest.approx(1.0)


def test_bootstrap_ci_degenerate_and_seeded():
    x = [1, 2, 3, 4, 5]
    assert bootstrap_ci(x, x, n_resamples=200) == pytest.approx((1.0, 1.0))
    assert bootstrap_ci(x, [-v for v in x], n_resamples=200) == pytest.approx((-1.0, -1.0))
    y = [2, 1, 4, 3, 5]
    a = bootstrap_ci(x, y, n_resamples=300, seed=7)
    assert a == bootstrap_ci(x, y, n_resamples=300, seed=7)
    assert -1 <= a[0] <= a[1] <= 1
    assert bootstrap_ci([1, 2], [1, 2]) == (None, None)
    with pytest.raises(UserError):
        bootstrap_ci(x, y, level=1.5)


def test_query_bootstrap_ci_hand():
    x = [1, 2, 3, 4]
    # every query ranks the systems like x -> every draw gives tau = 1
    pq = np.array([[0.1, 0.2, 0.0], [0.2, 0.3, 0.1], [0.3, 0.4, 0.2], [0.4, 0.5, 0.3]])
    assert query_bootstrap_ci(x, pq, n_resamples=100) == pytest.approx((1.0, 1.0))
    # identical queries -> every draw equals the full-data tau
    col = np.array([[0.1], [0.3], [0.2], [0.4]])
    pq2 = np.repeat(col, 5, axis=1)
    tau = correlate(x, col[:, 0]).tau
    assert query_bootstrap_ci(x, pq2, n_resamples=50) == pytest.approx((tau, tau))
    # q0 and q2 agree with x, q1 reverses it: a draw of q1 only (P = 1/27 > 2.5%) gives -1,
    # a draw without q1 (P = 8/27) gives +1, so the 95% interval is (-1, 1)
    pq3 = np.array([[1, 4, 1], [2, 3, 2], [3, 2, 3], [4, 1, 4]], dtype=float)
    lo, hi = query_bootstrap_ci(x, pq3, n_resamples=400, seed=3)
    assert lo == pytest.approx(-1.0) and hi == pytest.approx(1.0)
    # the two-query version has constant system means: tau undefined -> no interval
    assert query_bootstrap_ci(x, pq3[:, :2], n_resamples=10) == (None, None)
    with pytest.raises(ValueError):
        query_bootstrap_ci(x, pq3[:3])


# PERM-BOTH, x1 = y = [1,2,3], x2 = [3,2,1]: z-scores ±1.2247 and 0; delta = 1 - (-1) = 2.
# Middle system's values are both 0 (swap irrelevant). Swap patterns of systems 0 and 2:
# none -> +2, both -> -2, one only -> each hybrid has a tie and one con/one dis -> 0 - 0.
# So p = P(diff >= 2) = 1/4.
def test_permutation_sigdiff_hand():
    delta, p = permutation_sigdiff([1, 2, 3], [3, 2, 1], [1, 2, 3], n_resamples=4000, seed=0)
    assert delta == pytest.approx(2.0)
    assert abs(p - 0.25) < 0.04
    # reversed arguments: delta -2, every draw >= -2
    delta, p = permutation_sigdiff([3, 2, 1], [1, 2, 3], [1, 2, 3], n_resamples=200)
    assert delta == pytest.approx(-2.0) and p == 1.0


def test_permutation_sigdiff_identical_metrics():
    x = [0.1, 0.5, 0.3, 0.9, 0.7]
    delta, p = permutation_sigdiff(x, x, [1, 3, 2, 5, 4], n_resamples=100)
    assert delta == 0.0 and p == 1.0


def test_permutation_sigdiff_seeded_and_undefined():
    x1, x2, y = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], [1, 2, 3, 4, 5, 6]
    r = permutation_sigdiff(x1, x2, y, n_resamples=300, seed=5)
    assert r == permutation_sigdiff(x1, x2, y, n_resamples=300, seed=5)
    assert 0 <= r[1] <= 1
    assert permutation_sigdiff([1, 1, 1], [1, 2, 3], [1, 2, 3]) == (None, None)


@pytest.mark.parametrize(
    "value,nd,expected",
    [(0.4565, 3, 0.457), (2.675, 2, 2.68), (-0.5, 0, -1.0), (0.5, 0, 1.0), (1.25, 1, 1.3), (0.12344, 3, 0.123),
     (33.0, 1, 33.0), (-2.675, 2, -2.68)],
)
def test_round_half_up(value, nd, expected):
    assert round_half_up(value, nd) == expected


def test_round_half_up_passthrough():
    assert round_half_up(None, 2) is None
    assert math.isnan(round_half_up(float("nan"), 2))


def test_summarize_wins_and_significant_stats():
    res = [
        {"group": "g1", "x": "A", "y": "m", "tau": 0.6, "significant": True},
        {"group": "g1", "x": "B", "y": "m", "tau": 0.4, "significant": False},
        {"group": "g2", "x": "A", "y": "m", "tau": 0.5, "significant": True},
        {"group": "g2", "x": "B", "y": "m", "tau": 0.5, "significant": True},
        {"group": "g3", "x": "A", "y": "m", "tau": None, "significant": None},
        {"group": "g3", "x": "B", "y": "m", "tau": 0.2, "significant": False},
    ]
    s = {r["x"]: r for r in summarize(res, ["A", "B"])}
    assert s["A"]["wins"] == 2 and s["B"]["wins"] == 2  # g2 tie counts for both; g3 B alone
    assert s["A"]["mean_significant_tau"] == pytest.approx(0.55)
    assert s["A"]["median_significant_tau"] == pytest.approx(0.55)
    assert s["B"]["mean_significant_tau"] == pytest.approx(0.5)
    assert (s["A"]["n_significant"], s["A"]["n"]) == (2, 2)
    assert (s["B"]["n_significant"], s["B"]["n"]) == (1, 3)


def test_p_method_rule_beyond_33():
    """n > 33 without ties: exact only when at most one pair is discordant (scipy's 'auto')."""
    import scipy.stats

    x = list(range(40))
    one_swap = x[:]
    one_swap[3], one_swap[4] = one_swap[4], one_swap[3]
    c = correlate(x, one_swap)
    assert c.p_method == "exact"
    assert c.p_value == pytest.approx(scipy.stats.kendalltau(x, one_swap, method="exact").pvalue)
    shuffled = list(np.random.default_rng(0).permutation(40))
    c = correlate(x, shuffled)
    assert c.p_method == "asymptotic"
    assert c.p_value == pytest.approx(scipy.stats.kendalltau(x, shuffled, method="asymptotic").pvalue)
    assert correlate(x[:33], shuffled[:33]).p_method == "exact"
