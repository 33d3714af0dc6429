"""Coverage of the intervals for τ (``ci_both``) and Δτ (the verdicts' ``delta_ci`` where the target has
per-query values) in simulation, from a model where systems and queries are both random samples.

Model: n systems with quality μ ~ N(0, 1); metrics x = ρ·μ + √(1−ρ²)·ν (ρ = 0.8 and 0.4); per-query target
y[i, j] = μ_i + β_j + γ·u_i·w_j + σ·e_ij. Estimand (docs/statistics.md): the coefficient's expectation over
studies of the same design (new systems, new queries, as many of each), computed here from 3,000 fresh studies.
200 simulated studies, 400 draws per bootstrap: a 95% interval must cover between 90% and 99% of them (the
Monte Carlo standard error of a coverage of .95 over 200 studies is 1.5%, so a true coverage of 93-97% lands
in that range with probability above .99). BOOT-BOTH's percentile interval, the previous ``ci_both``, covers
99-100% in this setting, and the test checks that it still would (so the check can tell the two apart).
"""

from __future__ import annotations

import numpy as np
import pytest

from clir_eval.correlation.significance import crossed_interval, crossed_parts
from clir_eval.correlation.statistics import coef_batch, percentile_ci

N, Q, RHO, GAMMA, SIGMA = 12, 40, (0.8, 0.4), 0.0, 3.0


def _studies(rng, count):
    mu = rng.normal(size=(count, N))
    xs = [r * mu + np.sqrt(1 - r * r) * rng.normal(size=(count, N)) for r in RHO]
    u, w = rng.normal(size=(count, N)), rng.normal(size=(count, Q))
    y = (mu[:, :, None] + rng.normal(size=(count, 1, Q)) + GAMMA * u[:, :, None] * w[:, None, :]
         + SIGMA * rng.normal(size=(count, N, Q)))
    return xs, y


@pytest.fixture(scope="module")
def coverage():
    rng = np.random.default_rng(2026)
    xs, y = _studies(rng, 3000)
    ym = y.mean(axis=2)
    taus = [coef_batch(x, ym, "kendall", "b") for x in xs]
    truth = [float(np.mean(t)) for t in taus]
    truth_d = float(np.mean(taus[0] - taus[1]))
    xs, y = _studies(rng, 200)
    hits = {"tau": [], "delta": [], "tau boot-both": [], "delta boot-both": []}
    for s in range(200):
        pq = y[s]
        ymean = pq.mean(axis=1)
        parts = [crossed_parts(x[s], ymean, pq, "kendall", "b", 400, 100 + s) for x in xs]
        est = [float(coef_batch(x[s][None], ymean[None], "kendall", "b")[0]) for x in xs]
        for j in range(2):
            lo, hi = crossed_interval(est[j], parts[j], 0.95)
            hits["tau"].append(lo <= truth[j] <= hi)
            lo, hi = percentile_ci(list(parts[j]["both"]), 0.95)
            hits["tau boot-both"].append(lo <= truth[j] <= hi)
        lo, hi = crossed_interval(est[0] - est[1], {k: parts[0][k] - parts[1][k] for k in parts[0]}, 0.95, bound=2)
        hits["delta"].append(lo <= truth_d <= hi)
        lo, hi = percentile_ci(list(parts[0]["both"] - parts[1]["both"]), 0.95)
        hits["delta boot-both"].append(lo <= truth_d <= hi)
    return {k: float(np.mean(v)) for k, v in hits.items()}


def test_tau_and_delta_intervals_cover_about_95_percent(coverage):
    assert 0.90 <= coverage["tau"] <= 0.99, coverage
    assert 0.90 <= coverage["delta"] <= 0.99, coverage


def test_the_boot_both_percentile_interval_over_covers_here(coverage):
    assert coverage["tau boot-both"] >= 0.98 and coverage["delta boot-both"] >= 0.98, coverage


def test_crossed_interval_by_hand():
    """Jackknife values 0.1, 0.2, 0.3, 0.4 (variance 3/4·0.05 = 0.0375), bootstrap variances systems 0.02,
    queries 0.01, both 0.035 (queries' part 2·0.01 + 0.02 − 0.035 = 0.005): se = √0.0425; the interval is
    the estimate with its distances to the systems bootstrap's 2.5/97.5 percentiles scaled by se/√0.02."""
    rng = np.random.default_rng(0)

    def with_var(v):
        d = rng.normal(size=2000)
        return (d - d.mean()) / d.std() * np.sqrt(v)

    parts = {"jack": np.array([0.1, 0.2, 0.3, 0.4]), "systems": with_var(0.02), "queries": with_var(0.01),
             "both": with_var(0.035)}
    lo, hi = crossed_interval(0.1, parts, 0.95)
    ql, qh = np.percentile(parts["systems"], [2.5, 97.5])
    r = np.sqrt(0.0425 / 0.02)
    assert lo == pytest.approx(0.1 - (0.1 - ql) * r, abs=1e-9) and hi == pytest.approx(0.1 + (qh - 0.1) * r, abs=1e-9)
    parts["systems"] = np.zeros(10)  # no spread over systems: normal interval with se² = 0.0375 + max(0, 0.02 - 0.035)
    lo, hi = crossed_interval(0.1, parts, 0.95)
    assert hi - 0.1 == pytest.approx(0.1 - lo) == pytest.approx(1.959964 * np.sqrt(0.0375), abs=1e-5)
