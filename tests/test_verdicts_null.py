"""The system-level verdict procedure holds its level under nulls whose systems are shared by every query.

Generator: n systems with a latent quality μ; the per-query target y[i, j] = μ_i + β_j + γ·u_i·w_j + σ·e_ij
(query effects, a system × query-type interaction, noise: every query judges the same systems); MT metrics
x = ρ·μ + √(1−ρ²)·ν, all with the same ρ, so they are exchangeable: none predicts the target better. A data
set "rejects" when the verdict calls any pair significantly different (the family-wise error over its pairs).
The procedure must reject at most α + 2 Monte Carlo standard errors of the rejection rate. The one-sided
test in the data's direction (mt-metrics-eval's) rejects about 2α here, and this test catches it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from clir_eval.correlation.driver import ScoreTable, Target, correlate_pairs, verdicts
from clir_eval.correlation.settings import StatsSettings, VerdictSettings

ALPHA = 0.05


def _null_data(rng, n, q, metrics, rho=0.7, gamma=0.5, sigma=2.0, round_to=None):
    mu = rng.normal(size=n)
    u, w = rng.normal(size=n), rng.normal(size=q)
    y = mu[:, None] + rng.normal(size=(1, q)) + gamma * u[:, None] * w[None, :] + sigma * rng.normal(size=(n, q))
    cols = {f"m{k}": rho * mu + math.sqrt(1 - rho * rho) * rng.normal(size=n) for k in range(metrics)}
    if round_to is not None:
        cols = {k: np.round(v, round_to) for k, v in cols.items()}
    cols["y"] = y.mean(axis=1)
    return cols


def _rejection_rate(sets, n, q, metrics, seed, round_to=None, first=1000):
    rng = np.random.default_rng(seed)
    s = StatsSettings(resamples=0, seed=seed)
    v = VerdictSettings(first, "holm", ci_resamples=0)
    rejected, exact, mc = 0, 0, 0
    for _ in range(sets):
        cols = _null_data(rng, n, q, metrics, round_to=round_to)
        table = ScoreTable(tuple(f"s{i}" for i in range(n)), {k: np.asarray(c, float) for k, c in cols.items()})
        xs = [k for k in cols if k != "y"]
        t = Target("y", "table", None, table, tuple(correlate_pairs(table, [(x, "y") for x in xs], s)))
        (vd,) = verdicts([t], [], s, v)
        rejected += any(p["significant"] for p in vd["pairwise"])
        exact += sum(bool(p.get("exact")) for p in vd["pairwise"])
        mc += sum(not p.get("exact") for p in vd["pairwise"] if p["p_value"] is not None)
    return rejected / sets, exact, mc


def _bound(sets):
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / sets)


def test_exact_verdicts_hold_their_level_under_a_crossed_null():
    """12 systems × 40 queries, 3 exchangeable metrics (3 pairs, Holm), 400 data sets: every test exact."""
    rate, exact, mc = _rejection_rate(400, 12, 40, 3, seed=7)
    assert exact == 1200 and mc == 0
    assert rate <= _bound(400), rate


def test_sequential_monte_carlo_verdicts_hold_their_level_under_a_crossed_null():
    """20 systems with metric values rounded (ties: no exact p), 2 exchangeable metrics, 200 data sets: the
    sequential Monte Carlo path."""
    rate, exact, mc = _rejection_rate(200, 20, 30, 2, seed=8, round_to=1, first=500)
    assert mc >= 150
    assert rate <= _bound(200), rate


@pytest.mark.parametrize("n", [12, 16])
def test_one_sided_in_the_observed_direction_would_not(n):
    """The same null through the exact counts: the one-sided p in the direction the data chose is below α in
    about 2α of data sets, the verdicts' two-sided p in at most α (+ 2 se)."""
    from clir_eval.correlation.driver import _pair_test_stream
    from clir_eval.correlation.significance import monte_carlo_family
    from clir_eval.correlation.statistics import perm_both_exact_hits, perm_both_setup

    rng = np.random.default_rng(n)
    sets, one, two = 600, 0, 0
    s = StatsSettings()
    for _ in range(sets):
        cols = _null_data(rng, n, 30, 2)
        a, b, g, d = perm_both_setup(cols["m0"], cols["m1"], cols["y"], "kendall", "b")
        if d < 0:
            a, b, d = b, a, -d
        one += perm_both_exact_hits(a, b, g, d, "kendall", "b") / 2 ** n < ALPHA
        r = monte_carlo_family([_pair_test_stream(0, (a, b, g, d), s, 1)], 1, [[0]], "none", ALPHA, 1000)
        two += r.p[0] < ALPHA
    assert two / sets <= _bound(sets)
    assert one / sets > 1.5 * ALPHA
