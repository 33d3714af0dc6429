"""Verdict statistics against independent implementations on many random cases: PERM-BOTH vs
exact enumeration of all swap patterns, clusters vs a port of mt-metrics-eval's AssignRanks,
Holm/BH vs their definitions, power vs the enumerated null of Kendall's S, the paired
randomization test vs exact enumeration of sign flips, BOOT-BOTH vs a plain loop."""

from __future__ import annotations

import itertools
import json
import math
import re

import numpy as np
import pytest
import scipy.stats

from clir_eval.correlation.driver import ScoreTable, Target, correlate_pairs, verdicts
from clir_eval.correlation.settings import StatsSettings, VerdictSettings
from clir_eval.correlation.significance import (
    adjust,
    boot_both_ci,
    min_significant_tau,
    paired_randomization,
    permutation_with_inversions,
)
from clir_eval.correlation.statistics import permutation_sigdiff
from clir_eval.correlation.verdict import clusters


# --------------------------------------------------------------------------- PERM-BOTH vs enumeration
def _tau(x, y):
    return scipy.stats.kendalltau(x, y).statistic


def _perm_both_exact(a, b, g):
    """Share of all 2^n swap patterns whose τ difference reaches the observed one (z-scored inputs)."""
    a, b = scipy.stats.zscore(a), scipy.stats.zscore(b)
    delta = _tau(a, g) - _tau(b, g)
    hits = 0
    for pattern in itertools.product([False, True], repeat=len(a)):
        s = np.array(pattern)
        d = _tau(np.where(s, b, a), g) - _tau(np.where(s, a, b), g)
        hits += d >= delta - 1e-12
    return delta, hits / 2 ** len(a)


@pytest.mark.parametrize("case", range(12))
def test_perm_both_matches_exact_enumeration(case):
    rng = np.random.default_rng(100 + case)
    n = int(rng.integers(5, 9))
    g = rng.normal(size=n)
    a = g + rng.normal(scale=rng.uniform(0.2, 1.5), size=n)
    b = g + rng.normal(scale=rng.uniform(0.2, 1.5), size=n)
    delta, p_exact = _perm_both_exact(a, b, g)
    k = 4000
    d, p = permutation_sigdiff(a, b, g, n_resamples=k, seed=case, plus_one=True)
    assert d == pytest.approx(delta, abs=1e-12)
    se = math.sqrt(max(p_exact * (1 - p_exact), 1e-4) / k)
    assert abs(p - p_exact) <= 4.5 * se + 1 / k, (p, p_exact)
    assert p >= 1 / (k + 1)  # (c+1)/(k+1): never 0


# --------------------------------------------------------------------------- clusters vs AssignRanks
def _assign_ranks(sig_matrix, pval):
    """mt-metrics-eval tasks.AssignRanks (ported): sig_matrix[i, j] (i < j, rows sorted by
    decreasing correlation) = p-value that metric j's correlation >= metric i's."""
    n = sig_matrix.shape[0]
    ranks, current, start = [0] * n, 1, 0
    for i in range(n):
        if any(sig_matrix[:, i][start:i] <= pval):
            current += 1
            start = i
        ranks[i] = current
    return ranks


def test_clusters_equal_assign_ranks_on_random_matrices():
    rng = np.random.default_rng(0)
    alpha = 0.05
    for _ in range(600):
        n = int(rng.integers(1, 9))
        names = [f"m{i}" for i in range(n)]
        sig = np.ones((n, n))
        p = {}
        for i in range(n):
            for j in range(i + 1, n):
                v = float(rng.choice([rng.uniform(0, 0.1), rng.uniform(0, 1), alpha]))
                sig[i, j] = v
                p[(names[i], names[j])] = v
        ranks = _assign_ranks(sig, np.nextafter(alpha, 0))  # AssignRanks uses <=; we use p < alpha
        want: list[list[str]] = []
        for name, r in zip(names, ranks):
            if len(want) < r:
                want.append([])
            want[-1].append(name)
        assert clusters(names, p, alpha) == want


