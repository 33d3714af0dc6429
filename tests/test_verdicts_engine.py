"""The verdict engine (correlation/significance.py ``monte_carlo_family``): exact PERM-BOTH by the sum over
systems and by enumeration against a brute-force loop over every swap pattern with scipy's τ, exact vs Monte
Carlo agreement, the caller-supplied draw sources that item level and pooling use, and what the engine says
about decisions it could not settle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from clir_eval.correlation.significance import (
    MCResult,
    Source,
    Stream,
    block_rng,
    max_draws,
    monte_carlo_family,
    settle_draws,
    settle_summary,
)
from clir_eval.correlation.statistics import (
    perm_both_exact_hits,
    perm_both_exact_kind,
    perm_both_setup,
    perm_both_weights,
)


def _brute(a0, b0, y, method="kendall", variant="b"):
    """Every swap pattern with scipy's coefficient: (hits, 2^n), hits = patterns with Δ >= observed Δ."""
    a, b = scipy.stats.zscore(np.asarray(a0, float)), scipy.stats.zscore(np.asarray(b0, float))
    if method == "kendall":
        coef = lambda x: scipy.stats.kendalltau(x, y, variant=variant).statistic  # noqa: E731
    else:
        coef = lambda x: scipy.stats.pearsonr(x, y).statistic  # noqa: E731
    delta = coef(a) - coef(b)
    hits = sum(coef(np.where(s, b, a)) - coef(np.where(s, a, b)) >= delta - 1e-12
               for s in map(np.array, itertools.product([False, True], repeat=len(a))))
    return hits, 2 ** len(a)


@pytest.mark.parametrize("case", range(6))
def test_exact_perm_both_equals_every_swap_pattern(case):
    """Kendall τ-b/τ-c without tied metric values (the sum over systems), with ties in a metric and with
    Pearson (enumeration): the exact count equals scipy over all 2^n patterns."""
    rng = np.random.default_rng(40 + case)
    n = 7 + case % 3
    y = rng.normal(size=n)
    if case == 2:
        y = np.round(y)  # ties in the target keep the sum over systems valid
    a0, b0 = y + rng.normal(scale=0.7, size=n), y + rng.normal(scale=1.5, size=n)
    method, variant = ("pearson", None) if case == 5 else ("kendall", "c" if case == 1 else "b")
    if case == 4:
        a0 = np.round(a0 * 2) / 2  # tied metric values: enumeration
        a0[1] = a0[0]
    a, b, g, d = perm_both_setup(a0, b0, y, method, variant)
    kind = perm_both_exact_kind(a, b, method, variant)
    assert kind == ("enumerate" if case in (4, 5) else "sum")
    assert (perm_both_exact_hits(a, b, g, d, method, variant), 2 ** n) == _brute(a0, b0, y, method, variant or "b")


def test_kendall_difference_is_linear_in_the_swap_bits():
    """Without tied metric values, Δτ·(pairs) = Σ W_i − 2 Σ W_i s_i over all 2^n patterns (the claim the sum over
    systems rests on); a metric with a tie breaks it (the τ-b denominator then moves with s)."""
    rng = np.random.default_rng(3)
    n = 8
    y = rng.normal(size=n)
    a, b, g, _ = perm_both_setup(y + rng.normal(size=n), rng.normal(size=n), y, "kendall", "b")
    W, linear = perm_both_weights(a, b, g)
    assert linear.all()
    W = W[0]
    pairs = n * (n - 1) / 2
    for s in itertools.product([0, 1], repeat=n):
        s = np.array(s, bool)
        d = (scipy.stats.kendalltau(np.where(s, b, a), g).statistic
             - scipy.stats.kendalltau(np.where(s, a, b), g).statistic)
        assert d * pairs == pytest.approx(float(W.sum() - 2 * W @ s), abs=1e-9)
    a[1] = a[0]
    assert not perm_both_weights(a, b, g)[1][0]


def test_exact_and_monte_carlo_agree():
    """12 systems, 4 metrics: the fixed Monte Carlo p (20,000 draws) within 4 standard errors of the exact p."""
    from clir_eval.correlation.driver import _pair_test_stream
    from clir_eval.correlation.settings import StatsSettings

    rng = np.random.default_rng(9)
    n = 12
    y = rng.normal(size=n)
    cols = [y + rng.normal(scale=sc, size=n) for sc in (0.05, 0.5, 2.0, 5.0)]
    setups = [perm_both_setup(cols[i], cols[j], y, "kendall", "b") for i in range(4) for j in range(i + 1, 4)]
    s = StatsSettings(seed=4)
    exact = monte_carlo_family([_pair_test_stream(k, st, s, 100 + k, True) for k, st in enumerate(setups)],
                               len(setups), [list(range(len(setups)))], "holm", 0.05, 1000)
    mc = monte_carlo_family([_pair_test_stream(k, st, s, 100 + k, False) for k, st in enumerate(setups)],
                            len(setups), [list(range(len(setups)))], "holm", 0.05, 20_000, sequential=False)
    assert exact.exact.all() and not mc.exact.any() and (exact.draws == 2 ** n).all() and (exact.se == 0).all()
    assert np.all(np.abs(exact.p - mc.p) <= 4 * mc.se + 1e-4), (exact.p, mc.p)
    assert exact.p.min() < 0.05 < exact.p.max()