# --------------------------------------------------------------------------- multiple testing
def _holm_by_definition(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(1.0, max((m - r) * p[order[r]] for r in range(rank + 1)))
    return out


def _bh_by_definition(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(1.0, min(m * p[order[r]] / (r + 1) for r in range(rank, m)))
    return out


def test_holm_and_bh_match_their_definitions():
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = int(rng.integers(1, 25))
        p = list(np.round(rng.uniform(0, 0.2, m), 3))  # rounding makes ties
        assert adjust(p, "holm") == pytest.approx(_holm_by_definition(p), abs=1e-12)
        assert adjust(p, "bh") == pytest.approx(_bh_by_definition(p), abs=1e-12)


# --------------------------------------------------------------------------- power
def _min_tau_enumerated(n, alpha):
    """Exact null of Kendall's S over all n! rankings; smallest |τ| with two-sided p < alpha."""
    pairs = n * (n - 1) // 2
    counts = np.zeros(pairs + 1)
    for perm in itertools.permutations(range(n)):
        inv = sum(1 for i in range(n) for j in range(i + 1, n) if perm[i] > perm[j])
        counts[inv] += 1
    dist = counts / counts.sum()
    best = None
    for d in range(pairs + 1):
        s = pairs - 2 * d
        p = dist[np.abs(pairs - 2 * np.arange(pairs + 1)) >= abs(s)].sum()
        if p < alpha and s > 0:
            best = s / pairs
    return best


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1])
def test_min_significant_tau_matches_enumerated_null(n, alpha):
    want = _min_tau_enumerated(n, alpha)
    got = min_significant_tau(n, alpha)
    assert (got is None) == (want is None)
    if want is not None:
        assert got == pytest.approx(want, abs=1e-9)


def test_min_significant_tau_known_values():
    assert min_significant_tau(3) is None and min_significant_tau(4) is None  # nothing can be significant
    assert min_significant_tau(5) == 1.0  # only a perfect ranking
    assert 0 < min_significant_tau(16) < min_significant_tau(10) < 1