def _binomial_source(members, p_true, seed):
    """A caller's own Monte Carlo test: each draw reaches the observed statistic with probability p_true[i]."""
    def draw(mem, block, size):
        rng = block_rng(seed, block)
        u = rng.random((size, len(p_true)))
        return (u[:, mem] < np.asarray(p_true)[mem]).sum(axis=0)
    return Source(tuple(members), draw)


def test_sources_are_decided_like_built_in_tests():
    """A family of 6 caller-supplied tests (true p from clearly significant to clearly not) plus one exact
    source: decisions settle, exact p is hits/patterns, and the draws do not depend on the rounds."""
    p_true = [1e-4, 2e-3, 0.2, 0.5, 0.9, 0.03]
    exact = Source((6,), lambda mem, block, size: np.array([3]), patterns=1024)
    fam = [list(range(7))]
    r = monte_carlo_family([_binomial_source(range(6), p_true, 5), exact], 7, fam, "holm", 0.05, 1000)
    assert isinstance(r, MCResult) and r.exact.tolist() == [False] * 6 + [True]
    assert r.p[6] == pytest.approx(3 / 1024) and r.se[6] == 0 and r.draws[6] == 1024
    adj = r.adjusted(fam, "holm")
    assert (adj[:2] < 0.05).all() and (adj[2:5] >= 0.05).all() and adj[6] < 0.05
    assert r.settled[:5].all()
    # a test's draws depend on (seed, block) only: the first 1000 of a longer run are the same draws
    r2 = monte_carlo_family([_binomial_source(range(6), p_true, 5)], 6, [list(range(6))], "none", 0.05, 1000,
                            sequential=False)
    assert r2.hits[3] == r.hits[3] or r.draws[3] > 1000


def test_an_open_decision_says_what_would_settle_it():
    """One test with true p = .06 against α = .05 (no correction): at 1000 draws its 99.9% interval straddles α,
    so it stays open; the engine names the draws that settle it, and with that many it is settled."""
    src = _binomial_source([0], [0.06], 11)
    r = monte_carlo_family([src], 1, [[0]], "none", 0.05, 1000)
    assert max_draws(1, 0.05, "none", 1000) == 1000 and not r.settled[0]
    k = settle_draws(r, [[0]], "none", 0.05)
    assert k is not None and k % 1000 == 0 and 2000 <= k <= 100_000
    text = settle_summary(r, [[0]], "none", 0.05)
    assert "1 decision(s) not settled" in text and f"to {k})" in text
    r2 = monte_carlo_family([src], 1, [[0]], "none", 0.05, k)
    assert r2.settled[0] and r2.p[0] > 0.05
    assert settle_summary(r2, [[0]], "none", 0.05) is None


def test_exact_verdicts_agree_with_brute_force_and_stay_monte_carlo_when_fixed():
    from clir_eval.correlation.driver import ScoreTable, Target, correlate_pairs, verdicts
    from clir_eval.correlation.settings import StatsSettings, VerdictSettings

    rng = np.random.default_rng(21)
    n = 9
    y = rng.normal(size=n)
    cols = {"y": y, "a": y + rng.normal(scale=0.2, size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)}
    table = ScoreTable(tuple(f"s{i}" for i in range(n)), {k: np.asarray(v, float) for k, v in cols.items()})
    s = StatsSettings(seed=1)
    t = Target("y", "table", None, table, tuple(correlate_pairs(table, [(x, "y") for x in "abc"], s)))
    (v,) = verdicts([t], [], s, VerdictSettings(1000, "holm", ci_resamples=0))
    for p in v["pairwise"]:
        hits, total = _brute(cols[p["a"]], cols[p["b"]], y)  # upper tail; the verdicts' test is two-sided
        assert p["delta"] > 0 and p["exact"] and p["settled"] and p["resamples"] == total
        assert p["p_value"] == pytest.approx(min(1.0, 2 * hits / total))
    assert v["resolution"]["exact"] == 3 and v["resolution"]["draws"] is None
    (f,) = verdicts([t], [], s, VerdictSettings(1000, "holm", resolution="fixed", ci_resamples=0))
    assert not any(p["exact"] for p in f["pairwise"]) and f["resolution"]["draws"] == [1000, 1000]


def test_streams_keep_their_old_signature():
    """Built-in streams without ``patterns`` are Monte Carlo (the signature callers used before)."""
    st = Stream("permutation", "kendall", "b", 1, (0,), lambda mem: (), lambda r, mem: r)
    assert st.patterns == 0


def test_the_report_says_how_many_decisions_are_open_and_what_settles_them():
    from clir_eval.report.verdicts import verdict_tests

    pair = {"a": "x", "b": "y", "delta": 0.1, "p_value": 0.003, "p_adjusted": 0.045, "significant": True,
            "settled": False, "exact": False, "resamples": 6000}
    res = {"mode": "sequential", "first": 1000, "max": 6000, "draws": [1000, 6000], "exact": 0, "floor": 0.0025,
           "unsettled": 1, "settle_draws": 10000}
    v = {"target": "t", "pairwise": [pair], "resolution": res, "alpha": 0.05, "method": "kendall"}
    text = verdict_tests([v])
    assert "1 decision not settled at the maximum (marked †" in text and "--permutation 10000" in text
    assert "draws used 1000–6000" in text
    res.update(unsettled=0, settle_draws=None, draws=[1000, 1000])
    pair.update(settled=True)
    text = verdict_tests([v])
    assert "not settled" not in text and "each used 1000" in text and "1000–1000" not in text
    res.update(exact=1, draws=None)
    pair.update(exact=True)
    assert "every test exact" in verdict_tests([v])