def test_permutation_with_inversions():
    for n in range(1, 8):
        for d in range(n * (n - 1) // 2 + 1):
            perm = permutation_with_inversions(n, d)
            assert sorted(perm) == list(range(n))
            assert sum(perm[i] > perm[j] for i in range(n) for j in range(i + 1, n)) == d


# --------------------------------------------------------------------------- discriminability
@pytest.mark.parametrize("case", range(8))
def test_paired_randomization_matches_exact_sign_flips(case):
    rng = np.random.default_rng(200 + case)
    q = int(rng.integers(6, 11))
    m = rng.uniform(0, 1, (3, q))
    m[1] += rng.uniform(0, 0.3)
    k = 5000
    pairs, diff, p = paired_randomization(m, n_resamples=k, seed=case)
    for (i, j), dv, pv in zip(pairs, diff, p):
        d = m[i] - m[j]
        obs = abs(d.mean())
        exact = np.mean([abs((np.array(s) * d).mean()) >= obs - 1e-12
                         for s in itertools.product([-1, 1], repeat=q)])
        assert dv == pytest.approx(d.mean())
        se = math.sqrt(max(exact * (1 - exact), 1e-4) / k)
        assert abs(pv - exact) <= 4.5 * se + 2 / k, (pv, exact)


def test_paired_randomization_ignores_nan_queries():
    m = np.array([[0.1, 0.5, np.nan, 0.9], [0.2, 0.4, 0.3, 0.8]])
    _, diff, _ = paired_randomization(m, 100, 0)
    assert diff[0] == pytest.approx(np.mean([-0.1, 0.1, 0.1]))


# --------------------------------------------------------------------------- BOOT-BOTH
def test_boot_both_equals_a_plain_loop():
    rng = np.random.default_rng(3)
    pq = rng.uniform(0, 1, (6, 9))
    pq[2, 4] = np.nan
    x = np.nanmean(pq, axis=1) + rng.normal(scale=0.1, size=6)
    k = 150
    lo, hi = boot_both_ci(x, pq, n_resamples=k, seed=11)
    draws_rng = np.random.default_rng(11)
    sys_idx = draws_rng.integers(0, 6, (k, 6))
    q_idx = draws_rng.integers(0, 9, (k, 9))
    taus = []
    for si, qi in zip(sys_idx, q_idx):
        ys = [np.nanmean([pq[s, q] for q in qi]) for s in si]
        xs = [x[s] for s in si]
        if len(set(xs)) > 1 and len(set(ys)) > 1:
            taus.append(scipy.stats.kendalltau(xs, ys).statistic)
    want = np.percentile(taus, [2.5, 97.5])
    assert (lo, hi) == pytest.approx(tuple(want), abs=1e-9)


# --------------------------------------------------------------------------- verdicts
def _target(cols, y="y", per_query=None):
    systems = tuple(f"s{i}" for i in range(len(cols[y])))
    table = ScoreTable(systems, {k: np.asarray(v, float) for k, v in cols.items()}, per_query)
    res = correlate_pairs(table, [(x, y) for x in cols if x != y], StatsSettings())
    return Target(y, "ir", None, table, tuple(res))


def test_verdicts_clusters_winner_and_family():
    rng = np.random.default_rng(5)
    y = np.arange(12.0)
    cols = {"y": y, "good": y + rng.normal(scale=0.1, size=12), "bad": rng.normal(size=12),
            "ter": -y + rng.normal(scale=0.2, size=12)}
    (v,) = verdicts([_target(cols)], ["ter"], StatsSettings(), VerdictSettings(1000, "holm"))
    assert v["ranking"][-1] == "bad"
    assert v["clusters"][-1] == ["bad"] and len(v["clusters"]) == 2
    assert v["winner"] is None  # good and ter (oriented) are not separable
    assert {p["b"] for p in v["pairwise"] if p["significant"]} == {"bad"}
    assert all(p["p_adjusted"] >= p["p_value"] for p in v["pairwise"])
    assert v["family"] == "the 3 metric pairs of y" and v["family_size"] == 3
    assert v["min_significant_tau"] == pytest.approx(min_significant_tau(12))


def test_verdicts_flag_too_few_systems_and_uninformative_measures():
    y = [1.0, 2, 3, 4]
    (v,) = verdicts([_target({"y": y, "a": [1, 2, 3, 4.0], "b": [2, 1, 3, 4.0]})], [], StatsSettings(), VerdictSettings(200))
    assert v["min_significant_tau"] is None and not v["informative"]
    assert "NO CORRELATION CAN BE SIGNIFICANT" in v["warnings"][0]

    rng = np.random.default_rng(0)
    noise = rng.uniform(0, 1, (8, 30))  # per-query values with no real difference between systems
    cols = {"y": noise.mean(axis=1), "a": np.arange(8.0), "b": np.arange(8.0)[::-1]}
    (v,) = verdicts([_target(cols, per_query=lambda name, systems: noise)], [], StatsSettings(), VerdictSettings(500))
    assert v["discriminability"]["pairs"] == 28
    assert v["discriminability"]["pairs_separated"] < 3
    assert not v["informative"] and v["warnings"][0].startswith("UNINFORMATIVE")

    # the reports name the tests behind "separates k of n pairs" and "min significant |τ|"
    from clir_eval.report.blocks import blocks_markdown
    from clir_eval.report.html import _verdicts_html
    from clir_eval.report.verdicts import verdict_blocks

    (w,) = verdicts([_target({**cols, "y": noise.mean(axis=1) + np.arange(8)},
                             per_query=lambda name, systems: noise + np.arange(8)[:, None])],
                    [], StatsSettings(), VerdictSettings(500))  # fmt: skip
    md = blocks_markdown(verdict_blocks([v, w]))
    assert "paired randomization over queries (two-sided, mean difference, k=500" in md and "holm over each measure" in md
    assert "seed 7" not in md and "fewer than 10% of the pairs is flagged UNINFORMATIVE" in md
    assert "exact null distribution of Kendall's τ" in md and w["min_significant_tau"] is not None
    assert "paired randomization over queries" in _verdicts_html([v, w])


# --------------------------------------------------------------------------- query accounting
def test_query_accounting_reasons_and_per_measure_split():
    from clir_eval.ir.accounting import query_accounting

    per_query = {"q1": {"map": 0.5, "aqwv": 0.1}, "q2": {"map": 0.0}, "q3": {"map": 0.2, "aqwv": 0.3}}
    acc = query_accounting(["q1", "q2", "q3", "q4"], ["q1", "q2", "q3"], per_query, ["map", "aqwv"], pseudo=True,
                           generation_skipped={"empty headline": 2})
    assert acc["map"] == {"evaluated": 3, "total": 6, "skipped": {
        "generation skipped (empty headline)": 2, "no pseudo-qrels (the English run retrieved nothing)": 1}}
    assert acc["aqwv"]["evaluated"] == 2
    assert acc["aqwv"]["skipped"]["no relevant document (the measure skips such queries)"] == 1
    same = query_accounting(["q1", "q3"], ["q1", "q3"], per_query, ["map", "aqwv"])
    assert same == {"evaluated": 2, "total": 2, "skipped": {}}


# --------------------------------------------------------------------------- correlate --verdicts
def test_correlate_verdicts_json_and_markdown(cli, tmp_path):
    rng = np.random.default_rng(4)
    y = np.arange(14.0)  # two-sided PERM-BOTH: 10 systems separate a perfect metric from noise too rarely
    rows = ["g\tsys\tgood\tbad\tter\ty"]
    for g in ("A", "B"):
        for i in range(14):
            rows.append(f"{g}\ts{i}\t{y[i] + rng.normal(scale=.3):.3f}\t{rng.normal():.3f}\t{-y[i]:.3f}\t{y[i]}")
    table = tmp_path / "t.tsv"
    table.write_text("\n".join(rows) + "\n")
    args = ["correlate", "--table", table, "--x", "good,bad,ter", "--y", "y", "--group-by", "g", "--verdicts",
            "--lower-is-better", "ter", "--permutation", "500", "--seed", "3"]
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert len(res["correlations"]) == 6
    assert [(v["group"], v["y"]) for v in res["verdicts"]] == [("A", "y"), ("B", "y")]
    for v in res["verdicts"]:
        assert v["ranking"][0] == "ter" and v["clusters"][-1] == ["bad"]  # ter oriented: -tau = 1
        assert v["family"] == f"the 3 metric pairs of {v['group']} / y" and v["correction"] == "holm"
    code, out, err = cli(*args, "--format", "json", "--family", "all", "--correction", "none")
    for v in json.loads(out)["verdicts"]:
        assert v["family"].startswith("all 6 metric pairs over 2 target(s)") and v["correction"] == "none"
        assert all(p["p_adjusted"] == p["p_value"] for p in v["pairwise"])
    code, md, err = cli(*args, "--format", "md", "--ci", "200")
    assert code == 0, err
    assert md.index("- **A / y**") < md.index("| Group | Measure |")
    assert "in the verdicts above, not in the bold" in md and "not tested here" not in md
    assert re.search(r"\| A \| y \| [^|]*\[[-.0-9]+, [-.0-9]+\]", md), "--ci interval missing in md cells"
    code, _, err = cli(*args[:-6], "--verdicts", "--correction", "bonferroni")
    assert code == 2 and "error: --correction: unknown correction 'bonferroni'; choose one of holm, bh, none" in err
    code, _, err = cli(*args[:-6], "--verdicts", "--family", "group")
    assert code == 2 and "error: --family: unknown family" in err
    code, _, err = cli(*args[:-6], "--lower-is-better", "nope")
    assert code == 2 and "not among the --x columns" in err
